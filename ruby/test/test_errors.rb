# frozen_string_literal: true

require_relative "helper"

class TestErrors < Minitest::Test
  def test_error_hierarchy
    assert_operator Pith::DecodeError, :<, Pith::Error
    assert_operator Pith::EncodeError, :<, Pith::Error
    assert_operator Pith::Error, :<, StandardError
  end

  def test_every_truncation_is_a_decode_error_with_an_offset
    bytes = Pith.dump({ "id" => "usr_1", "at" => Time.now, "tags" => [:a, 1.5, 2**70, "x" * 40], "n" => nil })
    (0...bytes.bytesize).each do |n|
      err = assert_raises(Pith::DecodeError) { Pith.load(bytes[0, n]) }
      assert_operator err.offset, :<=, n
      assert_kind_of Symbol, err.code
    end
  end

  def test_garbage_and_trailing_bytes
    assert_equal :bad_magic, assert_raises(Pith::DecodeError) { Pith.load("{}") }.code
    err = assert_raises(Pith::DecodeError) { Pith.load(Pith.dump(1) + "\x00") }
    assert_equal :trailing_bytes, err.code
    assert_equal 4, err.offset
    assert_match(/trailing_bytes at byte offset 4/, err.message)
  end

  def test_max_depth
    deep = [1]
    10.times { deep = [deep] }
    bytes = Pith.dump(deep)
    assert_equal :depth_exceeded, assert_raises(Pith::DecodeError) { Pith.load(bytes, max_depth: 5) }.code
    assert_raises(Pith::EncodeError) { Pith.dump(deep, max_depth: 5) }
    assert_equal deep, Pith.load(bytes, max_depth: 11)
  end

  def test_wrong_input_types
    assert_raises(TypeError) { Pith.load(nil) }
    assert_raises(TypeError) { Pith.load(123) }
  end

  def test_decoder_recovers_after_an_error
    dec = Pith::Decoder.new
    assert_raises(Pith::DecodeError) { dec.decode("\xC1\x70\x10\xFD".b) }
    assert_equal [1, "a"], dec.decode(Pith.dump([1, "a"]))
    enc = Pith::Encoder.new
    assert_raises(Pith::EncodeError) { enc.encode([Object.new]) }
    assert_equal [1], Pith.load(enc.encode([1]))
  end
end
