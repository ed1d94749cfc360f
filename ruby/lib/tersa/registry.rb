# frozen_string_literal: true

module Tersa
  # Raised when a buffer names a dictionary that neither the registry's cache
  # nor its store holds (or the store's entry is not that dictionary). A
  # DecodeError with code :unknown_dictionary at offset 3, like the decoder's
  # own, plus the id that was looked for and the store key.
  class UnknownDictionaryError < DecodeError
    attr_reader :dictionary_id, :key

    def initialize(message, dictionary_id:, key:)
      super(message)
      @code = :unknown_dictionary
      @offset = 3
      @dictionary_id = dictionary_id
      @key = key
    end
  end

  # Dictionaries distributed by id through a shared store, the way a schema
  # registry works: a producer publishes its dictionary once, a consumer that
  # meets a buffer naming an id it does not hold fetches it by that id, then
  # decodes. The store is anything with #get(key) and #set(key, value) on
  # binary Strings (a Redis client, a Hash-like wrapper of a KV bucket), so
  # the gem depends on no client.
  #
  #   registry = Tersa::DictionaryRegistry.new(Redis.new)
  #   registry.publish(dict)                       # producer
  #   Tersa.dump(record, dictionary: dict)
  #   registry.load(bytes)                         # consumer: fetches dict by id once
  #
  # A dictionary's id is the hash of its serialization (SPEC 8), so an entry
  # never changes meaning: fetched dictionaries are cached for the registry's
  # life, and one whose id differs from the key it was stored under is refused.
  # Misses are not cached: the producer may publish after the consumer looked.
  class DictionaryRegistry
    PREFIX = "tersa:dictionary:"
    FLAG_DICT = 0x01
    SYNC = 0xFD

    attr_reader :store, :prefix

    def initialize(store, prefix: PREFIX)
      raise ArgumentError, "store must respond to get and set" unless store.respond_to?(:get) && store.respond_to?(:set)

      @store = store
      @prefix = prefix
      @cache = {}
      @by_header = {}
      @lock = Mutex.new
    end

    # The store key of a dictionary id: the prefix and 16 lowercase hex digits.
    def key(id) = "#{@prefix}#{format('%016x', id)}"

    # Stores dict under its id (and caches it); returns the id.
    def publish(dict)
      @store.set(key(dict.id), dict.to_s)
      @lock.synchronize { @cache[dict.id] = dict }
      dict.id
    end

    # The dictionary with this id, from the cache or else the store.
    def fetch(id)
      if (dict = @lock.synchronize { @cache[id] })
        return dict
      end

      k = key(id)
      bytes = @store.get(k)
      hex = format("0x%016x", id)
      raise UnknownDictionaryError.new("dictionary #{hex} is not in the store (key #{k})", dictionary_id: id, key: k) if bytes.nil?

      dict = begin
        Dictionary.load(bytes.b)
      rescue StandardError => e
        raise UnknownDictionaryError.new("the store's entry #{k} is not a serialized dictionary (#{e.class}: #{e.message})",
                                         dictionary_id: id, key: k)
      end
      unless dict.id == id
        raise UnknownDictionaryError.new("the store's entry #{k} holds dictionary #{format('0x%016x', dict.id)}, not #{hex}",
                                         dictionary_id: id, key: k)
      end
      @lock.synchronize { @cache[id] ||= dict }
    end

    def cached?(id) = @lock.synchronize { @cache.key?(id) }

    # The dictionary a buffer (join: a stream's frames from a frame boundary)
    # names, fetched if needed; nil when it names none.
    def dictionary_for(bytes, join: false)
      id = self.class.dictionary_id(bytes, join: join)
      id && fetch(id)
    end

    # Tersa.load with the dictionary the buffer names. A header naming a
    # dictionary is 11 bytes that determine it: known headers skip parsing (a
    # consumer calls this for every message).
    def load(bytes, **opts)
      head = bytes.byteslice(0, 11)
      dict = @by_header[head]
      unless dict
        id = self.class.dictionary_id(bytes)
        return Tersa.load(bytes, **opts) unless id

        dict = fetch(id)
        @lock.synchronize { @by_header[head.b.freeze] = dict }
      end
      opts.empty? ? Tersa.load(bytes, dictionaries: dict) : Tersa.load(bytes, **opts, dictionaries: dict)
    end

    # Tersa.load_stream with the dictionary the stream names (join: true: in
    # its first sync frame).
    def load_stream(bytes, join: false, **opts)
      dict = dictionary_for(bytes, join: join)
      dict ? Tersa.load_stream(bytes, join: join, **opts, dictionaries: dict) : Tersa.load_stream(bytes, join: join, **opts)
    end

    # The dictionary id a buffer's header names (SPEC 2.1), or with join: true
    # the one in the first sync frame of frames taken from a frame boundary
    # (SPEC 2.3); nil when it names none or the bytes are too malformed to
    # say, in which case decoding reports what is wrong with them.
    def self.dictionary_id(bytes, join: false)
      b = bytes
      return b.getbyte(0) == 0xC1 && b.getbyte(1) == 0x70 ? header_id(b, 2) : nil unless join

      pos = 0
      while pos < b.bytesize
        n, len = varint(b, pos)
        return nil if n.nil? || n.zero?

        pos += len
        return nil if pos + n > b.bytesize
        return header_id(b, pos + 1) if b.getbyte(pos) == SYNC

        pos += n
      end
      nil
    end

    # The id after the VF byte at vf_at, if VF has the DICT flag.
    def self.header_id(b, vf_at)
      vf = b.getbyte(vf_at)
      return nil if vf.nil? || (vf & FLAG_DICT).zero? || b.bytesize < vf_at + 9

      b.byteslice(vf_at + 1, 8).unpack1("Q<")
    end

    # A prefix varint (SPEC 3.1) at pos: [value, length], or nil if cut short.
    def self.varint(b, pos)
      first = b.getbyte(pos) or return nil
      len = first.zero? ? 9 : (first & -first).bit_length
      return nil if pos + len > b.bytesize
      return [b.byteslice(pos + 1, 8).unpack1("Q<"), 9] if len == 9

      w = 0
      (len - 1).downto(0) { |i| w = (w << 8) | b.getbyte(pos + i) }
      [w >> len, len]
    end
    private_class_method :header_id, :varint
  end
end
