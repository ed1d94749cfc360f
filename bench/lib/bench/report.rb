# frozen_string_literal: true
#
# Turns results.json into report.md and the charts. `ruby bench/report.rb DIR`
# re-renders a finished run without measuring again.

require "json"
require_relative "util"
require_relative "charts"
require_relative "report_kinds"
require_relative "report_services"
require_relative "report_queue"
require_relative "report_serializers"

module Bench
  README = File.expand_path("../../README.md", __dir__) # bench/README.md

  # Writes results.json, report.md and the charts into dir; returns the Report.
  def self.render(dir, results)
    File.write(File.join(dir, "results.json"), JSON.pretty_generate(results))
    report = Report.new(results, dir)
    File.write(File.join(dir, "report.md"), report.render)
    report
  end

  # Replaces the latest-run block of bench/README.md with this run.
  def self.publish(dir, report)
    require "pathname"
    text = File.read(README)
    a = "<!-- latest-run:start -->"
    b = "<!-- latest-run:end -->"
    unless text.include?(a) && text.include?(b)
      warn "PUBLISH: #{README} has no #{a} … #{b} block; not updated"
      return
    end
    rel = Pathname.new(File.expand_path(dir)).relative_path_from(Pathname.new(File.dirname(README))).to_s
    block = report.readme_block(rel)
    File.write(README, text.sub(/#{Regexp.escape(a)}.*#{Regexp.escape(b)}/m) { "#{a}\n#{block}\n#{b}" })
    warn "PUBLISH: bench/README.md now shows #{rel}"
  end

  class Report
    include Util
    include ReportKinds
    include ReportServices
    include ReportQueue
    include ReportSerializers

    OP_TITLES = {
      "encode" => "Encode", "decode" => "Decode",
      "encode_lz4" => "Encode + LZ4", "encode_zstd" => "Encode + Zstd",
      "lz4_decode" => "LZ4 + decode", "zstd_decode" => "Zstd + decode"
    }.freeze

    attr_reader :charts

    def initialize(results, dir)
      @r = results
      @dir = dir
      @charts = []
      @out = []
    end

    def seed = @r.dig("sections", "seed", "result")

    # ------------------------------------------------------------------ tables

    def table(headers, rows, align = nil)
      align ||= headers.each_index.map { |i| i.zero? ? :l : :r }
      lines = []
      lines << "| #{headers.join(' | ')} |"
      lines << "|#{align.map { |a| a == :l ? '---' : '---:' }.join('|')}|"
      rows.each { |row| lines << "| #{row.map { |c| c.to_s.gsub('|', '\\|') }.join(' | ')} |" }
      lines
    end

    def text_table(headers, rows)
      cells = [headers] + rows
      w = headers.each_index.map { |i| cells.map { |r| r[i].to_s.gsub("**", "").size }.max }
      fmt = ->(r) { r.each_with_index.map { |c, i| c = c.to_s.gsub("**", ""); i.zero? ? c.ljust(w[i]) : c.rjust(w[i]) }.join("  ") }
      [fmt.(headers), w.map { |x| "-" * x }.join("  ")] + rows.map { |r| fmt.(r) }
    end

    def emit(*lines) = @out.concat(lines.flatten)

    def chart(name, svg, alt)
      files = Charts.write(@dir, name, svg)
      return if files.empty?
      @charts.concat(files)
      img = files.find { |f| f.end_with?(".png") } || files.first
      emit("", "![#{alt}](#{img})", "")
    end

    def mark_exact(cell, r)
      return cell if r.nil? || r["exact"] != false
      "#{cell} ✗"
    end

    def bold_tersa(name) = name == "tersa" ? "**tersa**" : name

    # ------------------------------------------------------------- summaries

    # Per codec aggregates over the seed documents.
    def seed_summary
      s = seed or return nil
      docs = s["docs"].map { |d| d["name"] }
      s["codecs"].to_h do |c|
        row = s["rows"][c]
        rs = docs.map { |d| row[d] }
        ok = rs.count { |r| r["exact"] }
        agg = {
          "bytes" => mean(rs.map { |r| r["bytes"] }), "lz4" => mean(rs.map { |r| r["lz4"] }),
          "zstd" => mean(rs.map { |r| r["zstd"] }), "exact" => ok, "docs" => docs.size,
          "errors" => rs.filter_map { |r| r["error"] }.uniq
        }
        SEED_OPS.each { |op| agg[op] = geomean(rs.map { |r| r.dig("rates", op) }) }
        %w[encode_objects encode_bytes decode_objects decode_bytes].each do |k|
          agg[k] = mean(rs.map { |r| r.dig("mem", k)&./(5000.0) })
        end
        [c, agg]
      end
    end

    SEED_OPS = %w[encode decode encode_lz4 encode_zstd lz4_decode zstd_decode].freeze

    # Geometric mean over documents of codec/tersa, for a per-document metric.
    def ratio_to_tersa(codec, key)
      s = seed
      return nil unless s && s["rows"]["tersa"]
      rs = s["docs"].map do |d|
        a = metric(s["rows"][codec][d["name"]], key)
        b = metric(s["rows"]["tersa"][d["name"]], key)
        a && b && b.positive? ? a / b.to_f : nil
      end
      rs.any?(&:nil?) ? nil : geomean(rs)
    end

    def metric(r, key)
      return nil unless r
      SEED_OPS.include?(key) ? r.dig("rates", key) : r[key]
    end

    def summary_headers
      ["codec", "bytes", "LZ4", "Zstd", "encode/s", "decode/s", "enc+Zstd/s", "Zstd+dec/s",
       "objects/encode", "objects/decode", "KB/decode", "exact"]
    end

    def summary_rows
      sum = seed_summary or return []
      rows = sum.map do |c, a|
        [bold_tersa(c), commas(a["bytes"]), commas(a["lz4"]), commas(a["zstd"]), commas(a["encode"]), commas(a["decode"]),
         commas(a["encode_zstd"]), commas(a["zstd_decode"]), sig(a["encode_objects"]), sig(a["decode_objects"]),
         sig(a["decode_bytes"] && a["decode_bytes"] / 1024.0), "#{a['exact']}/#{a['docs']}"]
      end
      if (f = floor_summary)
        rows << ["floor (deep copy)", "", "", "", "", commas(f[:rate]), "", "", "", sig(f[:objects]), sig(f[:bytes] && f[:bytes] / 1024.0), ""]
      end
      rows
    end

    def floor_summary
      s = seed
      return nil unless s && s["floor"]
      fl = s["docs"].map { |d| s["floor"][d["name"]] }
      { rate: geomean(fl.map { |r| r.dig("rates", "decode") }),
        objects: mean(fl.map { |r| r.dig("mem", "decode_objects")&./(5000.0) }),
        bytes: mean(fl.map { |r| r.dig("mem", "decode_bytes")&./(5000.0) }) }
    end

    def relative_rows
      s = seed or return []
      return [] unless s["rows"]["tersa"]
      keys = %w[bytes lz4 zstd] + %w[encode decode encode_zstd zstd_decode]
      s["codecs"].map do |c|
        [bold_tersa(c)] + keys.map { |k| fmt_ratio(ratio_to_tersa(c, k)) }
      end
    end

    def relative_headers = ["codec", "bytes", "LZ4", "Zstd", "encode/s", "decode/s", "enc+Zstd/s", "Zstd+dec/s"]

    # Issue 3's targets for the Ruby gem, checked against this run.
    def targets
      s = seed
      return [] unless s && s["rows"]["tersa"]
      t = []
      chk = ->(name, val, goal, fmt = method(:fmt_ratio)) { t << [name, val.nil? ? "–" : fmt.(val), val.nil? ? "–" : (val >= goal ? "✅" : "❌")] }
      if s["rows"]["msgpack"]
        chk.("encode docs/s ≥ 1.25× msgpack", inv(ratio_to_tersa("msgpack", "encode")), 1.25)
        chk.("decode docs/s ≥ 2.2× msgpack", inv(ratio_to_tersa("msgpack", "decode")), 2.2)
      end
      chk.("decode docs/s ≥ 3.2× json #{lib_version('json')}", inv(ratio_to_tersa("json", "decode")), 3.2) if s["rows"]["json"]
      fastest = s["codecs"].reject { |c| c == "tersa" }.max_by { |c| seed_summary[c]["encode"] || 0 }
      if fastest && fastest != "msgpack"
        chk.("encode docs/s ≥ 1.25× the fastest other encoder (#{fastest})", inv(ratio_to_tersa(fastest, "encode")), 1.25)
      end
      docs = s["docs"]
      per = docs.map { |d| [d, s["rows"]["tersa"][d["name"]].dig("mem", "decode_objects")] }
      if per.all? { |_, o| o }
        wd, wo = per.max_by { |d, o| o / 5000.0 / d["value_objects"] }
        worst = wo / 5000.0 / wd["value_objects"]
        t << ["decode allocates ≤ the value's objects (repeated keys free)",
              format("worst: %s, %.1f objects per decode for a value of %d (%.2f×)", wd["name"], wo / 5000.0, wd["value_objects"], worst),
              worst <= 1.0001 ? "✅" : "❌"]
      end
      enc = docs.map { |d| s["rows"]["tersa"][d["name"]].dig("mem", "encode_objects") }
      if enc.all?
        worst = enc.max / 5000.0
        t << ["encode allocates ≤ 2 objects per call", format("worst document: %.2f", worst), worst <= 2.0001 ? "✅" : "❌"]
      end
      l = @r.dig("sections", "large", "result")
      if l && l["rows"]["tersa"] && l["rows"]["msgpack"]
        l["docs"].each do |d|
          p = l["rows"]["tersa"][d["name"]]
          m = l["rows"]["msgpack"][d["name"]]
          next unless p["bytes"] && m["bytes"]
          ok = p["bytes"] < m["bytes"] && p["encode_per_s"].to_f >= m["encode_per_s"].to_f && p["decode_per_s"].to_f >= m["decode_per_s"].to_f
          t << ["#{d['name']}: smaller than msgpack, not slower either way",
                format("%s vs %s bytes; encode %s, decode %s", commas(p["bytes"]), commas(m["bytes"]),
                       fmt_ratio(ratio(p["encode_per_s"], m["encode_per_s"])), fmt_ratio(ratio(p["decode_per_s"], m["decode_per_s"]))),
                ok ? "✅" : "❌"]
        end
      end
      t
    end

    def inv(x) = x && x.positive? ? 1.0 / x : nil

    def lib_version(name) = @r["libraries"].find { |l| l["name"] == name }&.fetch("version", nil)

    # ------------------------------------------------------------------ report

    def readme_link
      require "pathname"
      Pathname.new(README).relative_path_from(Pathname.new(File.expand_path(@dir))).to_s
    end

    def render
      meta = @r["meta"]
      m = @r["machine"]
      emit("# Tersa benchmark · #{meta['date']}#{meta['mode'] == 'full' ? '' : " (#{meta['mode']} run)"}", "")
      emit("`#{meta['command']}` · #{meta['duration']} · #{m['cpu']}, #{m['cores']} cores · #{m['ruby'].split(' (').first} · YJIT #{m['yjit']}" \
           "#{m['commit'] ? " · commit #{m['commit']}" : ''}", "")
      emit("Rates are medians over interleaved rounds in one process; compare ratios, not absolute numbers (the machine is shared). " \
           "Every table marks an inexact round trip with ✗. Method: [bench/README.md](#{readme_link}).", "")
      unless @r["unavailable"].empty?
        @r["unavailable"].each { |n, why| emit("> **#{n} unavailable**: #{why}. Its rows are missing from every table.", ">") }
        @out.pop
        emit("")
      end
      @r["errors"].each { |e| emit("> **#{e['section']} failed**: #{e['message']}", "") }
      render_summary
      render_kinds_summary
      render_machine
      render_seed
      render_types
      render_scaling
      render_large
      render_kinds
      render_externals
      render_queue
      render_serializers
      render_c
      emit("", "---", "Generated by `bench/run.rb`; raw numbers in [results.json](results.json).")
      @out.join("\n") + "\n"
    end

    def render_summary
      return unless seed
      s = seed
      emit("## Summary", "")
      emit("The #{s['docs'].size} documents of `#{s['corpus']}`, Ruby. Sizes are the average bytes per document; rates are " \
           "geometric means over the documents of documents per second; allocations are per call, averaged over the documents.", "")
      emit(table(summary_headers, summary_rows))
      if s["rows"]["tersa"]
        emit("", "Relative to Tersa (geometric mean over the documents of each document's ratio; Tersa = 1.00; " \
                 "sizes above 1 are larger than Tersa, rates below 1 are slower):", "")
        emit(table(relative_headers, relative_rows))
      end
      sum = seed_summary
      ops = %w[encode decode encode_zstd zstd_decode]
      cats = ops.map { |o| OP_TITLES[o] }
      series = s["codecs"].map { |c| { name: c, values: ops.map { |o| sum[c][o] }, marks: ops.map { sum[c]["exact"] < sum[c]["docs"] } } }
      if (f = floor_summary) && f[:rate]
        series << { name: "floor", values: [nil, f[:rate], nil, nil] }
      end
      chart("summary_rates", Charts.columns(title: "Documents per second (higher is better)",
                                            subtitle: "geometric mean over the #{s['docs'].size} documents · Ruby #{RUBY_VERSION}#{@r['machine']['yjit'].start_with?('enabled') ? ' --yjit' : ''}",
                                            categories: cats, series: series, y_label: "documents / s", value_labels: true, height: 460),
            "documents per second, geometric mean")
      radar
      t = targets
      unless t.empty?
        emit("### Ruby gem targets (issue 3)", "")
        emit(table(%w[target measured met], t, %i[l l l]))
        emit("", "_Quick runs are noisier than the full run; judge targets on a full run._") if @r["meta"]["mode"] != "full"
        emit("")
      end
    end

    def radar
      s = seed
      docs = s["docs"]
      return emit("_(Radar chart needs at least three documents.)_", "") if docs.size < 3
      json = s["rows"]["json"]
      base = json && docs.all? { |d| json[d["name"]]["bytes"] } ? ->(d) { json[d["name"]]["bytes"] } : ->(d) { d["json_bytes"] }
      series = s["codecs"].map do |c|
        { name: c, values: docs.map { |d| (b = s["rows"][c][d["name"]]["bytes"]) ? b.to_f / base.(d) : nil } }
      end
      series << { name: "json + zstd", values: docs.map { |d| (z = json&.dig(d["name"], "zstd")) ? z.to_f / base.(d) : nil } } if json
      chart("sizes_radar", Charts.radar(title: "Size relative to compact JSON (smaller is better)",
                                        subtitle: "bytes per document ÷ JSON.generate bytes; dashed: JSON compressed with Zstd (level 3), for scale",
                                        axes: docs.map { |d| d["name"] }, series: series, dashed: ["json + zstd"],
                                        ring_label: ->(v) { format("%.2g× JSON", v) }),
            "size relative to JSON, per document")
      sum = seed_summary
      chart("sizes_summary", Charts.columns(title: "Average bytes per document (smaller is better)",
                                            subtitle: "raw, after LZ4 (block, default acceleration) and after Zstd (level 3)",
                                            categories: s["codecs"], series: [
                                              { name: "raw", values: s["codecs"].map { |c| sum[c]["bytes"] } },
                                              { name: "LZ4", values: s["codecs"].map { |c| sum[c]["lz4"] } },
                                              { name: "Zstd", values: s["codecs"].map { |c| sum[c]["zstd"] } }
                                            ], y_label: "bytes", value_labels: true, value_fmt: ->(v) { commas(v) }, height: 420),
            "average bytes raw, LZ4, Zstd")
    end

    def render_machine
      m = @r["machine"]
      emit("## Machine and libraries", "")
      emit(table(%w[item value], [
                   ["CPU", "#{m['cpu']} (#{m['cores']} cores#{m['memory_gb'] ? ", #{m['memory_gb']} GB" : ''})"],
                   ["OS", "#{m['os']}, Linux #{m['kernel']}"],
                   ["Ruby", m["ruby"]], ["YJIT", m["yjit"]], ["GC", m["gc"]],
                   ["Repository", m["commit"] || "–"], ["Run", "#{@r['meta']['mode']} · #{@r['meta']['params_text']}"]
                 ], %i[l l]))
      emit("", table(["library", "version", "Debian package", "how it is called"],
                     @r["libraries"].map { |l| [l["name"], l["version"], l["package"] ? "#{l['package']} #{l['package_version']}".strip : "", l["api"] || ""] },
                     %i[l l l l]), "")
    end

    def seed_table(key, fmt: ->(v) { commas(v) }, agg: :mean, floor: false, ratio: true)
      s = seed
      docs = s["docs"].map { |d| d["name"] }
      headers = ["codec"] + docs + ["average", "geomean"] + (ratio && s["rows"]["tersa"] ? ["× tersa"] : []) + ["exact"]
      rows = s["codecs"].map do |c|
        row = s["rows"][c]
        vals = docs.map { |d| metric(row[d], key) }
        cells = docs.each_with_index.map { |d, i| vals[i].nil? ? (row[d]["error"] ? "error" : "–") : mark_exact(fmt.(vals[i]), row[d]) }
        [bold_tersa(c)] + cells + [fmt.(mean(vals)), fmt.(geomean(vals))] +
          (ratio && s["rows"]["tersa"] ? [fmt_ratio(ratio_to_tersa(c, key))] : []) +
          ["#{docs.count { |d| row[d]['exact'] }}/#{docs.size}"]
      end
      if floor && s["floor"]
        vals = docs.map { |d| s["floor"][d].dig("rates", "decode") }
        rows << ["floor"] + vals.map { |v| v ? fmt.(v) : "–" } + [fmt.(mean(vals)), fmt.(geomean(vals))] +
                (ratio && s["rows"]["tersa"] ? [fmt_ratio(s["rows"]["tersa"] && geomean(docs.map { |d| (a = s["floor"][d].dig("rates", "decode")) && (b = s["rows"]["tersa"][d].dig("rates", "decode")) ? a / b : nil }))] : []) + [""]
      end
      table(headers, rows)
    end

    def mem_table(op)
      s = seed
      docs = s["docs"].map { |d| d["name"] }
      headers = ["codec", "unit"] + docs + ["average", "per call"]
      rows = []
      list = s["codecs"].map { |c| [c, s["rows"][c]] }
      list << ["floor", s["floor"]] if op == "decode" && s["floor"]
      list.each do |c, row|
        ob = docs.map { |d| row[d].dig("mem", "#{op}_objects") }
        by = docs.map { |d| row[d].dig("mem", "#{op}_bytes") }
        next if ob.all?(&:nil?)
        rows << [bold_tersa(c), "MB"] + by.map { |v| v ? format("%.2f", v / 1e6) : "–" } + [format("%.2f", mean(by) / 1e6), "#{sig(mean(by) / 5000.0 / 1024)} KB"]
        rows << ["", "objects"] + ob.map { |v| commas(v) } + [commas(mean(ob)), sig(mean(ob) / 5000.0)]
      end
      if op == "decode"
        rows << ["value", "objects"] + s["docs"].map { |d| commas(d["value_objects"] * 5000) } + [commas(mean(s["docs"].map { |d| d["value_objects"] * 5000 })), sig(mean(s["docs"].map { |d| d["value_objects"] }))]
      end
      table(headers, rows, %i[l l] + [:r] * (docs.size + 2))
    end

    def mem_ops_text(s)
      ns = s["docs"].map { |d| d["mem_ops"] || s["params"]["mem_ops"] }
      return "#{commas(ns.first)} calls#{ns.first == 5000 ? '' : ' (scaled to 5,000)'}" if ns.uniq.size == 1
      "calls (#{s['docs'].zip(ns).map { |d, n| "#{d['name']} #{commas(n)}" }.join(', ')}; scaled to 5,000)"
    end

    def render_seed
      s = seed
      entry = @r.dig("sections", "seed")
      emit("## 1. Seed documents (Ruby)", "")
      return emit(section_status(entry), "") unless s
      p = s["params"]
      emit("One column per document of `#{s['corpus']}` (#{s['docs'].size} documents). Each rate is the median of #{p['rounds']} rounds " \
           "(after a warm-up round); in each round every (codec, operation) pair runs for #{(p['slice_s'] * 1000).round} ms, " \
           "in a shuffled order, document after document. ✗ marks a document whose round trip was not exact.", "")
      emit("### Size, bytes", "")
      line = "json is compact `JSON.generate`."
      if (pub = s["published"]) && pub["checked"].positive?
        line += if pub["mismatches"].empty?
                  " The published seed table (`bench/corpus/seed/README.md`: JSON, CBOR, MessagePack) is reproduced exactly: #{pub['checked']} sizes checked."
                else
                  " **The published seed table is not reproduced:** " +
                    pub["mismatches"].map { |x| "#{x['document']} #{x['codec']} #{commas(x['measured'])} (published #{commas(x['published'])})" }.join(", ") + "."
                end
      end
      emit(line, "")
      emit(seed_table("bytes"))
      canon = s["rows"]["tersa"] && s["docs"].map { |d| s["rows"]["tersa"][d["name"]]["canonical"] }
      if canon && !canon.compact.empty?
        emit("", canon.all? ? "Tersa's bytes are the canonical encodings in `spec/vectors/corpus` for every document." :
                   "**Tersa's bytes differ from the canonical encodings in `spec/vectors/corpus` for: #{s['docs'].each_with_index.reject { |_, i| canon[i] }.map { |d, _| d['name'] }.join(', ')}.**")
      end
      emit("", "### Size after LZ4, bytes", "", "LZ4 block format, default acceleration, plus a 4-byte length.", "")
      emit(seed_table("lz4"))
      emit("", "### Size after Zstd, bytes", "", "Zstd frame, level 3 (the library default), no checksum.", "")
      emit(seed_table("zstd"))
      docs = s["docs"].map { |d| d["name"] }
      %w[encode decode].each do |op|
        emit("", "### #{OP_TITLES[op]}, documents per second", "")
        emit("The floor is `Tersa::Native.deep_copy` of the decoded value: a new Hash, Array and String for every node, the cost of creating the objects at all.", "") if op == "decode" && s["floor"]
        emit(seed_table(op, floor: op == "decode"))
        series = s["codecs"].map do |c|
          { name: c, values: docs.map { |d| s["rows"][c][d].dig("rates", op) }, marks: docs.map { |d| s["rows"][c][d]["exact"] == false } }
        end
        series << { name: "floor", values: docs.map { |d| s["floor"][d].dig("rates", "decode") } } if op == "decode" && s["floor"]
        chart("#{op}_rates", Charts.columns(title: "#{OP_TITLES[op]}: documents per second (higher is better)",
                                            subtitle: "per seed document · median of #{p['rounds']} rounds",
                                            categories: docs, series: series, y_label: "documents / s", height: 440),
              "#{op} documents per second per document")
      end
      %w[encode_lz4 encode_zstd lz4_decode zstd_decode].each do |op|
        emit("", "### #{OP_TITLES[op]}, documents per second", "")
        emit(seed_table(op))
      end
      emit("", "### Allocations per 5,000 encodes", "")
      emit("Objects: `GC.stat(:total_allocated_objects)` difference. MB: `ObjectSpace.memsize_of_all` difference (object slots plus the " \
           "memory they own), with the GC disabled during the #{mem_ops_text(s)}. " \
           "Native buffers a library frees before returning are not counted.", "")
      emit(mem_table("encode"))
      emit("", "### Allocations per 5,000 decodes", "")
      emit("The `value` row is the number of heap objects the decoded value holds (containers, strings, keys counted once per distinct text): " \
           "what a decoder with a key cache must allocate at least.", "")
      emit(mem_table("decode"))
      sum = seed_summary
      chart("allocations", Charts.columns(title: "Objects allocated per call (fewer is better)",
                                          subtitle: "average over the seed documents · log scale · floor: a native deep copy of the decoded value",
                                          categories: ["encode", "decode"],
                                          series: s["codecs"].map { |c| { name: c, values: [sum[c]["encode_objects"], sum[c]["decode_objects"]] } } +
                                                  (floor_summary ? [{ name: "floor", values: [nil, floor_summary[:objects]] }] : []),
                                          y_label: "objects / call", value_labels: true, value_fmt: ->(v) { sig(v) }, height: 400, log: true),
            "objects allocated per call")
      emit("", "### Round trips", "")
      bad = []
      s["codecs"].each { |c| docs.each { |d| r = s["rows"][c][d]; bad << [c, d, r["error"] || r["diff"]] unless r["exact"] } }
      s["floor"]&.each { |d, r| bad << ["floor", d, "deep copy differs"] unless r["exact"] }
      if bad.empty?
        emit("decode(encode(doc)) is exactly the document (same types, float bits, string bytes and encodings, key order) for every codec and document.")
      else
        emit(table(%w[codec document difference], bad.map { |c, d, w| [c, d, "`#{w}`"] }, %i[l l l]))
      end
      emit("")
    end

    # Emits a section's heading; its result, or nil after saying why it has none.
    def section_result(id, heading)
      emit(heading, "")
      result = @r.dig("sections", id, "result")
      emit(section_status(@r.dig("sections", id)), "") unless result
      result
    end

    def render_types
      return unless (t = section_result("types", "## 2. Per-type round trips"))
      emit("Round trips (encode + decode) per second of one value, median of #{t['params']['rounds']} rounds; each codec uses its own " \
           "mechanism for the type (n/a: it has none). ✗: the value came back different (see below). " \
           "`custom` is `Bench::Money`, a plain class with no method for any codec: Tersa takes it through " \
           "`Tersa.register_type` (a packer and an unpacker outside the class), msgpack through its factory's registry, " \
           "oj (object mode), Marshal and YAML by reflection; json and cbor would need methods in the class.", "")
      emit(table(["codec"] + t["types"], t["codecs"].map do |c|
        [bold_tersa(c)] + t["types"].map do |ty|
          r = t["rows"][c][ty]
          if !r["supported"] then "n/a"
          elsif r["error"] then "error"
          else mark_exact(commas(r["per_s"]), r)
          end
        end
      end))
      emit("", "Bytes:", "")
      emit(table(["codec"] + t["types"], t["codecs"].map { |c| [bold_tersa(c)] + t["types"].map { |ty| (b = t["rows"][c][ty]["bytes"]) ? commas(b) : "–" } }))
      render_type_allocations(t)
      emit("", "Values: " + t["values"].map { |k, v| "#{k} `#{v}`" }.join(" · "), "")
      notes = []
      t["codecs"].each do |c|
        unsupported = Hash.new { |h, k| h[k] = [] }
        t["types"].each do |ty|
          r = t["rows"][c][ty]
          next unsupported[r["how"]] << ty unless r["supported"]
          next if r["how"] == "native" && r["exact"] != false
          notes << [c, ty, r["how"], r["error"] || (r["diff"] ? "✗ `#{r['diff']}`" : "exact")]
        end
        unsupported.each { |why, tys| notes << [c, tys.join(", "), "n/a", why] }
      end
      emit(table(%w[codec type how result], notes, %i[l l l l])) unless notes.empty?
      series = t["codecs"].map do |c|
        { name: c, values: t["types"].map { |ty| t["rows"][c][ty]["per_s"] },
          marks: t["types"].map { |ty| t["rows"][c][ty]["exact"] == false } }
      end
      chart("types", Charts.columns(title: "Round trips per second by type (higher is better)",
                                    subtitle: "log scale · pale bar with ✗: the value came back different · no bar: no mechanism for the type",
                                    categories: t["types"], series: series, y_label: "round trips / s", log: true, height: 420),
            "round trips per second by type")
    end

    # Objects allocated per encode and per decode of each type (older results have none).
    def render_type_allocations(t)
      return unless t["codecs"].any? { |c| t["rows"][c].values.any? { |r| r["enc_objects"] } }
      emit("", "Objects allocated per encode / per decode (GC disabled, #{t['mem_ops']} calls each; " \
               "bytes: the allocated objects' memory, `ObjectSpace.memsize_of_all`):", "")
      cell = lambda do |r, k|
        r["enc_objects"] ? "#{fmt_objects(r["enc_#{k}"])} / #{fmt_objects(r["dec_#{k}"])}" : "–"
      end
      emit(table(["codec"] + t["types"], t["codecs"].map { |c| [bold_tersa(c)] + t["types"].map { |ty| cell.call(t["rows"][c][ty], "objects") } }))
      emit("", "Bytes allocated per encode / per decode:", "")
      emit(table(["codec"] + t["types"], t["codecs"].map { |c| [bold_tersa(c)] + t["types"].map { |ty| cell.call(t["rows"][c][ty], "alloc_bytes") } }))
      libs = t["libraries"]&.slice(*Array(t["codecs"]).reject { |c| @r["libraries"].any? { |l| l["name"] == c } })
      emit("", "Codecs of this section only: " + libs.map { |k, v| "#{k} #{v}" }.join(", ") + ".") unless libs.nil? || libs.empty?
      (t["unavailable"] || {}).each { |n, why| emit("", "#{n} unavailable: #{why}.") }
    end

    def fmt_objects(x) = x.nil? ? "–" : (x == x.round ? commas(x.round) : format("%.1f", x))

    def render_scaling
      return unless (sc = section_result("scaling", "## 3. Scaling"))
      emit("Arrays of `{\"symbol\", \"price\", \"volume\"}` records (32 tickers, prices a random walk in cents, integer volumes). " \
           "Time per item is the median of #{sc['params']['rounds']} rounds. Flat lines mean the cost per item does not grow with the size.", "")
      counts = sc["counts"]
      heads = ["codec", "per item"] + counts.map { |n| commas(n) }
      rows = []
      sc["codecs"].each do |c|
        row = sc["rows"][c]
        rows << [bold_tersa(c), "bytes"] + counts.map { |n| (r = row[n.to_s]) && r["bytes_per_item"] ? mark_exact(sig(r["bytes_per_item"]), r) : "–" }
        rows << ["", "encode ns"] + counts.map { |n| sig(row.dig(n.to_s, "encode_ns_per_item")) }
        rows << ["", "decode ns"] + counts.map { |n| sig(row.dig(n.to_s, "decode_ns_per_item")) }
      end
      emit(table(heads, rows, %i[l l] + [:r] * counts.size))
      panels = %w[encode decode].map do |op|
        { title: OP_TITLES[op], y_label: "ns per item",
          series: sc["codecs"].map { |c| { name: c, points: counts.map { |n| [n, sc["rows"][c].dig(n.to_s, "#{op}_ns_per_item")] } } } }
      end
      panels << { title: "Size", y_label: "bytes per item",
                  series: sc["codecs"].map { |c| { name: c, points: counts.map { |n| [n, sc["rows"][c].dig(n.to_s, "bytes_per_item")] } } } }
      chart("scaling", Charts.lines(title: "Cost per record from 1 to #{commas(counts.last)} records (lower is better)",
                                    subtitle: "log–log; after the per-call overhead of tiny arrays, flat means linear scaling",
                                    series: [], x_label: "records in the array", y_label: "ns per item", panels: panels, width: 1200, height: 440),
            "time and bytes per record against array size")
    end

    def render_large
      return unless (l = section_result("large", "## 4. Large documents"))
      emit("`bench/corpus/large`; one call is long, so each rate is the median of #{l['params']['rounds']} rounds of at least " \
           "#{(l['params']['slice_s'] * 1000).round} ms (and one call). Allocations are for one call.", "")
      l["docs"].each do |d|
        name = d["name"]
        emit("### #{name} (#{commas(d['json_bytes'])} bytes of compact JSON, #{commas(d['value_objects'])} objects)", "")
        tersa = l["rows"]["tersa"]&.dig(name)
        rows = l["codecs"].map do |c|
          r = l["rows"][c][name]
          next [bold_tersa(c), "error: #{r['error']}", "", "", "", "", "", "", "", "✗"] if r["error"]
          [bold_tersa(c), commas(r["bytes"]), commas(r["lz4"]), commas(r["zstd"]),
           sig(r["encode_per_s"] && 1000.0 / r["encode_per_s"]), sig(r["decode_per_s"] && 1000.0 / r["decode_per_s"]),
           tersa && tersa["decode_per_s"] && r["decode_per_s"] ? fmt_ratio(tersa["decode_per_s"] / r["decode_per_s"]) : "–",
           commas(r.dig("mem", "decode_objects")), r.dig("mem", "decode_bytes") ? format("%.1f", r["mem"]["decode_bytes"] / 1e6) : "–",
           r["exact"] ? "yes" : "✗ `#{r['diff']}`"]
        end
        emit(table(["codec", "bytes", "LZ4", "Zstd", "encode ms", "decode ms", "tersa decode ×", "objects/decode", "MB/decode", "exact"], rows))
        emit("", "Tersa's bytes are #{tersa['canonical'] ? '' : '**not** '}the canonical encoding in `spec/vectors/corpus/large`.") if tersa && !tersa["canonical"].nil?
        emit("")
      end
      cats = l["docs"].map { |d| d["name"] }
      panels = %w[encode decode].map do |op|
        l["codecs"].map { |c| { name: c, values: l["docs"].map { |d| (x = l["rows"][c][d["name"]]["#{op}_per_s"]) ? x * d["json_bytes"] / 1e6 : nil } } }
      end
      %w[encode decode].each_with_index do |op, i|
        chart("large_#{op}", Charts.columns(title: "Large documents: #{op} throughput (higher is better)",
                                             subtitle: "MB of compact-JSON-equivalent data per second (JSON bytes × calls per second)",
                                             categories: cats, series: panels[i], y_label: "JSON MB / s", value_labels: true,
                                             value_fmt: ->(v) { sig(v, 2) }, height: 400),
              "large documents #{op} throughput")
      end
    end

    def section_status(entry)
      return "_Not run (SECTIONS, ONLY or EXCEPT left it out)._" if entry.nil?
      case entry["status"]
      when "pending" then "_Pending: `#{entry['program']}` does not exist yet._"
      when "skipped" then "_Skipped: #{entry['reason']}._"
      when "error"
        "**Error:** #{entry['error']}" + (entry["log"].to_s.empty? ? "" : "\n\n```\n#{entry['log'].strip}\n```")
      else "_No result._"
      end
    end

    def render_externals
      emit("## 6. Other languages", "")
      %w[python js].each { |id| render_external(id, "###") }
      render_services
    end

    def render_external(id, h)
      e = @r.dig("sections", id)
      title = e&.dig("title") || id
      emit("#{h} #{title}", "")
      return emit(section_status(e), "") unless e && e["status"] == "ok"
      res = e["result"]
      emit("`#{e['command']}` · #{e['seconds']} s · #{res['runtime']}", "") if res["runtime"]
      libs = res["libraries"] || {}
      emit("Libraries: " + libs.map { |k, v| "#{k} #{v}" }.join(", "), "") unless libs.empty?
      Array(res["notes"]).each { |n| emit(n, "") }
      all_rows = res["documents"]
      groups = all_rows.map { |x| x["group"] || "seed" }.uniq
      groups.each do |g|
        external_tables(all_rows.select { |x| (x["group"] || "seed") == g }, groups.size > 1 ? "#{g} documents" : nil)
      end
      Array(res["tables"]).each do |t|
        emit("#{t['title']}:", "") if t["title"]
        emit(table(t["columns"], t["rows"]), "")
      end
    end

    def external_tables(rows, group)
      docs = rows.map { |x| x["document"] }.uniq
      codecs = rows.map { |x| x["codec"] }.uniq
      codecs = codecs.sort_by { |c| [c == "tersa" ? 0 : 1, codecs.index(c)] }
      get = ->(c, d) { rows.find { |x| x["codec"] == c && x["document"] == d } }
      { "bytes" => "size, bytes", "encode_per_s" => "encode, documents per second", "decode_per_s" => "decode, documents per second" }.each do |k, label|
        next unless rows.any? { |x| x[k] }
        emit("#{group ? "#{group.capitalize}, #{label}" : label.capitalize}:", "")
        trows = codecs.map do |c|
          vals = docs.map { |d| get.(c, d)&.dig(k) }
          ratio = if codecs.include?("tersa") && c != "tersa"
                    rs = docs.map { |d| (a = get.(c, d)&.dig(k)) && (b = get.("tersa", d)&.dig(k)) && b.positive? ? a.to_f / b : nil }
                    rs.any?(&:nil?) ? "–" : fmt_ratio(geomean(rs))
                  else "1.00×"
                  end
          [bold_tersa(c)] + docs.map { |d| (x = get.(c, d)) ? (x["error"] ? "error" : mark_exact(commas(x[k]), "exact" => x["correct"])) : "–" } +
            [k == "bytes" ? commas(mean(vals)) : commas(geomean(vals)), ratio,
             "#{docs.count { |d| get.(c, d)&.dig('correct') }}/#{docs.size}"]
        end
        emit(table(["codec"] + docs + [k == "bytes" ? "average" : "geomean", "× tersa", "exact"], trows), "")
      end
    end

    def render_c
      c = @r.dig("sections", "c")
      emit("## C core", "")
      return emit(section_status(c), "") unless c && c["status"] == "ok"
      emit("`#{c['command']}`: the C library alone (encode from a value tree, pull-decode without building objects, decode into a tree); the ceiling for every binding.", "")
      emit("```", c["output"].rstrip, "```", "")
    end

    # Plain-text summary for the terminal.
    def text_summary
      lines = []
      if seed
        lines << "Seed documents (#{seed['docs'].size}, #{seed['corpus']}): average bytes, geometric-mean documents/s, allocations per call"
        lines.concat(text_table(summary_headers, summary_rows))
        unless relative_rows.empty?
          lines << ""
          lines << "Relative to Tersa (Tersa = 1.00)"
          lines.concat(text_table(relative_headers, relative_rows))
        end
        t = targets
        unless t.empty?
          lines << ""
          lines << "Ruby gem targets (issue 3)"
          t.each { |name, val, ok| lines << "  #{ok == '✅' ? 'met    ' : (ok == '❌' ? 'NOT met' : '   ?   ')}  #{name}: #{val}" }
        end
      end
      [kinds_text_summary, services_text_summary, queue_text_summary, serializers_text_summary].each do |part|
        next if part.empty?

        lines << "" unless lines.empty?
        lines.concat(part)
      end
      @r["unavailable"].each { |n, why| lines << "#{n}: unavailable (#{why})" }
      lines
    end

    # The block bench/README.md shows (PUBLISH=1), with paths relative to bench/.
    def readme_block(rel_dir)
      lines = []
      meta = @r["meta"]
      m = @r["machine"]
      lines << "Run of #{meta['date']} (`#{meta['command']}`, #{m['cpu']}, #{m['cores']} cores, #{m['ruby'].split(' (').first}, YJIT #{m['yjit']}" \
               "#{m['commit'] ? ", commit #{m['commit']}" : ''}); full report: [#{rel_dir}/report.md](#{rel_dir}/report.md)."
      lines << ""
      lines.concat(table(summary_headers, summary_rows))
      unless relative_rows.empty?
        lines << ""
        lines << "Relative to Tersa (Tersa = 1.00):"
        lines << ""
        lines.concat(table(relative_headers, relative_rows))
      end
      unless kinds_summary_rows.empty?
        lines << ""
        lines << "Document kinds (`bench/corpus/kinds` and `large`): Tersa ÷ peer, geometric mean and worst document:"
        lines << ""
        lines.concat(table(kinds_summary_headers, kinds_summary_rows, %i[l l r r l r l r l l]))
      end
      lines << ""
      %w[summary_rates sizes_radar scaling].each do |c|
        f = @charts.find { |x| x == "#{c}.png" } || @charts.find { |x| x == "#{c}.svg" }
        lines << "![#{c.tr('_', ' ')}](#{rel_dir}/#{f})" if f
      end
      lines.join("\n")
    end
  end
end
