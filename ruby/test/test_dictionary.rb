# frozen_string_literal: true

require_relative "helper"

class TestDictionary < Minitest::Test
  SAMPLES = Array.new(20) { |i| { "id" => "usr_#{i}", "role" => i.even? ? "admin" : "user", "lang" => "en-US" } }

  def test_build_and_use
    dict = Tersa::Dictionary.build(SAMPLES)
    assert_includes dict.strings, "admin"
    assert_includes dict.shapes, %w[id role lang]
    value = SAMPLES.first
    with = Tersa.dump(value, dictionary: dict)
    assert_operator with.bytesize, :<, Tersa.dump(value).bytesize + 8
    assert_equal value, Tersa.load(with, dictionaries: dict)
    err = assert_raises(Tersa::DecodeError) { Tersa.load(with) }
    assert_equal :unknown_dictionary, err.code
  end

  def test_serialize_and_load
    dict = Tersa::Dictionary.new(strings: %w[admin user], shapes: [["id", :name]])
    again = Tersa::Dictionary.load(dict.to_s)
    assert_equal dict.id, again.id
    assert_equal [["id", :name]], again.shapes
    assert dict.frozen?
    assert_match(/Tersa::Dictionary id=0x\h{16} /, dict.inspect)
  end

  def test_invalid_dictionaries
    assert_raises(ArgumentError) { Tersa::Dictionary.new(strings: ["a"]) }
    assert_raises(ArgumentError) { Tersa::Dictionary.new(strings: %w[ab ab]) }
    assert_raises(ArgumentError) { Tersa::Dictionary.new(shapes: [%w[a a]]) }
    assert_raises(Tersa::DecodeError) { Tersa::Dictionary.load("junk") }
  end

  def test_build_counts_samples_not_occurrences
    samples = [%w[AAPL AAPL AAPL GOOG GOOG], { "sym" => "AAPL", "px" => 1 }, { "sym" => "MSFT", "px" => 2 },
               { "sym" => "MSFT", :note => :active }, :active]
    dict = Tersa::Dictionary.build(samples)
    assert_equal %w[active AAPL MSFT], dict.strings # in two samples each; most bytes saved first
    assert_equal [%w[sym px]], dict.shapes
    assert_equal 0xeffd7698f9e92229, dict.id # as python/tests/test_dictionary.py
    assert_equal 4, Tersa::Dictionary.build(samples, min_count: 1).strings.size
    assert_equal 1, Tersa::Dictionary.build(samples, min_count: 1, max_strings: 1).strings.size
    assert_equal 1, Tersa::Dictionary.build(samples, min_count: 1, max_shapes: 1).shapes.size
    assert_equal dict.id, Tersa::Dictionary.build(samples.map { |s| Tersa.load(Tersa.dump(s)) }).id
    # A single sample keeps everything in it.
    assert_equal %w[AAPL GOOG], Tersa::Dictionary.build([samples.first]).strings
    assert_raises(Tersa::EncodeError) { Tersa::Dictionary.build([Object.new]) }
  end

  def test_encoder_decoder_with_dictionary
    dict = Tersa::Dictionary.build(SAMPLES)
    enc = Tersa::Encoder.new(dictionary: dict)
    dec = Tersa::Decoder.new(dictionaries: [Tersa::Dictionary.new(strings: ["zz"]), dict])
    assert_equal SAMPLES, dec.decode(enc.encode(SAMPLES))
  end
end
