# frozen_string_literal: true

require_relative "util"

module Bench
  # Section 8 of report.md (bench/queue/): Stock records at 1 to 1,000,000
  # items in Ruby and Python, and through a NATS broker. Mixed into Report.
  module ReportQueue
    # The C# write-up's figures, for scale (its records, not these).
    WRITEUP = { "msgpack" => { 1 => 26, 1_000_000 => 32_888_895 }, "json" => { 1 => 43, 1_000_000 => 50_854_409 } }.freeze
    CODEC_ORDER = %w[tersa-dict tersa tersa-stream msgpack json].freeze
    CODEC_NAMES = {
      "tersa-dict" => "**tersa + dictionary**", "tersa" => "**tersa**", "tersa-stream" => "**tersa stream**",
      "msgpack" => "msgpack", "json" => "json"
    }.freeze
    KEY_TITLES = { "named" => "named keys `{symbol, price, volume}`", "int" => "integer-like keys `{\"0\", \"1\", \"2\"}`" }.freeze

    def queue_part(part)
      e = @r.dig("sections", "queue", "parts", part)
      e && e["status"] == "ok" ? e["result"] : nil
    end

    def queue_codecs(rows) = CODEC_ORDER & rows.map { |x| x["codec"] }.uniq
    def queue_counts(rows) = rows.map { |x| x["count"] }.uniq.sort
    def queue_keys(rows) = %w[named int] & rows.map { |x| x["keys"] }.uniq
    def count_head(n) = n >= 1000 ? Util.short(n) : n.to_s

    # codec × count table of one metric for one key style.
    def queue_table(rows, keys, fmt, ok: "exact", extra: nil)
      rs = rows.select { |x| x["keys"] == keys }
      counts = queue_counts(rs)
      trows = queue_codecs(rs).map do |c|
        cells = counts.map do |n|
          x = rs.find { |r| r["codec"] == c && r["count"] == n }
          next "–" unless x
          v = yield(x)
          next(x["error"] ? "✗ #{x['error'][0, 60]}" : "–") if v.nil?
          x[ok] == false ? "#{fmt.(v)} ✗" : fmt.(v)
        end
        [CODEC_NAMES.fetch(c, c)] + cells + (extra ? [extra.(c)] : [])
      end
      table(["codec"] + counts.map { |n| count_head(n) } + (extra ? ["write-up"] : []), trows)
    end

    def render_queue
      entry = @r.dig("sections", "queue")
      emit("## 8. Message queue: 1 to 1,000,000 Stock records", "")
      return emit(section_status(entry), "") unless entry && entry["parts"]

      emit("> **#{entry['error']}**", "") if entry["status"] == "error"
      emit("The records of the C# message-queue write-up: arrays of `Stock {symbol, price, volume}` with #{KEY_TITLES['named']} and with the " \
           "#{KEY_TITLES['int']} its int-keyed MessagePack maps use, built the same in Ruby and Python (`bench/queue/stock.rb`, `stock.py`: " \
           "32 tickers, prices moving by whole cents, volumes 100,000 to 5,000,000). **tersa + dictionary** uses a pre-shared dictionary " \
           "of the 32 tickers and both key sets. The write-up's own figures (other records) are shown for scale: MessagePack 26 B for one " \
           "record and 32,888,895 B for a million, JSON 43 and 50,854,409.", "")
      render_queue_single
      render_queue_records
      render_queue_broker
    end

    def render_queue_single
      res = queue_part("ruby") || queue_part("python")
      return unless res

      emit("### One record", "")
      single = res["single"]
      other = (res["language"] == "ruby" ? queue_part("python") : queue_part("ruby"))&.dig("single")
      trows = queue_codecs(single).map do |c|
        [CODEC_NAMES.fetch(c, c)] + %w[named int].map { |k| single.find { |x| x["codec"] == c && x["keys"] == k }&.dig("bytes") || "–" }
      end
      emit(table(["codec", "named keys, bytes", "int-like keys, bytes"], trows))
      same = other && other.all? { |y| single.find { |x| x.values_at("keys", "codec") == y.values_at("keys", "codec") }&.dig("hex") == y["hex"] }
      d = single.select { |x| x["codec"] == "tersa-dict" }.map { |x| x["bytes"] }.max
      emit("", "One record with the pre-shared dictionary takes **#{d} bytes** (#{d && d <= 26 ? '✅ at most' : '❌ more than'} the 26 bytes of " \
               "int-keyed MessagePack): a 3-byte header and the dictionary's 8-byte id, then the record as a shape reference, a string " \
               "reference for the ticker and the price and volume. The bytes are #{same ? 'identical' : 'not identical'} in Ruby and Python.", "")
    end

    def render_queue_records
      %w[ruby python].each do |lang|
        next unless (res = queue_part(lang))

        rows = res["rows"]
        emit("### #{lang == 'ruby' ? 'Ruby' : 'Python'}: #{res['runtime']}", "")
        emit("`#{@r.dig('sections', 'queue', 'parts', lang, 'command')}` · #{res['libraries'].map { |k, v| "#{k} #{v}" }.join(', ')} · " \
             "dictionary #{res.dig('dictionary', 'id')} (#{res.dig('dictionary', 'strings')} strings, #{res.dig('dictionary', 'shapes')} shapes, " \
             "#{res.dig('dictionary', 'bytes')} bytes serialized). Times: medians of #{res.dig('params', 'rounds')} round(s) of " \
             "#{(res.dig('params', 'slice') * 1000).round} ms slices per codec and count, codecs shuffled in each round" +
             (res.dig("params", "timed_max").to_i < res.dig("params", "max").to_i ? "; above #{commas(res.dig('params', 'timed_max'))} records bytes and exactness only" : "") +
             "; ✗ marks an inexact round trip.", "")
        queue_keys(rows).each do |keys|
          emit("#### #{KEY_TITLES[keys]}", "")
          if lang == "ruby" || !queue_part("ruby")
            emit("Bytes:", "")
            emit(queue_table(rows, keys, ->(v) { commas(v) }, extra: lambda { |c|
              w = WRITEUP[c]
              keys == "int" && w ? "#{w[1]} / #{commas(w[1_000_000])}" : ""
            }) { |x| x["bytes"] })
            emit("")
          end
          emit("Encode + decode, ns per item:", "")
          emit(queue_table(rows, keys, ->(v) { sig(v) }) { |x| x["ns_per_item"] })
          emit("", "Encode / decode, ns per item:", "")
          emit(queue_table(rows, keys, ->(v) { v }) { |x| x["encode_ns_per_item"] && "#{sig(x['encode_ns_per_item'])} / #{sig(x['decode_ns_per_item'])}" })
          if lang == "ruby"
            emit("", "Objects allocated per encode + decode (`GC.stat`):", "")
            emit(queue_table(rows, keys, ->(v) { commas(v) }) { |x| x["allocated_objects"] })
          else
            emit("", "Peak memory traced during one encode + decode, bytes (tracemalloc; in brackets the memory blocks the bytes and the decoded value hold, from sys.getallocatedblocks):", "")
            emit(queue_table(rows, keys, ->(v) { v }) { |x| x["peak_bytes"] && "#{Util.short(x['peak_bytes'])} (#{Util.short(x['blocks'])})" })
          end
          emit("")
        end
      end
      if queue_part("ruby") && queue_part("python")
        emit("Bytes are the same in Python for every codec and count#{queue_bytes_differ.empty? ? '' : ' except ' + queue_bytes_differ.join(', ')}.", "")
      end
      queue_chart
    end

    # ns per item in each language and bytes per item against the count, int-like keys.
    def queue_chart
      series = lambda do |rows, key|
        queue_codecs(rows).map do |c|
          { name: c, points: rows.select { |x| x["codec"] == c && x["keys"] == "int" }.map { |x| [x["count"], x[key]&.then { |v| key == "bytes" ? v.to_f / x["count"] : v }] } }
        end
      end
      panels = %w[ruby python].filter_map do |lang|
        (res = queue_part(lang)) && { title: "#{lang == 'ruby' ? 'Ruby' : 'Python'}: encode + decode", y_label: "ns per item", series: series.(res["rows"], "ns_per_item") }
      end
      return if panels.empty?

      base = queue_part("ruby") || queue_part("python")
      panels << { title: "Size", y_label: "bytes per item", series: series.(base["rows"], "bytes") }
      chart("queue_scaling", Charts.lines(title: "Stock records, integer-like keys: cost per record from 1 to #{commas(base['rows'].map { |x| x['count'] }.max)} (lower is better)",
                                          subtitle: "log–log", series: [], x_label: "records in the array", y_label: "ns per item",
                                          panels: panels, width: 1200, height: 440),
            "ns and bytes per Stock record against array size")
    end

    def queue_bytes_differ
      rb = queue_part("ruby")["rows"]
      queue_part("python")["rows"].filter_map do |y|
        x = rb.find { |z| z.values_at("keys", "codec", "count") == y.values_at("keys", "codec", "count") }
        "#{y['codec']} #{y['keys']} #{y['count']} (#{commas(x['bytes'])} in Ruby, #{commas(y['bytes'])} in Python)" if x && x["sha256"] != y["sha256"]
      end
    end

    def render_queue_broker
      e = @r.dig("sections", "queue", "parts", "broker")
      emit("### Through a broker: #{queue_part('broker')&.dig('broker') || 'NATS'}", "")
      return emit(section_status(e), "") unless (res = queue_part("broker"))

      p = res["params"]
      emit("`#{e['command']}` · #{e['seconds']} s · #{res['runtime']} · #{res['libraries'].map { |k, v| "#{k} #{v}" }.join(', ')} · " \
           "broker started in #{res['broker_start_ms']} ms.", "")
      emit("A nats-server and a redis-server started by the program on 127.0.0.1; per key style, count and codec, a consumer process " \
           "subscribes, then a producer process publishes the records one per message. NATS rather than RabbitMQ: one binary that starts " \
           "in milliseconds with no Erlang runtime. Flow control keeps every message: the consumer acknowledges every #{commas(p['ack_every'])}, " \
           "the producer has at most #{commas(p['window'])} unacknowledged. The consumer decodes every message and compares it with the " \
           "record it expects. **tersa + dictionary**: the producer publishes the dictionary to Redis under its id " \
           "(`tersa.DictionaryRegistry`), and the consumer fetches it by the id in the first message's header " \
           "(one fetch per run). **tersa stream**: the messages are the frames of one Tersa stream (a sync frame every " \
           "#{commas(p['sync_frames'])}), so keys and tickers travel once per sync interval; a consumer needs the frames in order, which " \
           "one NATS subscription delivers. Messages per second: from the producer's first publish to the consumer's last decode " \
           "(CLOCK_MONOTONIC, shared by the processes), median of #{p['rounds']} round(s) (#{p['big_rounds']} from 100k on), codecs " \
           "shuffled in each round; CPU per message is steadier on a shared machine.", "")
      rows = res["rows"]
      queue_keys(rows).each do |keys|
        emit("#### #{KEY_TITLES[keys]}", "")
        emit("Messages per second, end to end:", "")
        emit(queue_table(rows, keys, ->(v) { commas(v.round) }, ok: "correct") { |x| x["msgs_per_s"] })
        emit("", "Payload bytes per message (what the broker counted ÷ messages):", "")
        emit(queue_table(rows, keys, ->(v) { sig(v) }, ok: "correct") { |x| x["broker_in_bytes"] && x["broker_in_bytes"].to_f / x["count"] })
        emit("", "Bytes on the wire per message, producer → broker / broker → consumer (TCP_INFO bytes sent and received, NATS framing included):", "")
        emit(queue_table(rows, keys, ->(v) { v }, ok: "correct") do |x|
          x["wire_bytes_sent"] && "#{sig(x['wire_bytes_sent'].to_f / x['count'])} / #{sig(x['wire_bytes_received'].to_f / x['count'])}"
        end)
        queue_broker_chart(rows, keys)
        emit("", "CPU µs per message, producer / consumer (encode or decode included):", "")
        emit(queue_table(rows, keys, ->(v) { v }, ok: "correct") do |x|
          x["producer_cpu_us_per_msg"] && "#{sig(x['producer_cpu_us_per_msg'])} / #{sig(x['consumer_cpu_us_per_msg'])}"
        end)
        emit("")
      end
    end

    # Messages per second and wire bytes per message by count, one key style.
    def queue_broker_chart(rows, keys)
      rs = rows.select { |x| x["keys"] == keys }
      counts = queue_counts(rs).select { |n| n >= 100 } # below, a run is its start-up
      return if counts.empty?

      get = ->(c, n, &f) { (x = rs.find { |r| r["codec"] == c && r["count"] == n }) && x["correct"] ? f.(x) : nil }
      series = ->(&f) { queue_codecs(rs).map { |c| { name: c, values: counts.map { |n| get.(c, n, &f) } } } }
      chart("queue_broker_#{keys}", Charts.columns(title: "Through NATS, #{keys == 'int' ? 'integer-like' : 'named'} keys: messages per second (higher is better)",
                                                   subtitle: "producer and consumer processes, end to end, one record per message",
                                                   categories: counts.map { |n| "#{count_head(n)} msgs" }, series: series.() { |x| x["msgs_per_s"] },
                                                   y_label: "messages / s", value_labels: true, value_fmt: ->(v) { Util.short(v) }),
            "messages per second through NATS, #{keys} keys")
      chart("queue_wire_#{keys}", Charts.columns(title: "Through NATS, #{keys == 'int' ? 'integer-like' : 'named'} keys: bytes on the wire per message (lower is better)",
                                                 subtitle: "producer → broker, TCP bytes with NATS framing (the subject line costs about 25 of them)",
                                                 categories: counts.map { |n| "#{count_head(n)} msgs" }, series: series.() { |x| x["wire_bytes_sent"].to_f / x["count"] },
                                                 y_label: "bytes / message", value_labels: true, value_fmt: ->(v) { sig(v) }),
            "bytes on the wire per message through NATS, #{keys} keys")
    end

    def queue_text_summary
      lines = []
      if (res = queue_part("ruby") || queue_part("python"))
        s = res["single"].select { |x| x["keys"] == "int" }
        lines << "Queue, one int-keyed record: " + queue_codecs(s).map { |c| "#{c} #{s.find { |x| x['codec'] == c }['bytes']} B" }.join(", ") +
                 " (write-up: msgpack 26, json 43)"
        big = res["rows"].select { |x| x["keys"] == "int" }.max_by { |x| x["count"] }&.dig("count")
        rs = res["rows"].select { |x| x["keys"] == "int" && x["count"] == big }
        lines << "Queue, #{commas(big)} int-keyed records: " + queue_codecs(rs).map { |c| "#{c} #{commas(rs.find { |x| x['codec'] == c }['bytes'])} B" }.join(", ")
      end
      %w[ruby python].each do |lang|
        next unless (res = queue_part(lang))

        big = res["rows"].select { |x| x["ns_per_item"] }.map { |x| x["count"] }.max
        next unless big

        rs = res["rows"].select { |x| x["keys"] == "named" && x["count"] == big }
        lines << "Queue #{lang}, #{commas(big)} named records, ns/item encode+decode: " +
                 queue_codecs(rs).map { |c| "#{c} #{sig(rs.find { |x| x['codec'] == c }['ns_per_item'])}" }.join(", ")
      end
      if (res = queue_part("broker"))
        big = res["rows"].map { |x| x["count"] }.max
        rs = res["rows"].select { |x| x["keys"] == "int" && x["count"] == big }
        lines << "Broker (NATS), #{commas(big)} int-keyed messages: " + queue_codecs(rs).map do |c|
          x = rs.find { |r| r["codec"] == c }
          "#{c} #{x['msgs_per_s'] ? commas(x['msgs_per_s'].round) : '✗'} msg/s #{x['wire_bytes_sent'] ? sig(x['wire_bytes_sent'].to_f / big) : '–'} B/msg on the wire"
        end.join(", ")
      end
      lines
    end
  end
end
