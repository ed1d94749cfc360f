# frozen_string_literal: true

$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
require "minitest/autorun"
require "json"
require "date"
require "bigdecimal"
require "tersa"
require_relative "support/xvalue"

module TersaTestHelper
  # An expected map whose keys a Hash merges (BigDecimal 1.0 and 1.00, which
  # Tersa::Map cannot hold apart either): the decoded Tersa::Map is compared
  # with it pair by pair.
  Pairs = Struct.new(:pairs)

  ROOT = File.expand_path("../..", __dir__)
  VECTORS = File.join(ROOT, "spec", "vectors")

  module_function

  # Extended JSON of spec/vectors/README.md -> Ruby values; a "$map" a Hash
  # cannot hold becomes Pairs.
  def from_xjson(j) = TersaXValue.from_x(j) { |pairs| Pairs.new(pairs) }

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
