# frozen_string_literal: true

require_relative "lib/tersa/version"

Gem::Specification.new do |s|
  s.name = "tersa"
  s.version = Tersa::VERSION
  s.summary = "Tersa: a compact, fast, schemaless binary serialization format"
  s.description = "Tersa encodes JSON-like data (plus symbols, binary, big integers, exact floats, " \
                  "timestamps and extension types) smaller than MessagePack and CBOR, and encodes " \
                  "and decodes it faster, with byte-identical output across languages."
  s.authors = ["The Tersa developers"]
  s.license = "MIT"
  s.required_ruby_version = ">= 3.1"
  s.files = Dir["lib/**/*.rb", "ext/tersa/*.{c,h,rb}", "ext/tersa/core/**/*.{c,h}", "README.md", "LICENSE"]
  s.extensions = ["ext/tersa/extconf.rb"]
  s.require_paths = ["lib"]
  s.metadata = { "rubygems_mfa_required" => "true" }
end
