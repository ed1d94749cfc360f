# frozen_string_literal: true

$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
require "minitest/autorun"
require "json"
require "date"
require "bigdecimal"
require "tersa"

module TersaTestHelper
  # An expected map whose keys a Hash merges (BigDecimal 1.0 and 1.00, which
  # Tersa::Map cannot hold apart either): the decoded Tersa::Map is compared
  # with it pair by pair.
  Pairs = Struct.new(:pairs)

  ROOT = File.expand_path("../..", __dir__)
  VECTORS = File.join(ROOT, "spec", "vectors")

  module_function

  # Extended JSON of spec/vectors/README.md -> Ruby values.
  def from_xjson(j)
    case j
    when nil, true, false, Integer, String then j
    when Float then raise ArgumentError, "plain JSON floats are not used in vectors"
    when Array then j.map { |x| from_xjson(x) }
    when Hash
      if j.size == 1 && j.keys.first.start_with?("$")
        k, x = j.first
        case k
        when "$int" then Integer(x)
        when "$float" then parse_float(x)
        when "$symbol" then x.to_sym
        when "$binary" then [x].pack("H*").b
        when "$time" then timestamp(x)
        when "$ext" then Tersa::Ext.new(x["type"], [x["data"]].pack("H*").b)
        when "$map"
          pairs = x.map { |a, b| [from_xjson(a), from_xjson(b)] }
          h = pairs.to_h
          h.size == pairs.size ? h : Pairs.new(pairs)
        when "$decimal" then BigDecimal(x)
        when "$date" then Date.new(*x.split("-").map { |f| Integer(f, 10) }, Date::GREGORIAN)
        when "$uuid" then Tersa::UUID.parse(x)
        when "$time_of_day" then time_of_day(x)
        else raise ArgumentError, "unknown tag #{k}"
        end
      else
        j.transform_values { |x| from_xjson(x) }
      end
    end
  end

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
      Time.at(x["seconds"], x["nanos"], :nsec, in: format("%s%02d:%02d", off.negative? ? "-" : "+", off.abs / 60, off.abs % 60))
    else Tersa::Timestamp.new(x["seconds"], x["nanos"], :floating, nil)
    end
  end

  def time_of_day(text)
    m = text.match(/\A(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?\z/) or raise ArgumentError, text
    h, m, s, f = m.captures
    Tersa::TimeOfDay.new(h.to_i, m.to_i, s.to_i, f.to_s.ljust(6, "0").to_i)
  end

  # Exact equality of the data model: floats by bits, strings by bytes and
  # encoding class, times by instant, nanoseconds and zone, order of hashes.
  def exact?(a, b)
    return b.is_a?(Tersa::Map) && exact?(a.pairs, b.to_a) if a.is_a?(Pairs)

    return false unless a.class == b.class || (a.is_a?(Integer) && b.is_a?(Integer))

    case a
    when Float then [a].pack("E") == [b].pack("E")
    when String then a.b == b.b && (a.encoding == Encoding::BINARY) == (b.encoding == Encoding::BINARY)
    when Array then a.size == b.size && a.zip(b).all? { |x, y| exact?(x, y) }
    when Hash
      a.size == b.size && a.keys.zip(b.keys).all? { |x, y| exact?(x, y) } &&
        a.values.zip(b.values).all? { |x, y| exact?(x, y) }
    when Time then a.to_r == b.to_r && a.utc? == b.utc? && a.utc_offset == b.utc_offset
    when BigDecimal then a.nan? ? b.nan? : a == b && a.sign == b.sign
    else a == b
    end
  end

  def vector_files(kind)
    files = Dir[File.join(VECTORS, kind, "*.json")].sort
    raise "no vector files in #{File.join(VECTORS, kind)}: the conformance vectors are missing" if files.empty?

    files
  end

  def dictionaries
    @dictionaries ||= JSON.parse(File.read(File.join(VECTORS, "dictionaries.json")))["dictionaries"].to_h do |name, d|
      dict = if d["generate"]
               Tersa::Dictionary.new(strings: Array.new(d["generate"]["strings"]) { |i| "s#{i}" },
                                    shapes: Array.new(d["generate"]["shapes"]) { |i| ["k#{i}"] })
             else
               Tersa::Dictionary.new(strings: d["strings"].map { |s| from_xjson(s) },
                                    shapes: d["shapes"].map { |s| s.map { |k| from_xjson(k) } })
             end
      [name, dict]
    end
  end

  def hex(s) = s.unpack1("H*")
  def unhex(h) = [h].pack("H*").b
end
