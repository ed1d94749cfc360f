# frozen_string_literal: true

require_relative "helper"

# Sync frames and joining a stream midway (SPEC 2.3): the encoder's sync
# options and #sync, the decoder's join: option and #joined_at, and the
# binding's caches keyed by string- and shape-table indices, which every sync
# frame makes stale on both sides.
class TestSync < Minitest::Test
  include TersaTestHelper

  SEED = Integer(ENV.fetch("TERSA_SEED", 20_261_125))
  # Fewer values under valgrind (make memcheck sets TERSA_PROPERTY_SCALE).
  SCALE = Float(ENV.fetch("TERSA_PROPERTY_SCALE", 1))
  LONG = "L" * 70 # over the decoder's 64-byte threshold for shared long strings and keys

  Frame = Struct.new(:offset, :size, :sync)

  # The frames of a stream after its header: where each starts (its length
  # prefix), how many bytes it takes and whether it is a sync frame.
  def frames(bytes, header)
    out = []
    at = header
    while at < bytes.bytesize
      first = bytes.getbyte(at)
      n = first.zero? ? 9 : (first & -first).bit_length
      len = n == 9 ? bytes.byteslice(at + 1, 8).unpack1("Q<") : bytes.byteslice(at, n).unpack1("H*").scan(/../).reverse.join.to_i(16) >> n
      out << Frame.new(at, n + len, bytes.getbyte(at + n) == 0xFD)
      at += n + len
    end
    out
  end

  def stream(values, **opts)
    enc = Tersa::Encoder.new(**opts)
    values.map { |v| enc.write(v) }.join
  end

  def feed(dec, bytes, pieces)
    got = []
    at = 0
    until at >= bytes.bytesize
      n = pieces.call
      dec.feed(bytes.byteslice(at, n)).each { |v| got << v }
      at += n
    end
    dec.finish
    got
  end

  # Values that keep the tables busy: repeated shapes (also with long keys),
  # repeated short and long strings, timestamps and floats near the last.
  def values(r, count)
    shapes = [%w[id name role], %w[id n], ["id", LONG], %w[a b], [:sym, "id"]]
    strings = ["admin", "user", "usr_#{r.rand(9)}", LONG, "#{LONG}2", "xy"]
    Array.new(count) do |i|
      case r.rand(6)
      when 0, 1 then shapes[r.rand(shapes.size)].to_h { |k| [k, r.rand(3).zero? ? strings.sample(random: r) : i] }
      when 2 then Array.new(r.rand(1..4)) { strings.sample(random: r) }
      when 3 then Time.at(1_744_761_600 + i * 5, in: "UTC")
      when 4 then 22.5 + i / 10.0
      else strings.sample(random: r)
      end
    end
  end

  # The issue: a decoder given the header and then a frame from the middle of
  # a stream used to decode it against empty tables (["cc", "cc"] here, the
  # reference to "aa" landing on "cc"). The first frame must be a sync frame.
  def test_frame_from_the_middle_is_out_of_sequence
    bytes = unhex("c17012" "0b8242636300")
    [
      -> { Tersa.load_stream(bytes) },
      -> { Tersa::Decoder.new.decode_stream(bytes) },
      -> { feed(Tersa::Decoder.new, bytes, -> { bytes.bytesize }) },
      -> { feed(Tersa::Decoder.new, bytes, -> { 1 }) }
    ].each do |decode|
      err = assert_raises(Tersa::DecodeError) { decode.call }
      assert_equal [:out_of_sequence, 4], [err.code, err.offset], err.message
      assert_kind_of Tersa::Error, err
    end
    # The frame is fine where it belongs: after the frame it depends on.
    assert_equal [%w[aa bb], %w[cc aa]], Tersa.load_stream(stream([%w[aa bb], %w[cc aa]]))
  end

  def test_bad_sync_is_a_decode_error
    bytes = stream([1, 2], sync_frames: 1)
    bad = bytes.b
    bad.setbyte(frames(bytes, 3)[1].offset + 2, 0x13)
    err = assert_raises(Tersa::DecodeError) { Tersa.load_stream(bad) }
    assert_equal [:bad_sync, frames(bytes, 3)[1].offset + 2], [err.code, err.offset]
    err = assert_raises(Tersa::DecodeError) { feed(Tersa::Decoder.new, bad, -> { 1 }) }
    assert_equal :bad_sync, err.code
  end

  # With a sync frame every frame, each frame is its value alone: the body of
  # Tersa.dump of it after the sync marker. A cached shape index from an
  # earlier frame would show here as a reference to a shape not yet written.
  def test_every_frame_a_sync_frame_is_self_contained
    dict = Tersa::Dictionary.new(strings: ["admin"], shapes: [%w[id role]])
    keys = %w[id name]
    vals = Array.new(6) { |i| [keys.to_h { |k| [k, i] }, { "id" => i, "role" => "admin" }, [LONG, "admin"]][i % 3] }
    [[nil, 3], [dict, 11]].each do |d, header|
      bytes = stream(vals, sync_frames: 1, dictionary: d)
      fs = frames(bytes, header)
      assert_equal vals.size, fs.size
      fs.zip(vals).each do |f, v|
        one = Tersa.dump(v, dictionary: d)
        # The header's magic becomes SYNC and its flags gain STREAM; the id and the item stay.
        body = [0xFD, one.getbyte(2) | 0x02].pack("C*") + one.byteslice(3..)
        assert_operator body.bytesize, :<, 128 # a one-byte length prefix
        assert_equal hex([body.bytesize * 2 + 1].pack("C") + body), hex(bytes.byteslice(f.offset, f.size)), v.inspect
      end
      assert_equal vals, Tersa.load_stream(bytes, dictionaries: d)
    end
  end

  # Different strings, long strings, long keys and shapes get the same
  # table indices in consecutive sync frames: a decoder cache keyed by index
  # (freeze:'s strings, shared long strings and keys, shape keys) that
  # outlived the sync frame would return the first frame's objects.
  def test_decoder_caches_by_index_do_not_outlive_a_sync_frame
    vals = [["aa", "#{LONG}a", { "#{LONG}k" => 1, "p" => 2 }, { "a" => 1, "b" => 2 }],
            ["bb", "#{LONG}b", { "#{LONG}j" => 3, "q" => 4 }, { "c" => 3, "d" => 4 }],
            ["cc", "#{LONG}c", { "#{LONG}i" => 5, "r" => 6 }, { "e" => 5, "f" => 6 }, "cc", "#{LONG}c"]]
    [1, 2].each do |every|
      bytes = stream(vals, sync_frames: every)
      [{}, { freeze: true }, { symbolize_keys: true }].each do |opts|
        want = opts[:symbolize_keys] ? vals.map { |v| v.map { |x| x.is_a?(Hash) ? x.transform_keys(&:to_sym) : x } } : vals
        assert_equal want, Tersa.load_stream(bytes, **opts), "sync every #{every}, #{opts}"
        assert_equal want, feed(Tersa::Decoder.new(**opts), bytes, -> { 1 }), "fed, sync every #{every}, #{opts}"
        tail = bytes.byteslice(frames(bytes, 3)[1].offset..)
        dec = Tersa::Decoder.new(join: true, **opts)
        assert_equal want[every == 1 ? 1.. : 2..], dec.decode_stream(tail), "joined, sync every #{every}, #{opts}"
      end
    end
  end

  # A late consumer joins a long stream at every frame boundary: whole-buffer
  # and fed in 1-byte, 3-byte and random pieces, it gets the values from the
  # first sync frame on, and says where that frame starts.
  def test_late_consumer_joins_at_every_frame_boundary
    r = Random.new(SEED)
    vals = values(r, [(80 * SCALE).round, 24].max)
    [{ sync_frames: 5 }, { sync_bytes: 120 }, { sync_frames: 7, sync_bytes: 200 }].each do |sync|
      bytes = stream(vals, **sync)
      fs = frames(bytes, 3)
      assert_equal vals.size, fs.size
      assert_operator fs.count(&:sync), :>=, 3, sync.inspect
      assert_equal vals, Tersa.load_stream(bytes)
      (0..fs.size).each do |k|
        start = k < fs.size ? fs[k].offset : bytes.bytesize
        tail = bytes.byteslice(start..)
        j = (k...fs.size).find { |i| fs[i].sync }
        want = j ? vals[j..] : []
        joined_at = j && fs[j].offset - start
        [{}, { freeze: true }].each do |opts|
          where = "#{sync} joined at frame #{k} #{opts}"
          dec = Tersa::Decoder.new(join: true, **opts)
          assert_equal want, dec.decode_stream(tail), where
          assert_equal_or_nil joined_at, dec.joined_at, where
          assert_equal want, Tersa.load_stream(tail, join: true, **opts), where
          [-> { 1 }, -> { 3 }, -> { r.rand(1..40) }].each do |pieces|
            dec = Tersa::Decoder.new(join: true, **opts)
            assert_equal want, feed(dec, tail, pieces), where
            assert_equal_or_nil joined_at, dec.joined_at, where
          end
        end
      end
    end
  end

  def test_sync_on_request
    vals = [%w[aa bb], %w[cc aa], { "id" => "usr_1", "n" => 1000 }, { "id" => "usr_2", "n" => 1001 }, "bb", 22.5]
    enc = Tersa::Encoder.new
    bytes = vals.each_with_index.map do |v, i|
      assert_same enc, enc.sync if [2, 4].include?(i)
      enc.write(v)
    end.join
    assert_equal [true, false, true, false, true, false], frames(bytes, 3).map(&:sync)
    assert_equal vals, Tersa.load_stream(bytes)
    # #sync before the first value, twice, or after #reset changes nothing: the first frame always is one.
    plain = stream(vals.first(2))
    enc = Tersa::Encoder.new
    enc.sync.sync
    assert_equal plain, vals.first(2).map { |v| enc.write(v) }.join
    enc.reset
    enc.sync
    assert_equal plain, vals.first(2).map { |v| enc.write(v) }.join
    # A request lasts for one frame.
    enc = Tersa::Encoder.new
    bytes = enc.write(1)
    enc.sync
    bytes += enc.write(2) + enc.write(3)
    assert_equal [true, true, false], frames(bytes, 3).map(&:sync)
    # From a hook, while a value is being appended: the frame after it.
    enc = Tersa::Encoder.new
    hook = Object.new
    hook.define_singleton_method(:to_tersa) { enc.sync && "hooked" }
    bytes = [1, [hook], 2, 3].map { |v| enc.write(v) }.join
    assert_equal [true, false, true, false], frames(bytes, 3).map(&:sync)
    assert_equal [1, ["hooked"], 2, 3], Tersa.load_stream(bytes)
  end

  def test_sync_options_stay_for_later_streams_and_are_checked
    enc = Tersa::Encoder.new(sync_frames: 2)
    first = [1, 2, 3].map { |v| enc.write(v) }.join
    enc.reset
    assert_equal first, [1, 2, 3].map { |v| enc.write(v) }.join
    assert_equal [true, false, true], frames(first, 3).map(&:sync)
    assert_equal [true, false, false], frames(stream([1, 2, 3], sync_frames: 0, sync_bytes: nil), 3).map(&:sync)
    # One-value buffers have no frames: the options do not change them.
    assert_equal Tersa.dump({ "a" => [1] }), Tersa::Encoder.new(sync_frames: 1).encode({ "a" => [1] })
    assert_raises(ArgumentError) { Tersa::Encoder.new(sync_frames: -1) }
    assert_raises(ArgumentError) { Tersa::Encoder.new(sync_bytes: -(2**70)) }
    assert_raises(TypeError) { Tersa::Encoder.new(sync_bytes: "10") }
    assert_raises(ArgumentError) { Tersa.dump(1, sync_frames: 1) }
    assert_raises(ArgumentError) { Tersa.load(Tersa.dump(1), join: true) }
    # A rejected option changes nothing.
    enc = Tersa::Encoder.new(sync_frames: 1)
    assert_raises(TypeError) { enc.send(:initialize, sync_frames: 2, sync_bytes: :x) }
    assert_equal [true, true], frames([1, 2].map { |v| enc.write(v) }.join, 3).map(&:sync)
  end

  def test_dictionaries_with_sync_frames
    dict = Tersa::Dictionary.new(strings: %w[admin user], shapes: [%w[id name role]])
    vals = Array.new(9) { |i| i.even? ? { "id" => i, "name" => "n#{i % 3}", "role" => %w[admin user][i % 2] } : "n#{i % 3}" }
    bytes = stream(vals, dictionary: dict, sync_frames: 3)
    fs = frames(bytes, 11)
    assert_equal [true, false, false] * 3, fs.map(&:sync)
    assert_equal vals, Tersa.load_stream(bytes, dictionaries: dict)
    fs.each_with_index do |f, k|
      tail = bytes.byteslice(f.offset..)
      want = vals[((k + 2) / 3 * 3)..] || []
      dec = Tersa::Decoder.new(join: true, dictionaries: dict)
      assert_equal want, feed(dec, tail, -> { 2 }), "joined at frame #{k}"
      next if want.empty?

      # Without its dictionary a joining decoder fails at the first sync frame's id.
      sync_at = dec.joined_at
      err = assert_raises(Tersa::DecodeError) { Tersa.load_stream(tail, join: true) }
      assert_equal [:unknown_dictionary, sync_at + 3], [err.code, err.offset]
      other = Tersa::Dictionary.new(strings: %w[admin], shapes: [])
      err = assert_raises(Tersa::DecodeError) { feed(Tersa::Decoder.new(join: true, dictionaries: [other]), tail, -> { 1 }) }
      assert_equal [:unknown_dictionary, sync_at + 3], [err.code, err.offset]
    end
  end

  def test_joined_at_is_reset_with_the_stream
    bytes = stream([1, 2, 3], sync_frames: 2)
    tail = bytes.byteslice(frames(bytes, 3)[1].offset..)
    dec = Tersa::Decoder.new(join: true)
    assert_nil dec.joined_at
    assert_equal [3], feed(dec, tail, -> { 1 })
    assert_equal frames(bytes, 3)[2].offset - frames(bytes, 3)[1].offset, dec.joined_at
    dec.reset
    assert_nil dec.joined_at
    assert_equal [1, 2, 3], feed(dec, bytes.byteslice(3..), -> { 1 })
    assert_equal 0, dec.joined_at
    # Not joining: there is no header to skip to, nothing to report.
    dec = Tersa::Decoder.new
    assert_equal [1, 2, 3], dec.decode_stream(bytes)
    assert_nil dec.joined_at
    # A decoder reading a fed stream does not take another meanwhile.
    dec = Tersa::Decoder.new(join: true)
    dec.feed(tail).each.to_a
    assert_raises(Tersa::Error) { dec.decode_stream(tail) }
    assert_raises(Tersa::Error) { dec.finish && dec.decode(Tersa.dump(1)) }
  end

  # Compaction moves the objects the decoder's caches hold while a joined
  # stream is being fed; the frames after it still decode right.
  def test_compaction_during_a_joined_feed
    vals = values(Random.new(SEED + 1), 40)
    bytes = stream(vals, sync_frames: 4)
    fs = frames(bytes, 3)
    tail = bytes.byteslice(fs[2].offset..)
    want = vals[4..]
    [{}, { freeze: true }, { symbolize_keys: true }].each do |opts|
      want_here = opts[:symbolize_keys] ? Tersa.load_stream(bytes, symbolize_keys: true)[4..] : want
      dec = Tersa::Decoder.new(join: true, **opts)
      got = []
      tail.bytes.each_slice(7).with_index do |piece, i|
        dec.feed(piece.pack("C*")).each { |v| got << v }
        GC.verify_compaction_references(double_heap: true, toward: :empty) if (i % 9).zero?
      end
      dec.finish
      assert_equal want_here, got, opts.inspect
      assert_equal fs[4].offset - fs[2].offset, dec.joined_at
    end
  end

  # What the index caches kept alive for the stream (long strings shared by
  # reference, here each used once) goes at the next sync frame.
  def test_long_stream_keeps_only_what_the_frames_since_the_last_sync_frame_need
    count = [(2000 * SCALE).round, 200].max
    bytes = stream(Array.new(count) { |i| ["uniq#{i}#{LONG}", i] }, sync_frames: 10)
    dec = Tersa::Decoder.new
    seen = 0
    bytes.bytes.each_slice(4096) { |piece| dec.feed(piece.pack("C*")).each { seen += 1 } }
    assert_equal count, seen
    GC.start(full_mark: true, immediate_sweep: true)
    alive = ObjectSpace.each_object(String).count { |s| s.start_with?("uniq") && s.end_with?(LONG) }
    assert_operator alive, :<, count / 4, "decoded strings still alive after their values were dropped"
  end

  private

  def assert_equal_or_nil(want, got, message = nil)
    want.nil? ? assert_nil(got, message) : assert_equal(want, got, message)
  end
end
