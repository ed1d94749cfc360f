# frozen_string_literal: true

require_relative "helper"

class TestExtensions < Minitest::Test
  Money = Struct.new(:cents, :currency)

  def setup
    Tersa.register_type(42, Money,
                       packer: ->(m) { [m.cents, m.currency].pack("q<a3") },
                       unpacker: ->(b) { c, cur = b.unpack("q<a3"); Money.new(c, cur) })
  end

  def test_registered_type_round_trips
    m = Money.new(-12_345, "EUR")
    bytes = Tersa.dump({ "price" => m })
    assert_equal({ "price" => m }, Tersa.load(bytes))
    assert_includes bytes, [-12_345, "EUR"].pack("q<a3")
  end

  def test_bad_registrations
    assert_raises(RangeError) { Tersa.register_type(70_000, Money, packer: ->(x) { x }, unpacker: ->(x) { x }) }
    assert_raises(TypeError) { Tersa.register_type(1, :not_a_class, packer: ->(x) { x }, unpacker: ->(x) { x }) }
    assert_raises(ArgumentError) { Tersa.register_type(1, Money) }
  end

  def test_packer_must_return_a_string
    klass = Class.new
    Tersa.register_type(43, klass, packer: ->(_) { 1 }, unpacker: ->(b) { b })
    assert_raises(Tersa::EncodeError) { Tersa.dump(klass.new) }
  end
end
