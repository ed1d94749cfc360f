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
    def self.build(samples, min_count: nil, max_strings: 4096, max_shapes: 1024)
      buffers = samples.to_a.map { |sample| Tersa.dump(sample) }
      build_from_buffers(buffers, min_count || 0, max_strings, max_shapes)
    end

    def inspect
      "#<Tersa::Dictionary id=#{format('%016x', id)} strings=#{strings.size} shapes=#{shapes.size}>"
    end
  end
end
