# frozen_string_literal: true

require "json"
require "tmpdir"
require "timeout"
require_relative "../util"

module Bench
  module Sections
    # 5. Sections written by other parts of the project (other languages, Redis,
    # HTTP): a program that takes `--json OUT` and writes a result in the
    # tersa-bench/1 schema (bench/README.md, "Plugging in a section"). A section
    # whose program does not exist yet is listed as pending; one that exists and
    # fails, times out or writes an invalid result is an error (the smoke run
    # fails on it).
    class External
      SCHEMA = "tersa-bench/1"

      # id => [title, program path (from the repository root), how to run it]
      PLUGINS = {
        "python" => ["Python", "bench/python/bench.py", :python],
        "js" => ["TypeScript (Node.js)", "js/bench/bench.mjs", :node],
        "redis" => ["Redis: bytes per key, encode and decode (Node.js)", "bench/node/redis.mjs", :node],
        "http" => ["HTTP: requests per second from Redis through Express (Node.js)", "bench/node/http.mjs", :node]
      }.freeze

      TIMEOUTS = { "full" => 420, "quick" => 120, "smoke" => 90 }.freeze

      # program: [title, path, runner] (PLUGINS' entry for id unless given);
      # args: extra arguments before --json OUT; env: extra environment;
      # label: the progress label; missing: :pending (a section still to be
      # written) or :error (a program that must exist); keep_failed_result:
      # a program that exits 1 after writing a valid OUT (it found an inexact
      # round trip) still gives its result, with "exit_status".
      def initialize(ctx, id, program: PLUGINS.fetch(id), args: [], env: {}, label: id, timeouts: TIMEOUTS, missing: :pending,
                     keep_failed_result: false)
        @ctx = ctx
        @id = id
        @title, @program, @runner = program
        @args = args
        @env = env
        @label = label
        @timeouts = timeouts
        @missing = missing
        @keep_failed_result = keep_failed_result
      end

      def run
        path = File.join(@ctx.root, @program)
        unless File.exist?(path)
          return { "title" => @title, "program" => @program, "status" => "pending" } if @missing == :pending
          return { "title" => @title, "program" => @program, "status" => "error", "error" => "#{@program} does not exist" }
        end
        cmd = command(path) + @args
        Dir.mktmpdir("tersa-bench-") do |tmp|
          out = File.join(tmp, "result.json")
          log = File.join(tmp, "log.txt")
          @ctx.progress(@label, "#{cmd.map { |a| File.basename(a) }.join(' ')} --json OUT")
          t0 = Util.now
          limit = @timeouts.fetch(@ctx.mode)
          status = Util.run_with_timeout(child_env, cmd + ["--json", out], chdir: @ctx.root, log: log, limit: limit,
                                         grace: 2, poll: 0.2)
          secs = Util.now - t0
          tail = File.exist?(log) ? File.read(log).lines.last(15).join : ""
          base = { "title" => @title, "program" => @program, "command" => (cmd.map { |a| a.sub("#{@ctx.root}/", "") } + ["--json", "OUT"]).join(" "),
                   "seconds" => secs.round(1) }
          kept = @keep_failed_result && status == 1 && File.exist?(out)
          unless status == 0 || kept
            why = status == :timeout ? "timed out after #{limit} s" : "exited with status #{status}"
            return base.merge("status" => "error", "error" => "#{@program} #{why}", "log" => tail)
          end
          base.merge!("exit_status" => status, "log" => tail) if kept
          result = begin
            JSON.parse(File.read(out))
          rescue StandardError => e
            return base.merge("status" => "error", "error" => "#{@program} wrote no valid JSON to OUT (#{e.class}: #{e.message[0, 120]})", "log" => tail)
          end
          result = normalize(result)
          problems = validate(result)
          unless problems.empty?
            return base.merge("status" => "error", "error" => "#{@program}: result does not follow #{SCHEMA}: #{problems.first(3).join('; ')}", "log" => tail)
          end
          @ctx.progress(@label, "#{@label == @id ? '' : "#{@id}: "}done in #{Util.duration(secs)}", done: true)
          base.merge("status" => "ok", "result" => result)
        end
      end

      def command(path)
        case @runner
        when :python
          venv = File.join(@ctx.root, "python/.venv/bin/python")
          [File.executable?(venv) ? venv : (@ctx.env["PYTHON"] || "python3"), path]
        when :node then [@ctx.env["NODE"] || "node", path]
        when :ruby then [RbConfig.ruby, path]
        end
      end

      def child_env
        {
          "BENCH_ROOT" => @ctx.root,
          "BENCH_MODE" => @ctx.mode,
          "QUICK" => @ctx.quick? ? "1" : nil,
          "SMOKE" => @ctx.smoke? ? "1" : nil,
          "CORPUS" => @ctx.corpus_dir,
          "DOCS" => @ctx.smoke? && !@ctx.env["DOCS"] ? @ctx.documents.map { |d| d[:name] }.join(",") : @ctx.env["DOCS"],
          # ONLY/EXCEPT name Ruby codecs; another language has its own list
          "ONLY" => nil, "EXCEPT" => nil
        }.merge(@env)
      end

      # Accepts, besides tersa-bench/1, the per-document form js/bench/bench.mjs
      # wrote first: {"documents": [{"name", "kind", "codecs": {codec: {"bytes",
      # "encPerSec", "decPerSec", "ok"}}}], "node": ...}.
      def normalize(r)
        return r unless r.is_a?(Hash) && r["schema"].nil? && r["documents"].is_a?(Array) &&
                        r["documents"].all? { |d| d.is_a?(Hash) && d["codecs"].is_a?(Hash) }
        rows = r["documents"].flat_map do |d|
          d["codecs"].map do |codec, x|
            { "document" => d["name"], "group" => d["kind"] || "seed", "codec" => codec, "bytes" => x["bytes"],
              "encode_per_s" => x["encPerSec"], "decode_per_s" => x["decPerSec"], "correct" => x["ok"] }
          end
        end
        { "schema" => SCHEMA, "runtime" => r["node"] ? "Node.js #{r['node']}" : r["runtime"],
          "libraries" => r["libraries"] || {}, "notes" => Array(r["notes"]), "documents" => rows }
      end

      def validate(r)
        p = []
        return ["top level is not an object"] unless r.is_a?(Hash)
        p << "schema is #{r['schema'].inspect}, expected #{SCHEMA.inspect}" unless r["schema"] == SCHEMA
        docs = r["documents"]
        return p << "documents is not an array" unless docs.is_a?(Array)
        docs.each_with_index do |d, i|
          unless d.is_a?(Hash)
            p << "documents[#{i}] is not an object"
            next
          end
          %w[document codec].each { |k| p << "documents[#{i}].#{k} missing" unless d[k].is_a?(String) }
          p << "documents[#{i}].correct missing" unless [true, false].include?(d["correct"]) || d["error"]
          %w[bytes encode_per_s decode_per_s].each do |k|
            p << "documents[#{i}].#{k} is not a number" unless d[k].nil? || d[k].is_a?(Numeric)
          end
        end
        p
      end
    end

    # The C core's own benchmark (c/build/tersa_bench, built by `make c`), its
    # text output kept as is: the ceiling for every binding.
    class CCore
      def initialize(ctx)
        @ctx = ctx
      end

      def run
        bin = File.join(@ctx.root, "c/build/tersa_bench")
        return { "status" => "pending", "program" => "c/build/tersa_bench (make c)" } unless File.executable?(bin)
        @ctx.progress("c", "c/build/tersa_bench")
        secs = @ctx.params[:c_seconds]
        text = IO.popen([bin, @ctx.root, secs.to_s], err: [:child, :out], &:read)
        return { "status" => "error", "error" => "c/build/tersa_bench exited with #{$?.exitstatus}", "log" => text.lines.last(10).join } unless $?.success?
        @ctx.progress("c", "done", done: true)
        { "status" => "ok", "command" => "c/build/tersa_bench . #{secs}", "output" => text }
      end
    end
  end
end
