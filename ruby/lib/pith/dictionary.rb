# frozen_string_literal: true

module Pith
  class Dictionary
    # Build a dictionary from sample objects: the key sequences (shapes) and
    # the strings that occur at least +min_count+ times, most bytes saved first.
    def self.build(samples, min_count: 2, max_strings: 4096)
      strings = Hash.new(0)
      shapes = Hash.new(0)
      walk = lambda do |obj|
        case obj
        when Hash
          keys = obj.keys
          shapes[keys] += 1 if keys.all? { |k| k.is_a?(String) || k.is_a?(Symbol) }
          obj.each_value(&walk)
        when Array then obj.each(&walk)
        when String
          strings[obj] += 1 if obj.bytesize >= 2 && obj.encoding != Encoding::BINARY
        end
      end
      samples.each(&walk)
      kept = strings.select { |_, n| n >= min_count }
                    .sort_by { |s, n| [-(s.bytesize * n), s.bytesize, s] }
                    .first(max_strings).map(&:first)
      new(strings: kept, shapes: shapes.select { |_, n| n >= min_count }.keys)
    end

    def inspect
      "#<Pith::Dictionary id=#{format('%016x', id)} strings=#{strings.size} shapes=#{shapes.size}>"
    end
  end
end
