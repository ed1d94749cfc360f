# frozen_string_literal: true

require_relative "../util"
require_relative "../exact"
require_relative "../measure"

module Bench
  module Sections
    # 4. Large documents (bench/corpus/large/*.json.xz): sizes, encode and decode
    # time, allocations per call, exactness, for every codec.
    class Large
      def initialize(ctx, codecs)
        @ctx = ctx
        @codecs = codecs
        @p = ctx.params
      end

      def files
        dir = File.join(@ctx.root, "bench/corpus/large")
        fs = Dir[File.join(dir, "*.json.xz")].sort
        fs.select! { |f| @p[:large_docs].include?(@ctx.doc_name(f)) } if @p[:large_docs]
        fs
      end

      def run
        res = { "docs" => [], "codecs" => @codecs.map(&:name), "rows" => {},
                "params" => { "slice_s" => @p[:large_slice], "rounds" => @p[:large_rounds] } }
        @codecs.each { |c| res["rows"][c.name] = {} }
        files.each do |f|
          name = @ctx.doc_name(f)
          @ctx.progress("large", "#{name}: loading")
          d = @ctx.load_doc(f)
          value = d[:value]
          res["docs"] << { "name" => name, "json_bytes" => d[:json_bytes], "value_objects" => Exact.value_objects(value) }
          cases = []
          @codecs.each do |c|
            r = res["rows"][c.name][name] = {}
            @ctx.progress("large", "#{name}: #{c.name} sizes and allocations")
            begin
              c.prepare(value)
              enc = c.encode(value)
              back = c.decode(enc)
              diff = Exact.diff(value, back)
              back = nil
              r.merge!("bytes" => enc.bytesize, "lz4" => BenchCompress::LZ4.compress(enc).bytesize,
                       "zstd" => BenchCompress::Zstd.compress(enc).bytesize, "exact" => diff.nil?)
              r["diff"] = diff if diff
              r["canonical"] = canonical?(name, enc) if c.name == "tersa"
              eo, eb = Measure.allocations(1) { c.encode(value) }
              dobj, db = Measure.allocations(1) { c.decode(enc) }
              r["mem"] = { "encode_objects" => eo, "encode_bytes" => eb, "decode_objects" => dobj, "decode_bytes" => db }
              cases << [c, r, enc]
            rescue StandardError, SystemStackError => e
              r.merge!("exact" => false, "error" => "#{e.class}: #{e.message.lines.first&.strip}")
            end
          end
          rounds = @p[:large_rounds]
          (0..rounds).each do |round|
            @ctx.progress("large", "#{name}: #{round.zero? ? 'warm-up' : "round #{round}/#{rounds}"}")
            cases.shuffle(random: Random.new(round + 7)).each do |c, r, enc|
              c.prepare(value)
              %w[encode decode].each do |op|
                pr = op == "encode" ? -> { c.encode(value) } : -> { c.decode(enc) }
                rate = Measure.rate(@p[:large_slice]) { pr.call }
                (r["rounds_#{op}"] ||= []) << rate unless round.zero?
              end
            end
          end
          cases.each do |_, r, _|
            r["encode_per_s"] = Util.median(r.delete("rounds_encode"))
            r["decode_per_s"] = Util.median(r.delete("rounds_decode"))
          end
          value = nil
          GC.start
        end
        @ctx.progress("large", "#{res['docs'].size} documents × #{@codecs.size} codecs", done: true)
        res
      end

      def canonical?(name, enc)
        path = File.join(@ctx.root, "spec/vectors/corpus/large/#{name}.tersa.xz")
        return nil unless File.exist?(path)
        want = IO.popen(["xz", "-dc", path], "rb", &:read)
        want == enc
      end
    end
  end
end
