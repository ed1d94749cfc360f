# frozen_string_literal: true

require_relative "helper"

# Decoding creates the value's objects and nothing else (keys are shared
# frozen strings); encoding creates the output String and nothing else.
class TestAllocations < Minitest::Test
  DOCS = Dir[File.join(TersaTestHelper::ROOT, "bench/corpus/seed/*.json")].sort.map { |f| JSON.parse(File.read(f)) }

  # Heap objects a decoded value holds (keys excluded: they are shared).
  def objects_in(v)
    case v
    when Hash then 1 + v.values.sum { |x| objects_in(x) }
    when Array then 1 + v.sum { |x| objects_in(x) }
    when String then 1
    when Float then v.equal?(v + 0.0) ? 0 : 1 # flonums are immediates
    when Integer then v.is_a?(Integer) && !(-2**62...2**62).cover?(v) ? 1 : 0
    else 0
    end
  end

  # Objects allocated by the block's second run: the first fills inline
  # method caches at the call site, which is the interpreter's cost, not ours.
  # No collection runs in between: the decoder's caches refill after one
  # (once per collection, not per call), which depends on how large the heap
  # the tests before this one left is.
  def allocated
    GC.start
    GC.disable
    2.times.map do
      before = GC.stat(:total_allocated_objects)
      yield
      GC.stat(:total_allocated_objects) - before
    end.last
  ensure
    GC.enable
  end

  def test_decode_allocates_only_the_value
    dec = Tersa::Decoder.new
    DOCS.each do |d|
      bytes = Tersa.dump(d)
      # Warm the key and shape caches: a shape used once per call gets its
      # template in the third call that meets it.
      3.times do
        dec.decode(bytes)
        Tersa.load(bytes)
      end
      v = nil
      n = allocated { v = Tersa.load(bytes) }
      assert_operator n, :<=, objects_in(v), "#{n} objects for a value of #{objects_in(v)}"
      n = allocated { dec.decode(bytes) }
      assert_operator n, :<=, objects_in(v)
    end
  end

  def test_repeated_keys_cost_nothing
    rows = Array.new(1000) { |i| { "id" => i, "name" => "n#{i}", "active" => i.odd?, "score" => i * 0.5 } }
    bytes = Tersa.dump(rows)
    Tersa.load(bytes)
    # The Array, 1000 Hashes, 1000 name Strings; scores are flonums.
    assert_operator allocated { Tersa.load(bytes) }, :<=, 2001
    dec = Tersa::Decoder.new(symbolize_keys: true)
    assert_operator allocated { dec.decode(bytes) }, :<=, 2001
    # Passing keywords to a C method costs the interpreter two Hashes per call.
    assert_operator allocated { Tersa.load(bytes, symbolize_keys: true) }, :<=, 2001 + 2
  end

  def test_encode_allocates_at_most_two_objects
    enc = Tersa::Encoder.new
    DOCS.each do |d|
      Tersa.dump(d)
      assert_operator allocated { Tersa.dump(d) }, :<=, 2
      assert_operator allocated { enc.encode(d) }, :<=, 2
    end
  end
end
