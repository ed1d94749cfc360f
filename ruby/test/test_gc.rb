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

  def test_symbolize_and_freeze_caches_after_compaction
    d = DOCS[3]
    b = Tersa.dump(d)
    a = Tersa.load(b, symbolize_keys: true)
    GC.verify_compaction_references(double_heap: true, toward: :empty)
    assert_equal a, Tersa.load(b, symbolize_keys: true)
    assert_equal d, Tersa.load(b, freeze: true)
  end
end
