# frozen_string_literal: true

require "date"
require "bigdecimal"
require "tersa"

# The extended JSON of spec/vectors/README.md read as Ruby values: the one
# conversion the tests (helper.rb) and the crossfuzz harness (harness.rb) use.
module TersaXValue
  module_function

  # A "$map" whose keys a Hash merges (0.0 and -0.0, "a" and "a".b, BigDecimal
  # 1.0 and 1.00) becomes what the block makes of its pairs: a Tersa::Map
  # unless the caller wants something else to compare with.
  def from_x(j, &merged)
    case j
    when nil, true, false, Integer, String then j
    when Array then j.map { |x| from_x(x, &merged) }
    when Hash
      return j.transform_values { |x| from_x(x, &merged) } unless j.size == 1 && j.keys.first.start_with?("$")

      k, x = j.first
      case k
      when "$int" then Integer(x)
      when "$float" then parse_float(x)
      when "$symbol" then x.to_sym
      when "$binary" then [x].pack("H*").b
      when "$time" then timestamp(x)
      when "$ext" then Tersa::Ext.new(x["type"], [x["data"]].pack("H*").b)
      when "$map"
        pairs = x.map { |a, b| [from_x(a, &merged), from_x(b, &merged)] }
        h = pairs.to_h
        if h.size == pairs.size then h
        elsif merged then merged.call(pairs)
        else Tersa::Map.new(pairs)
        end
      when "$decimal" then BigDecimal(x)
      when "$date" then Date.new(*x.split("-").map { |f| Integer(f, 10) }, Date::GREGORIAN)
      when "$uuid" then Tersa::UUID.parse(x)
      when "$time_of_day" then time_of_day(x)
      else raise ArgumentError, "unknown xvalue tag #{k}"
      end
    else raise ArgumentError, "not an xvalue (plain JSON floats are not used): #{j.inspect}"
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
      zone = format("%s%02d:%02d", off.negative? ? "-" : "+", off.abs / 60, off.abs % 60)
      Time.at(x["seconds"], x["nanos"], :nsec, in: zone)
    else Tersa::Timestamp.new(x["seconds"], x["nanos"], :floating, nil)
    end
  end

  def time_of_day(text)
    m = text.match(/\A(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?\z/) or raise ArgumentError, text
    h, m, s, f = m.captures
    Tersa::TimeOfDay.new(h.to_i, m.to_i, s.to_i, f.to_s.ljust(6, "0").to_i)
  end
end
