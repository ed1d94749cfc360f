# frozen_string_literal: true

module Pith
  class Dictionary
    # Build a dictionary from sample objects: the key sequences (shapes) and
    # the strings that occur at least +min_count+ times, most bytes saved first.
    def self.build(samples, min_count: 2, max_strings: 4096)
      strings = Hash.new(0)
      shapes = Hash.new(0)
      # A work list rather than recursion: samples may nest as deep as Pith allows.
      pending = samples.to_a.reverse
      until pending.empty?
        case (obj = pending.pop)
        when Hash
          keys = obj.keys
          shapes[keys] += 1 if keys.all? { |k| k.is_a?(String) || k.is_a?(Symbol) }
          pending.concat(obj.values.reverse)
        when Array then pending.concat(obj.reverse)
        when String
          strings[obj] += 1 if obj.bytesize >= 2 && obj.encoding != Encoding::BINARY
        end
      end
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
