# frozen_string_literal: true

require_relative "helper"

class TestStreams < Minitest::Test
  VALUES = [{ "id" => "usr_1", "role" => "admin" }, { "id" => "usr_2", "role" => "admin" }, "admin", 1000, 1001,
            Time.utc(2025, 4, 16), [1.5, 1.6]].freeze

  def stream_bytes
    enc = Pith::Encoder.new
    VALUES.each { |v| enc << v }
    enc.to_s
  end

  def test_values_share_tables
    bytes = stream_bytes
    separate = VALUES.sum { |v| Pith.dump(v).bytesize }
    assert_operator bytes.bytesize, :<, separate
    assert_equal VALUES, Pith.load_stream(bytes)
  end

  def test_feed_byte_by_byte
    bytes = stream_bytes
    dec = Pith::Decoder.new
    got = []
    bytes.each_char { |c| dec.feed(c).each { |v| got << v } }
    dec.finish
    assert_equal VALUES, got
  end

  def test_feed_in_chunks_and_finish_detects_truncation
    bytes = stream_bytes
    dec = Pith::Decoder.new
    dec << bytes[0, bytes.bytesize - 2]
    got = dec.each.to_a
    assert_equal VALUES[0...-1], got
    assert_equal :truncated, assert_raises(Pith::DecodeError) { dec.finish }.code
  end

  def test_reset_starts_a_new_stream
    enc = Pith::Encoder.new
    enc << 1
    enc.reset
    enc << 2
    assert_equal [2], Pith.load_stream(enc.to_s)
    dec = Pith::Decoder.new
    dec.feed(Pith::Encoder.new.tap { |e| e << :a }.to_s).each.to_a
    dec.reset
    assert_equal [:b], dec.feed(Pith::Encoder.new.tap { |e| e << :b }.to_s).each.to_a
  end

  def test_single_value_and_stream_are_distinct
    assert_equal :bad_flags, assert_raises(Pith::DecodeError) { Pith.load(stream_bytes) }.code
    assert_equal :bad_flags, assert_raises(Pith::DecodeError) { Pith.load_stream(Pith.dump(1)) }.code
  end
end
