# frozen_string_literal: true

module Tersa
  # A Tersa map as an ordered, frozen list of [key, value] pairs: the maps a
  # Ruby Hash cannot hold.
  #
  # Two Tersa keys are equal only when they are the same Tersa value (SPEC
  # section 1), and Hash merges some that are not: the String "a" and the
  # binary "a".b, 0.0 and -0.0, a Time in UTC and the same instant at +00:00,
  # {a: 1, b: 2} and {b: 2, a: 1}. Tersa.load returns a Tersa::Map instead of a
  # Hash exactly for the maps whose keys a Hash would merge, and for maps with
  # a key nested deeper than Ruby can hash without deep recursion (32
  # levels). Tersa.dump writes a Tersa::Map as the map of its pairs, in order, so
  # such a value comes back byte for byte.
  #
  #   map = Tersa.load(bytes)   # => #<Tersa::Map {"a"=>1, "a"=>2}>
  #   map["a".b]               # => 2 (keys are looked up by Tersa equality)
  #   map.to_a                 # => [["a", 1], ["a", 2]]
  #
  # A key's Tersa identity is its encoding (Tersa.dump of the key alone), so
  # keys must be values Tersa can write, and they must not be changed once in
  # a map (String keys are frozen, as Hash does). The decoder makes Tersa::Maps
  # without computing identities (its keys are distinct by the format's
  # rules); lookups and comparisons compute them once, on first use.
  class Map
    include Enumerable

    # Deep enough for any key a decoder accepts (its max_depth is at most this).
    IDENTITY_DEPTH = 100_000
    private_constant :IDENTITY_DEPTH

    # The Tersa identity of a key: equal for keys that are the same Tersa value.
    def self.key_identity(key) = Tersa.dump(key, max_depth: IDENTITY_DEPTH)

    # +pairs+: an Enumerable of [key, value] pairs (a Hash will do). Keys that
    # are the same Tersa value raise ArgumentError; a key Tersa cannot write
    # raises Tersa::EncodeError.
    def initialize(pairs = [])
      index = {}
      list = []
      pairs.each do |pair|
        unless pair.is_a?(Array) && pair.size == 2
          raise TypeError, "Tersa::Map takes [key, value] pairs, not #{pair.class}"
        end

        key, value = pair
        key = -key if key.instance_of?(String)
        id = Map.key_identity(key)
        raise ArgumentError, "duplicate key #{key.inspect} (equal as a Tersa value to an earlier key)" if index.key?(id)

        index[id] = list.size
        list << [key, value].freeze
      end
      @pairs = list.freeze
      @lookup = [index.freeze]
      freeze
    end

    def size = @pairs.size
    alias length size

    def empty? = @pairs.empty?

    # Yields each key and value, in order (like Hash#each).
    def each(&block)
      return enum_for(:each) { size } unless block

      if block.arity > 1
        @pairs.each { |key, value| block.call(key, value) }
      else
        @pairs.each(&block)
      end
      self
    end
    alias each_pair each

    # The value of the key that is the same Tersa value as +key+, or nil.
    def [](key)
      at = position(key)
      at && @pairs[at][1]
    end

    def fetch(key, *default)
      raise ArgumentError, "wrong number of arguments (given #{default.size + 1}, expected 1..2)" if default.size > 1

      at = position(key)
      return @pairs[at][1] if at
      return yield(key) if block_given?
      return default.first unless default.empty?

      raise KeyError.new("key not found: #{key.inspect}", receiver: self, key: key)
    end

    def key?(key) = !position(key).nil?
    alias has_key? key?
    alias include? key?
    alias member? key?

    def keys = @pairs.map(&:first)
    def values = @pairs.map(&:last)

    # The [key, value] pairs, in order (frozen).
    def to_a = @pairs
    alias pairs to_a

    # A Hash of the pairs; raises ArgumentError when the Hash would merge keys
    # (the reason this is a Tersa::Map), rather than drop a value.
    def to_h(&block)
      return @pairs.to_h(&block) if block

      hash = @pairs.to_h
      raise ArgumentError, "a Hash would merge keys of this Tersa::Map: #{inspect}" if hash.size != size

      hash
    end

    # Same keys (as Tersa values) in the same order, and values ==.
    def ==(other)
      other.is_a?(Map) && ids == other.ids && values == other.values
    end

    # Same keys (as Tersa values) in the same order, and values eql?.
    def eql?(other)
      other.is_a?(Map) && ids == other.ids && values.eql?(other.values)
    end

    # From the keys' Tersa identities alone, so that equal maps hash equal and
    # a deep map hashes without recursion.
    def hash = [Map, ids].hash

    def inspect = "#<Tersa::Map {#{@pairs.map { |k, v| "#{k.inspect}=>#{v.inspect}" }.join(', ')}}>"
    alias to_s inspect

    protected

    # The keys' identities, in order.
    def ids = lookup.keys

    private

    # {identity => position}, computed on first use and kept in a cell the
    # frozen map holds (unless the cell was frozen too, by Ractor.make_shareable).
    def lookup
      @lookup[0] || begin
        index = {}
        @pairs.each_with_index { |(key, _), at| index[Map.key_identity(key)] ||= at }
        index.freeze
        @lookup[0] = index unless @lookup.frozen?
        index
      end
    end

    def position(key)
      lookup[Map.key_identity(key)]
    rescue Tersa::EncodeError
      nil
    end
  end
end
