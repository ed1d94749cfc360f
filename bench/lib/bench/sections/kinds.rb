# frozen_string_literal: true

require_relative "../util"
require_relative "../exact"
require_relative "../measure"
require_relative "../codecs"
require_relative "../kinds_corpus"
require_relative "external"

module Bench
  module Sections
    # 5. Document kinds: every document of bench/corpus/kinds (and
    # bench/corpus/large) in Ruby, Python and TypeScript: bytes, encode and
    # decode rates of Tersa and of each peer, exactness. The summary
    # (KindsSummary) gives, per language and peer, the geometric mean of the
    # Tersa ÷ peer ratios and the worst document.
    class Kinds
      LANGS = %w[ruby python js].freeze
      TIMEOUTS = { "full" => 600, "quick" => 240, "smoke" => 120 }.freeze

      # What a Ruby peer cannot carry, by document feature (the manifest's
      # "features"). A peer's failed or inexact round trip on a document with
      # one of its features is reported with the reason and does not fail the
      # run; any other one does. Tersa is never excused.
      LIMITS = {
        "json" => { "nesting_beyond_100" => "JSON.generate and JSON.parse refuse nesting beyond max_nesting, 100 by default (NestingError)" },
        "oj" => { "negative_zero" => "Oj.dump in :compat mode writes -0.0 as 0.0" },
        "msgpack" => { "nesting_beyond_100" => "the Unpacker stops at 128 levels (MessagePack::StackError)",
                       "int_beyond_64_bits" => "no integer beyond 64 bits (RangeError)" },
        "cbor" => { "nesting_beyond_100" => "the Unpacker stops at 128 levels (CBOR::StackError)" },
        "bson" => { "uint64" => "BSON integers are signed 64-bit (RangeError beyond 2^63-1)",
                    "int_beyond_64_bits" => "BSON integers are signed 64-bit (RangeError beyond 2^63-1)" }
      }.freeze

      def initialize(ctx, codecs)
        @ctx = ctx
        @names = codecs.map(&:name)
        @p = ctx.params
      end

      # KINDS_LANGS=ruby,js keeps some languages.
      def self.languages(ctx)
        langs = ctx.list_env("KINDS_LANGS") || LANGS
        bad = langs - LANGS
        raise ConfigError, "KINDS_LANGS: unknown #{bad.join(', ')} (known: #{LANGS.join(', ')})" unless bad.empty?
        langs
      end

      def run
        m = KindsCorpus.manifest(@ctx.root)
        docs = KindsCorpus.select(@ctx, m)
        langs = self.class.languages(@ctx)
        res = {
          "docs" => docs.map { |d| d.slice("name", "group", "kind", "file", "json_bytes", "per_record", "records", "features", "max_depth", "stresses") },
          "features" => m["features"],
          "languages" => {}
        }
        langs.each do |lang|
          res["languages"][lang] = lang == "ruby" ? ruby(docs) : external(lang, docs)
        end
        res
      end

      def self.excuse(limits, codec, features)
        return nil if codec == "tersa"
        why = (limits[codec] || {}).filter_map { |f, reason| reason if features.include?(f) }.uniq
        why.empty? ? nil : why.join("; ")
      end

      private

      # ------------------------------------------------------------------ Ruby

      def ruby(docs)
        t0 = Util.now
        # instances of their own: a call that raised may leave a reused packer
        # or unpacker mid-value, so a codec that raises is replaced (below)
        codecs, unavailable = Codecs.load(@names)
        rows = []
        docs.each_with_index do |d, i|
          @ctx.progress("kinds", "ruby · #{d['name']} (#{i + 1}/#{docs.size}): loading")
          value = KindsCorpus.load(@ctx, d)
          items = d["per_record"] ? value : [value]
          cases = check(d, items, codecs, rows)
          time(d, i, docs.size, items, cases)
          value = items = cases = nil
          GC.start
        end
        @ctx.progress("kinds", "ruby: #{docs.size} documents × #{codecs.size} codecs", done: true)
        {
          "status" => "ok", "title" => "Ruby", "seconds" => (Util.now - t0).round(1),
          "runtime" => "#{RUBY_ENGINE} #{RUBY_VERSION}#{defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? ' with YJIT' : ''}",
          "libraries" => codecs.to_h { |c| [c.name, c.version] }.merge(unavailable.transform_values { "unavailable" }),
          "notes" => [
            "#{@ctx.mode} run: per document, a warm-up round (#{(@p[:kinds_warm] * 1000).round} ms per pair) then #{@p[:kinds_rounds]} rounds; each round runs every (codec, operation) pair " \
            "once, shuffled, for #{(@p[:kinds_slice] * 1000).round} ms (and at least one call); the rate is the median over the rounds. GC enabled; the heap is collected before each slice, so a slice pays for its own garbage, not for the previous codec's.",
            "Exact as in section 1 (classes, float bits, string bytes and encodings, key order). Codecs are called as in section 1."
          ] + unavailable.map { |n, why| "#{n} unavailable: #{why}" },
          "limits" => LIMITS.slice(*codecs.map(&:name)),
          "rows" => rows
        }
      end

      # Encodes every item once per codec: bytes, exactness, the payloads the
      # decode timings use. Returns the cases to time (the exact ones).
      def check(d, items, codecs, rows)
        path = ->(k) { d["per_record"] ? "$[#{k}]" : "$" }
        cases = []
        codecs.each_with_index do |c, ci|
          row = { "document" => d["name"], "group" => d["group"], "codec" => c.name, "correct" => false }
          begin
            c.prepare(items.first)
            payloads = items.map { |x| c.encode(x) }
            row["bytes"] = payloads.sum(&:bytesize)
            diff = nil
            items.each_with_index do |x, k|
              diff = Exact.diff(x, c.decode(payloads[k]), path.(k))
              break if diff
            end
            row["correct"] = diff.nil?
            row["diff"] = diff if diff
            cases << [c, row, payloads] if diff.nil?
          rescue StandardError, SystemStackError => e
            row["error"] = "#{e.class}: #{e.message.lines.first&.strip.to_s[0, 160]}"
            codecs[ci] = Codecs::CLASSES.fetch(c.name).new
          end
          why = self.class.excuse(LIMITS, c.name, d["features"])
          row["expected"] = why if why && !row["correct"]
          rows << row
        end
        cases
      end

      def time(d, i, n, items, cases)
        rounds = @p[:kinds_rounds]
        slice = @p[:kinds_slice]
        first = items.first
        single = items.size == 1
        jobs = cases.flat_map do |c, row, payloads|
          enc = single ? -> { c.encode(first) } : -> { items.each { |x| c.encode(x) } }
          pl = payloads.first
          dec = single ? -> { c.decode(pl) } : -> { payloads.each { |b| c.decode(b) } }
          [[c, row, "encode", enc], [c, row, "decode", dec]]
        end
        (0..rounds).each do |round|
          @ctx.progress("kinds", "ruby · #{d['name']} (#{i + 1}/#{n}): #{round.zero? ? 'warm-up' : "round #{round}/#{rounds}"}")
          jobs.shuffle(random: Random.new(round * 7919 + i)).each do |c, row, op, pr|
            c.prepare(first)
            # the garbage of the slice before (another codec's) is collected
            # here, not in this slice; this codec's own still is
            GC.start
            rate = Measure.rate(round.zero? ? @p[:kinds_warm] : slice) { pr.call }
            (row["_#{op}"] ||= []) << rate unless round.zero?
          end
        end
        cases.each do |_, row, _|
          row["encode_per_s"] = Util.median(row.delete("_encode"))
          row["decode_per_s"] = Util.median(row.delete("_decode"))
        end
      end

      # ------------------------------------------------------ Python, TypeScript

      def external(lang, docs)
        e = External.new(@ctx, lang, args: ["--kinds"], label: "kinds", timeouts: TIMEOUTS, missing: :error,
                                     env: { "KINDS_DOCS" => docs.map { |d| d["name"] }.join(",") }, keep_failed_result: true)
        entry = e.run
        out = { "status" => entry["status"], "title" => entry["title"], "command" => entry["command"], "seconds" => entry["seconds"] }
        if entry["status"] != "ok"
          return out.merge("status" => "error", "error" => entry["error"] || "#{entry['program']}: #{entry['status']}", "log" => entry["log"])
        end
        r = entry["result"]
        out["exit_status"] = entry["exit_status"] if entry["exit_status"]
        out["log"] = entry["log"] if entry["exit_status"]
        missing = docs.map { |d| d["name"] } - r["documents"].map { |x| x["document"] }
        out.merge!("status" => "error", "error" => "no rows for #{missing.join(', ')}") unless missing.empty?
        out.merge("runtime" => r["runtime"], "libraries" => r["libraries"] || {}, "notes" => Array(r["notes"]),
                  "limits" => r["limits"] || {}, "rows" => r["documents"])
      end
    end
  end
end
