# frozen_string_literal: true

# Harness of the Ruby gem for spec/tools/crossfuzz.py: one JSON request per
# line on stdin, one JSON reply per line on stdout (protocol: the top of
# crossfuzz.py). Values arrive as the extended JSON of spec/vectors/README.md;
# decoded values are answered with their canonical re-encoding by this gem,
# so the languages are compared on bytes.
#
#   ruby -Iruby/lib ruby/test/support/harness.rb
require "json"
require "pith"

module PithHarness
  module_function

  def parse_float(text)
    case text
    when "NaN" then [0x7ff8000000000000].pack("Q<").unpack1("E")
    when /\ANaN\(0x(\h+)\)\z/ then [Regexp.last_match(1).to_i(16)].pack("Q<").unpack1("E")
    when "Infinity" then Float::INFINITY
    when "-Infinity" then -Float::INFINITY
    else Float(text)
    end
  end

  def timestamp(x)
    case x["zone"]
    when "utc" then Time.at(x["seconds"], x["nanos"], :nsec, in: "UTC")
    when "offset"
      off = x["offset"]
      zone = format("%s%02d:%02d", off.negative? ? "-" : "+", off.abs / 60, off.abs % 60)
      Time.at(x["seconds"], x["nanos"], :nsec, in: zone)
    else Pith::Timestamp.new(x["seconds"], x["nanos"], :floating, nil)
    end
  end

  # A Hash merges keys that are distinct Pith values (0.0 and -0.0, "a" and
  # "a".b, ...): then only Pith::Map keeps every pair.
  def make_map(pairs)
    h = pairs.to_h
    h.size == pairs.size ? h : Pith::Map.new(pairs)
  end

  def from_x(j)
    case j
    when nil, true, false, Integer, String then j
    when Array then j.map { |x| from_x(x) }
    when Hash
      if j.size == 1 && j.keys.first.start_with?("$")
        k, x = j.first
        case k
        when "$int" then Integer(x)
        when "$float" then parse_float(x)
        when "$symbol" then x.to_sym
        when "$binary" then [x].pack("H*").b
        when "$time" then timestamp(x)
        when "$ext" then Pith::Ext.new(x["type"], [x["data"]].pack("H*").b)
        when "$map" then make_map(x.map { |a, b| [from_x(a), from_x(b)] })
        else raise ArgumentError, "unknown xvalue tag #{k}"
        end
      else
        make_map(j.map { |a, b| [a, from_x(b)] })
      end
    else raise ArgumentError, "not an xvalue: #{j.inspect}"
    end
  end

  def hex(s) = s.unpack1("H*")
  def unhex(h) = [h].pack("H*").b
  def decode_error(e) = { "error" => e.code.to_s, "offset" => e.offset }

  # Feed `data` to Pith::Decoder in pieces of the given sizes (the last size
  # repeats), taking the completed values after every piece, then finish.
  def chunked(data, pieces, join: false)
    begin
      dec = join ? Pith::Decoder.new(join: true) : Pith::Decoder.new
    rescue ArgumentError => e
      return { "unsupported" => "Pith::Decoder.new(join: true): #{e.message}" }
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
        dec.each { |v| values << hex(Pith.dump(v)) }
      end
      dec.finish
    rescue Pith::DecodeError => e
      return { "values" => values }.merge(decode_error(e))
    end
    join ? { "values" => values, "joined_at" => dec.joined_at } : { "values" => values }
  end

  # Pith::Encoder with the sync-frame options of the request (SPEC 2.3).
  def encode_stream(req)
    opts = req.slice("sync_frames", "sync_bytes").transform_keys(&:to_sym)
    before = req.fetch("sync_before", [])
    begin
      enc = Pith::Encoder.new(**opts)
    rescue ArgumentError => e
      return { "unsupported" => "Pith::Encoder.new(#{opts.keys.join(', ')}): #{e.message}" }
    end
    return { "unsupported" => "Pith::Encoder has no #sync" } if before.any? && !enc.respond_to?(:sync)

    req["values"].each_with_index do |v, i|
      enc.sync if before.include?(i)
      enc << from_x(v)
    end
    { "hex" => hex(enc.to_s) }
  end

  def handle(req)
    case req["op"]
    when "hello" then { "impl" => "ruby", "pith" => Pith::VERSION, "ruby" => RUBY_VERSION }
    when "encode" then { "hex" => hex(Pith.dump(from_x(req["value"]))) }
    when "encode_stream" then encode_stream(req)
    when "decode"
      begin
        v = Pith.load(unhex(req["hex"]))
      rescue Pith::DecodeError => e
        return decode_error(e)
      end
      { "hex" => hex(Pith.dump(v)) }
    when "decode_stream"
      begin
        vs = Pith.load_stream(unhex(req["hex"]))
      rescue Pith::DecodeError => e
        return decode_error(e)
      end
      { "values" => vs.map { |v| hex(Pith.dump(v)) } }
    when "decode_stream_chunks" then chunked(unhex(req["hex"]), req["pieces"])
    when "join_stream"
      begin
        dec = Pith::Decoder.new(join: true)
        vs = dec.decode_stream(unhex(req["hex"]))
      rescue ArgumentError, NoMethodError => e
        return { "unsupported" => "Pith::Decoder.new(join: true).decode_stream: #{e.message}" }
      rescue Pith::DecodeError => e
        return decode_error(e)
      end
      { "joined_at" => dec.joined_at, "values" => vs.map { |v| hex(Pith.dump(v)) } }
    when "join_stream_chunks" then chunked(unhex(req["hex"]), req["pieces"], join: true)
    else { "unsupported" => "unknown op #{req['op'].inspect}" }
    end
  rescue Pith::EncodeError => e
    { "encode_error" => e.message }
  end
end

$stdout.sync = true
$stdin.each_line do |line|
  next if line.strip.empty?

  reply = begin
    PithHarness.handle(JSON.parse(line))
  rescue StandardError, SystemStackError => e
    { "crash" => "#{e.class}: #{e.message}", "trace" => (e.backtrace || []).first(8).join("\n") }
  end
  $stdout.write(JSON.generate(reply), "\n")
end
