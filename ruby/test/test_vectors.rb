# frozen_string_literal: true

require_relative "helper"

# Every vector of spec/vectors: decoded values, exact canonical bytes, and
# every must-fail input with its error code and byte offset.
class TestVectors < Minitest::Test
  include PithTestHelper

  def test_dictionary_ids
    JSON.parse(File.read(File.join(VECTORS, "dictionaries.json")))["dictionaries"].each do |name, d|
      assert_equal d["id"].to_i(16), dictionaries.fetch(name).id, name
      assert_equal d["serialized"], hex(dictionaries[name].to_s), name if d["serialized"]
    end
  end

  def test_valid_vectors
    count = 0
    vector_files("valid").each do |file|
      JSON.parse(File.read(file), max_nesting: false)["vectors"].each do |v|
        dict = v["dictionary"] && dictionaries.fetch(v["dictionary"])
        name = "#{File.basename(file)}: #{v['name']}"
        bytes = unhex(v["hex"])
        if v["stream"]
          want = v["values"].map { |x| from_xjson(x) }
          dec = Pith::Decoder.new(dictionary: dict)
          got = dec.feed(bytes).each.to_a
          assert exact?(want, got), "#{name}: decoded #{got.inspect[0, 300]}"
          enc = Pith::Encoder.new(dictionary: dict)
          want.each { |x| enc << x }
          assert_equal v["hex"], hex(enc.to_s), name
        else
          want = from_xjson(v["value"])
          got = dict ? Pith.load(bytes, dictionary: dict) : Pith.load(bytes)
          assert exact?(want, got), "#{name}: decoded #{got.inspect[0, 300]}"
          expected = v["canonical"] ? v["hex"] : v["canonical_hex"]
          out = dict ? Pith.dump(want, dictionary: dict) : Pith.dump(want)
          assert_equal expected, hex(out), name
        end
        count += 1
      end
    end
    assert_operator count, :>=, 300
  end

  def test_must_fail_vectors
    count = 0
    vector_files("invalid").each do |file|
      JSON.parse(File.read(file), max_nesting: false)["vectors"].each do |v|
        bytes = unhex(v["hex"])
        dict = v["dictionary"] && dictionaries.fetch(v["dictionary"])
        opts = {}
        opts[:dictionary] = dict if dict
        opts[:max_depth] = v["max_depth"] if v["max_depth"]
        err = assert_raises(Pith::DecodeError, v["name"]) do
          if v["stream"]
            Pith.load_stream(bytes, **opts)
          else
            Pith.load(bytes, **opts)
          end
        end
        assert_equal v["error"].to_sym, err.code, "#{v['name']}: #{err.message}"
        assert_equal v["offset"], err.offset, "#{v['name']}: #{err.message}"
        count += 1
      end
    end
    assert_operator count, :>=, 100
  end
end
