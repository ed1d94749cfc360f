# frozen_string_literal: true

require_relative "helper"
require "open3"
require "rbconfig"
require "set"

# The well-known types of SPEC 5.8 as Ruby objects: BigDecimal, Date,
# Tersa::UUID and Tersa::TimeOfDay; DateTime as a timestamp; Set refused with
# a hint. The vectors (test_vectors.rb) pin their bytes; this file covers what
# is particular to Ruby.
class TestWellKnown < Minitest::Test
  include TersaTestHelper

  HEADER = Tersa.dump(nil).byteslice(0, 3)

  def roundtrip(value) = Tersa.load(Tersa.dump(value))

  # A buffer of one EXT item of `type` carrying `payload`, written by hand
  # (Tersa.dump refuses reserved types).
  def ext_buffer(type, payload)
    HEADER + [0xF7].pack("C") + varint(type) + varint(payload.bytesize) + payload.b
  end

  def varint(v)
    n = 1
    n += 1 while v >= (1 << (7 * n))
    [((v << 1) | 1) << (n - 1)].pack("Q<").byteslice(0, n)
  end

  def zigzag(s) = s.negative? ? (-s * 2) - 1 : s * 2

  def assert_invalid(bytes, offset = 3)
    err = assert_raises(Tersa::DecodeError) { Tersa.load(bytes) }
    assert_equal :invalid_value, err.code, err.message
    assert_equal offset, err.offset, err.message
  end

  # --- BigDecimal ---------------------------------------------------------

  def test_decimal_round_trips_by_value_and_sign
    ["0", "-0", "1", "-1", "12.345", "-12.345", "1e-999999999", "1e999999999", "123456789012345678901234567890.123456789",
     "Infinity", "-Infinity"].each do |text|
      d = BigDecimal(text)
      back = roundtrip(d)
      assert_instance_of BigDecimal, back, text
      assert_equal d, back, text
      assert_equal d.sign, back.sign, text
    end
    assert_predicate roundtrip(BigDecimal("NaN")), :nan?
  end

  def test_decimal_payload_is_coefficient_and_exponent
    # 12.345 = 12345 x 10^-3: kind 0, zigzag(-3) = 5, coefficient 0x3039.
    assert_equal ext_buffer(0xFF00, [0, 0x0B, 0x30, 0x39].pack("C*")), Tersa.dump(BigDecimal("12.345"))
    assert_equal ext_buffer(0xFF00, [1, 0x01].pack("C*")), Tersa.dump(BigDecimal("-0"))
    assert_equal ext_buffer(0xFF00, [4].pack("C")), Tersa.dump(BigDecimal("NaN"))
  end

  # BigDecimal keeps no scale: 1.00 is 0.1e1, the same value as 1, and
  # encodes as (c=1, e=0); other implementations' 1.00 (c=100, e=-2) reads
  # as a BigDecimal equal to 1.
  def test_decimal_trailing_zeros_are_normalised
    assert_equal Tersa.dump(BigDecimal("1")), Tersa.dump(BigDecimal("1.00"))
    assert_equal ext_buffer(0xFF00, [0, varint(zigzag(2)), 1].pack("Ca*C")), Tersa.dump(BigDecimal("100"))
    other = ext_buffer(0xFF00, [0, varint(zigzag(-2)), 100].pack("Ca*C"))
    assert_equal BigDecimal("1"), Tersa.load(other)
    assert_equal Tersa.dump(BigDecimal("1")), Tersa.dump(Tersa.load(other))
  end

  def test_decimal_limits
    coefficient = (256**1024) - 1 # 1,024 bytes of 0xFF
    at_limit = BigDecimal(coefficient.to_s)
    assert_equal at_limit, roundtrip(at_limit)
    err = assert_raises(Tersa::EncodeError) { Tersa.dump([BigDecimal((coefficient * 3).to_s)]) }
    assert_match(/coefficient above 1,024 bytes.*BigDecimal at \$\[0\]/, err.message)
    err = assert_raises(Tersa::EncodeError) { Tersa.dump({ "x" => BigDecimal("1e1000003000") }) }
    assert_match(/exponent beyond.*BigDecimal at \$\["x"\]/, err.message)
    assert_raises(Tersa::EncodeError) { Tersa.dump(BigDecimal("1e-1000000000")) }
  end

  # BigDecimal reads (c=10, e=999999999) as 1e1000000000: zeros go back into
  # the coefficient to bring the exponent into range.
  def test_decimal_exponent_above_the_range_takes_zeros
    top = ext_buffer(0xFF00, [0].pack("C") + varint(zigzag(999_999_999)) + "\x0A")
    assert_equal BigDecimal("1e1000000000"), Tersa.load(top)
    assert_equal top, Tersa.dump(Tersa.load(top))
    assert_equal top, Tersa.dump(BigDecimal("1e1000000000"))
  end

  # --- Date and DateTime --------------------------------------------------

  def test_date_round_trips_by_julian_day
    [Date.new(2024, 2, 29), Date.new(1970, 1, 1), Date.new(1969, 12, 31), Date.new(9999, 12, 31),
     Date.new(1, 1, 1, Date::GREGORIAN)].each do |d|
      back = roundtrip(d)
      assert_instance_of Date, back
      assert_equal d.jd, back.jd
    end
    assert_equal ext_buffer(0xFF01, varint(zigzag(-1))), Tersa.dump(Date.new(1969, 12, 31))
  end

  # The payload counts days, so a date in Ruby's default (Julian before
  # 1582-10-15) calendar and the same day in the proleptic Gregorian one are
  # the same value.
  def test_date_is_the_day_whatever_the_calendar
    julian = Date.new(1582, 10, 4)
    gregorian = Date.new(1582, 10, 14, Date::GREGORIAN)
    assert_equal julian.jd, gregorian.jd
    assert_equal Tersa.dump(julian), Tersa.dump(gregorian)
  end

  def test_date_outside_years_1_to_9999
    assert_raises(Tersa::EncodeError) { Tersa.dump(Date.new(10_000, 1, 1)) }
    # Julian 0001-01-01 is Gregorian 0000-12-30.
    assert_raises(Tersa::EncodeError) { Tersa.dump(Date.new(1, 1, 1)) }
  end

  def test_datetime_stays_a_timestamp
    dt = DateTime.new(2024, 1, 2, 3, 4, 5.5r, "+02:00")
    back = roundtrip(dt)
    assert_instance_of Time, back
    assert_equal dt.to_time.to_r, back.to_r
    assert_equal 7200, back.utc_offset
    assert_equal Tersa.dump(dt.to_time), Tersa.dump(dt)
  end

  # --- Tersa::UUID ----------------------------------------------------------

  def test_uuid
    text = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
    id = Tersa::UUID.parse(text.upcase)
    assert_equal text, id.to_s
    assert_equal [text.delete("-")].pack("H*"), id.bytes
    assert_predicate id, :frozen?
    assert_predicate id.bytes, :frozen?
    assert_equal Encoding::BINARY, id.bytes.encoding
    assert_equal id, Tersa::UUID.new(id.bytes.dup)
    assert_equal 1, { id => 1, Tersa::UUID.parse(text) => 1 }.size
    refute_equal id, text
    assert_equal ext_buffer(0xFF02, id.bytes), Tersa.dump(id)
    back = roundtrip(id)
    assert_instance_of Tersa::UUID, back
    assert_equal id, back
    assert_predicate back, :frozen?
    assert_equal text, roundtrip(text), "strings stay strings"
  end

  def test_uuid_rejects_malformed_input
    ["", "f81d4fae7dec11d0a76500a0c91e6bf6", "f81d4fae-7dec-11d0-a765-00a0c91e6bf", "g81d4fae-7dec-11d0-a765-00a0c91e6bf6",
     "f81d4fae-7dec-11d0-a765-00a0c91e6bf6\n"].each do |bad|
      assert_raises(ArgumentError, bad) { Tersa::UUID.parse(bad) }
    end
    assert_raises(ArgumentError) { Tersa::UUID.new("x" * 15) }
    assert_raises(TypeError) { Tersa::UUID.new(nil) }
  end

  # --- Tersa::TimeOfDay -----------------------------------------------------

  def test_time_of_day
    t = Tersa::TimeOfDay.new(12, 34, 56, 500_000)
    assert_equal [12, 34, 56, 500_000], [t.hour, t.min, t.sec, t.usec]
    assert_equal "12:34:56.500000", t.to_s
    assert_equal "09:05:00", Tersa::TimeOfDay.new(9, 5).to_s
    assert_equal 45_296_500_000, t.to_i
    assert_operator Tersa::TimeOfDay.new(0), :<, t
    assert_equal t, Tersa::TimeOfDay.new(12, 34, 56, 500_000)
    assert_equal 1, { t => 1, Tersa::TimeOfDay.new(12, 34, 56, 500_000) => 2 }.size
    assert_equal Tersa::TimeOfDay.new(8, 1, 2, 3), Tersa::TimeOfDay.of(Time.utc(2000, 1, 1, 8, 1, 2, 3))
    assert_equal ext_buffer(0xFF03, varint(t.to_i)), Tersa.dump(t)
    [t, Tersa::TimeOfDay.new(0), Tersa::TimeOfDay.new(23, 59, 59, 999_999)].each do |x|
      back = roundtrip(x)
      assert_instance_of Tersa::TimeOfDay, back
      assert_equal x, back
      assert_predicate back, :frozen?
    end
  end

  def test_time_of_day_fields_are_checked
    [[24], [0, 60], [0, 0, 60], [0, 0, 0, 1_000_000], [-1], [1.5]].each do |args|
      assert_raises(ArgumentError, args.inspect) { Tersa::TimeOfDay.new(*args) }
    end
  end

  # --- Set, registration, Ext ---------------------------------------------

  def test_set_is_refused_with_a_hint
    err = assert_raises(Tersa::EncodeError) { Tersa.dump({ "tags" => Set[1, 2] }) }
    assert_match(/unsupported type Set at \$\["tags"\] \(.*set\.to_a/, err.message)
    assert_equal [[1, 2]], Tersa.load(Tersa.dump([Set[1, 2]], default: ->(s) { s.to_a }))
  end

  def test_register_type_refuses_reserved_ids
    klass = Class.new
    err = assert_raises(ArgumentError) do
      Tersa.register_type(0xFF00, klass, packer: ->(_) { "" }, unpacker: ->(_) { klass.new })
    end
    assert_match(/0xFF00\.\.0xFFFF/, err.message)
    assert_raises(ArgumentError) { Tersa.register_type(0xFFFF, klass, packer: ->(_) { "" }, unpacker: ->(_) { 1 }) }
    Tersa.register_type(0xFEFE, klass, packer: ->(_) { "k" }, unpacker: ->(_) { :unpacked })
    assert_equal :unpacked, roundtrip(klass.new)
  end

  def test_ext_of_a_reserved_type_is_not_written
    assert_raises(Tersa::EncodeError) { Tersa.dump(Tersa::Ext.new(0xFF01, "\x01".b)) }
    assert_equal Tersa::Ext.new(0xFEFF, "\x01".b), roundtrip(Tersa::Ext.new(0xFEFF, "\x01".b))
  end

  # --- decoding -------------------------------------------------------------

  def test_invalid_payloads_are_invalid_value_at_the_item
    assert_invalid(ext_buffer(0xFF00, ""))
    assert_invalid(ext_buffer(0xFF00, [5].pack("C")))
    assert_invalid(ext_buffer(0xFF00, [2, 0].pack("C*")))
    assert_invalid(ext_buffer(0xFF00, [0, 1, 0, 1].pack("C*"))) # a leading zero byte
    assert_invalid(ext_buffer(0xFF01, varint(zigzag(2_932_897))))
    assert_invalid(ext_buffer(0xFF01, varint(0) + "\x00"))
    assert_invalid(ext_buffer(0xFF02, "\x00" * 15))
    assert_invalid(ext_buffer(0xFF03, varint(86_400_000_000)))
    assert_invalid(ext_buffer(0xFF04, ""))
    inside = HEADER + [0x81].pack("C") + ext_buffer(0xFF02, "\x00" * 17).byteslice(3..)
    assert_invalid(inside, 4)
  end

  # The decoder loads date and bigdecimal when it meets their values.
  def test_decoding_loads_the_libraries
    bytes = Tersa.dump([BigDecimal("1.5"), Date.new(2020, 1, 1)])
    script = 'require "tersa"; abort "preloaded" if defined?(BigDecimal) || defined?(Date); ' \
             'v = Tersa.load($stdin.read.b); print v.map(&:class).join(","), " ", v.map(&:to_s).join(",")'
    out, err, status = Open3.capture3(RbConfig.ruby, "-I", File.expand_path("../lib", __dir__), "-e", script,
                                      stdin_data: bytes)
    assert status.success?, err
    assert_equal "BigDecimal,Date 0.15e1,2020-01-01", out
  end

  def test_values_in_containers
    value = { "price" => BigDecimal("9.99"), "day" => Date.new(2025, 4, 16),
              "id" => Tersa::UUID.parse("00000000-0000-0000-0000-000000000007"), "at" => Tersa::TimeOfDay.new(8) }
    assert_equal [value, value], roundtrip([value, value])
    assert_predicate Tersa.load(Tersa.dump(value), freeze: true)["day"], :frozen?
  end
end
