# frozen_string_literal: true

# Run by `make test-gem` outside the source tree, with GEM_HOME the scratch
# directory the built gem was just installed into (given as the argument):
# the installed gem loads from there and round-trips; `require "tersa"` loads
# neither integration nor what they need (ActiveSupport, Rack), and each
# integration loads from the installed gem when required.
gem_home = File.realpath(ARGV.fetch(0))
INTEGRATIONS = %w[/tersa/active_support.rb /tersa/rack.rb].freeze

require "tersa"
spec = Gem.loaded_specs.fetch("tersa")
root = File.realpath(spec.full_gem_path)
abort "tersa was loaded from #{root}, not from #{gem_home}" unless root.start_with?("#{gem_home}/")
value = { "ok" => [1, 2.5, "x"] }
abort "gem round trip failed" unless Tersa.load(Tersa.dump(value)) == value
%w[ActiveSupport Rack].each { |name| abort "require \"tersa\" loaded #{name}" if Object.const_defined?(name) }
early = $LOADED_FEATURES.select { |f| f.end_with?(*INTEGRATIONS) }
abort "require \"tersa\" loaded #{early.join(', ')}" unless early.empty?

require "tersa/active_support"
require "tersa/rack"
require "rack/mock"
loaded = $LOADED_FEATURES.select { |f| f.end_with?(*INTEGRATIONS) }.map { |f| File.realpath(f) }
unless loaded.size == 2 && loaded.all? { |f| f.start_with?("#{root}/") }
  abort "the integrations were loaded from #{loaded.inspect}, not from #{root}"
end

coder = Tersa::ActiveSupportCoder.new
entry = coder.load(coder.dump(ActiveSupport::Cache::Entry.new(value, version: "v1", expires_in: 60)))
abort "ActiveSupportCoder round trip failed" unless entry.value == value && entry.version == "v1" && entry.expires_at

app = Tersa::Rack::Middleware.new(->(env) { Tersa::Rack.response(Tersa::Rack.body(env)) })
env = Rack::MockRequest.env_for("/", method: "POST", "CONTENT_TYPE" => Tersa::Rack::MEDIA_TYPE, input: Tersa.dump(value))
_, headers, body = app.call(env)
abort "Rack middleware round trip failed" unless headers["content-type"] == Tersa::Rack::MEDIA_TYPE &&
                                                 Tersa.load(body.join) == value

puts "gem install: tersa #{Tersa::VERSION} from #{root}, with tersa/active_support and tersa/rack"
