# frozen_string_literal: true

require_relative "lib/pith/version"

Gem::Specification.new do |s|
  s.name = "pith"
  s.version = Pith::VERSION
  s.summary = "Pith: a compact, fast, schemaless binary serialization format"
  s.description = "Pith encodes JSON-like data (plus symbols, binary, big integers, exact floats, " \
                  "timestamps and extension types) smaller than MessagePack and CBOR, and encodes " \
                  "and decodes it faster, with byte-identical output across languages."
  s.authors = ["The Pith developers"]
  s.license = "MIT"
  s.required_ruby_version = ">= 3.1"
  s.files = Dir["lib/**/*.rb", "ext/pith/*.{c,h,rb}", "ext/pith/core/**/*.{c,h}", "README.md", "LICENSE"]
  s.extensions = ["ext/pith/extconf.rb"]
  s.require_paths = ["lib"]
  s.metadata = { "rubygems_mfa_required" => "true" }
end
