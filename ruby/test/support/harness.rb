# frozen_string_literal: true

# Harness of the Ruby gem for spec/tools/crossfuzz.py: one JSON request per
# line on stdin, one JSON reply per line on stdout (protocol: the top of
# crossfuzz.py). Values arrive as the extended JSON of spec/vectors/README.md;
# decoded values are answered with their canonical re-encoding by this gem,
# so the languages are compared on bytes.
#
#   ruby -Iruby/lib ruby/test/support/harness.rb
require "json"
require "tersa"
require_relative "xvalue"

module TersaHarness
  module_function

  def from_x(j) = TersaXValue.from_x(j)

  # BigDecimal keeps no scale: a decimal with trailing zeros in its
  # coefficient (1.00), or a zero with an exponent (0E+3), comes back as
  # another Tersa value (1, 0). Requests holding one are answered
  # "unsupported" rather than compared.
  NO_SCALE = { "unsupported" => "BigDecimal keeps no scale (a decimal with trailing zeros)" }.freeze
  DECIMAL_EXT = "\xF7\x04\xF8\x07".b # EXT tag, type 0xFF00 (a 3-byte varint)

  def scaled_xdecimal?(j)
    case j
    when Array then j.any? { |x| scaled_xdecimal?(x) }
    when Hash
      return j.any? { |k, x| scaled_xdecimal?(k) || scaled_xdecimal?(x) } unless j.size == 1 && j.key?("$decimal")

      m = j["$decimal"].match(/\A-?(\d*)(?:\.(\d*))?(?:E([-+]?\d+))?\z/i) or return false # NaN, Infinity
      digits = "#{m[1]}#{m[2]}".sub(/\A0+/, "")
      exponent = m[3].to_i - m[2].to_s.size
      digits.empty? ? !exponent.zero? : digits.end_with?("0")
    else false
    end
  end

  def varint_at(data, at)
    first = data.getbyte(at) or return nil
    n = first.zero? ? 9 : (first & -first).bit_length
    return nil if at + n > data.bytesize

    v = n == 9 ? data.byteslice(at + 1, 8).unpack1("Q<") : data.byteslice(at, n).bytes.reverse.inject(0) { |a, b| (a << 8) | b } >> n
    [v, n]
  end

  # Whether the buffer may hold such a decimal: every EXT of type 0xFF00 it
  # seems to hold (the pattern may also occur inside strings: then the
  # request is skipped for nothing).
  def scaled_decimal_bytes?(data)
    at = 0
    while (at = data.index(DECIMAL_EXT, at))
      at += DECIMAL_EXT.bytesize
      len, n = varint_at(data, at)
      next unless len && len <= data.bytesize # a longer one is no payload (and beyond byteslice's long)

      payload = data.byteslice(at + n, len) || "".b
      next unless payload.bytesize >= 2 && payload.getbyte(0) <= 1

      z, m = varint_at(payload, 1)
      next unless z
      exponent = z.odd? ? -((z + 1) >> 1) : z >> 1
      c = payload.byteslice(1 + m..).bytes.inject(0) { |a, b| (a << 8) | b }
      return true if c.zero? ? !exponent.zero? : (c % 10).zero?
    end
    false
  end

  def hex(s) = s.unpack1("H*")
  def unhex(h) = [h].pack("H*").b
  def decode_error(e) = { "error" => e.code.to_s, "offset" => e.offset }

  # The block's reply, or the error of the decoding in it.
  def decoded
    yield
  rescue Tersa::DecodeError => e
    decode_error(e)
  end

  # Feed `data` to Tersa::Decoder in pieces of the given sizes (the last size
  # repeats), taking the completed values after every piece, then finish.
  def chunked(data, pieces, join: false)
    begin
      dec = join ? Tersa::Decoder.new(join: true) : Tersa::Decoder.new
    rescue ArgumentError => e
      return { "unsupported" => "Tersa::Decoder.new(join: true): #{e.message}" }
    end
    values = []
    at = 0
    i = 0
    begin
      while at < data.bytesize
        size = pieces[[i, pieces.size - 1].min]
        i += 1
        dec.feed(data.byteslice(at, size))
        at += size
        dec.each { |v| values << hex(Tersa.dump(v)) }
      end
      dec.finish
    rescue Tersa::DecodeError => e
      return { "values" => values }.merge(decode_error(e))
    end
    join ? { "values" => values, "joined_at" => dec.joined_at } : { "values" => values }
  end

  # Tersa::Encoder with the sync-frame options of the request (SPEC 2.3).
  def encode_stream(req)
    opts = req.slice("sync_frames", "sync_bytes").transform_keys(&:to_sym)
    before = req.fetch("sync_before", [])
    begin
      enc = Tersa::Encoder.new(**opts)
    rescue ArgumentError => e
      return { "unsupported" => "Tersa::Encoder.new(#{opts.keys.join(', ')}): #{e.message}" }
    end
    return { "unsupported" => "Tersa::Encoder has no #sync" } if before.any? && !enc.respond_to?(:sync)

    pieces = req["values"].each_with_index.map do |v, i|
      enc.sync if before.include?(i)
      enc.write(from_x(v))
    end
    { "hex" => hex(pieces.empty? ? enc.header : pieces.join) }
  end

  def handle(req)
    return NO_SCALE if (req.key?("value") || req.key?("values")) && scaled_xdecimal?(req.slice("value", "values").values)
    return NO_SCALE if req["hex"] && scaled_decimal_bytes?(unhex(req["hex"]))

    case req["op"]
    when "hello" then { "impl" => "ruby", "tersa" => Tersa::VERSION, "ruby" => RUBY_VERSION }
    when "encode" then { "hex" => hex(Tersa.dump(from_x(req["value"]))) }
    when "encode_stream" then encode_stream(req)
    when "decode" then decoded { { "hex" => hex(Tersa.dump(Tersa.load(unhex(req["hex"])))) } }
    when "decode_stream" then decoded { { "values" => Tersa.load_stream(unhex(req["hex"])).map { |v| hex(Tersa.dump(v)) } } }
    when "decode_stream_chunks" then chunked(unhex(req["hex"]), req["pieces"])
    when "join_stream"
      begin
        dec = Tersa::Decoder.new(join: true)
        vs = dec.decode_stream(unhex(req["hex"]))
      rescue ArgumentError, NoMethodError => e
        return { "unsupported" => "Tersa::Decoder.new(join: true).decode_stream: #{e.message}" }
      rescue Tersa::DecodeError => e
        return decode_error(e)
      end
      { "joined_at" => dec.joined_at, "values" => vs.map { |v| hex(Tersa.dump(v)) } }
    when "join_stream_chunks" then chunked(unhex(req["hex"]), req["pieces"], join: true)
    else { "unsupported" => "unknown op #{req['op'].inspect}" }
    end
  rescue Tersa::EncodeError => e
    { "encode_error" => e.message }
  end
end

$stdout.sync = true
$stdin.each_line do |line|
  next if line.strip.empty?

  reply = begin
    TersaHarness.handle(JSON.parse(line))
  rescue StandardError, SystemStackError => e
    { "crash" => "#{e.class}: #{e.message}", "trace" => (e.backtrace || []).first(8).join("\n") }
  end
  $stdout.write(JSON.generate(reply), "\n")
end
