# frozen_string_literal: true

require_relative "helper"
require "objspace"

# What hostile input, misbehaving hooks and odd objects must not do: crash,
# corrupt state, keep growing, or lose data silently. One test per way a
# review found it could go wrong.
class TestRobustness < Minitest::Test
  include TersaTestHelper

  Box = Struct.new(:payload)

  def teardown
    Tersa.unregister_type(77)
  end

  def test_decoder_refuses_to_change_its_stream_from_an_unpacker
    dec = Tersa::Decoder.new
    tried = []
    Tersa.register_type(77, Box, packer: ->(b) { b.payload },
                                unpacker: lambda { |s|
                                  [-> { dec.feed("Z" * 100_000) }, -> { dec.finish }, -> { dec.reset },
                                   -> { dec.send(:initialize) }].each do |call|
                                    call.call
                                    tried << :allowed
                                  rescue Tersa::Error
                                    tried << :refused
                                  end
                                  GC.start
                                  Box.new(s)
                                })
    enc = Tersa::Encoder.new
    dec << enc.write([Box.new("a"), "B" * 3000]) << enc.write("after")
    got = dec.each.to_a
    assert_equal [:refused] * 4, tried
    assert_equal [[Box.new("a"), "B" * 3000], "after"], got
  end

  def test_reinitializing_an_encoder_starts_a_new_stream
    dict = Tersa::Dictionary.new(strings: ["alpha"], shapes: [%w[id name]])
    enc = Tersa::Encoder.new(dictionary: dict)
    enc.write({ "id" => 1, "name" => "alpha" })
    enc.send(:initialize, dictionary: nil)
    dict = nil # rubocop:disable Lint/UselessAssignment
    GC.start
    assert_equal [{ "id" => 2, "name" => "alpha" }], Tersa.load_stream(enc.write({ "id" => 2, "name" => "alpha" }))
  end

  def test_dictionary_arguments_are_read_once
    flip = Object.new
    def flip.to_a = (@n = (@n || 0) + 1) == 1 ? %w[k1] : %w[k1 k2 k3 k4 k5 k6 k7 k8]
    d = Tersa::Dictionary.new(shapes: [flip])
    assert_equal 1, d.shapes.size
    latin = Array.new(40) { |i| "caf\xE9 #{i}".dup.force_encoding("ISO-8859-1") }
    GC.stress = true
    begin
      d = Tersa::Dictionary.new(strings: latin)
    ensure
      GC.stress = false
    end
    assert_equal 40, d.strings.uniq.size
    assert_equal "café 0", d.strings.first
  end

  def test_repeated_long_strings_share_their_bytes
    big = "x" * 100_000
    value = Tersa.load(Tersa.dump([big] * 500))
    assert_equal 500, value.size
    assert(value.all? { |s| s == big })
    bytes = value.sum { |s| ObjectSpace.memsize_of(s) }
    assert_operator bytes, :<, 3 * big.bytesize, "500 copies would take #{500 * big.bytesize} bytes"
    value[1] << "!" # copy on write: the others are untouched
    assert_equal big, value[2]
    assert_equal big + "!", value[1]
  end

  def test_long_keys_repeated_by_many_shapes
    long = "k" * 5_000
    maps = Array.new(400) { |i| { long => i, "f#{i}" => nil, long.to_sym => -i } }
    assert_equal maps, Tersa.load(Tersa.dump(maps))
    loaded = Tersa.load(Tersa.dump(maps), symbolize_keys: false)
    assert(loaded.all? { |m| m.keys.first.equal?(loaded[0].keys.first) }, "one key object per call")
    sym = Tersa.load(Tersa.dump(maps.map { |m| m.reject { |k, _| k.is_a?(Symbol) } }), symbolize_keys: true)
    assert_equal 400, sym.size
    assert(sym.all? { |m| m.key?(long.to_sym) })

    enc = Tersa::Encoder.new
    bytes = maps.each_slice(50).map { |slice| enc.write(slice) }.join
    dec = Tersa::Decoder.new
    dec << bytes
    got = []
    dec.each do |v|
      got.concat(v)
      GC.start
      GC.compact if GC.respond_to?(:compact)
    end
    assert_equal maps, got
  end

  # One reference byte can repeat a 1 MiB key in map after map; Ruby hashes
  # String keys in full for every Hash, so the decoder stops at a budget
  # rather than hash for minutes.
  def test_long_keys_repeated_past_the_hashing_budget
    long = "k" * (1 << 20)
    maps = 2000
    first = Tersa.dump([{ long => 1, "f0000" => nil }] + [0] * (maps - 1)).b
    head = first[0, first.index("\xa9\xe0".b) + 2]
    tails = (1...maps).map { |i| "\x92\x00\x45".b + format("f%04x", i) + "\xa9\xe0".b }.join
    error = assert_raises(Tersa::DecodeError) { Tersa.load(head + tails) }
    assert_equal :key_hashing_exceeded, error.code
    assert_operator error.offset, :>, head.bytesize

    generic = Tersa.dump(Array.new(400) { |i| { long => i, i => nil } })
    assert_equal :key_hashing_exceeded, assert_raises(Tersa::DecodeError) { Tersa.load(generic) }.code
    assert_equal 100, Tersa.load(Tersa.dump(Array.new(100) { |i| { long => i, i => nil } })).size
  end

  def test_decoded_symbols_can_be_collected
    names = Array.new(5000) { |i| :"sym_robust_#{i}_#{rand(1 << 30)}" }.map(&:to_s)
    bytes = Tersa.dump(names.map(&:to_sym))
    before = Symbol.all_symbols.size
    Tersa.load(bytes)
    Tersa.load(Tersa.dump(names.to_h { |n| [n, 1] }), symbolize_keys: true)
    GC.start
    assert_operator Symbol.all_symbols.size - before, :<, 5000
  end

  def test_a_bad_option_changes_nothing
    bytes = Tersa.dump({ "a" => 1 })
    assert_raises(ArgumentError) { Tersa.load(bytes, symbolize_keys: true, max_depth: 0) }
    assert_equal({ "a" => 1 }, Tersa.load(bytes))
    assert_raises(ArgumentError) { Tersa.dump(1, default: ->(_) { "LEAKED" }, max_depth: 0) }
    assert_raises(Tersa::EncodeError) { Tersa.dump([Object.new]) }
  end

  def test_encoder_recovers_from_any_exception
    enc = Tersa::Encoder.new
    assert_raises(TypeError) { enc.encode([Tersa::Timestamp.new("x", 0, :utc, nil)]) }
    evil = Object.new
    def evil.inspect = raise("no inspect")
    assert_raises(RuntimeError) { enc.encode({ evil => Object.new }) }
    assert_equal 1, Tersa.load(enc.encode(1))
  end

  def test_a_failed_stream_decode_does_not_replay_values
    enc = Tersa::Encoder.new
    bytes = enc.write({ "n" => 1 }) + "\x05\xFD\xFD".b # a two-byte frame with an invalid tag
    dec = Tersa::Decoder.new
    dec << bytes
    got = []
    assert_raises(Tersa::DecodeError) { dec.each { |v| got << v } }
    assert_equal [{ "n" => 1 }], got
    assert_equal [], dec.each.to_a
  end

  def test_a_failed_stream_value_ends_the_stream
    enc = Tersa::Encoder.new
    bytes = enc.write(1) + enc.write(2)
    assert_raises(Tersa::EncodeError) { enc.write(Object.new) }
    err = assert_raises(Tersa::EncodeError) { enc.write(3) }
    assert_match(/reset/, err.message)
    assert_equal [1, 2], Tersa.load_stream(bytes)
    enc.reset
    assert_equal [3], Tersa.load_stream(enc.write(3))
  end

  def test_identity_hashes
    key = +"name"
    h = {}.compare_by_identity
    h[key] = 1
    enc = Tersa::Encoder.new
    bytes = enc.write(h)
    key.replace("evil")
    bytes += enc.write(h)
    assert_equal [{ "name" => 1 }, { "evil" => 1 }], Tersa.load_stream(bytes)
    twins = {}.compare_by_identity
    twins[+"k"] = 1
    twins[+"k"] = 2
    assert_raises(Tersa::EncodeError) { Tersa.dump(twins) }
  end

  def test_symbolize_keys_never_merges_keys_silently
    bytes = Tersa.dump({ "a" => 1, a: 2 })
    assert_equal({ "a" => 1, a: 2 }, Tersa.load(bytes))
    err = assert_raises(Tersa::DecodeError) { Tersa.load(bytes, symbolize_keys: true) }
    assert_equal :duplicate_key, err.code
  end

  def test_symbols_in_other_encodings_are_converted
    sym = "\xC3\xA9".dup.force_encoding("ISO-8859-1").to_sym
    assert_equal "Ã©", Tersa.load(Tersa.dump(sym)).to_s
    assert_equal ["Ã©"], Tersa.load(Tersa.dump({ sym => 1 })).keys.map(&:to_s)
  end

  def test_timestamp_offsets_are_checked
    assert_raises(Tersa::EncodeError) { Tersa.dump(Tersa::Timestamp.new(0, 0, :offset, 65_596)) }
    assert_raises(Tersa::EncodeError) { Tersa.dump(Tersa::Timestamp.new(0, 0, :offset, 1440)) }
    ok = Tersa::Timestamp.new(0, 0, :offset, -1439)
    assert_equal(-1439 * 60, Tersa.load(Tersa.dump(ok)).utc_offset)
  end

  class PingA
    def to_tersa = PingB.new
  end

  class PingB
    def to_tersa = PingA.new
  end

  def test_hooks_that_loop_hit_max_depth
    err = assert_raises(Tersa::EncodeError) { Tersa.dump([PingA.new], max_depth: 5) }
    assert_match(/too deeply/, err.message)
    assert_raises(Tersa::EncodeError) { Tersa.dump(PingA.new) }
  end

  def test_freeze_freezes_everything
    v = Tersa.load(Tersa.dump([Time.at(0, in: "UTC"), Tersa::Ext.new(9, "ab".b), Tersa::Timestamp.floating(5)]), freeze: true)
    assert(v.all?(&:frozen?))
    assert v[1].data.frozen?
  end

  def test_dictionaries_option
    dicts = Array.new(20) { |i| Tersa::Dictionary.new(strings: ["word#{i}"]) }
    list = dicts.dup
    bytes = Tersa.dump("word19", dictionary: dicts.last)
    assert_equal "word19", Tersa.load(bytes, dictionaries: list)
    refute list.frozen?, "the caller's Array is left alone"
  end
end
