# frozen_string_literal: true

require_relative "helper"

# Every vector of spec/vectors: decoded values, exact canonical bytes, and
# every must-fail input with its error code and byte offset. Streams, joins
# and failing streams go through both the whole-buffer decoder and the feed
# decoder (all at once and byte by byte). A vector with a field this runner
# does not know fails: a new kind of vector must not pass unchecked.
class TestVectors < Minitest::Test
  include TersaTestHelper

  COMMON = %w[name hex note dictionary].freeze
  FIELDS = {
    valid: COMMON + %w[value diag canonical canonical_hex],
    stream: COMMON + %w[stream values diags canonical sync_frames sync_bytes sync_before],
    join: COMMON + %w[join joined_at values diags],
    fail: COMMON + %w[error offset stream join max_depth]
  }.freeze

  def test_dictionary_ids
    JSON.parse(File.read(File.join(VECTORS, "dictionaries.json")))["dictionaries"].each do |name, d|
      assert_equal d["id"].to_i(16), dictionaries.fetch(name).id, name
      assert_equal d["serialized"], hex(dictionaries[name].to_s), name if d["serialized"]
    end
  end

  def test_valid_vectors
    counts = Hash.new(0)
    each_vector("valid") do |v, name|
      kind = if v["join"] then :join
             elsif v["stream"] then :stream
             else :valid
             end
      check_fields(v, kind, name)
      dict = v["dictionary"] && dictionaries.fetch(v["dictionary"])
      send(:"check_#{kind}", v, name, dict)
      counts[kind] += 1
      counts[:sync_options] += 1 if (v.keys & %w[sync_frames sync_bytes sync_before]).any?
    end
    assert_operator counts[:valid], :>=, 300
    assert_operator counts[:stream], :>=, 10
    assert_operator counts[:sync_options], :>=, 5
    assert_operator counts[:join], :>=, 9
  end

  def test_must_fail_vectors
    counts = Hash.new(0)
    each_vector("invalid") do |v, name|
      check_fields(v, :fail, name)
      bytes = unhex(v["hex"])
      dict = v["dictionary"] && dictionaries.fetch(v["dictionary"])
      opts = {}
      opts[:dictionaries] = dict if dict
      opts[:max_depth] = v["max_depth"] if v["max_depth"]
      if v["join"] || v["stream"]
        opts[:join] = true if v["join"]
        assert_fails(v, name) { Tersa.load_stream(bytes, **opts) }
        assert_fails(v, "#{name} (decode_stream)") { Tersa::Decoder.new(**opts).decode_stream(bytes) }
        [bytes.bytesize, 1].uniq.each do |piece|
          assert_fails(v, "#{name} (fed in pieces of #{piece})") { feed(Tersa::Decoder.new(**opts), bytes, piece) }
        end
        counts[v["join"] ? :join : :stream] += 1
      else
        assert_fails(v, name) { Tersa.load(bytes, **opts) }
        counts[:value] += 1
      end
    end
    assert_operator counts[:value], :>=, 100
    assert_operator counts[:stream], :>=, 8
    assert_operator counts[:join], :>=, 8
  end

  private

  def each_vector(kind, &block)
    vector_files(kind).each do |file|
      JSON.parse(File.read(file), max_nesting: false)["vectors"].each do |v|
        block.call(v, "#{File.basename(file)}: #{v['name']}")
      end
    end
  end

  def check_fields(vector, kind, name)
    unknown = vector.keys - FIELDS.fetch(kind)
    assert_empty unknown, "#{name}: fields this runner does not check"
  end

  def check_valid(v, name, dict)
    bytes = unhex(v["hex"])
    want = from_xjson(v["value"])
    got = dict ? Tersa.load(bytes, dictionaries: dict) : Tersa.load(bytes)
    assert exact?(want, got), "#{name}: decoded #{got.inspect[0, 300]}"
    # BigDecimal keeps no scale: 1.00 is 0.1e1 in Ruby, so a vector of a
    # decimal whose exact (coefficient, exponent) BigDecimal cannot hold is
    # decoded and compared by value above but not re-encoded.
    return unless bigdecimal_holds?(v["value"])

    expected = v["canonical"] ? v["hex"] : v["canonical_hex"]
    out = dict ? Tersa.dump(want, dictionary: dict) : Tersa.dump(want)
    assert_equal expected, hex(out), name
  end

  # Whether every $decimal in an extended-JSON value has the normal form
  # BigDecimal re-encodes: no trailing zeros in the coefficient, and a zero
  # only with exponent 0.
  def bigdecimal_holds?(j)
    case j
    when Array then j.all? { |x| bigdecimal_holds?(x) }
    when Hash
      return j.all? { |k, x| bigdecimal_holds?(k) && bigdecimal_holds?(x) } unless j.size == 1 && j.key?("$decimal")

      m = j["$decimal"].match(/\A-?(\d*)(?:\.(\d*))?(?:E([-+]?\d+))?\z/i) or return true # NaN, Infinity
      digits = "#{m[1]}#{m[2]}".sub(/\A0+/, "")
      exponent = m[3].to_i - m[2].to_s.size
      digits.empty? ? exponent.zero? : !digits.end_with?("0")
    else true
    end
  end

  def check_stream(v, name, dict)
    bytes = unhex(v["hex"])
    want = v["values"].map { |x| from_xjson(x) }
    assert exact?(want, Tersa.load_stream(bytes, dictionaries: dict)), "#{name}: load_stream"
    [bytes.bytesize, 1].uniq.each do |piece|
      got = feed(Tersa::Decoder.new(dictionaries: dict), bytes, piece)
      assert exact?(want, got), "#{name}: fed in pieces of #{piece}: #{got.inspect[0, 300]}"
    end
    enc = Tersa::Encoder.new(dictionary: dict, sync_frames: v["sync_frames"], sync_bytes: v["sync_bytes"])
    sync_before = v.fetch("sync_before", [])
    pieces = want.each_with_index.map do |x, i|
      enc.sync if sync_before.include?(i)
      enc.write(x)
    end
    assert_equal v["hex"], hex(pieces.empty? ? enc.header : pieces.join), "#{name}: encoded"
  end

  def check_join(v, name, dict)
    bytes = unhex(v["hex"])
    want = v["values"].map { |x| from_xjson(x) }
    assert exact?(want, Tersa.load_stream(bytes, join: true, dictionaries: dict)), "#{name}: load_stream"
    dec = Tersa::Decoder.new(join: true, dictionaries: dict)
    assert exact?(want, dec.decode_stream(bytes)), "#{name}: decode_stream"
    assert_equal_or_nil v["joined_at"], dec.joined_at, "#{name}: joined_at of decode_stream"
    [bytes.bytesize, 3, 1].uniq.each do |piece|
      dec = Tersa::Decoder.new(join: true, dictionaries: dict)
      got = feed(dec, bytes, piece)
      assert exact?(want, got), "#{name}: fed in pieces of #{piece}: #{got.inspect[0, 300]}"
      assert_equal_or_nil v["joined_at"], dec.joined_at, "#{name}: joined_at fed in pieces of #{piece}"
    end
  end

  def assert_equal_or_nil(want, got, message)
    want.nil? ? assert_nil(got, message) : assert_equal(want, got, message)
  end

  def assert_fails(v, name, &block)
    err = assert_raises(Tersa::DecodeError, name, &block)
    assert_equal v["error"].to_sym, err.code, "#{name}: #{err.message}"
    assert_equal v["offset"], err.offset, "#{name}: #{err.message}"
  end

  # The values of `bytes` fed to `dec` in pieces of `piece` bytes (empty
  # input: one empty piece), then #finish.
  def feed(dec, bytes, piece)
    got = []
    piece = [piece, 1].max
    at = 0
    loop do
      dec.feed(bytes.byteslice(at, piece)).each { |x| got << x }
      break if (at += piece) >= bytes.bytesize
    end
    dec.finish
    got
  end
end
