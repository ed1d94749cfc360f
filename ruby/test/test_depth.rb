# frozen_string_literal: true

require_relative "helper"
require_relative "support/deep_chains"
require "open3"
require "rbconfig"

# Nesting as deep as max_depth allows (up to 100,000) decodes and encodes
# without recursion: neither the machine stack nor the Fiber's or Thread's
# stack size matters, and past max_depth the error is the typed one, at the
# right place.
class TestDepth < Minitest::Test
  include TersaTestHelper

  KINDS = DeepChains::KINDS
  LIB = File.expand_path("../lib", __dir__)
  Chains = DeepChains
  # make memcheck runs the tests under valgrind at a twentieth of the depth
  # (the subprocess with small stacks runs natively, at full depth).
  SCALE = Float(ENV.fetch("TERSA_PROPERTY_SCALE", 1))

  def levels(n) = [(n * SCALE).round, 1000].max

  # Encode and decode every kind of chain at `levels` with max_depth exactly
  # `levels`; the bytes must come back the same.
  def round_trip_all(levels)
    KINDS.map do |kind|
      value = Chains.build(kind, levels)
      bytes = Tersa.dump(value, max_depth: levels)
      back = Tersa.load(bytes, max_depth: levels)
      [kind, Chains.levels_of(kind, back), Tersa.dump(back, max_depth: levels) == bytes]
    end
  end

  def assert_all_round_trip(levels, results)
    KINDS.zip(results).each do |kind, (got_kind, got_levels, same)|
      assert_equal kind, got_kind
      assert_equal levels, got_levels, "#{kind} at #{levels}"
      assert same, "#{kind} at #{levels}: re-encoding differs"
    end
  end

  def test_10_000_and_100_000_levels_in_a_fiber
    [levels(10_000), levels(100_000)].each do |levels|
      assert_all_round_trip(levels, Fiber.new { round_trip_all(levels) }.resume)
    end
  end

  def test_10_000_and_100_000_levels_in_a_thread
    [levels(10_000), levels(100_000)].each do |levels|
      assert_all_round_trip(levels, Thread.new { round_trip_all(levels) }.value)
    end
  end

  # The smallest stacks Ruby allows: a Fiber there overflows hashing an
  # Array 200 levels deep.
  def test_100_000_levels_with_the_smallest_stacks
    env = { "RUBY_THREAD_VM_STACK_SIZE" => "16384", "RUBY_THREAD_MACHINE_STACK_SIZE" => "65536",
            "RUBY_FIBER_VM_STACK_SIZE" => "16384", "RUBY_FIBER_MACHINE_STACK_SIZE" => "65536" }
    script = <<~RUBY
      require "tersa"
      require "deep_chains"
      def deep_array(n) = DeepChains.build(:array, n)
      def run
        %i[mixed array].each do |kind|
          b = Tersa.dump(DeepChains.build(kind, 100_000), max_depth: 100_000)
          back = Tersa.load(b, max_depth: 100_000)
          raise "\#{kind}" unless DeepChains.levels_of(kind, back) == 100_000 && Tersa.dump(back, max_depth: 100_000) == b
        end
        keys = Tersa.dump(Tersa::Map.new([[deep_array(32), 1], [deep_array(2000), 2]]), max_depth: 3000)
        back = Tersa.load(keys, max_depth: 3000)
        raise "deep keys: \#{back.class}" unless back.is_a?(Tersa::Map) && Tersa.dump(back, max_depth: 3000) == keys
        raise "deep_copy" unless DeepChains.levels_of(:array, Tersa::Native.deep_copy(deep_array(100_000))) == 100_000
        :ok
      end
      puts Fiber.new { run }.resume
      puts Thread.new { run }.value
    RUBY
    out, err, status = Open3.capture3(env, RbConfig.ruby, "-I", LIB, "-I", File.join(__dir__, "support"), "-e", script)
    assert status.success?, "small stacks: #{err[0, 2000]}"
    assert_equal "ok\nok\n", out
  end

  def test_depth_exceeded_exactly_past_max_depth
    KINDS.each do |kind|
      [1, 2, 7, 1000, levels(100_000)].each do |max|
        next if max == 1 && kind == :tersa_map # its second key is a scalar; any depth works alike
        fits = Chains.build(kind, max)
        assert_equal max, Chains.levels_of(kind, Tersa.load(Tersa.dump(fits, max_depth: max), max_depth: max))

        deeper = Chains.build(kind, max + 1)
        err = assert_raises(Tersa::EncodeError) { Tersa.dump(deeper, max_depth: max) }
        assert_match(/nesting deeper than #{max} at \$/, err.message)
        assert_operator err.message.size, :<, 1000, "the path of a deep value is shortened"
        bytes = if max < 100_000 then Tersa.dump(deeper, max_depth: max + 1)
                # past the largest max_depth an encoder takes: by hand
                elsif kind == :array then unhex("c17010" + ("81" * (max + 1)) + "a9")
                elsif kind == :generic then unhex("c17010" + ("f403a9" * (max + 1)) + "a9")
                end
        next unless bytes
        [-> { Tersa.load(bytes, max_depth: max) }, -> { Tersa::Decoder.new(max_depth: max).decode(bytes) }].each do |load|
          err = assert_raises(Tersa::DecodeError) { load.call }
          assert_equal :depth_exceeded, err.code, "#{kind} max_depth #{max}"
          assert_equal Chains.offset_of_level(kind, max), err.offset, "#{kind} max_depth #{max}"
        end
      end
    end
  end

  def test_dictionary_build_takes_deep_samples
    deep = Chains.build(:hash, 999)
    record = { "id" => "some text", "x" => ["some text"] }
    dict = Fiber.new { Tersa::Dictionary.build([deep, deep, record, record]) }.resume
    assert_equal [["a"], %w[id x]], dict.shapes
    assert_equal ["some text"], dict.strings
    # A sample that cannot be encoded cannot be a sample.
    assert_raises(Tersa::EncodeError) { Tersa::Dictionary.build([Chains.build(:hash, levels(100_000))]) }
  end

  def test_default_max_depth_is_1000
    assert_equal 1000, Chains.levels_of(:mixed, Tersa.load(Tersa.dump(Chains.build(:mixed, 1000))))
    assert_raises(Tersa::EncodeError) { Tersa.dump(Chains.build(:array, 1001)) }
    bytes = Tersa.dump(Chains.build(:array, 1001), max_depth: 1001)
    assert_equal :depth_exceeded, assert_raises(Tersa::DecodeError) { Tersa.load(bytes) }.code
  end

  def test_cycles_are_found_at_any_depth
    top = []
    node = top
    50.times { node << (node = []) }
    node << top
    err = assert_raises(Tersa::EncodeError) { Tersa.dump(top, max_depth: 100_000) }
    assert_match(/\Acircular reference: the value at \$ contains itself at \$(\[0\]){51}\z/, err.message)
    hash = { "a" => nil }
    hash["a"] = [1, { "b" => hash }]
    err = assert_raises(Tersa::EncodeError) { Tersa.dump([hash]) }
    assert_equal 'circular reference: the value at $[0] contains itself at $[0]["a"][1]["b"]', err.message
  end

  # Paths in errors name deep keys rather than inspect them (inspect recurses).
  def test_errors_under_deep_keys
    map = {}.compare_by_identity
    map[Chains.build(:array, levels(50_000))] = [Object.new]
    map[[1, "x"]] = 2
    err = Fiber.new { assert_raises(Tersa::EncodeError) { Tersa.dump(map, max_depth: 100_000) } }.resume
    assert_equal "unsupported type Object at $[#<Array of 1>][0]", err.message
    err = assert_raises(Tersa::EncodeError) { Tersa.dump({ [1, "x"] => [Object.new] }) }
    assert_equal "unsupported type Object at $[[1, \"x\"]][0]", err.message
  end

  # Ruby hashes Array and Hash keys by recursion: keys nested deeper than 32
  # levels make their map a Tersa::Map, which compares keys by their bytes.
  def test_deep_keys
    [[32, Hash], [33, Tersa::Map], [5000, Tersa::Map]].each do |levels, klass|
      key = Chains.build(:array, levels)
      bytes = Tersa.dump(Tersa::Map.new([[key, "deep"], [1, 2]]), max_depth: levels + 1)
      back = Fiber.new { Tersa.load(bytes, max_depth: levels + 1) }.resume
      assert_instance_of klass, back, "a key #{levels} levels deep"
      assert_equal levels, Chains.levels_of(:array, back.keys[0])
      assert_equal bytes, Tersa.dump(back, max_depth: levels + 1)
    end
  end

  # A map as the key of a map as the key of a map...: each level's key is
  # all the levels below it, so hashing them costs the square of the depth.
  # A thousand levels decode; far more stop at the hashing budget.
  def test_keys_nested_in_keys
    chain = ->(n) { unhex("c17010" + ("f403" * n) + "a9" + ("a8" * n)) } # {{{1 => 0} => 0} => 0}
    bytes = chain.call(1000)
    back = Tersa.load(bytes)
    assert_instance_of Tersa::Map, back
    assert_equal bytes, Tersa.dump(back)
    err = assert_raises(Tersa::DecodeError) { Tersa.load(chain.call(20_000), max_depth: 100_000) }
    assert_equal :key_hashing_exceeded, err.code
  end
end
