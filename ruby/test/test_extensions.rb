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
  ensure
    Tersa.unregister_type(43)
  end

  # A type is one class's: data written for Money never decodes as another
  # class, so a taken type (or a class under another type) raises until unregistered.
  def test_a_taken_type_raises_until_unregistered
    other = Struct.new(:x)
    bytes = Tersa.dump(Money.new(5, "USD"))
    err = assert_raises(ArgumentError) { Tersa.register_type(42, other, packer: ->(_) { "" }, unpacker: ->(_) { other.new }) }
    assert_match(/extension type 42 is registered to .*Money: Tersa.unregister_type\(42\) first/, err.message)
    assert_raises(ArgumentError) { Tersa.register_type(44, Money, packer: ->(_) { "" }, unpacker: ->(_) { 0 }) }
    assert_equal Money.new(5, "USD"), Tersa.load(bytes), "the old mapping is intact"
    # The same class again replaces its packer and unpacker.
    Tersa.register_type(42, Money, packer: ->(m) { [m.cents, m.currency].pack("q<a3") }, unpacker: ->(_) { :replaced })
    assert_equal :replaced, Tersa.load(bytes)
    assert Tersa.unregister_type(42)
    refute Tersa.unregister_type(42)
    assert_equal Tersa::Ext.new(42, [5, "USD"].pack("q<a3")), Tersa.load(bytes)
    assert_raises(Tersa::EncodeError) { Tersa.dump(Money.new(1, "EUR")) }
    Tersa.register_type(42, other, packer: ->(o) { [o.x].pack("C") }, unpacker: ->(b) { other.new(b.unpack1("C")) })
    assert_equal other.new(7), Tersa.load(Tersa.dump(other.new(7)))
  ensure
    Tersa.unregister_type(42)
  end
end
