# frozen_string_literal: true

require_relative "util"

module Bench
  # Section 7 of report.md (bench/node/redis.mjs and http.mjs): Redis bytes
  # per key, encode and decode times, requests per second and latencies per
  # format and array size, with their charts. Mixed into Report.
  module ReportServices
    SERVER_MODES = {
      "raw" => "the server sends the bytes Redis holds (a cache in front of an API)",
      "api" => "the server decodes what Redis holds and encodes it again for the response (an API that works on its records)"
    }.freeze

    def render_services
      emit("## 7. Redis and HTTP", "")
      render_redis
      render_http
    end

    def service_result(id)
      e = @r.dig("sections", id)
      e && e["status"] == "ok" ? e["result"] : nil
    end

    def service_header(id)
      e = @r.dig("sections", id)
      emit("### #{e&.dig('title') || id}", "")
      return false unless (res = service_result(id))
      emit("`#{e['command']}` · #{e['seconds']} s · #{res['runtime']} · " + res["libraries"].map { |k, v| "#{k} #{v}" }.join(", "), "")
      true
    end

    # The users_<n> documents in the order of the run, their counts, the codecs (tersa first).
    def service_axes(rows)
      docs = rows.map { |x| x["document"] }.uniq
      counts = docs.map { |d| rows.find { |x| x["document"] == d }["items"] }
      codecs = rows.map { |x| x["codec"] }.uniq
      [docs, counts, codecs.sort_by { |c| [c == "tersa" ? 0 : 1, codecs.index(c)] }]
    end

    def count_label(n) = n >= 1000 ? "#{Util.short(n)} users" : "#{n} users"

    # codec × size table of one metric; the last columns: the geometric mean
    # over sizes of codec ÷ tersa, and the exact rows.
    def service_table(rows, key, fmt, ratio_label: "× tersa")
      docs, counts, codecs = service_axes(rows)
      get = ->(c, d) { rows.find { |x| x["codec"] == c && x["document"] == d } }
      trows = codecs.map do |c|
        cells = docs.map do |d|
          x = get.(c, d)
          next "–" unless x
          next "✗ #{x['error']}" if x["error"] && x[key].nil?
          v = x[key]
          v.nil? ? "–" : (x["correct"] ? fmt.(v) : "#{fmt.(v)} ✗")
        end
        rs = docs.map { |d| (a = get.(c, d)&.dig(key)) && (b = get.("tersa", d)&.dig(key)) && b.positive? ? a.to_f / b : nil }
        ratio = c == "tersa" ? "1.00×" : (rs.any?(&:nil?) ? "–" : fmt_ratio(geomean(rs)))
        [bold_tersa(c)] + cells + [ratio, "#{docs.count { |d| get.(c, d)&.dig('correct') }}/#{docs.size}"]
      end
      table(["codec"] + counts.map { |n| count_label(n) } + [ratio_label, "exact"], trows)
    end

    def service_chart(name, rows, key, title:, subtitle:, y_label:, alt:, fmt: ->(v) { sig(v) })
      docs, counts, codecs = service_axes(rows)
      series = codecs.map do |c|
        { name: c, values: docs.map { |d| rows.find { |x| x["codec"] == c && x["document"] == d }&.dig(key) },
          marks: docs.map { |d| rows.find { |x| x["codec"] == c && x["document"] == d }&.dig("correct") == false } }
      end
      chart(name, Charts.columns(title: title, subtitle: subtitle, categories: counts.map { |n| count_label(n) }, series: series,
                                 y_label: y_label, log: true, value_labels: true, value_fmt: fmt, height: 440), alt)
    end

    def render_redis
      return emit(section_status(@r.dig("sections", "redis")), "") unless service_header("redis")
      res = service_result("redis")
      rows = res["documents"]
      p = res["params"]
      emit("Arrays of user records `{userId, username, email, birthdate, registeredAt, lastLogin}` (a UUID, two strings and three " \
           "ISO-8601 timestamps with milliseconds; `bench/node/lib/users.mjs`, the same records on every run), each stored under its own key " \
           "in a redis-server the program starts on 127.0.0.1 (no persistence, allocator #{res['allocator'] || '?'}). Every value is read back " \
           "with GET and decoded by a decoder that shares nothing with the encoder. Encode and decode are timed from and to the bytes Redis " \
           "holds: a median of #{p["rounds"]} round#{p["rounds"] == 1 ? "" : "s"} of #{p['slice_ms']} ms slices (and at least one call), every (array, format, operation) " \
           "once per round in a shuffled order, after a warm-up round.", "")
      emit(table(%w[format how], res["codecs"].map { |c, how| [bold_tersa(c), how] }, %i[l l]), "")
      arrays = res["arrays"] || []
      unless arrays.empty?
        emit("Arrays: " + arrays.map { |a| "#{count_label(a['items'])} #{commas(a['json_bytes'])} B of JSON (sha256 #{a['sha256']}…)" }.join(" · "), "")
      end
      emit("#### Redis memory per key", "")
      emit("`MEMORY USAGE key SAMPLES 0`, in bytes: the value as the allocator holds it (rounded up to its size classes) plus the key and its entry.", "")
      emit(service_table(rows, "redis_bytes", ->(v) { commas(v) }))
      emit("", "Encoded bytes per array:", "")
      emit(service_table(rows, "bytes", ->(v) { commas(v) }))
      last = rows.map { |x| x["items"] }.max
      big = rows.select { |x| x["items"] == last && x["redis_bytes"] }
      if (j = big.find { |x| x["codec"] == "json" })
        emit("", "At #{count_label(last)}: " + big.map { |x| "#{x['codec']} #{sig(x['redis_bytes'].to_f / last)} B per record in Redis (#{fmt_ratio(x['redis_bytes'].to_f / j['redis_bytes'])} JSON)" }.join(", ") + ".", "")
      end
      service_chart("redis_memory", rows, "redis_bytes", title: "Redis memory per key (lower is better)",
                                                         subtitle: "MEMORY USAGE of the key holding the array · log scale", y_label: "bytes",
                                                         alt: "Redis memory per key", fmt: ->(v) { Util.short(v) })
      emit("#### Encode and decode, milliseconds per array", "")
      emit("Encode: records to the bytes stored; decode: the bytes GET returned to records (JSON's includes the UTF-8 → string step). " \
           "× tersa: geometric mean over the sizes of format ÷ Tersa (above 1: Tersa is faster).", "")
      emit("Encode:", "")
      emit(service_table(rows, "encode_ms", ->(v) { sig(v) }))
      emit("", "Decode:", "")
      emit(service_table(rows, "decode_ms", ->(v) { sig(v) }))
      emit("")
      service_chart("redis_encode", rows, "encode_ms", title: "Encode time per array (lower is better)",
                                                       subtitle: "milliseconds, median of rounds · log scale", y_label: "ms", alt: "encode time per array")
      service_chart("redis_decode", rows, "decode_ms", title: "Decode time per array (lower is better)",
                                                       subtitle: "milliseconds, median of rounds · log scale", y_label: "ms", alt: "decode time per array")
    end

    def render_http
      return emit(section_status(@r.dig("sections", "http")), "") unless service_header("http")
      res = service_result("http")
      p = res["params"]
      emit("The arrays of the Redis section, stored in each format in a redis-server of its own, served by Express (`bench/node/server.mjs`, " \
           "its own process, ETags off) at `GET /<mode>/<format>/<n>`, loaded from the benchmark's process over loopback. " \
           "The load generator is #{res['load_generator']}; autocannon is not used because its response hook gets each body as a string " \
           "built from UTF-8 decoded chunks, which corrupts MessagePack and Tersa bodies, so its client could not decode them. " \
           "Every response is decoded and checked (length and last record); the first of each format and size is compared whole.", "")
      emit("Per format and size: #{p['rounds']} round#{p['rounds'] == 1 ? '' : 's'} of #{p['seconds']} s (formats in a shuffled order in each round), " \
           "each going on until at least #{p['min_requests']} request#{p['min_requests'] == 1 ? '' : 's'} and stopping sending at #{p['max_seconds']} s; " \
           "#{p['connections']} connections up to 1k users, 2 at 10k and 1 at 100k (more would only queue behind the server). " \
           "Requests per second count the responses decoded and checked, over the rounds; latency is from sending to the last byte of the body; " \
           "CPU per request is the server's (from /proc) and the client's (decoding included), a steadier figure than rates on a shared machine.", "")
      SERVER_MODES.each do |mode, what|
        rows = res["documents"].select { |x| x["group"] == mode }
        next if rows.empty?
        emit("#### #{mode}: #{what}", "")
        emit("Requests per second (× tersa: geometric mean over the sizes of format ÷ Tersa; below 1 Tersa serves more):", "")
        emit(service_table(rows, "rps", ->(v) { sig(v) }))
        emit("", "Latency p50 / p99, ms:", "")
        emit(latency_table(rows))
        emit("", "Server CPU ms per request:", "")
        emit(service_table(rows, "server_cpu_ms_per_request", ->(v) { sig(v) }))
        emit("", "Client CPU ms per request (receiving and decoding):", "")
        emit(service_table(rows, "client_cpu_ms_per_request", ->(v) { sig(v) }))
        emit("")
        service_chart("http_rps_#{mode}", rows, "rps", title: "Requests per second, #{mode} (higher is better)",
                                                       subtitle: "Express serving from Redis, the client decoding every body · log scale",
                                                       y_label: "requests / s", alt: "requests per second, #{mode}")
      end
    end

    def latency_table(rows)
      docs, counts, codecs = service_axes(rows)
      trows = codecs.map do |c|
        [bold_tersa(c)] + docs.map do |d|
          x = rows.find { |r| r["codec"] == c && r["document"] == d }
          x && x["p50_ms"] ? "#{sig(x['p50_ms'])} / #{sig(x['p99_ms'])}#{x['correct'] ? '' : ' ✗'}" : "–"
        end
      end
      table(["codec"] + counts.map { |n| count_label(n) }, trows)
    end

    # Terminal lines: Tersa ÷ JSON and ÷ the best other format, for memory and rates.
    def services_text_summary
      lines = []
      if (res = service_result("redis"))
        rows = res["documents"]
        last = rows.map { |x| x["items"] }.max
        big = rows.select { |x| x["items"] == last && x["redis_bytes"] }
        lines << "Redis, #{count_label(last)}: MEMORY USAGE " + big.map { |x| "#{x['codec']} #{commas(x['redis_bytes'])}" }.join(", ") +
                 "; encode ms " + big.map { |x| "#{x['codec']} #{sig(x['encode_ms'])}" }.join(", ") +
                 "; decode ms " + big.map { |x| "#{x['codec']} #{sig(x['decode_ms'])}" }.join(", ")
      end
      if (res = service_result("http"))
        SERVER_MODES.each_key do |mode|
          rows = res["documents"].select { |x| x["group"] == mode }
          next if rows.empty?
          docs, counts, codecs = service_axes(rows)
          parts = docs.each_with_index.map do |d, i|
            tersa = rows.find { |x| x["codec"] == "tersa" && x["document"] == d }&.dig("rps")
            json = rows.find { |x| x["codec"] == "json" && x["document"] == d }&.dig("rps")
            "#{Util.short(counts[i])} #{tersa && json ? fmt_ratio(tersa / json) : '–'}"
          end
          lines << "HTTP #{mode}: tersa ÷ json requests/s by size: #{parts.join(', ')} (#{codecs.size} formats)"
        end
      end
      lines
    end
  end
end
