# frozen_string_literal: true

require_relative "../util"
require_relative "../exact"
require_relative "../measure"

module Bench
  module Sections
    # 3. Scaling: arrays of {symbol, price, volume} records from 1 item to a
    # million; bytes and encode/decode time per item for Tersa, JSON, MessagePack.
    class Scaling
      CODECS = %w[tersa json msgpack].freeze
      TICKERS = %w[AAPL MSFT GOOG AMZN NVDA META TSLA BRK.B JPM V UNH XOM JNJ WMT MA PG
                   HD CVX MRK ABBV PEP KO AVGO COST ORCL BAC MCD CSCO TMO ACN ABT CRM].map(&:freeze).freeze

      def self.records(n, seed = 42)
        rng = Random.new(seed)
        price = 150.0
        Array.new(n) do
          price = (price + (rng.rand(201) - 100) / 100.0).round(2)
          price = 150.0 if price < 1
          { "symbol" => TICKERS[rng.rand(TICKERS.size)], "price" => price, "volume" => rng.rand(1..5_000_000) }
        end
      end

      def initialize(ctx, codecs)
        @ctx = ctx
        @codecs = codecs.select { |c| CODECS.include?(c.name) }
        @p = ctx.params
      end

      def counts
        c = [1]
        c << c.last * 10 while c.last * 10 <= @p[:scaling_max]
        c
      end

      def run
        res = { "codecs" => @codecs.map(&:name), "counts" => counts, "rows" => {},
                "params" => { "slice_s" => @p[:scaling_slice], "rounds" => @p[:scaling_rounds] } }
        @codecs.each { |c| res["rows"][c.name] = {} }
        counts.each do |n|
          @ctx.progress("scaling", "#{Util.commas(n)} records: building")
          value = self.class.records(n)
          cases = @codecs.filter_map do |c|
            r = res["rows"][c.name][n.to_s] = {}
            begin
              c.prepare(value)
              enc = c.encode(value)
              back = c.decode(enc)
              d = Exact.diff(value, back)
              r.merge!("bytes" => enc.bytesize, "exact" => d.nil?)
              r["diff"] = d if d
              back = nil
              [c, r, enc]
            rescue StandardError => e
              r.merge!("exact" => false, "error" => "#{e.class}: #{e.message.lines.first&.strip}")
              nil
            end
          end
          # Warm-up only where a call is short; a million-record call is its own warm-up.
          rounds = @p[:scaling_rounds]
          first = n >= 100_000 ? 1 : 0
          times = {}.compare_by_identity # result row => {op => [seconds per call]}
          (first..rounds).each do |round|
            @ctx.progress("scaling", "#{Util.commas(n)} records: #{round.zero? ? 'warm-up' : "round #{round}/#{rounds}"}")
            cases.shuffle(random: Random.new(n + round)).each do |c, r, enc|
              %w[encode decode].each do |op|
                pr = op == "encode" ? -> { c.encode(value) } : -> { c.decode(enc) }
                t = 1.0 / Measure.rate(@p[:scaling_slice]) { pr.call }
                ((times[r] ||= {})[op] ||= []) << t unless round.zero?
              end
            end
          end
          times.each do |r, per_op|
            per_op.each { |op, ts| r["#{op}_ns_per_item"] = Util.median(ts) * 1e9 / n }
          end
          cases.each { |_, r, _| r["bytes_per_item"] = r["bytes"].to_f / n }
          value = nil
          GC.start
        end
        @ctx.progress("scaling", "#{counts.size} sizes × #{@codecs.size} codecs", done: true)
        res
      end
    end
  end
end
