# frozen_string_literal: true

require_relative "helper"

class TestOptions < Minitest::Test
  DOC = [{ "id" => 1, "name" => "a", "tags" => ["x", "y"], "meta" => { "k" => "v" } },
         { "id" => 2, "name" => "a", "tags" => ["x"], "meta" => { "k" => "v" } }].freeze

  def test_symbolize_keys
    got = Tersa.load(Tersa.dump(DOC), symbolize_keys: true)
    assert_equal %i[id name tags meta], got[0].keys
    assert_equal({ k: "v" }, got[1][:meta])
    # The option lasts for that call only.
    assert_equal %w[id name tags meta], Tersa.load(Tersa.dump(DOC))[0].keys
  end

  def test_freeze_deep_and_deduplicated
    got = Tersa.load(Tersa.dump(DOC), freeze: true)
    assert got.frozen?
    assert got[0].frozen?
    assert got[0]["tags"].frozen?
    assert got[0]["name"].frozen?
    assert_same got[0]["name"], got[1]["name"]
    assert_same got[0]["tags"][0], got[1]["tags"][0]
    refute Tersa.load(Tersa.dump(DOC))[0]["name"].frozen?
  end

  def test_default_hook_and_to_tersa_precedence
    klass = Class.new { def to_tersa = "from to_tersa" }
    assert_equal "from to_tersa", Tersa.load(Tersa.dump(klass.new, default: ->(_) { "from default" }))
    assert_equal "from default", Tersa.load(Tersa.dump(Object.new, default: ->(_) { "from default" }))
  end

  def test_hook_errors_propagate_and_encoder_recovers
    assert_raises(ZeroDivisionError) { Tersa.dump([Object.new], default: ->(_) { 1 / 0 }) }
    assert_equal [1], Tersa.load(Tersa.dump([1]))
  end

  def test_reentrant_dump_from_a_hook
    inner = ->(o) { Tersa.load(Tersa.dump({ "inner" => o.to_s.size })) }
    assert_equal [{ "inner" => Object.new.to_s.size }], Tersa.load(Tersa.dump([Object.new], default: inner))
  end

  def test_encoder_and_decoder_reuse
    enc = Tersa::Encoder.new
    dec = Tersa::Decoder.new(symbolize_keys: true)
    3.times { assert_equal({ a: 1 }, dec.decode(enc.encode({ "a" => 1 }))) }
  end

  # A writer sized by a buffer of thousands of shapes is replaced after a run
  # of small buffers: its options and dictionary must carry over.
  def test_encoder_options_survive_many_small_buffers_after_a_large_one
    dict = Tersa::Dictionary.new(strings: ["shared"], shapes: [%w[id name]])
    opts = { dictionary: dict, max_depth: 5 }
    enc = Tersa::Encoder.new(**opts)
    many = Array.new(3000) { |i| { "k#{i}" => i, "id" => 1 } }
    assert_equal Tersa.dump(many, **opts), enc.encode(many)
    small = [{ "id" => 1, "name" => "shared" }, { "x" => [1.5, "shared"] }]
    100.times do |i|
      value = small[i % 2]
      assert_equal Tersa.dump(value, **opts), enc.encode(value)
    end
    assert_raises(Tersa::EncodeError) { enc.encode([[[[[[1]]]]]]) }
    assert_equal Tersa.dump(many, **opts), enc.encode(many)
    assert_equal many, Tersa.load(enc.encode(many), dictionaries: dict)
  end
end
