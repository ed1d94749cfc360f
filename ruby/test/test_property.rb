# frozen_string_literal: true

require_relative "helper"

# Randomized properties, seeded (TERSA_SEED=n to replay a failure):
# - any value round-trips exactly, and encoding is a function of the value;
# - a stream fed in random pieces decodes to the same values;
# - corrupting or cutting a valid buffer yields a value or Tersa::DecodeError
#   with an offset inside the input, never another exception or a crash.
class TestProperty < Minitest::Test
  include TersaTestHelper

  SEED = Integer(ENV.fetch("TERSA_SEED", 20_261_120))
  # Fewer iterations under valgrind (make memcheck), more for a long soak.
  SCALE = Float(ENV.fetch("TERSA_PROPERTY_SCALE", 1))

  def iterations(n) = [(n * SCALE).round, 1].max

  # Strings chosen to stress the string table, the prefix slots, the
  # timestamp packer and UTF-8 handling.
  STRING_POOL = [
    "", "a", "id", "name", "user_1234", "user_1235", "https://example.com/a/b",
    "https://example.com/a/c", "2024-03-01T12:00:00Z", "2024-03-01T12:00:00.123+05:30",
    "2024-03-01", "12:30:45", "1999-12-31T23:59:59.999999999Z", "0001-01-01T00:00:00Z",
    "héllo", "日本語テキスト", "emoji 😀 mix", "\u0000nul", "x" * 300, "ab" * 40,
    "2024-13-01T00:00:00Z", "2024-02-30T00:00:00Z", "+1 555 0100", "00123", "1e5", "-0"
  ].freeze

  def rand_string(r)
    case r.rand(6)
    when 0 then STRING_POOL.sample(random: r).dup
    when 1 then STRING_POOL.sample(random: r) + r.rand(1000).to_s
    when 2 then Array.new(r.rand(40)) { r.rand(32..126).chr }.join
    when 3 then Array.new(r.rand(12)) { [r.rand(0x80..0x10FFFF)].pack("U") rescue "?" }.join.scrub("?")
    when 4 then format("%04d-%02d-%02dT%02d:%02d:%02d%s", r.rand(1..9999), r.rand(1..12), r.rand(1..28), r.rand(24),
                       r.rand(60), r.rand(60), ["Z", "+01:00", "-08:00", ".5Z", ".000001Z", ""].sample(random: r))
    else "k#{r.rand(20)}"
    end
  end

  def rand_float(r)
    case r.rand(6)
    when 0 then [r.rand(2**64)].pack("Q<").unpack1("E") # any bit pattern, NaN payloads included
    when 1 then (r.rand(-10**6..10**6) / 10.0**r.rand(0..8)).round(r.rand(0..8))
    when 2 then [0.0, -0.0, Float::INFINITY, -Float::INFINITY, Float::NAN, 5e-324, Float::MAX, 1e22, 1e23].sample(random: r)
    when 3 then r.rand * 10**r.rand(-30..30)
    when 4 then r.rand(-1000..1000) + 0.5
    else r.rand.round(2)
    end
  end

  def rand_integer(r)
    case r.rand(5)
    when 0 then r.rand(-8..23)
    when 1 then r.rand(-2**15..2**15)
    when 2 then r.rand(-2**63..2**64 - 1)
    when 3 then [2**63 - 1, -2**63, 2**64 - 1, 2**63, -2**63 - 1, 2**64].sample(random: r) + r.rand(-1..1)
    else (r.rand(2) == 0 ? 1 : -1) * r.rand(2**64..2**300)
    end
  end

  def rand_time(r)
    sec = r.rand(-62_135_596_800..253_402_300_799)
    nsec = [0, r.rand(1000) * 1_000_000, r.rand(10**9)].sample(random: r)
    case r.rand(3)
    when 0 then Time.at(sec, nsec, :nsec, in: "UTC")
    when 1
      off = r.rand(-23 * 60..23 * 60)
      Time.at(sec, nsec, :nsec, in: format("%s%02d:%02d", off.negative? ? "-" : "+", off.abs / 60, off.abs % 60))
    else Tersa::Timestamp.floating(sec, nsec)
    end
  end

  def rand_scalar(r)
    case r.rand(10)
    when 0 then [nil, true, false].sample(random: r)
    when 1, 2 then rand_integer(r)
    when 3, 4 then rand_float(r)
    when 5, 6 then rand_string(r)
    when 7 then rand_string(r).to_sym
    when 8 then Array.new(r.rand(20)) { r.rand(256).chr }.join.b
    else rand_time(r)
    end
  end

  def rand_value(r, depth = 0)
    return rand_scalar(r) if depth > 5 || r.rand(3) != 0

    case r.rand(4)
    when 0 then Array.new(r.rand(8)) { rand_value(r, depth + 1) }
    when 1 # records sharing a shape, the common case the tables exist for
      keys = Array.new(r.rand(1..6)) { rand_string(r) }.uniq
      Array.new(r.rand(1..6)) { keys.to_h { |k| [k, rand_value(r, depth + 2)] } }
    when 2 then Array.new(r.rand(6)) { [rand_string(r), rand_value(r, depth + 1)] }.to_h
    else Array.new(r.rand(5)) { [rand_value(r, depth + 2), rand_value(r, depth + 1)] }.to_h
    end
  end

  def test_values_round_trip_exactly
    r = Random.new(SEED)
    iterations(2000).times do |i|
      v = rand_value(r)
      bytes = Tersa.dump(v)
      back = Tersa.load(bytes)
      assert exact?(v, back), "seed #{SEED} value #{i}: #{v.inspect[0, 300]} came back as #{back.inspect[0, 300]}"
      assert_equal bytes, Tersa.dump(back), "seed #{SEED} value #{i}: re-encoding changed the bytes"
    end
  end

  def test_streams_fed_in_random_pieces
    r = Random.new(SEED + 1)
    iterations(20).times do
      values = Array.new(r.rand(1..30)) { rand_value(r) }
      enc = Tersa::Encoder.new
      bytes = values.map { |v| enc.write(v) }.join
      assert values.zip(Tersa.load_stream(bytes)).all? { |a, b| exact?(a, b) }

      dec = Tersa::Decoder.new
      got = []
      pos = 0
      while pos < bytes.bytesize
        n = r.rand(1..64)
        dec.feed(bytes.byteslice(pos, n))
        dec.each { |v| got << v }
        pos += n
      end
      dec.finish
      assert_equal values.size, got.size
      assert values.zip(got).all? { |a, b| exact?(a, b) }
    end
  end

  def test_corrupted_input_fails_cleanly
    r = Random.new(SEED + 2)
    seeds = Array.new(iterations(60)) { Tersa.dump(rand_value(r)) }
    seeds += Dir[File.join(ROOT, "bench/corpus/seed/*.json")].map { |f| Tersa.dump(JSON.parse(File.read(f))) }
    iterations(15_000).times do
      bytes = seeds.sample(random: r).dup
      case r.rand(4)
      when 0 then bytes = bytes.byteslice(0, r.rand(bytes.bytesize))
      when 1 then r.rand(1..4).times { bytes.setbyte(r.rand(bytes.bytesize), r.rand(256)) }
      when 2 then bytes.insert(r.rand(bytes.bytesize + 1), r.rand(256).chr.b)
      else
        i = r.rand(bytes.bytesize)
        bytes = bytes.byteslice(0, i) + bytes.byteslice(i + 1..).to_s
      end
      check_decodes_or_fails(bytes)
    end
  end

  private

  def check_decodes_or_fails(bytes)
    value = Tersa.load(bytes)
    # Whatever decodes is a valid value: it must encode and come back equal.
    assert exact?(value, Tersa.load(Tersa.dump(value)))
  rescue Tersa::DecodeError => e
    assert_kind_of Integer, e.offset
    assert_operator e.offset, :<=, bytes.bytesize, "#{e.message} (offset past the input)"
    assert_kind_of Symbol, e.code
  end
end
