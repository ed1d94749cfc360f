# frozen_string_literal: true

module Bench
  # Exact comparison of a decoded value with the original: the round-trip flag of
  # every benchmark row. Stricter than ==:
  #   Float    same bits (so -0.0 != 0.0, NaN == NaN with the same payload)
  #   String   same bytes and same encoding
  #   Integer  equal (Integer vs Float 1.0 differs)
  #   Hash     same keys in the same order (keys compared exactly), values exact;
  #            a Hash subclass (BSON::Document) counts as a Hash
  #   Time     same instant to the nanosecond (Rational) and same utc_offset
  #   Symbol, nil, true, false: identical
  #   anything else: same class and ==
  module Exact
    module_function

    # nil when exact, else a description of the first difference (with its path).
    # The path strings are built only for a value that differs.
    def diff(a, b, path = "$")
      same?(a, b) ? nil : describe(a, b, path)
    end

    # The rules of describe, without building anything (the common case).
    def same?(a, b)
      case a
      when Hash
        return false unless b.is_a?(Hash) && a.size == b.size
        bk = b.keys
        i = -1
        a.each_pair do |k, v|
          k2 = bk[i += 1]
          return false unless same?(k, k2) && same?(v, b[k2])
        end
        true
      when Array
        return false unless b.is_a?(Array) && a.size == b.size
        i = 0
        n = a.size
        while i < n
          return false unless same?(a[i], b[i])
          i += 1
        end
        true
      when Float
        b.is_a?(Float) && (a == b ? (a != 0.0 || (1.0 / a).positive? == (1.0 / b).positive?) : (a.nan? && b.nan? && [a].pack("G") == [b].pack("G")))
      when String then b.is_a?(String) && a.encoding == b.encoding && a == b # same encoding: == compares the bytes
      when Integer then b.is_a?(Integer) && a == b
      when Symbol, nil, true, false then a.equal?(b)
      else describe(a, b, "$").nil?
      end
    end

    def describe(a, b, path)
      case a
      when Hash
        return "#{path}: #{b.class} instead of Hash" unless b.is_a?(Hash)
        return "#{path}: #{b.size} entries instead of #{a.size}" unless a.size == b.size
        ak = a.keys
        bk = b.keys
        ak.each_with_index do |k, i|
          d = describe(k, bk[i], "#{path}.keys[#{i}]")
          return d if d
          d = describe(a[k], b[bk[i]], "#{path}[#{k.inspect}]")
          return d if d
        end
        nil
      when Array
        return "#{path}: #{b.class} instead of Array" unless b.is_a?(Array)
        return "#{path}: #{b.size} items instead of #{a.size}" unless a.size == b.size
        a.each_with_index do |x, i|
          d = describe(x, b[i], "#{path}[#{i}]")
          return d if d
        end
        nil
      when Float
        return "#{path}: #{b.inspect} (#{b.class}) instead of #{a.inspect}" unless b.is_a?(Float)
        [a].pack("G") == [b].pack("G") ? nil : "#{path}: #{b.inspect} instead of #{a.inspect}"
      when String
        return "#{path}: #{b.class} instead of String" unless b.is_a?(String)
        return "#{path}: encoding #{b.encoding} instead of #{a.encoding}" unless a.encoding == b.encoding
        a.b == b.b ? nil : "#{path}: #{b[0, 40].inspect} instead of #{a[0, 40].inspect}"
      when Integer
        b.is_a?(Integer) && a == b ? nil : "#{path}: #{b.inspect} instead of #{a.inspect}"
      when Time
        return "#{path}: #{b.class} instead of Time" unless b.is_a?(Time)
        return "#{path}: #{b.strftime('%F %T.%N %:z')} instead of #{a.strftime('%F %T.%N %:z')}" unless a.to_r == b.to_r
        return "#{path}: utc_offset #{b.utc_offset} instead of #{a.utc_offset}" unless a.utc_offset == b.utc_offset
        nil
      when Symbol, nil, true, false
        a.equal?(b) ? nil : "#{path}: #{b.inspect} instead of #{a.inspect}"
      else
        a.class == b.class && a == b ? nil : "#{path}: #{b.inspect[0, 60]} instead of #{a.inspect[0, 60]}"
      end
    end

    def equal?(a, b) = diff(a, b).nil?

    # Heap objects a decoder must create at least to hold the value: containers,
    # strings (keys counted once per distinct text: a key cache can reuse them),
    # heap numbers (bignums, non-flonum floats). The issue-3 allocation target.
    def value_objects(v, keys = {})
      n = 0
      case v
      when Hash
        n += 1
        v.each_pair do |k, x|
          if k.is_a?(String)
            n += 1 unless keys[k]
            keys[k] = true
          else
            n += value_objects(k, keys)
          end
          n += value_objects(x, keys)
        end
      when Array
        n += 1
        v.each { |x| n += value_objects(x, keys) }
      when String then n += 1
      when Float then n += 1 unless flonum?(v)
      when Integer then n += 1 unless (-(2**62)...(2**62)).cover?(v)
      end
      n
    end

    def flonum?(f)
      # On 64-bit CRuby a Float is immediate unless its exponent is out of range
      # (and except +0.0 special-cased as immediate too).
      return !(1.0 / f).negative? if f.zero? # -0.0 lives on the heap
      return false if f.nan? || f.infinite?
      e = Math.frexp(f.abs)[1]
      e > -255 && e < 257
    end
  end
end
