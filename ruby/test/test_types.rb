# frozen_string_literal: true

require_relative "helper"

# Every Ruby type Tersa holds comes back exactly.
class TestTypes < Minitest::Test
  include TersaTestHelper

  def round_trip(value)
    back = Tersa.load(Tersa.dump(value))
    assert exact?(value, back), "#{value.inspect[0, 200]} came back as #{back.inspect[0, 200]}"
    back
  end

  def test_scalars
    [nil, true, false, 0, 1, -1, 23, 24, -9, 2**31, -2**31, 2**53 + 1, 2**63 - 1, -2**63, 2**63, 2**64 - 1,
     2**64, -2**63 - 1, 2**200, -(10**40)].each { |v| round_trip(v) }
  end

  def test_floats_bit_exact
    nan_payload = [0x7ff0000000000001].pack("Q<").unpack1("E")
    [0.0, -0.0, 1.5, 0.1, 0.1 + 0.2, 2100.0, 1e22, 1e23, 5e-324, Float::MAX, Float::INFINITY, -Float::INFINITY,
     Float::NAN, nan_payload, 37.7749, -122.4194].each { |v| round_trip(v) }
    assert_equal 1.0.class, round_trip(1.0).class
  end

  def test_strings_and_encodings
    round_trip("")
    round_trip("héllo wörld ✓ 😀")
    assert_equal Encoding::UTF_8, round_trip("abc").encoding
    bin = "\x00\xff\xfe".b
    assert_equal Encoding::BINARY, round_trip(bin).encoding
    # US-ASCII strings are strings; other encodings are converted to UTF-8.
    assert_equal "abc", Tersa.load(Tersa.dump("abc".encode("US-ASCII")))
    assert_equal "café", Tersa.load(Tersa.dump("café".encode("ISO-8859-1")))
    err = assert_raises(Tersa::EncodeError) { Tersa.dump(["ok", "\xff\xfe".dup.force_encoding("UTF-8")]) }
    assert_match(/invalid UTF-8.*\$\[1\]/, err.message)
    # Another encoding that does not convert: an EncodeError with the path, not Encoding's error.
    bad = "\xff".dup.force_encoding("Shift_JIS")
    err = assert_raises(Tersa::EncodeError) { Tersa.dump({ "k" => [bad] }) }
    assert_match(/cannot convert a Shift_JIS String to UTF-8.*\$\["k"\]\[0\]/, err.message)
    err = assert_raises(Tersa::EncodeError) { Tersa.dump({ bad => 1 }) }
    assert_match(/Shift_JIS/, err.message)
  end

  def test_keys_of_every_kind_of_string
    latin = "café".encode("ISO-8859-1")
    ascii = "id".encode("US-ASCII")
    fresh = "na" + "me" # coderange not yet known
    { { latin => 1, ascii => 2 } => { "café" => 1, "id" => 2 },
      { fresh => 1, "x".b => 2 } => { "name" => 1, "x".b => 2 },
      { "id".b.to_sym => 1, :"é" => 2 } => { id: 1, "é": 2 } }.each do |value, back|
      assert_equal back, Tersa.load(Tersa.dump(value))
      assert_equal Tersa.dump(back), Tersa.dump(value)
    end
    broken = "\xff".dup.force_encoding("UTF-8")
    err = assert_raises(Tersa::EncodeError) { Tersa.dump([1, { "ok" => 1, broken => 2 }]) }
    assert_match(/invalid UTF-8 in a key of a Hash at \$\[1\]/, err.message)
  end

  def test_symbols
    assert_equal :active, round_trip(:active)
    assert_equal({ id: 1, "id" => 2 }, round_trip({ id: 1, "id" => 2 }))
    assert_equal :"日本", round_trip(:"日本")
  end

  def test_arrays_and_hashes_keep_order_and_any_keys
    h = { "b" => 1, "a" => 2, 3 => [4], nil => 5, 1.5 => 6, [1, 2] => 7, { "k" => 1 } => 8, true => 9 }
    back = round_trip(h)
    assert_equal h.keys, back.keys
    assert_equal({ 1 => "int", 1.0 => "float" }, round_trip({ 1 => "int", 1.0 => "float" }))
    round_trip([[], [[]], {}, [{}]])
  end

  # The encoder writes runs of plain items (Integers, Floats, nil, booleans,
  # UTF-8 and binary Strings) in one call, short arrays of scalars without a
  # frame, and everything else one by one: arrays mixing every kind, short
  # and long, alone, nested and in maps.
  def test_arrays_mixing_every_kind_of_item
    kinds = [1, -2**40, 2**70, 1.5, 1e300, -0.0, nil, true, false, "a", "é", "\xff".b, "x".encode("ISO-8859-1"),
             "é".encode("ISO-8859-1"), :sym, :"dyn#{object_id}", [], [1, "a"], {}, { "k" => 1.5 }, Time.at(1, 5, :nsec).utc]
    convert = lambda do |v|
      case v
      when Array then v.map(&convert)
      when Hash then v.to_h { |k, x| [k, convert.(x)] }
      when String then v.encoding == Encoding::ISO_8859_1 ? v.encode("UTF-8") : v
      else v
      end
    end
    r = Random.new(7)
    300.times do
      ary = Array.new(r.rand(0..40)) { kinds.sample(random: r) }
      value = [ary, { "a" => ary, "b" => ary.first(3) }, [ary.first(2), ary.last(16)], ary.first(17)]
      back = Tersa.load(Tersa.dump(value))
      assert exact?(convert.(value), back), "#{value.inspect[0, 300]} came back as #{back.inspect[0, 300]}"
    end
  end

  def test_invalid_strings_in_arrays_are_found_where_they_are
    bad = "\xff".dup.force_encoding("UTF-8")
    { [[1, 2.5, bad]] => "$[0][2]", { "k" => [1, bad] } => '$["k"][1]', [0] * 20 + [bad] => "$[20]",
      [[1, [2.5, "ok", bad]]] => "$[0][1][2]", { "k" => bad } => '$["k"]', [{ "k" => [nil, bad] }] => '$[0]["k"][1]',
      { "a" => 1, "b" => 2.5, "c" => nil, "d" => bad } => '$["d"]', [{ "a" => 1, "b" => [2, bad] }] => '$[0]["b"][1]',
      { "a" => :s, "b" => 1, "c" => [1.5, 2.5], "d" => "ok", "e" => bad } => '$["e"]' }.each do |v, path|
      err = assert_raises(Tersa::EncodeError) { Tersa.dump(v) }
      assert_includes err.message, "invalid UTF-8 in String at #{path}"
    end
  end

  # A map's scalar values are written in runs that stop at any other value
  # (a Symbol, a Bignum, a container, a String to convert) and go on after it.
  def test_map_values_of_every_kind_in_runs
    latin = "caf\xE9".dup.force_encoding("ISO-8859-1")
    values = [1, -2, 2.5, 1e300, nil, true, false, "text", "x" * 40, "bin".b, :sym, 2**70, [1, 2], [1.5, 2.5],
              ["a", "b"], [nil, 1, "c"], Array.new(12) { |i| i }, {}, { "n" => 1 }, [], latin, Time.at(0).utc]
    r = Random.new(11)
    200.times do
      h = Array.new(r.rand(1..20)) { |i| ["k#{i}", values.sample(random: r)] }.to_h
      back = Tersa.load(Tersa.dump([h, h]))
      expected = h.transform_values { |v| v.is_a?(String) && v.encoding == Encoding::ISO_8859_1 ? v.encode("UTF-8") : v }
      assert_equal [expected, expected], back, h.inspect[0, 300]
    end
  end

  # Maps are built directly the first time their keys are seen and from a
  # template afterwards; sizes around Ruby's small-table limit (8) and the
  # binding's bulk-insert limit (16), shapes used once, twice and often.
  def test_maps_of_shapes_seen_once_twice_and_often
    [1, 7, 8, 9, 16, 17, 40].each do |n|
      keys = Array.new(n) { |i| "k#{n}_#{i}" }
      sparse = Array.new(60) { |r| keys.each_with_index.select { |_, i| (r >> (i % 6)).odd? || i.zero? }.to_h { |k, i| [k, i * r] } }
      rows = [sparse, Array.new(5) { |r| keys.to_h { |k| [k, r] } }, keys.to_h { |k| [k, nil] }]
      back = round_trip(rows)
      assert_equal rows.flatten.map(&:keys), back.flatten.map(&:keys)
      dec = Tersa::Decoder.new(symbolize_keys: true)
      bytes = Tersa.dump(rows)
      2.times { assert_equal rows[1].map { |h| h.transform_keys(&:to_sym) }, dec.decode(bytes)[1] }
      assert Tersa.load(bytes, freeze: true).flatten.all?(&:frozen?)
    end
    # Large ordinary Hashes are trusted to hold distinct keys, identity ones are not.
    big = Array.new(40) { |i| ["key#{i}", i] }.to_h
    assert_equal big, round_trip(big)
    twins = {}.compare_by_identity
    40.times { |i| twins[+"key#{i}"] = i }
    assert_equal big, round_trip(twins)
    twins[+"key3"] = 0
    assert_raises(Tersa::EncodeError) { Tersa.dump([big, twins]) }
  end

  def test_time_keeps_nanoseconds_and_offset
    t = Time.at(1_744_795_427, 123_456_789, :nsec, in: "+05:45")
    back = round_trip(t)
    assert_equal 123_456_789, back.nsec
    assert_equal 345 * 60, back.utc_offset
    u = round_trip(Time.utc(1969, 12, 31, 23, 59, 59, 999_999.999r))
    assert u.utc?
    round_trip(Time.utc(2106, 2, 7, 6, 28, 16))
    round_trip(Time.utc(1, 1, 1))
    round_trip(Time.utc(9999, 12, 31, 23, 59, 59))
    assert_raises(Tersa::EncodeError) { Tersa.dump(Time.utc(10_000, 1, 1)) }
    assert_raises(Tersa::EncodeError) { Tersa.dump(Time.at(0, in: "+00:00:30")) }
    assert_raises(Tersa::EncodeError) { Tersa.dump(Time.at(Rational(1, 3))) }
    floating = Tersa::Timestamp.floating(1_744_795_427, 5)
    assert_equal floating, Tersa.load(Tersa.dump(floating))
  end

  Point = Struct.new(:x, :y)

  def test_struct_through_default_hook
    hook = ->(o) { o.is_a?(Struct) ? o.to_h : raise(TypeError) }
    assert_equal({ x: 1, y: 2 }, Tersa.load(Tersa.dump(Point.new(1, 2), default: hook)))
    err = assert_raises(Tersa::EncodeError) { Tersa.dump({ "p" => [Point.new(1, 2)] }) }
    assert_match(/TestTypes::Point/, err.message)
    assert_match(/\$\["p"\]\[0\]/, err.message)
  end

  class Money
    attr_reader :cents

    def initialize(cents) = @cents = cents
    def to_tersa = { "cents" => cents }
  end

  def test_to_tersa
    assert_equal({ "cents" => 250 }, Tersa.load(Tersa.dump(Money.new(250))))
  end

  def test_unsupported_object_names_class_and_path
    err = assert_raises(Tersa::EncodeError) { Tersa.dump([1, 2, { "user" => Object.new }]) }
    assert_match(/unsupported type Object at \$\[2\]\["user"\]/, err.message)
  end

  def test_cycles_raise
    a = [1]
    a << a
    err = assert_raises(Tersa::EncodeError) { Tersa.dump(a) }
    assert_match(/circular reference/, err.message)
    h = {}
    h["self"] = h
    assert_raises(Tersa::EncodeError) { Tersa.dump(h) }
  end

  def test_extension_values_without_a_type
    e = Tersa::Ext.new(7, "\x01\x02".b)
    assert_equal e, Tersa.load(Tersa.dump(e))
  end

  def test_binary_output
    out = Tersa.dump({ "a" => 1 })
    assert_equal Encoding::BINARY, out.encoding
    assert_equal "\xC1\x70\x10".b, out[0, 3]
  end
end
