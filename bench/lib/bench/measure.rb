# frozen_string_literal: true

require "objspace"
require_relative "util"

module Bench
  # Timing and allocation counting.
  module Measure
    module_function

    # Calls the block repeatedly for at least `seconds` (and at least `min_iters`
    # times); returns operations per second. Batches grow geometrically so the
    # clock is read rarely; GC stays enabled, so the garbage an operation leaves
    # is paid for by the operation that made it.
    def rate(seconds, min_iters = 1)
      n = 0
      batch = 1
      t0 = Util.now
      loop do
        i = 0
        while i < batch
          yield
          i += 1
        end
        n += batch
        el = Util.now - t0
        return n / el if el >= seconds && n >= min_iters
        # aim the next batch at the remaining time, doubling at most
        per = el / n
        want = per.positive? ? ((seconds - el) / per).ceil : batch * 2
        batch = want.clamp(1, batch * 2)
      end
    end

    # Seconds for one call of the block: the median of `reps` calls (for the
    # large documents and the million-record arrays, where one call is long).
    def once(reps = 1)
      ts = Array.new(reps) do
        t0 = Util.now
        yield
        Util.now - t0
      end
      Util.median(ts)
    end

    # Allocations of `n` calls of the block, with the GC disabled so nothing is
    # freed in between:
    #   objects  GC.stat(:total_allocated_objects) after - before
    #   bytes    ObjectSpace.memsize_of_all after - before: the 40-byte slots of
    #            those objects plus the malloc'd memory they own (string bodies,
    #            array and hash tables). Native scratch buffers that a library
    #            frees before returning are not included.
    # The harness's own cost (an empty block) is measured the same way and
    # subtracted.
    def allocations(n, &blk)
      objs, bytes = raw_allocations(n, &blk)
      e_objs, e_bytes = raw_allocations(n) { nil }
      [[objs - e_objs, 0].max, [bytes - e_bytes, 0].max]
    end

    def raw_allocations(n)
      GC.start
      GC.disable
      o0 = GC.stat(:total_allocated_objects)
      m0 = ObjectSpace.memsize_of_all
      i = 0
      while i < n
        yield
        i += 1
      end
      m1 = ObjectSpace.memsize_of_all
      o1 = GC.stat(:total_allocated_objects)
      [o1 - o0, m1 - m0]
    ensure
      GC.enable
      GC.start
    end
  end
end
