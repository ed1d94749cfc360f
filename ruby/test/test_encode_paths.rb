# frozen_string_literal: true

require_relative "helper"

# The encoder takes shortcuts keyed on object identity (the shape lookup,
# skipped for a top-level map) and on flags (encoding, coderange, class).
# Whatever path a value takes, the bytes must be those of the same value
# built from fresh objects, which take the slow paths.
class TestEncodePaths < Minitest::Test
  include TersaTestHelper

  # The same value with every Hash rebuilt from new, unfrozen key Strings
  # (a Hash stores a frozen copy of each: no key object is shared).
  def fresh(v)
    case v
    when Hash then v.each_with_object({}) { |(k, x), h| h[k.is_a?(String) ? String.new(k) : k] = fresh(x) }
    when Array then v.map { |x| fresh(x) }
    else v
    end
  end

  def record(i) = { "id" => i, "name" => "n#{i}", "tags" => %w[a b], "score" => i * 0.5 }

  def shared_key_documents
    root = { "id" => 0, "name" => "root", "tags" => [], "score" => 1.5 }
    [
      root,
      root.merge("tags" => [record(1), record(2)]),
      { "id" => 1, "name" => "x", "tags" => { "id" => 2, "name" => "y", "tags" => { "id" => 3 }, "score" => 0.0 },
        "score" => 2.5 },
      [root, root, record(1)],
      { "a" => 1 },
      {},
      { "only" => { "only" => { "only" => 1 } } }
    ]
  end

  # The Hash readers of hash_fast check themselves at load time and fall back
  # to rb_hash_foreach, silently, if anything disagrees: where they know the
  # layout (Ruby 3.0-3.2, 64-bit) the check must pass.
  def test_hash_readers_pass_their_self_check_where_the_layout_is_known
    skip "no known Hash layout on Ruby #{RUBY_VERSION}" unless RUBY_VERSION >= "3.0" && RUBY_VERSION < "3.3"
    skip "no known Hash layout on 32-bit" unless [0].pack("J").bytesize == 8
    assert Tersa::Native::FAST_HASH, "hash_fast's load-time self-check failed"
  end

  def test_top_level_maps_sharing_key_objects_with_nested_maps
    shared_key_documents.each do |doc|
      bytes = Tersa.dump(doc)
      assert_equal hex(Tersa.dump(fresh(doc))), hex(bytes), doc.inspect
      assert exact?(doc, Tersa.load(bytes)), doc.inspect
    end
  end

  def test_top_level_maps_of_stream_frames
    docs = shared_key_documents
    enc = Tersa::Encoder.new
    ref = Tersa::Encoder.new
    got = docs.flat_map { |d| [enc.write(d), enc.write(d)] }.join
    want = docs.flat_map { |d| [ref.write(fresh(d)), ref.write(fresh(d))] }.join
    assert_equal hex(want), hex(got)
    assert_equal docs.flat_map { |d| [d, d] }, Tersa.load_stream(got)
  end

  def test_reused_encoder_after_maps_of_other_keys
    enc = Tersa::Encoder.new
    docs = shared_key_documents
    3.times do
      docs.each { |d| assert_equal hex(Tersa.dump(fresh(d))), hex(enc.encode(d)) }
    end
  end

  # One record per buffer: a top-level map's keys are remembered by identity
  # across buffers (while no GC runs). Records of a few key sets taking
  # turns, the same key objects in another order, in a compare_by_identity
  # Hash, under another key set, and after GC (and compaction), must write
  # what fresh objects write.
  def test_top_level_maps_of_one_record_per_buffer
    a, b, c, d = %w[alpha b id ts].map { |k| -k }
    ident = {}.compare_by_identity
    ident[a] = 1
    ident[b] = 2
    recs = [{ a => 1, b => "x" }, { c => 7, d => 1.5 }, { a => 2, b => "y" }, { b => "z", a => 3 },
            { a => 1, b => "x", c => nil }, ident, { c => 8, d => 2.5 }, { a => { a => 1, b => "w" }, b => [] }]
    enc = Tersa::Encoder.new
    ref = Tersa::Encoder.new
    3.times do |round|
      recs.each { |r| assert_equal hex(ref.encode(fresh(r))), hex(enc.encode(r)), "round #{round}: #{r.inspect}" }
      GC.start
      GC.compact if round == 1 && GC.respond_to?(:compact)
    end
  end

  # Nested maps' key objects are remembered across buffers with the keys
  # as the writer takes them (while no GC runs), and a buffer's shape
  # indices are its own: key sets taking turns in another order per buffer
  # (so that a shape's index differs from the buffer before), Symbol keys,
  # a compare_by_identity Hash whose unfrozen key changes between buffers,
  # and GC (and compaction) between buffers must write what fresh objects write.
  def test_nested_maps_across_buffers
    a, b, c, d = %w[alpha b id ts].map { |k| -k }
    key = +"kk"
    ident = {}.compare_by_identity
    ident[key] = 1
    recs = [{ a => 1, b => "x" }, { c => 7, d => 1.5 }, { sym: 1, a => 2 }, ident, { a => { c => 1, d => "w" }, b => [] }]
    docs = [[recs[0], recs[1]], [recs[1], recs[0], recs[2]], { "x" => recs[3], "y" => recs[0] }, [recs[4], recs[1]],
            [recs[2], recs[4], recs[0], recs[3]]]
    enc = Tersa::Encoder.new
    ref = Tersa::Encoder.new
    4.times do |round|
      docs.each do |doc|
        assert_equal hex(ref.encode(fresh(doc))), hex(enc.encode(doc)), "round #{round}: #{doc.inspect}"
        key.replace(key == "kk" ? "zz" : "kk")
      end
      key.replace("longer key #{round}")
      docs.reverse_each { |doc| assert_equal hex(ref.encode(fresh(doc))), hex(enc.encode(doc)), "round #{round}" }
      if round.odd?
        GC.start
        GC.compact if round == 1 && GC.respond_to?(:compact)
      end
    end
  end

  # A String key and a Symbol key of the same text share one string-table
  # entry: a remembered definition must not point at the writer's copy.
  def test_string_and_symbol_keys_of_one_text_per_buffer
    recs = [{ "name" => "name_a", :name => "name_b", "id" => 1 }, { :name => "name_c", "name" => "name_d", "id" => 2 }]
    enc = Tersa::Encoder.new
    ref = Tersa::Encoder.new
    4.times do |round|
      recs.each do |r|
        assert_equal hex(ref.encode(fresh(r))), hex(enc.encode(r)), "round #{round}: #{r.inspect}"
        enc.encode({ "other_#{round}" => "x" * 40 })
      end
    end
  end

  def test_identity_hash_at_the_top_and_nested
    twins = {}.compare_by_identity
    twins[+"k"] = 1
    twins[+"k"] = 2
    assert_raises(Tersa::EncodeError) { Tersa.dump(twins) }
    assert_raises(Tersa::EncodeError) { Tersa.dump({ "a" => twins }) }
    one = {}.compare_by_identity
    one[+"k"] = 1
    assert_equal hex(Tersa.dump({ "k" => 1 })), hex(Tersa.dump(one))
    assert_equal hex(Tersa.dump([{ "k" => 1 }, { "k" => 1 }])), hex(Tersa.dump([one, one]))
  end

  class Sub < String; end

  # Values that take each branch of the shaped-map value loop (direct
  # writers for Integers and UTF-8 Strings, a literal call, write_run, the
  # other scalars) and of the Array loop's leaf test.
  def scalar_values
    [0, -1, 2**62 - 1, -2**62, 2**62, -2**62 - 1, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 2**64, -2**64,
     nil, true, false, 1.5, -0.0, Float::INFINITY, "", "a", "ä€😀", "x" * 300, "abc".b, "\xff\x00".b,
     "caf\xe9".dup.force_encoding(Encoding::ISO_8859_1), "abc".encode(Encoding::UTF_16LE), "abc".dup.force_encoding(Encoding::US_ASCII),
     Sub.new("sub"), :sym, :"é", [], [1, 2.5, "s"], [[1, 2], [3, 4]], [{ "a" => 1 }], [[], {}], {}, Time.at(0, 5, :nsec).utc]
  end

  def test_every_kind_of_value_in_maps_and_arrays
    scalar_values.each do |v|
      want = Tersa.load(Tersa.dump([v])).first
      { "in a map" => { "k" => v, "z" => 1 }, "alone in a map" => { "k" => v },
        "in a map of many keys" => (1..20).to_h { |i| ["k#{i}", v] } }.each do |where, doc|
        got = Tersa.load(Tersa.dump(doc))
        assert exact?(doc.merge(doc.select { |_, x| x.equal?(v) }.transform_values { want }), got), "#{v.inspect} #{where}"
      end
      assert exact?(want, Tersa.load(Tersa.dump(v))), v.inspect
    end
  end

  def test_broken_utf8_fails_in_every_position
    bad = "ab\xffc".dup.force_encoding(Encoding::UTF_8)
    [bad, [bad], { "k" => bad }, { bad => 1 }, [1, bad], [[bad]], { "k" => [bad] }].each do |doc|
      assert_raises(Tersa::EncodeError, doc.inspect) { Tersa.dump(doc) }
    end
  end

  def test_hash_variants_write_the_plain_hash_bytes
    plain = { "a" => 1, "b" => "two", "c" => nil }
    with_default = Hash.new { |h, k| raise "default proc called for #{k}" }.merge!(plain)
    with_value = Hash.new(7).merge!(plain)
    unfrozen = {}
    plain.each { |k, v| unfrozen[+k] = v }
    deleted = { "x" => 0 }.merge!(plain)
    deleted.delete("x")
    big_deleted = (1..12).to_h { |i| ["d#{i}", i] }.merge!(plain)
    (1..12).each { |i| big_deleted.delete("d#{i}") }
    [with_default, with_value, unfrozen, deleted, big_deleted].each do |h|
      assert_equal hex(Tersa.dump(plain)), hex(Tersa.dump(h))
      assert_equal hex(Tersa.dump([plain, { "k" => plain }])), hex(Tersa.dump([h, { "k" => h }]))
    end
  end
end
