# frozen_string_literal: true

require_relative "../util"
require_relative "../exact"
require_relative "../measure"

module Bench
  module Sections
    # 1. The seed document benchmark: sizes (raw, LZ4, Zstd), encode and decode
    # rates with and without compression, allocations, exactness; one column per
    # document, every codec interleaved in this one process.
    class Seed
      OPS = %w[encode decode encode_lz4 encode_zstd lz4_decode zstd_decode].freeze
      OP_TITLES = {
        "encode" => "Encode", "decode" => "Decode",
        "encode_lz4" => "Encode + LZ4", "encode_zstd" => "Encode + Zstd",
        "lz4_decode" => "LZ4 + decode", "zstd_decode" => "Zstd + decode"
      }.freeze

      def initialize(ctx, codecs, floor)
        @ctx = ctx
        @codecs = codecs
        @floor = floor
        @p = ctx.params
      end

      def run
        docs = @ctx.documents
        res = {
          "corpus" => @ctx.corpus_dir.sub("#{@ctx.root}/", ""),
          "docs" => docs.map { |d| { "name" => d[:name], "json_bytes" => d[:json_bytes], "value_objects" => Exact.value_objects(d[:value]) } },
          "codecs" => @codecs.map(&:name),
          "rows" => {},
          "floor" => nil,
          "params" => { "slice_s" => @p[:slice], "rounds" => @p[:rounds], "mem_ops" => @p[:mem_ops] }
        }
        cases = prepare(docs, res)
        res["published"] = published_check(res) if @ctx.default_corpus?
        time(docs, cases, res)
        memory(docs, cases, res)
        res
      end

      private

      # Encodes every document once with every codec: sizes, exactness, the
      # inputs of the decode timings.
      def prepare(docs, res)
        cases = {}
        @codecs.each do |c|
          row = res["rows"][c.name] = {}
          docs.each do |d|
            r = row[d[:name]] = { "rates" => {}, "rounds" => {} }
            begin
              c.prepare(d[:value])
              enc = c.encode(d[:value])
              dec = c.decode(enc)
              lz = BenchCompress::LZ4.compress(enc)
              zs = BenchCompress::Zstd.compress(enc)
              raise "LZ4 round trip failed" unless BenchCompress::LZ4.decompress(lz) == enc.b
              raise "Zstd round trip failed" unless BenchCompress::Zstd.decompress(zs) == enc.b
              # Decompressed bytes come back as binary (ASCII-8BIT) strings, as
              # from a socket or a store; the decoders must still give the value.
              diff = Exact.diff(d[:value], dec) ||
                     Exact.diff(d[:value], c.decode(BenchCompress::LZ4.decompress(lz)))&.then { |x| "after LZ4: #{x}" } ||
                     Exact.diff(d[:value], c.decode(BenchCompress::Zstd.decompress(zs)))&.then { |x| "after Zstd: #{x}" }
              r.merge!("bytes" => enc.bytesize, "lz4" => lz.bytesize, "zstd" => zs.bytesize, "exact" => diff.nil?)
              r["diff"] = diff if diff
              r["canonical"] = canonical?(d[:name], enc) if c.name == "tersa"
              cases[[c.name, d[:name]]] = { codec: c, value: d[:value], enc: enc, lz: lz, zs: zs, dec: dec }
            rescue StandardError => e
              r.merge!("exact" => false, "error" => "#{e.class}: #{e.message.lines.first&.strip}")
            end
          end
        end
        if @floor
          res["floor"] = {}
          docs.each do |d|
            src = cases[["tersa", d[:name]]]&.fetch(:dec) || d[:value]
            copy = @floor.copy(src)
            res["floor"][d[:name]] = { "exact" => Exact.equal?(src, copy), "rates" => {}, "rounds" => {} }
            cases[["floor", d[:name]]] = { value: src }
          end
        end
        cases
      end

      # The seed table this benchmark must reproduce (bench/corpus/seed/README.md:
      # | media.json | 3,005 | 2,459 | 2,455 |, columns JSON, CBOR, MessagePack).
      def published_check(res)
        readme = File.join(@ctx.corpus_dir, "README.md")
        return nil unless File.exist?(readme)
        cols = { "json" => 1, "cbor" => 2, "msgpack" => 3 }
        checked = 0
        mismatches = []
        File.foreach(readme) do |line|
          m = line.match(/^\|\s*([\w-]+)\.json\s*\|\s*([\d,]+)\s*\|\s*([\d,]+)\s*\|\s*([\d,]+)\s*\|/) or next
          doc = m[1]
          cols.each do |codec, i|
            r = res["rows"].dig(codec, doc) or next
            want = m[i + 1].delete(",").to_i
            checked += 1
            mismatches << { "document" => doc, "codec" => codec, "published" => want, "measured" => r["bytes"] } unless r["bytes"] == want
          end
        end
        { "checked" => checked, "mismatches" => mismatches }
      end

      # Tersa's bytes must be the canonical encoding in spec/vectors/corpus.
      def canonical?(doc, enc)
        path = File.join(@ctx.root, "spec/vectors/corpus/seed/#{doc}.tersa")
        return nil unless @ctx.default_corpus? && File.exist?(path)
        File.binread(path) == enc
      end

      def op_proc(kase, op)
        c = kase[:codec]
        v = kase[:value]
        enc = kase[:enc]
        lz = kase[:lz]
        zs = kase[:zs]
        lz4 = BenchCompress::LZ4
        zstd = BenchCompress::Zstd
        case op
        when "encode" then -> { c.encode(v) }
        when "decode" then -> { c.decode(enc) }
        when "encode_lz4" then -> { lz4.compress(c.encode(v)) }
        when "encode_zstd" then -> { zstd.compress(c.encode(v)) }
        when "lz4_decode" then -> { c.decode(lz4.decompress(lz)) }
        when "zstd_decode" then -> { c.decode(zstd.decompress(zs)) }
        end
      end

      # Round 0 warms up (YJIT compiles, caches fill) and is discarded; then
      # `rounds` rounds, each visiting every document and, per document, every
      # (codec, operation) pair in a shuffled order. The reported rate is the
      # median over the rounds.
      def time(docs, cases, res)
        floor = @floor
        jobs = docs.map do |d|
          list = []
          @codecs.each do |c|
            kase = cases[[c.name, d[:name]]] or next
            OPS.each { |op| list << [c, op, res["rows"][c.name][d[:name]], op_proc(kase, op)] }
          end
          if floor && (fk = cases[["floor", d[:name]]])
            v = fk[:value]
            list << [nil, "decode", res["floor"][d[:name]], -> { floor.copy(v) }]
          end
          [d, list]
        end
        total = @p[:rounds]
        (0..total).each do |round|
          rng = Random.new(round + 1)
          jobs.each_with_index do |(d, list), i|
            @ctx.progress("seed", "#{round.zero? ? 'warm-up' : "round #{round}/#{total}"} · #{d[:name]} (#{i + 1}/#{docs.size})")
            list.shuffle(random: rng).each do |codec, op, r, pr|
              codec&.prepare(d[:value])
              rate = Measure.rate(@p[:slice]) { pr.call }
              (r["rounds"][op] ||= []) << rate unless round.zero?
            end
          end
        end
        each_result(res) do |r|
          r["rounds"].each { |op, xs| r["rates"][op] = Util.median(xs) }
        end
        @ctx.progress("seed", "timed #{docs.size} documents × #{@codecs.size} codecs × #{OPS.size} operations, #{total} rounds", done: true)
      end

      def each_result(res, &blk)
        res["rows"].each_value { |row| row.each_value(&blk) }
        res["floor"]&.each_value(&blk)
      end

      # Allocations of mem_ops encodes and mem_ops decodes, scaled to 5,000.
      # Documents above 16 KB (CORPUS=...) get proportionally fewer calls.
      def memory(docs, cases, res)
        docs.each_with_index do |d, i|
          n = @p[:mem_ops]
          n = [(n * 16_384.0 / d[:json_bytes]).ceil, 1].max if d[:json_bytes] > 16_384
          scale = 5000.0 / n
          res["docs"][i]["mem_ops"] = n
          @ctx.progress("seed", "allocations · #{d[:name]} (#{i + 1}/#{docs.size})")
          @codecs.each do |c|
            kase = cases[[c.name, d[:name]]] or next
            c.prepare(d[:value])
            v = kase[:value]
            enc = kase[:enc]
            eo, eb = Measure.allocations(n) { c.encode(v) }
            dobj, db = Measure.allocations(n) { c.decode(enc) }
            res["rows"][c.name][d[:name]]["mem"] = {
              "encode_objects" => eo * scale, "encode_bytes" => eb * scale,
              "decode_objects" => dobj * scale, "decode_bytes" => db * scale
            }
          end
          next unless @floor && (fk = cases[["floor", d[:name]]])
          v = fk[:value]
          fo, fb = Measure.allocations(n) { @floor.copy(v) }
          res["floor"][d[:name]]["mem"] = { "decode_objects" => fo * scale, "decode_bytes" => fb * scale }
        end
        ns = res["docs"].map { |d| d["mem_ops"] }.uniq
        @ctx.progress("seed", "allocations counted over #{ns.join('/')} calls#{ns == [5000] ? '' : ', scaled to 5,000'}", done: true)
      end
    end
  end
end
