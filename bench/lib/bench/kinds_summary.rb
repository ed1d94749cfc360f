# frozen_string_literal: true

require_relative "util"

module Bench
  # Aggregates of the kinds section, from its rows (one per language,
  # document and codec): per peer, the geometric mean of the per-document
  # Tersa ÷ peer ratios and the worst document, for encode, decode and size;
  # and what makes the run fail.
  module KindsSummary
    module_function

    # rows of one language -> { peer => { "encode" => agg, "decode" => agg, "bytes" => agg,
    #   "exact" => n, "excused" => n, "docs" => n } }; agg = { "geomean", "worst" => [ratio, doc],
    #   "best" => [ratio, doc], "n" } or nil when no document has both rates.
    # Rates: ratio = tersa ÷ peer (above 1: Tersa faster), worst = lowest.
    # Bytes: ratio = tersa ÷ peer (below 1: Tersa smaller), worst = highest.
    def peers(rows)
      by = rows.group_by { |r| r["codec"] }
      tersa = (by["tersa"] || []).to_h { |r| [r["document"], r] }
      by.keys.reject { |c| c == "tersa" }.to_h do |peer|
        rs = by[peer]
        agg = {
          "docs" => rs.size,
          "exact" => rs.count { |r| r["correct"] },
          "excused" => rs.count { |r| !r["correct"] && r["expected"] }
        }
        %w[encode decode].each do |op|
          k = "#{op}_per_s"
          pairs = rs.filter_map { |r| (p = tersa[r["document"]]) && p[k] && r[k] && r[k].positive? ? [p[k] / r[k], r["document"]] : nil }
          agg[op] = aggregate(pairs, worst: :min)
        end
        pairs = rs.filter_map do |r|
          p = tersa[r["document"]]
          p && p["correct"] && r["correct"] && p["bytes"] && r["bytes"]&.positive? ? [p["bytes"].to_f / r["bytes"], r["document"]] : nil
        end
        agg["bytes"] = aggregate(pairs, worst: :max)
        [peer, agg]
      end
    end

    def aggregate(pairs, worst:)
      return nil if pairs.empty?
      lo = pairs.min_by(&:first)
      hi = pairs.max_by(&:first)
      { "geomean" => Util.geomean(pairs.map(&:first)), "n" => pairs.size,
        "worst" => worst == :min ? lo : hi, "best" => worst == :min ? hi : lo }
    end

    # What fails the run: a language that could not run or wrote no rows, a
    # Tersa round trip that is not exact, a peer's that is not exact without a
    # known limit to explain it, a program that exited 1 for another reason.
    def failures(result)
      f = []
      result["languages"].each do |lang, l|
        if l["status"] != "ok"
          f << "kinds #{lang}: #{l['error'] || l['status']}"
          next
        end
        bad = Array(l["rows"]).reject { |r| r["correct"] || (r["codec"] != "tersa" && r["expected"]) }
        bad.each do |r|
          what = r["error"] ? "failed: #{r['error']}" : "round trip not exact: #{r['diff'] || 'differs'}"
          f << "kinds #{lang} #{r['document']}: #{r['codec']} #{what}"
        end
        f << "kinds #{lang}: program exited with status #{l['exit_status']}" if l["exit_status"] && bad.empty?
        no_tersa = result["docs"].map { |d| d["name"] } - Array(l["rows"]).select { |r| r["codec"] == "tersa" }.map { |r| r["document"] }
        f << "kinds #{lang}: no tersa row for #{no_tersa.join(', ')}" if !no_tersa.empty? && Array(l["rows"]).any? { |r| r["codec"] == "tersa" }
      end
      f
    end
  end
end
