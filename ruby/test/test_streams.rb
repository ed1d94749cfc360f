# frozen_string_literal: true

require_relative "helper"

class TestStreams < Minitest::Test
  VALUES = [{ "id" => "usr_1", "role" => "admin" }, { "id" => "usr_2", "role" => "admin" }, "admin", 1000, 1001,
            Time.utc(2025, 4, 16), [1.5, 1.6]].freeze

  def stream_bytes
    enc = Tersa::Encoder.new
    VALUES.map { |v| enc.write(v) }.join
  end

  def test_values_share_tables
    bytes = stream_bytes
    separate = VALUES.sum { |v| Tersa.dump(v).bytesize }
    assert_operator bytes.bytesize, :<, separate
    assert_equal VALUES, Tersa.load_stream(bytes)
  end

  def test_feed_byte_by_byte
    bytes = stream_bytes
    dec = Tersa::Decoder.new
    got = []
    bytes.each_char { |c| dec.feed(c).each { |v| got << v } }
    dec.finish
    assert_equal VALUES, got
  end

  # #finish fails as decoding the bytes as one buffer does: here the last
  # frame's length is all there, its bytes are not.
  def test_feed_in_chunks_and_finish_detects_truncation
    bytes = stream_bytes
    cut = bytes[0, bytes.bytesize - 2]
    dec = Tersa::Decoder.new
    dec << cut
    got = dec.each.to_a
    assert_equal VALUES[0...-1], got
    err = assert_raises(Tersa::DecodeError) { dec.finish }
    whole = assert_raises(Tersa::DecodeError) { Tersa.load_stream(cut) }
    assert_equal [:length_exceeds_input, whole.offset], [err.code, err.offset]
  end

  def test_finish_inside_the_header_or_a_length
    dict = Tersa::Dictionary.new(strings: ["admin"], shapes: [])
    header = Tersa::Encoder.new(dictionary: dict).header
    { "c1" => [:truncated, 0], "c170" => [:truncated, 0], "c2" => [:bad_magic, 0], header.unpack1("H*")[0, 14] => [:truncated, 3],
      "c1701200" => [:truncated, 3], "c1701202" => [:truncated, 3] }.each do |h, want|
      dec = Tersa::Decoder.new(dictionaries: dict)
      err = assert_raises(Tersa::DecodeError, h) { dec.feed([h].pack("H*")).finish }
      assert_equal want, [err.code, err.offset], h
      whole = assert_raises(Tersa::DecodeError, h) { Tersa.load_stream([h].pack("H*"), dictionaries: dict) }
      assert_equal want, [whole.code, whole.offset], h
    end
  end

  # A stream needs at least its header (spec/tools/crossfuzz-findings/ruby-empty-stream.json);
  # a joining decoder needs nothing.
  def test_finish_without_bytes
    [Tersa::Decoder.new, Tersa::Decoder.new.feed("")].each do |dec|
      err = assert_raises(Tersa::DecodeError) { dec.finish }
      assert_equal [:truncated, 0], [err.code, err.offset]
    end
    assert_equal [:truncated, 0], assert_raises(Tersa::DecodeError) { Tersa.load_stream("") }.then { |e| [e.code, e.offset] }
    dec = Tersa::Decoder.new(join: true)
    assert_same dec, dec.finish
    assert_same dec, dec.feed("").finish
    assert_nil dec.joined_at
  end

  def test_finish_with_frames_not_yet_read
    dec = Tersa::Decoder.new
    dec << stream_bytes
    assert_raises(Tersa::Error) { dec.finish }
    assert_equal VALUES, dec.each.to_a # the stream is as it was
    assert_same dec, dec.finish
    dec = Tersa::Decoder.new
    dec << Tersa::Encoder.new.header
    assert_same dec, dec.finish # a header alone is an empty stream
    assert_equal [], dec.each.to_a
  end

  def test_reset_starts_a_new_stream
    enc = Tersa::Encoder.new
    enc.write(1)
    enc.reset
    assert_equal [2], Tersa.load_stream(enc.write(2))
    dec = Tersa::Decoder.new
    dec.feed(Tersa::Encoder.new.write(:a)).each.to_a
    dec.reset
    assert_equal [:b], dec.feed(Tersa::Encoder.new.write(:b)).each.to_a
  end

  def test_single_value_and_stream_are_distinct
    assert_equal :bad_flags, assert_raises(Tersa::DecodeError) { Tersa.load(stream_bytes) }.code
    assert_equal :bad_flags, assert_raises(Tersa::DecodeError) { Tersa.load_stream(Tersa.dump(1)) }.code
  end
end
