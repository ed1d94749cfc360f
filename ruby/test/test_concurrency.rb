# frozen_string_literal: true

require_relative "helper"

class TestConcurrency < Minitest::Test
  DOC = JSON.parse(File.read(File.join(TersaTestHelper::ROOT, "bench/corpus/seed/users.json")))

  def test_threads
    bytes = Tersa.dump(DOC)
    threads = Array.new(4) do
      Thread.new do
        200.times do
          raise "encode differs" unless Tersa.dump(DOC) == bytes
          raise "decode differs" unless Tersa.load(bytes) == DOC
        end
        true
      end
    end
    assert threads.all?(&:value)
  end

  def test_threads_through_a_hook
    # A hook runs Ruby code, where another thread may get the GVL and use the
    # same (busy) default encoder: it must get its own.
    hook = ->(o) { Thread.pass; Tersa.load(Tersa.dump(o.to_s)) }
    threads = Array.new(4) { |i| Thread.new { Array.new(50) { Tersa.load(Tersa.dump([Object.new, i], default: hook)) } } }
    threads.each { |t| t.value.each { |v| assert_equal 2, v.size } }
  end

  def test_ractors
    Warning[:experimental] = false
    bytes = Tersa.dump(DOC).freeze
    doc = Ractor.make_shareable(DOC)
    ractors = Array.new(3) do
      Ractor.new(bytes, doc) do |b, d|
        ok = true
        50.times do
          ok &&= Tersa.load(b) == d
          ok &&= Tersa.dump(d) == b
        end
        ok && Tersa.load_stream(Tersa::Encoder.new.write(d)) == [d]
      end
    end
    assert ractors.all?(&:take)
  end

  def test_dictionary_is_shareable
    dict = Tersa::Dictionary.new(strings: ["admin"])
    assert Ractor.shareable?(dict)
  end
end
