# frozen_string_literal: true

require "rbconfig"
require_relative "external"

module Bench
  module Sections
    # 8. The message queue at 1 -> 1,000,000 Stock records (issue 15, item 2):
    # bench/queue/records.rb (Ruby), records.py (Python) and broker.py (a
    # nats-server and a redis-server it starts on loopback, producer and
    # consumer processes), each an external program writing
    # tersa-bench-queue/1. A part that is missing, fails, times out or writes
    # an invalid result fails the run: never pending.
    class Queue
      SCHEMA = "tersa-bench-queue/1"
      # id => [title, program, runner]
      PARTS = {
        "ruby" => ["Records in Ruby", "bench/queue/records.rb", :ruby],
        "python" => ["Records in Python", "bench/queue/records.py", :python],
        "broker" => ["Through a broker (NATS, Python)", "bench/queue/broker.py", :python]
      }.freeze
      # Limits with room for a loaded machine: a quick records part took
      # 2.5 minutes on 2 cores at a load of 11 while it still timed a million.
      TIMEOUTS = {
        "ruby" => { "full" => 900, "quick" => 400, "smoke" => 90 },
        "python" => { "full" => 900, "quick" => 400, "smoke" => 90 },
        "broker" => { "full" => 1500, "quick" => 600, "smoke" => 120 }
      }.freeze

      # One program of the section: External's runner with this section's
      # schema instead of tersa-bench/1.
      class Part < External
        def initialize(ctx, part)
          program = PARTS.fetch(part)
          # the Ruby part measures under YJIT when the runner does
          yjit = program[2] == :ruby && defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?
          super(ctx, "queue", program: program, env: yjit ? { "RUBYOPT" => "--yjit" } : {}, timeouts: TIMEOUTS.fetch(part),
                              missing: :error, keep_failed_result: true)
        end

        def normalize(r) = r

        def validate(r)
          return ["top level is not an object"] unless r.is_a?(Hash)

          p = []
          p << "schema is #{r['schema'].inspect}, expected #{SCHEMA.inspect}" unless r["schema"] == SCHEMA
          return p << "rows is not an array" unless r["rows"].is_a?(Array) && !r["rows"].empty?

          r["rows"].each_with_index do |x, i|
            %w[codec keys].each { |k| p << "rows[#{i}].#{k} missing" unless x[k].is_a?(String) }
            p << "rows[#{i}].count is not an integer" unless x["count"].is_a?(Integer)
          end
          p
        end
      end

      def initialize(ctx)
        @ctx = ctx
      end

      def run
        parts = PARTS.keys.to_h { |k| [k, Part.new(@ctx, k).run] }
        broken = parts.reject { |_, e| e["status"] == "ok" }
        entry = { "title" => "Message queue: 1 to 1,000,000 Stock records", "parts" => parts, "status" => "ok" }
        unless broken.empty?
          entry["status"] = "error"
          entry["error"] = broken.map { |k, e| "#{k}: #{e['error']}" }.join("; ")
        end
        entry
      end

      # Inexact round trips, wrong messages, a single record with the
      # dictionary over 26 bytes, Tersa bytes that differ between Ruby and Python.
      def self.failures(entry)
        return [] unless entry && entry["parts"]

        f = []
        entry["parts"].each do |part, e|
          next unless (res = e["result"])

          res["rows"].each do |x|
            ok = part == "broker" ? x["correct"] : x["exact"]
            f << "queue #{part} #{x['keys']} #{x['count']}: #{x['codec']} #{x['error'] || 'round trip not exact'}" unless ok
          end
          (res["single"] || []).each do |x|
            f << "queue #{part} one #{x['keys']} record: #{x['codec']} round trip not exact" unless x["exact"]
            if x["codec"] == "tersa-dict" && x["bytes"] > 26
              f << "queue #{part}: one #{x['keys']} record with the dictionary takes #{x['bytes']} bytes, over int-keyed MessagePack's 26"
            end
          end
        end
        rb = entry.dig("parts", "ruby", "result")
        py = entry.dig("parts", "python", "result")
        if rb && py
          rb["rows"].each do |x|
            next unless x["codec"].start_with?("tersa")

            y = py["rows"].find { |z| z.values_at("keys", "codec", "count") == x.values_at("keys", "codec", "count") }
            f << "queue: #{x['codec']} bytes of #{x['count']} #{x['keys']} records differ between Ruby and Python" if y && y["sha256"] != x["sha256"]
          end
        end
        f
      end
    end
  end
end
