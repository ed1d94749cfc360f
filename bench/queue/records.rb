#!/usr/bin/env ruby
# frozen_string_literal: true
#
# The message-queue section's record benchmark in Ruby (bench/README.md): arrays
# of 1 to 1,000,000 Stock records (stock.rb) with named and with integer-like
# keys, through JSON, MessagePack, Tersa and Tersa with the pre-shared
# dictionary: bytes, ns per item for encode and decode, objects allocated per
# encode + decode, exactness; and one record alone (the write-up's 26 bytes).
#
#   ruby bench/queue/records.rb --json OUT     (BENCH_MODE=full|quick|smoke)

require "json"
require "digest"
require "msgpack"
require "optparse"

ROOT = File.expand_path("../..", __dir__)
$LOAD_PATH.unshift(ENV["TERSA_LIB"] || File.join(ROOT, "ruby/lib"))
require "tersa"
require_relative "stock"

module QueueRecords
  # max: the largest array; timed_max: the largest timed and counted for
  # allocations (above it, bytes and exactness only); rounds of slice seconds
  # per (count, codec, op), in a shuffled order each round; the median is kept.
  PLANS = {
    "full" => { max: 1_000_000, timed_max: 1_000_000, rounds: 3, slice: 0.2 },
    "quick" => { max: 1_000_000, timed_max: 100_000, rounds: 1, slice: 0.05 },
    "smoke" => { max: 1_000, timed_max: 1_000, rounds: 1, slice: 0.002 }
  }.freeze

  Codec = Struct.new(:name, :encode, :decode)

  module_function

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  def codecs(dict)
    enc = Tersa::Encoder.new
    dec = Tersa::Decoder.new
    denc = Tersa::Encoder.new(dictionary: dict)
    ddec = Tersa::Decoder.new(dictionaries: dict)
    [
      Codec.new("json", ->(v) { JSON.generate(v) }, ->(s) { JSON.parse(s) }),
      Codec.new("msgpack", ->(v) { MessagePack.pack(v) }, ->(s) { MessagePack.unpack(s) }),
      Codec.new("tersa", ->(v) { enc.encode(v) }, ->(s) { dec.decode(s) }),
      Codec.new("tersa-dict", ->(v) { denc.encode(v) }, ->(s) { ddec.decode(s) })
    ]
  end

  # Seconds per call: calls repeated until slice seconds have passed (at least one).
  def per_call(slice)
    calls = 0
    t0 = now
    loop do
      yield
      calls += 1
      t = now - t0
      return t / calls if t >= slice
    end
  end

  def allocated(&blk)
    before = GC.stat(:total_allocated_objects)
    blk.call
    GC.stat(:total_allocated_objects) - before
  end

  def median(xs) = xs.sort[xs.size / 2]

  def counts(max)
    c = [1]
    c << c.last * 10 while c.last * 10 <= max
    c
  end

  def run(mode)
    plan = PLANS.fetch(mode)
    strings, shapes = Stock.dictionary_parts
    dict = Tersa::Dictionary.new(strings: strings, shapes: shapes)
    cs = codecs(dict)
    rows = []
    single = []
    Stock::KEYS.each_key do |keys|
      one = Stock.records(1, keys).first
      cs.each do |c|
        bytes = c.encode.(one)
        single << { "keys" => keys, "codec" => c.name, "bytes" => bytes.bytesize, "hex" => bytes.unpack1("H*"),
                    "exact" => c.decode.(bytes) == one }
      end
      counts(plan[:max]).each do |n|
        value = Stock.records(n, keys)
        cases = cs.map do |c|
          enc = c.encode.(value)
          back = c.decode.(enc)
          row = { "keys" => keys, "codec" => c.name, "count" => n, "bytes" => enc.bytesize,
                  "sha256" => Digest::SHA256.hexdigest(enc)[0, 16], "exact" => back == value }
          back = nil
          row["allocated_objects"] = allocated { c.decode.(c.encode.(value)) } if n <= plan[:timed_max]
          rows << row
          [c, row, enc]
        end
        if n > plan[:timed_max]
          $stderr.puts "ruby #{keys} #{n}: " + cases.map { |c, row, _| "#{c.name} #{row['bytes']} B" }.join(", ")
          next
        end
        times = Hash.new { |h, k| h[k] = [] }
        # a warm-up round where calls are short; a large call is its own warm-up
        ((n >= 100_000 ? 1 : 0)..plan[:rounds]).each do |round|
          cases.shuffle(random: Random.new(n + round)).each do |c, row, enc|
            e = per_call(plan[:slice]) { c.encode.(value) }
            d = per_call(plan[:slice]) { c.decode.(enc) }
            next if round.zero?

            times[row] << [e, d]
          end
        end
        times.each do |row, ts|
          row["encode_ns_per_item"] = median(ts.map(&:first)) * 1e9 / n
          row["decode_ns_per_item"] = median(ts.map(&:last)) * 1e9 / n
          row["ns_per_item"] = row["encode_ns_per_item"] + row["decode_ns_per_item"]
        end
        $stderr.puts "ruby #{keys} #{n}: " + cases.map { |c, row, _| "#{c.name} #{row['bytes']} B #{row['ns_per_item'].round} ns" }.join(", ")
        value = cases = nil
        GC.start
      end
    end
    {
      "schema" => "tersa-bench-queue/1", "language" => "ruby",
      "runtime" => "ruby #{RUBY_VERSION}#{defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? ' +YJIT' : ''}",
      "libraries" => { "json" => JSON::VERSION, "msgpack" => MessagePack::VERSION, "tersa" => Tersa::VERSION },
      "dictionary" => { "id" => format("%016x", dict.id), "strings" => dict.strings.size, "shapes" => dict.shapes.size,
                        "bytes" => dict.to_s.bytesize },
      "params" => plan.transform_keys(&:to_s), "allocations" => "GC.stat(:total_allocated_objects) over one encode + decode",
      "single" => single, "rows" => rows
    }
  end
end

if $PROGRAM_NAME == __FILE__
  out = nil
  OptionParser.new { |o| o.on("--json OUT") { |v| out = v } }.parse!
  mode = ENV["BENCH_MODE"] || (ENV["SMOKE"] ? "smoke" : ENV["QUICK"] ? "quick" : "full")
  result = QueueRecords.run(mode)
  json = JSON.pretty_generate(result)
  out ? File.write(out, json) : puts(json)
  bad = result["rows"].reject { |r| r["exact"] } + result["single"].reject { |r| r["exact"] }
  bad.each { |r| warn "inexact round trip: #{r['codec']} #{r['keys']} #{r['count'] || 'single'}" }
  exit(bad.empty? ? 0 : 1)
end
