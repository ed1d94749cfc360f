# frozen_string_literal: true

module Tersa
  # A dump/load serializer object: usable wherever one is expected, e.g.
  # `serialize :payload, coder: Tersa::Coder` in Active Record, or as a cache
  # value serializer. Tersa::Coder itself uses the defaults; Tersa::Coder.new
  # takes the options of Tersa.dump and Tersa.load.
  #
  #   coder = Tersa::Coder.new(symbolize_keys: true, dictionary: dict)
  #   coder.load(coder.dump(value))
  class Coder
    DUMP_OPTIONS = %i[default dictionary max_depth].freeze
    LOAD_OPTIONS = %i[symbolize_keys freeze max_depth dictionary dictionaries].freeze

    def initialize(**options)
      unknown = options.keys - DUMP_OPTIONS - LOAD_OPTIONS
      raise ArgumentError, "unknown options: #{unknown.join(', ')}" unless unknown.empty?

      @dump_options = options.slice(*DUMP_OPTIONS).freeze
      @load_options = options.slice(*LOAD_OPTIONS).freeze
      @load_options = @load_options.merge(dictionaries: [options[:dictionary]]).freeze if options[:dictionary]
      @load_options = @load_options.except(:dictionary).freeze
    end

    def dump(object)
      @dump_options.empty? ? Tersa.dump(object) : Tersa.dump(object, **@dump_options)
    end

    def load(bytes)
      return nil if bytes.nil?

      @load_options.empty? ? Tersa.load(bytes) : Tersa.load(bytes, **@load_options)
    end

    class << self
      def dump(object) = Tersa.dump(object)

      def load(bytes)
        bytes.nil? ? nil : Tersa.load(bytes)
      end
    end
  end
end
