# frozen_string_literal: true

module Tersa
  class Dictionary
    # Build a dictionary from sample objects with the C core's builder, the
    # one the CLI, Python and TypeScript use: each sample is encoded, then a
    # String of 2+ bytes (or a Symbol's name) or a Hash's key sequence counts
    # once per sample it occurs in; those in at least +min_count+ samples are
    # kept (strings most bytes saved first, shapes as first met). The same
    # samples give the same dictionary, id included, in every language.
    # +min_count+ defaults to 2 (1 for a single sample).
    # The limits are checked as Python and TypeScript check them: Integers >= 1.
    def self.build(samples, min_count: nil, max_strings: 4096, max_shapes: 1024)
      { max_strings: max_strings, max_shapes: max_shapes, min_count: min_count || 1 }.each do |name, v|
        raise TypeError, "#{name} must be an Integer" unless v.is_a?(Integer)
        raise ArgumentError, "max_strings and max_shapes must be >= 1, min_count >= 1 or nil" if v < 1
      end
      buffers = samples.to_a.map { |sample| Tersa.dump(sample) }
      build_from_buffers(buffers, min_count || 0, max_strings, max_shapes)
    end

    def inspect
      "#<Tersa::Dictionary id=#{format('0x%016x', id)} strings=#{strings.size} shapes=#{shapes.size}>"
    end
  end
end
