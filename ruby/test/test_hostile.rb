# frozen_string_literal: true

require_relative "helper"

# Maps whose keys are distinct Tersa values but equal (or not) to Ruby's Hash:
# a decoder must accept every valid map, an encoder must never write a map
# with two equal keys. Hex strings are whole buffers.
class TestHostile < Minitest::Test
  include TersaTestHelper

  def nan(bits) = [bits].pack("Q<").unpack1("E")
  def bits(float) = [float].pack("E").unpack1("Q<")

  # Decodes to a Tersa::Map with these keys and re-encodes to the same bytes.
  def assert_map_round_trip(hex_bytes)
    bytes = unhex(hex_bytes)
    map = Tersa.load(bytes)
    assert_instance_of Tersa::Map, map
    assert_equal hex_bytes, hex(Tersa.dump(map))
    map
  end

  def test_string_and_binary_keys
    map = assert_map_round_trip("c17010f4054161a1f60361a2")
    assert_equal [["a", -7], ["a".b, -6]], map.to_a
    assert_equal [Encoding::UTF_8, Encoding::BINARY], map.keys.map(&:encoding)
    assert_equal(-7, map["a"])
    assert_equal(-6, map["a".b])
    assert_nil map["b"]
  end

  def test_zero_and_negative_zero_keys
    map = assert_map_round_trip("c17010f405dc01a9e300000080aa")
    assert_equal [0, 1 << 63], map.keys.map { |k| bits(k) }
    assert_equal 1, map[0.0]
    assert_equal 2, map[-0.0]
  end

  def test_the_same_instant_in_utc_and_at_plus_zero
    map = assert_map_round_trip("c17010f405f90010008c8719a9f9020101aa")
    utc, plus_zero = map.keys
    assert utc.utc?
    refute plus_zero.utc?
    assert_equal 0, plus_zero.utc_offset
    assert_equal [1, 2], map.values
  end

  def test_timestamp_keys_that_tersa_dump_wrote
    utc = Tersa::Timestamp.new(0, 0, :utc, nil)
    plus_zero = Tersa::Timestamp.new(0, 0, :offset, 0)
    refute utc.eql?(plus_zero), "the (seconds, nanos, zone) triples differ"
    refute_equal Tersa::Map.key_identity(utc), Tersa::Map.key_identity(plus_zero)
    bytes = Tersa.dump({ utc => 1, plus_zero => 2 })
    map = Tersa.load(bytes)
    assert_instance_of Tersa::Map, map
    assert_equal bytes, Tersa.dump(map)
    assert_equal 1, map[utc]
    assert_equal 2, map[plus_zero]
  end

  def test_one_instant_in_two_offsets
    a = Time.at(3600, in: "+01:00")
    b = Time.at(3600, in: "-02:00")
    assert a.eql?(b), "Ruby's Time#eql? compares instants"
    bytes = Tersa.dump(Tersa::Map.new([[a, "a"], [b, "b"]]))
    map = Tersa.load(bytes)
    assert_equal [3600, -7200], map.keys.map(&:utc_offset)
    assert_equal bytes, Tersa.dump(map)
  end

  def test_container_keys_equal_only_to_ruby
    map = assert_map_round_trip("c17010f40581dc01a981e300000080aa")
    assert_equal [[0.0], [-0.0]].map { |k| k.map { |f| bits(f) } }, map.keys.map { |k| k.map { |f| bits(f) } }
    reordered = Tersa.dump(Tersa::Map.new([[{ "a" => 1, "b" => 2 }, 1], [{ "b" => 2, "a" => 1 }, 2]]))
    map = Tersa.load(reordered)
    assert_instance_of Tersa::Map, map
    assert_equal [%w[a b], %w[b a]], map.keys.map(&:keys)
    assert_equal reordered, Tersa.dump(map)
  end

  def test_maps_ruby_can_hold_stay_hashes
    assert_equal({ 1 => 2, "a" => 3, [1] => 4, 0.5 => 5 }, Tersa.load(Tersa.dump({ 1 => 2, "a" => 3, [1] => 4, 0.5 => 5 })))
    assert_instance_of Hash, Tersa.load(Tersa.dump(Tersa::Map.new([["a", 1], [:a, 2]])))
  end

  def test_tersa_map_inside_values_keys_and_streams
    inner = Tersa::Map.new([["k", 1], ["k".b, 2]])
    value = { "list" => [inner, inner], inner => "as a key", 5 => Tersa::Map.new([[inner, 0], [inner.to_a, 1]]) }
    bytes = Tersa.dump(value)
    back = Tersa.load(bytes)
    assert_instance_of Hash, back
    assert_equal bytes, Tersa.dump(back)
    assert_equal "as a key", back[inner]
    assert_equal [inner, inner], back["list"]
    enc = Tersa::Encoder.new
    assert_equal [inner, { "m" => inner }], Tersa.load_stream(enc.write(inner) + enc.write({ "m" => inner }))
  end

  def test_tersa_map_is_a_frozen_ordered_list_of_pairs
    map = Tersa::Map.new([["a", 1], ["a".b, 2], [0.0, 3], [-0.0, 4]])
    assert map.frozen?
    assert map.to_a.frozen?
    assert_equal 4, map.size
    assert_equal [["a", 1], ["a".b, 2], [0.0, 3], [-0.0, 4]], map.each.to_a
    pairs = []
    map.each { |k, v| pairs << [k, v] } # rubocop:disable Style/MapIntoArray
    assert_equal map.to_a, pairs
    map.each(&->(k, v) { pairs << [k, v] })
    assert_equal 8, pairs.size
    assert_equal [1, 2, 3, 4], map.map { |_, v| v }
    assert_equal 4, map.fetch(-0.0)
    assert_raises(KeyError) { map.fetch(1) }
    assert_equal :none, map.fetch(1, :none)
    assert map.key?("a".b)
    refute map.key?(Object.new)
    assert_raises(ArgumentError) { map.to_h }
    assert_equal({ "b" => 2 }, Tersa::Map.new([["b", 2]]).to_h)
  end

  def test_tersa_map_equality_and_hash
    a = Tersa::Map.new([["a", 1], ["a".b, 2]])
    b = Tersa::Map.new([["a", 1], ["a".b, 2]])
    assert_equal a, b
    assert a.eql?(b)
    assert_equal a.hash, b.hash
    refute_equal a, Tersa::Map.new([["a".b, 2], ["a", 1]]) # order is part of the value
    refute_equal a, Tersa::Map.new([["a", 1], ["c", 2]])
    assert_equal a, Tersa::Map.new([["a", 1.0], ["a".b, 2]])
    refute a.eql?(Tersa::Map.new([["a", 1.0], ["a".b, 2]]))
    assert_equal 2, { a => 1, b => 2, Tersa::Map.new([]) => 3 }.size
    refute_equal Tersa::Map.key_identity("a"), Tersa::Map.key_identity("a".b)
    assert_equal Tersa::Map.key_identity("é"), Tersa::Map.key_identity("é".encode("ISO-8859-1"))
  end

  def test_tersa_map_refuses_keys_equal_as_tersa_values
    err = assert_raises(ArgumentError) { Tersa::Map.new([[nan(0x7ff8000000000000), 1], [nan(0x7ff8000000000000), 2]]) }
    assert_match(/duplicate key/, err.message)
    assert_raises(ArgumentError) { Tersa::Map.new([["é", 1], ["é".encode("ISO-8859-1"), 2]]) }
    assert_raises(ArgumentError) { Tersa::Map.new([[Time.at(0).utc, 1], [Tersa::Timestamp.new(0, 0, :utc, nil), 2]]) }
    assert_raises(TypeError) { Tersa::Map.new([[1, 2, 3]]) }
    assert_raises(Tersa::EncodeError) { Tersa::Map.new([[Object.new, 1]]) }
    assert_raises(Tersa::EncodeError) { Tersa.dump(Tersa::Map.allocate) }
  end

  # Keys that are distinct Tersa values, several of them equal to Ruby's Hash.
  def confusable_keys
    [
      "a", "a".b, "ab", "ab".b, :a, 0.0, -0.0, 0, 1, 1.0,
      nan(0x7ff8000000000000), nan(0x7ff8000000000001), nan(0xfff8000000000000),
      Time.at(0).utc, Time.at(0, in: "+00:00"), Time.at(0, in: "+05:30"), Time.at(0, in: "-01:00"),
      Time.at(0, 5, :nsec, in: "UTC"), Tersa::Timestamp.floating(0), Tersa::Ext.new(1, "a".b),
      [0.0], [-0.0], ["a"], ["a".b], [[0.0]], [[-0.0]],
      { "a" => 1, "b" => 2 }, { "b" => 2, "a" => 1 }, { 0.0 => nil }, { -0.0 => nil }
    ]
  end

  def test_random_maps_of_confusable_keys
    r = Random.new(20_261_123)
    pool = confusable_keys
    assert_equal pool.size, pool.map { |k| Tersa::Map.key_identity(k) }.uniq.size
    300.times do
      keys = pool.sample(r.rand(0..8), random: r)
      map = Tersa::Map.new(keys.each_with_index.map { |k, i| [k, i] })
      form = r.rand(3) # the map in an array, as a value, or as a key
      value = [[map], { "m" => map }, Tersa::Map.new([[map, 1], [7, map]])][form]
      bytes = Tersa.dump(value)
      back = Tersa.load(bytes)
      assert_equal bytes, Tersa.dump(back)
      got = case form
            when 0 then back[0]
            when 1 then back["m"]
            else back.to_a[0][0]
            end
      expected_class = keys.uniq.size == keys.size ? Hash : Tersa::Map
      assert_instance_of expected_class, got, keys.inspect
      assert_equal keys.map { |k| Tersa::Map.key_identity(k) }, got.keys.map { |k| Tersa::Map.key_identity(k) }
    end
  end

  # --- the encoder never writes a map with two equal keys ---

  def test_nan_keys_with_equal_bits
    h = { nan(0x7ff8000000000000) => 1, nan(0x7ff8000000000000) => 2 }
    assert_equal 2, h.size, "two NaN objects are two Hash keys"
    err = assert_raises(Tersa::EncodeError) { Tersa.dump(h) }
    assert_match(/duplicate map key/, err.message)
    assert_match(/NaN/, err.message)
    assert_raises(Tersa::EncodeError) { Tersa.dump({ Float::NAN => 1, 0.0 / 0.0 => 2 }) } if bits(0.0 / 0.0) == bits(Float::NAN)
    other = { nan(0x7ff8000000000000) => 1, nan(0x7ff8000000000001) => 2 }
    back = Tersa.load(Tersa.dump(other))
    assert_equal [0x7ff8000000000000, 0x7ff8000000000001], back.keys.map { |k| bits(k) }
  end

  def test_identity_hashes_with_equal_string_keys
    twins = {}.compare_by_identity
    twins[+"k"] = 1
    twins[+"k"] = 2
    assert_raises(Tersa::EncodeError) { Tersa.dump(twins) }
    # after maps whose shape the writer already knows, and in a stream
    assert_raises(Tersa::EncodeError) { Tersa.dump([{ "k" => 0 }, { "k" => 0, "j" => 1 }, twins]) }
    enc = Tersa::Encoder.new
    enc.write({ "k" => 1 })
    enc.write({ "k" => 1 })
    assert_raises(Tersa::EncodeError) { enc.write(twins) }
    big = {}.compare_by_identity
    40.times { |i| big[+"key#{i}"] = i }
    big[+"key7"] = :again
    assert_raises(Tersa::EncodeError) { Tersa.dump(big) }
  end

  def test_keys_ruby_keeps_apart_that_are_one_tersa_value
    assert_raises(Tersa::EncodeError) { Tersa.dump({ Time.at(0).utc => 1, Tersa::Timestamp.new(0, 0, :utc, nil) => 2 }) }
    assert_raises(Tersa::EncodeError) { Tersa.dump({ "é" => 1, "é".encode("ISO-8859-1") => 2 }) }
    assert_raises(Tersa::EncodeError) { Tersa.dump({ 1 => 0, "é" => 1, "é".encode("ISO-8859-1") => 2 }) }
    assert_raises(Tersa::EncodeError) { Tersa.dump({ [nan(0x7ff8000000000000)] => 1, [nan(0x7ff8000000000000)] => 2 }) }
  end

  def test_identity_hashes_with_equal_array_keys
    twins = {}.compare_by_identity
    twins[[1, "a"]] = 1
    twins[[1, "a"]] = 2
    err = assert_raises(Tersa::EncodeError) { Tersa.dump(twins) }
    assert_match(/duplicate map key/, err.message)
    twins = {}.compare_by_identity
    twins[[0.0]] = 1
    twins[[-0.0]] = 2
    assert_equal [[0.0], [-0.0]].map(&:inspect), Tersa.load(Tersa.dump(twins)).keys.map(&:inspect)
  end

  # A String subclass may define eql? and hash so that an ordinary Hash holds
  # two equal keys, and a Hash does not freeze such keys.
  class LooseKey < String
    def eql?(other) = equal?(other)
    def hash = object_id.hash
  end

  def test_string_subclass_keys_that_repeat
    h = { LooseKey.new("a") => 1, LooseKey.new("a") => 2 }
    assert_equal 2, h.size
    assert_raises(Tersa::EncodeError) { Tersa.dump(h) }
    mutable = { LooseKey.new("a") => 1, LooseKey.new("b") => 2 }
    assert_equal({ "a" => 1, "b" => 2 }, Tersa.load(Tersa.dump(mutable)))
    mutable.keys[1].replace("a")
    assert_raises(Tersa::EncodeError) { Tersa.dump(mutable) }
    assert_raises(Tersa::EncodeError) { Tersa.dump([{ "a" => 1, "b" => 2 }, mutable]) }
  end
end
