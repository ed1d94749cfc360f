# frozen_string_literal: true

require_relative "helper"

# The extension's caches hold Ruby objects across calls (interned keys,
# templates, encoder shapes); they must survive compaction and full GCs.
class TestGC < Minitest::Test
  DOCS = Dir[File.join(TersaTestHelper::ROOT, "bench/corpus/seed/*.json")].sort.map { |f| JSON.parse(File.read(f)) }

  def check_all(enc, dec)
    DOCS.each do |d|
      bytes = enc.encode(d)
      assert_equal Tersa.dump(d), bytes
      assert_equal d, dec.decode(bytes)
      assert_equal d, Tersa.load(bytes)
    end
  end

  def test_compaction_moves_cached_objects
    enc = Tersa::Encoder.new
    dec = Tersa::Decoder.new
    check_all(enc, dec)
    GC.verify_compaction_references(double_heap: true, toward: :empty)
    check_all(enc, dec)
    GC.verify_compaction_references(double_heap: true, toward: :empty)
    check_all(enc, dec)
  end

  # Outputs past the writer's own buffer (8 KiB) are written into the String
  # returned, made before the walk and sized by the last large output; one
  # left by a failed call or a stream must be neither freed nor handed out
  # twice, and an output outgrowing it moves to a block of its own.
  def test_large_outputs_after_failures_streams_and_compaction
    big = Array.new(3000) { |i| { "id" => i, "name" => "item #{i}", "tags" => ["t#{i % 7}", "u#{i}"] } }
    bigger = big + big.map { |h| h.merge("extra" => h["name"] * 3) }
    small = { "a" => 1 }
    enc = Tersa::Encoder.new
    want = Tersa::Encoder.new.encode(big)
    want_bigger = Tersa::Encoder.new.encode(bigger)
    assert_operator want.bytesize, :>, 16 * 1024
    5.times do |round|
      assert_equal want, enc.encode(big)
      assert_raises(Tersa::EncodeError) { enc.encode([big, Object.new]) }
      GC.verify_compaction_references(double_heap: true, toward: :empty) if round.odd?
      GC.start
      assert_equal want, enc.encode(big)
      assert_equal want_bigger, enc.encode(bigger)
      enc.write(big) if round == 2
      assert_equal Tersa.dump(small), enc.encode(small)
      a = enc.encode(big)
      b = enc.encode(big)
      refute_same a, b
      a << "x"
      assert_equal want, b
      assert_equal Encoding::BINARY, b.encoding
      assert_equal big, Tersa.load(b)
    end
  end

  def test_gc_stress
    doc = DOCS.first
    bytes = Tersa.dump(doc)
    GC.stress = true
    begin
      3.times do
        assert_equal doc, Tersa.load(bytes)
        assert_equal bytes, Tersa.dump(doc)
        assert_equal doc, Tersa.load(bytes, freeze: true)
      end
    ensure
      GC.stress = false
    end
  end

  # Maps copied from a template and arrays of up to three elements are filled
  # without a barrier per value (one bulk barrier per object): values built
  # while the GC runs (stress) and kept through promotions stay intact, and
  # the heap passes Ruby's own check for missed write barriers.
  def test_bulk_filled_maps_and_arrays_under_gc
    rows = Array.new(40) { |i| { "id" => "id-#{i}", "pair" => ["a#{i}", "b#{i}"], "n" => i, "s" => "x" * (i % 30) } }
    bytes = Tersa.dump(rows)
    dec = Tersa::Decoder.new
    kept = []
    GC.stress = true
    begin
      4.times { kept << dec.decode(bytes) } # the third call makes the templates
    ensure
      GC.stress = false
    end
    3.times { GC.start(full_mark: false); kept << dec.decode(bytes) }
    GC.start
    GC.verify_internal_consistency
    kept.each { |v| assert_equal rows, v }
  end

  def test_symbolize_and_freeze_caches_after_compaction
    d = DOCS[3]
    b = Tersa.dump(d)
    a = Tersa.load(b, symbolize_keys: true)
    GC.verify_compaction_references(double_heap: true, toward: :empty)
    assert_equal a, Tersa.load(b, symbolize_keys: true)
    assert_equal d, Tersa.load(b, freeze: true)
  end
end
