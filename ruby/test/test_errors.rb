# frozen_string_literal: true

require_relative "helper"

class TestErrors < Minitest::Test
  def test_error_hierarchy
    assert_operator Tersa::DecodeError, :<, Tersa::Error
    assert_operator Tersa::EncodeError, :<, Tersa::Error
    assert_operator Tersa::Error, :<, StandardError
  end

  def test_every_truncation_is_a_decode_error_with_an_offset
    bytes = Tersa.dump({ "id" => "usr_1", "at" => Time.now, "tags" => [:a, 1.5, 2**70, "x" * 40], "n" => nil })
    (0...bytes.bytesize).each do |n|
      err = assert_raises(Tersa::DecodeError) { Tersa.load(bytes[0, n]) }
      assert_operator err.offset, :<=, n
      assert_kind_of Symbol, err.code
    end
  end

  def test_garbage_and_trailing_bytes
    assert_equal :bad_magic, assert_raises(Tersa::DecodeError) { Tersa.load("{}") }.code
    err = assert_raises(Tersa::DecodeError) { Tersa.load(Tersa.dump(1) + "\x00") }
    assert_equal :trailing_bytes, err.code
    assert_equal 4, err.offset
    assert_match(/trailing_bytes at byte offset 4/, err.message)
  end

  def test_max_depth
    deep = [1]
    10.times { deep = [deep] }
    bytes = Tersa.dump(deep)
    assert_equal :depth_exceeded, assert_raises(Tersa::DecodeError) { Tersa.load(bytes, max_depth: 5) }.code
    assert_raises(Tersa::EncodeError) { Tersa.dump(deep, max_depth: 5) }
    assert_equal deep, Tersa.load(bytes, max_depth: 11)
  end

  def test_wrong_input_types
    assert_raises(TypeError) { Tersa.load(nil) }
    assert_raises(TypeError) { Tersa.load(123) }
  end

  def test_decoder_recovers_after_an_error
    dec = Tersa::Decoder.new
    assert_raises(Tersa::DecodeError) { dec.decode("\xC1\x70\x10\xFD".b) }
    assert_equal [1, "a"], dec.decode(Tersa.dump([1, "a"]))
    enc = Tersa::Encoder.new
    assert_raises(Tersa::EncodeError) { enc.encode([Object.new]) }
    assert_equal [1], Tersa.load(enc.encode([1]))
  end
end
