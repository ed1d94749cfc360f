# frozen_string_literal: true

require "zlib"
require "active_support"
require "active_support/cache"
require "tersa"

module Tersa
  # A coder for ActiveSupport::Cache stores (tested with ActiveSupport 6.1's
  # MemoryStore, FileStore and RedisCacheStore): each
  # ActiveSupport::Cache::Entry is one Tersa buffer, the Array
  # [value, expires_at, version], with the value as a Tersa value (not a
  # Marshal blob), expires_at a Float of epoch seconds or nil, version a
  # String or nil.
  #
  #   require "tersa/active_support"
  #   cache = ActiveSupport::Cache::RedisCacheStore.new(url: ..., coder: Tersa::ActiveSupportCoder.new,
  #                                                     compress: false)
  #
  # A value Tersa cannot represent raises Tersa::EncodeError naming its class
  # and path: there is no Marshal fallback. ActiveSupport 6.1 compresses an
  # Entry's value with Marshal and zlib when the store's compress option is on
  # (RedisCacheStore's default), before the coder sees it; the coder reads such
  # entries through Entry#value, but stores should say compress: false and let
  # the coder compress (compress_threshold:), which deflates the value's Tersa
  # bytes instead.
  #
  # A payload that does not start with Tersa's magic (an entry another coder
  # wrote before the switch) reads as a miss, so the store rewrites it; one
  # that starts with it but is not an entry raises Tersa::DecodeError.
  class ActiveSupportCoder
    # Raised when a Tersa buffer in the cache is not an entry this coder wrote.
    class EntryError < DecodeError
      def initialize(message)
        super
        @code = :not_a_cache_entry
        @offset = 0
      end
    end

    DEFLATE = :deflate
    DUMP_OPTIONS = %i[default dictionary max_depth].freeze
    LOAD_OPTIONS = %i[freeze max_depth dictionary dictionaries].freeze

    # compress_threshold: Tersa bytes of a value at least this long are
    # deflated when that makes them shorter; nil (the default) never deflates.
    # The other options are Tersa.dump's and Tersa.load's (symbolize_keys is
    # refused: the cache must give back the keys it was given).
    def initialize(compress_threshold: nil, **options)
      unknown = options.keys - DUMP_OPTIONS - LOAD_OPTIONS
      raise ArgumentError, "unknown options: #{unknown.join(', ')}" unless unknown.empty?

      @compress_threshold = compress_threshold
      @dump_options = options.slice(*DUMP_OPTIONS).freeze
      load_options = options.slice(*LOAD_OPTIONS)
      load_options[:dictionaries] = [*load_options[:dictionaries], load_options.delete(:dictionary)] if options[:dictionary]
      @load_options = load_options.freeze
    end

    def dump(entry)
      unless entry.is_a?(ActiveSupport::Cache::Entry)
        raise ArgumentError, "#{self.class} dumps ActiveSupport::Cache::Entry, not #{entry.class}"
      end

      value = entry.value
      bytes = encode([value, entry.expires_at, entry.version], value_at: "$[0]")
      return bytes unless @compress_threshold && bytes.bytesize >= @compress_threshold

      deflated = Zlib::Deflate.deflate(encode(value))
      packed = encode([deflated, entry.expires_at, entry.version, DEFLATE])
      packed.bytesize < bytes.bytesize ? packed : bytes
    end

    def load(payload)
      # Tersa's magic, C1 70: anything else is another coder's entry.
      return nil if payload.nil? || payload.getbyte(0) != 0xC1 || payload.getbyte(1) != 0x70

      fields = Tersa.load(payload, **@load_options)
      unless entry_fields?(fields)
        raise EntryError, "not an ActiveSupport cache entry: a #{fields.class} where [value, expires_at, version] was expected"
      end

      value, expires_at, version = fields
      value = Tersa.load(inflate(value), **@load_options) if fields.size == 4
      entry = ActiveSupport::Cache::Entry.new(value, compress: false, version: version)
      # Set after construction: 6.1's constructor takes only expires_in,
      # relative to a created_at of now.
      entry.expires_at = expires_at
      entry
    end

    # The class itself is a coder with the defaults: coder: Tersa::ActiveSupportCoder.
    class << self
      def dump(entry) = (@default ||= new).dump(entry)
      def load(payload) = (@default ||= new).load(payload)
    end

    private

    def entry_fields?(fields)
      return false unless fields.is_a?(Array) && [3, 4].include?(fields.size)
      return false unless fields[1].nil? || fields[1].is_a?(Float)
      return false unless fields[2].nil? || fields[2].is_a?(String)

      fields.size == 3 || (fields[3] == DEFLATE && fields[0].is_a?(String))
    end

    def inflate(bytes)
      Zlib::Inflate.inflate(bytes)
    rescue Zlib::Error => e
      raise EntryError, "the entry's deflated value is corrupt: #{e.message}"
    end

    # value_at: where the value sits in what is encoded, so that an
    # unsupported type's path names the value itself ($), not the entry.
    def encode(object, value_at: "$")
      Tersa.dump(object, **@dump_options)
    rescue Tersa::EncodeError => e
      raise Tersa::EncodeError, "cache entry value: #{e.message.sub(" at #{value_at}", ' at $')}"
    end
  end
end
