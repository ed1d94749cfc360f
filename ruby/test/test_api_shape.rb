# frozen_string_literal: true

require_relative "helper"
require "stringio"
require "json"

# The API shape shared with Python and TypeScript (README "The API in each
# language"): a stream encoder hands out each frame, and the header once.
class TestApiShape < Minitest::Test
  VALUES = [{ "id" => 1, "name" => "a" }, { "id" => 2, "name" => "b" }, %w[x x]].freeze

  def whole_stream(values) = Tersa::Encoder.new.then { |e| values.map { |v| e.write(v) }.join }

  def test_the_pieces_written_concatenate_to_the_stream
    enc = Tersa::Encoder.new
    pieces = VALUES.map { |v| enc.write(v) }
    assert_equal "c17012", pieces[0].unpack1("H6")
    refute pieces[1].start_with?("\xC1\x70".b)
    assert_equal Encoding::BINARY, pieces[0].encoding
    assert_equal VALUES, Tersa.load_stream(pieces.join)
  end

  def test_header_is_taken_once
    enc = Tersa::Encoder.new
    head = enc.header
    assert_equal "c17012", head.unpack1("H*")
    frames = VALUES.map { |v| enc.write(v) }
    assert_equal whole_stream(VALUES), head + frames.join
    assert_raises(Tersa::Error) { enc.header }
    late = Tersa::Encoder.new
    first = late.write(1)
    assert_raises(Tersa::Error) { late.header }
    assert_equal [1, 2], Tersa.load_stream(first + late.write(2)) # still a working stream
    late.reset
    assert_equal head, late.header # a new stream has a header of its own
  end

  def test_output_receives_every_piece
    io = StringIO.new(+"".b)
    enc = Tersa::Encoder.new(output: io)
    returned = VALUES.map { |v| enc.write(v) }
    assert_equal whole_stream(VALUES), io.string
    assert_equal io.string, returned.join
    dict = Tersa::Dictionary.new(strings: ["admin"], shapes: [])
    io = StringIO.new(+"".b)
    enc = Tersa::Encoder.new(output: io, dictionary: dict)
    assert_equal 11, enc.header.bytesize
    enc.write("admin")
    assert_equal ["admin"], Tersa.load_stream(io.string, dictionaries: dict)
    assert_raises(TypeError) { Tersa::Encoder.new(output: Object.new) }
  end

  def test_a_failing_output_ends_the_stream
    full = Object.new
    def full.write(_) = raise(IOError, "disk full")
    enc = Tersa::Encoder.new(output: full)
    assert_raises(IOError) { enc.write(1) }
    assert_raises(Tersa::EncodeError) { enc.write(2) }
  end

  def test_the_one_way_of_appending
    enc = Tersa::Encoder.new
    refute_respond_to enc, :<<, "#write is the one way: it returns each piece"
  end

  def test_dictionary_ids_print_as_0x_and_16_hex_digits
    dict = Tersa::Dictionary.new(strings: ["admin"], shapes: [])
    hex = format("0x%016x", dict.id)
    assert_includes dict.inspect, "id=#{hex} "
    single = Tersa.dump("admin", dictionary: dict)
    stream = Tersa::Encoder.new(dictionary: dict).write("admin")
    [-> { Tersa.load(single) }, -> { Tersa.load_stream(stream) }, -> { Tersa::Decoder.new.feed(stream).each.to_a },
     -> { Tersa.load(single, dictionaries: Tersa::Dictionary.new(strings: ["other"])) }].each do |decode|
      err = assert_raises(Tersa::DecodeError) { decode.call }
      assert_equal :unknown_dictionary, err.code
      assert_includes err.message, "dictionary #{hex} was not supplied"
    end
  end

  def test_decoding_takes_dictionaries
    dict = Tersa::Dictionary.new(strings: ["admin"], shapes: [])
    bytes = Tersa.dump("admin", dictionary: dict)
    assert_equal "admin", Tersa.load(bytes, dictionaries: dict)
    assert_equal "admin", Tersa.load(bytes, dictionaries: [Tersa::Dictionary.new(strings: ["xx"]), dict])
    err = assert_raises(ArgumentError) { Tersa.load(bytes, dictionary: dict) }
    assert_match(/dictionaries:/, err.message)
    assert_raises(ArgumentError) { Tersa::Decoder.new(dictionary: dict) }
  end

  def test_a_cycle_is_one_line_naming_where_it_closes
    a = [1, 2]
    d = { "x" => [0, 0, 0, { "b" => a }] }
    a << d
    err = assert_raises(Tersa::EncodeError) { Tersa.dump({ "a" => d }) }
    assert_equal 'circular reference: the value at $["a"] contains itself at $["a"]["x"][3]["b"][2]', err.message
    err = assert_raises(Tersa::EncodeError) { Tersa::Encoder.new.write([a]) }
    assert_equal "circular reference: the value at $[0] contains itself at $[0][2][\"x\"][3][\"b\"]", err.message
  end

  def test_dictionary_build_limits_are_integers_of_at_least_one
    samples = [{ "a" => "hello" }, { "a" => "hello" }]
    assert_equal 1, Tersa::Dictionary.build(samples, max_strings: 1, max_shapes: 1, min_count: 1).strings.size
    [{ max_strings: 0 }, { max_shapes: 0 }, { min_count: 0 }, { max_strings: -1 }, { min_count: -1 }].each do |opts|
      assert_raises(ArgumentError, opts.inspect) { Tersa::Dictionary.build(samples, **opts) }
    end
    assert_raises(TypeError) { Tersa::Dictionary.build(samples, max_strings: 1.5) }
    assert_raises(ArgumentError) { Tersa::Dictionary.build(samples, maxStrings: 1) }
  end

  # The same defect, the same code in every language (SPEC 10): every prefix
  # of the valid vectors gets the reference codec's code and offset, decoded
  # whole and fed byte by byte (Python and TypeScript run the same check).
  def test_truncated_input_gets_the_reference_codes_and_offsets
    oracle = File.expand_path("../../spec/tools/prefix_outcomes.py", __dir__)
    lines = IO.popen(["python3", oracle], &:readlines)
    assert_operator lines.size, :>, 5000
    lines.each do |line|
      c = JSON.parse(line)
      data = [c["hex"]].pack("H*")
      want = c["code"] == "ok" ? "ok" : [c["code"].to_sym, c["offset"]]
      assert_equal want, outcome { c["stream"] ? Tersa.load_stream(data) : Tersa.load(data) }, c["hex"]
      next unless c["stream"]

      dec = Tersa::Decoder.new
      fed = outcome do
        data.each_char { |ch| dec.feed(ch).each.to_a }
        dec.finish
      end
      assert_equal want, fed, "fed: #{c['hex']}"
    end
  end

  def outcome
    yield
    "ok"
  rescue Tersa::DecodeError => e
    [e.code, e.offset]
  end
end
