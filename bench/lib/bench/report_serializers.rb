# frozen_string_literal: true

require_relative "util"
require_relative "charts"

module Bench
  # Section 9 of report.md (sections/serializers.rb): Ruby object serializers
  # on collections of Active Model posts, calls per second and allocations per
  # call, as the panko/alba write-ups tabulate them. Mixed into Report.
  module ReportSerializers
    DECLARED = "tersa (declared)"
    HASHES = "tersa (Hashes given)"
    SERIALIZER_COLORS = {
      DECLARED => "#d9480f", "as_json + tersa" => "#ffa94d", HASHES => "#ffd8a8", "ams 0.10" => "#7048e8",
      "jbuilder" => "#2f9e44", "as_json + json" => "#868e96", "as_json + oj" => "#f08c00"
    }.freeze

    def serializers_result
      e = @r.dig("sections", "serializers")
      e && e["status"] == "ok" ? e["result"] : nil
    end

    def render_serializers
      e = @r.dig("sections", "serializers")
      emit("## 9. Ruby object serializers", "")
      return emit(section_status(e), "") unless (s = serializers_result)
      emit("`#{e['command']}` · #{e['seconds']} s · #{s['runtime']} · " + s["libraries"].map { |k, v| "#{k} #{v}" }.join(", "), "")
      emit("Collections of #{s['model']}. Calls per second: median of #{s['params']['rounds']} interleaved rounds of " \
           "#{(s['params']['slice_s'] * 1000).round} ms, GC enabled. Objects and bytes: allocated per call with the GC " \
           "disabled (`ObjectSpace.memsize_of_all`), averaged over #{s['params']['alloc_calls'].map { |k, v| "#{v} calls at #{k}" }.join(', ')}. " \
           "Every output decodes to the same Hashes (✗ where not). `#{HASHES}` is no serializer: its Hashes exist before " \
           "the clock starts; it is the reference for Tersa's declared path.", "")
      sizes = s["sizes"]
      big = sizes.max.to_s
      headers = ["serializer"] + sizes.map { |n| "i/s, #{label(n)}" } + sizes.map { |n| "objects, #{label(n)}" } +
                ["bytes allocated, #{label(big)}", "output bytes, #{label(big)}", "declared ÷ this, #{label(big)}"]
      base = s.dig("rows", DECLARED, big, "per_s")
      rows = s["serializers"].map do |name|
        by = s["rows"][name]
        [name == DECLARED ? "**#{name}**" : name] +
          sizes.map { |n| mark(by[n.to_s], commas(by.dig(n.to_s, "per_s"))) } +
          sizes.map { |n| fmt_objects(by.dig(n.to_s, "objects")) } +
          [commas(by.dig(big, "alloc_bytes")), commas(by.dig(big, "bytes")),
           (r = by.dig(big, "per_s")) && base ? format("%.1f", base / r) : "–"]
      end
      emit(table(headers, rows), "")
      serializer_targets(s).each { |line| emit(line) }
      emit("")
      s["serializers"].each { |name| emit("- `#{name}`: #{s['how'][name]}") }
      emit("")
      series = s["serializers"].map do |name|
        { name: name, color: SERIALIZER_COLORS[name], values: sizes.map { |n| s.dig("rows", name, n.to_s, "per_s") },
          marks: sizes.map { |n| s.dig("rows", name, n.to_s, "correct") == false } }
      end
      chart("serializers", Charts.columns(title: "Serializing Active Model posts: calls per second (higher is better)",
                                          subtitle: "log scale · each post with 3 comments",
                                          categories: sizes.map { |n| label(n) }, series: series, y_label: "calls / s", log: true),
            "serializer calls per second")
    end

    def label(n) = n.to_i == 1 ? "1 post" : "#{n} posts"

    def mark(r, text)
      return "–" unless r
      return "error" if r["error"]
      r["correct"] == false ? "#{text} ✗" : text
    end

    # The issue's requirements for the declared path, with the distance to Tersa.dump of ready Hashes.
    def serializer_targets(s)
      s["sizes"].map do |n|
        k = n.to_s
        rows = s["serializers"].reject { |x| x == HASHES }.to_h { |x| [x, s.dig("rows", x, k)] }
        d = rows[DECLARED]
        next "#{label(n)}: no result for #{DECLARED}" unless d && d["per_s"]
        others = rows.except(DECLARED).values.compact
        fastest = others.all? { |r| r["per_s"].nil? || d["per_s"] > r["per_s"] }
        fewest = others.all? { |r| r["objects"].nil? || d["objects"] <= r["objects"] }
        h = s.dig("rows", HASHES, k)
        ratio = h && h["per_s"] ? format("%.2f×", d["per_s"] / h["per_s"]) : "–"
        runner_up = others.select { |r| r["per_s"] }.max_by { |r| r["per_s"] }
        name = rows.key(runner_up)
        "#{label(n)}: declared Tersa #{fastest ? '✅ fastest' : '❌ not the fastest'}" \
          "#{runner_up ? " (#{format('%.1f', d['per_s'] / runner_up['per_s'])}× #{name})" : ''}, " \
          "#{fewest ? '✅ fewest' : '❌ not the fewest'} objects (#{fmt_objects(d['objects'])} per call); " \
          "#{ratio} the rate of `Tersa.dump` of the equivalent Hashes.  "
      end
    end

    def serializers_text_summary
      return [] unless (s = serializers_result)
      big = s["sizes"].max.to_s
      lines = ["Ruby object serializers (#{label(big)}, 3 comments each): calls/s, objects per call"]
      lines.concat(text_table(%w[serializer calls/s objects], s["serializers"].map do |n|
        r = s["rows"][n][big]
        [n, commas(r["per_s"]), fmt_objects(r["objects"])]
      end))
      lines.concat(serializer_targets(s).map { |l| "  #{l.gsub(/[✅❌`]/, '').strip}" })
      lines
    end
  end
end
