# frozen_string_literal: true

require_relative "util"
require_relative "kinds_summary"

module Bench
  # The kinds section in report.md and on the terminal: a summary (per
  # language and peer, the mean Tersa ÷ peer ratio and the worst document) near
  # the top, and per language the per-document tables. Mixed into Report.
  module ReportKinds
    LANG_TITLES = { "ruby" => "Ruby", "python" => "Python", "js" => "TypeScript" }.freeze

    def kinds = @r.dig("sections", "kinds", "result")

    def kinds_summary_headers
      ["language", "peer", "docs timed", "encode ×", "worst encode", "decode ×", "worst decode", "size ÷", "largest size", "peer exact"]
    end

    def kinds_summary_rows
      k = kinds or return []
      rows = []
      k["languages"].each do |lang, l|
        next rows << [LANG_TITLES[lang] || lang, "–", "", "", "", "", "", "", "", "**#{l['status']}**: #{l['error']}"] unless l["status"] == "ok"
        KindsSummary.peers(l["rows"]).each do |peer, a|
          rows << [LANG_TITLES[lang] || lang, peer, a.dig("encode", "n") || 0,
                   kinds_mean(a["encode"]), kinds_worst(a["encode"]), kinds_mean(a["decode"]), kinds_worst(a["decode"]),
                   kinds_mean(a["bytes"]), kinds_worst(a["bytes"]),
                   "#{a['exact']}/#{a['docs']}#{a['excused'].positive? ? " (#{a['excused']} known limit#{a['excused'] == 1 ? '' : 's'})" : ''}"]
        end
      end
      rows
    end

    def kinds_mean(agg) = agg ? fmt_ratio(agg["geomean"]) : "–"
    def kinds_worst(agg) = agg ? "#{fmt_ratio(agg['worst'][0])} #{agg['worst'][1]}" : "–"

    def render_kinds_summary
      k = kinds or return
      emit("## Document kinds: mean and worst document", "")
      emit("The #{k['docs'].size} documents of `bench/corpus/kinds` and `bench/corpus/large` (section 5), per language and peer. " \
           "**encode ×** and **decode ×** are the geometric means over the documents of Tersa's rate ÷ the peer's (above 1: Tersa is faster); " \
           "**worst** is the document with the lowest ratio. **size ÷** is the geometric mean of Tersa's bytes ÷ the peer's (below 1: Tersa is smaller); " \
           "**largest size** the document with the highest. A document counts for a peer when both round trips are exact.", "")
      emit(table(kinds_summary_headers, kinds_summary_rows, %i[l l r r l r l r l l]), "")
    end

    def render_kinds
      entry = @r.dig("sections", "kinds")
      emit("## 5. Document kinds", "")
      k = kinds
      return emit(section_status(entry), "") unless k
      emit("Documents shaped like real API responses, logs and datasets, each stressing one kind of content " \
           "([bench/corpus/kinds/README.md](#{kinds_readme_link})), and `bench/corpus/large`. Per document, a warm-up round then " \
           "rounds in which every (codec, operation) pair runs once in a shuffled order for a fixed slice; the rate is the median over the rounds. " \
           "A *per record* document is an array of small records, each encoded to its own buffer and decoded from it (bytes are the sum). " \
           "MB/s counts the document's compact JSON size. ✗: the round trip was not exact; ✗† : not exact because of a known limit of the peer " \
           "(the feature and the reason are listed below), which does not fail the run.", "")
      rows = k["docs"].map do |d|
        [d["name"], d["group"], d["kind"] + (d["per_record"] ? " (per record, #{commas(d['records'])})" : ""), commas(d["json_bytes"]),
         d["max_depth"], d["features"].empty? ? "–" : d["features"].join(", ")]
      end
      emit(table(%w[document group kind JSON\ bytes depth features], rows, %i[l l l r r l]), "")
      feats = k["docs"].flat_map { |d| d["features"] }.uniq
      emit("Features: " + feats.map { |f| "`#{f}` #{k['features'][f]}" }.join("; ") + ".", "") unless feats.empty?
      k["languages"].each { |lang, l| render_kinds_language(k, lang, l) }
    end

    def kinds_readme_link
      require "pathname"
      Pathname.new(File.expand_path("../../corpus/kinds/README.md", __dir__)).relative_path_from(Pathname.new(File.expand_path(@dir))).to_s
    end

    def render_kinds_language(k, lang, l)
      emit("### #{LANG_TITLES[lang] || lang}", "")
      if l["status"] != "ok"
        emit("**Error:** #{l['error']}", "")
        emit("```", l["log"].to_s.strip, "```", "") unless l["log"].to_s.strip.empty?
        return
      end
      emit("#{l['runtime']} · #{l['seconds']} s#{l['command'] ? " · `#{l['command']}`" : ''}", "")
      libs = l["libraries"] || {}
      emit("Libraries: " + libs.map { |n, v| "#{n} #{v}" }.join(", "), "") unless libs.empty?
      Array(l["notes"]).each { |n| emit(n, "") }
      rows = l["rows"]
      get = ->(d, c) { rows.find { |r| r["document"] == d && r["codec"] == c } }
      codecs = rows.map { |r| r["codec"] }.uniq
      codecs = ["tersa"] + (codecs - ["tersa"]) if codecs.include?("tersa")
      peers = codecs - ["tersa"]
      docs = k["docs"]
      mark = ->(r) { r["expected"] ? "✗†" : "✗" }

      emit("Size, bytes:", "")
      size_rows = docs.map do |d|
        [d["name"], commas(d["json_bytes"])] + codecs.map do |c|
          r = get.(d["name"], c)
          next "–" unless r
          next (r["error"] ? mark.(r) : "#{commas(r['bytes'])} #{mark.(r)}") unless r["correct"]
          commas(r["bytes"])
        end
      end
      emit(table(["document", "compact JSON"] + codecs, size_rows), "")

      %w[encode decode].each do |op|
        key = "#{op}_per_s"
        emit("#{op.capitalize}: Tersa in JSON-equivalent MB/s, then Tersa's rate ÷ each peer's (above 1: Tersa is faster):", "")
        trs = docs.map do |d|
          p = get.(d["name"], "tersa")
          pcell = p.nil? ? "–" : (p["correct"] ? (p[key] ? sig(p[key] * d["json_bytes"] / 1e6) : "–") : mark.(p))
          [d["name"], pcell] + peers.map do |c|
            r = get.(d["name"], c)
            next "–" unless r
            next mark.(r) unless r["correct"]
            p && p[key] && r[key] ? fmt_ratio(p[key] / r[key]) : "–"
          end
        end
        sum = KindsSummary.peers(rows)
        trs << ["**geomean**", ""] + peers.map { |c| kinds_mean(sum.dig(c, op)) }
        trs << ["**worst**", ""] + peers.map { |c| (a = sum.dig(c, op)) ? "#{fmt_ratio(a['worst'][0])} #{a['worst'][1]}" : "–" }
        emit(table(["document", "tersa MB/s"] + peers, trs), "")
      end

      odd = rows.reject { |r| r["correct"] }
      if odd.empty?
        emit("Every round trip is exact.", "")
      else
        emit("Round trips that are not exact:", "")
        emit(table(%w[codec document known\ limit difference],
                   odd.map { |r| [r["codec"], r["document"], r["expected"] || "**none: fails the run**", "`#{(r['error'] || r['diff']).to_s.gsub('`', "'")[0, 160]}`"] },
                   %i[l l l l]), "")
      end
    end

    def kinds_text_summary
      k = kinds or return []
      lines = ["Document kinds (#{k['docs'].size} documents): tersa ÷ peer, geometric mean and worst document (rates: above 1 tersa is faster; size: below 1 tersa is smaller)"]
      lines.concat(text_table(kinds_summary_headers, kinds_summary_rows))
      lines
    end
  end
end
