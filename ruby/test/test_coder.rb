# frozen_string_literal: true

require_relative "helper"

class TestCoder < Minitest::Test
  def test_module_level_coder
    v = { "a" => [1, 2.5, :sym, Time.utc(2025, 1, 1)] }
    assert_equal v, Tersa::Coder.load(Tersa::Coder.dump(v))
    assert_nil Tersa::Coder.load(nil)
  end

  def test_configured_coder
    dict = Tersa::Dictionary.new(strings: ["admin"])
    coder = Tersa::Coder.new(symbolize_keys: true, dictionary: dict)
    assert_equal({ role: "admin" }, coder.load(coder.dump({ "role" => "admin" })))
    assert_raises(ArgumentError) { Tersa::Coder.new(bogus: 1) }
  end
end
