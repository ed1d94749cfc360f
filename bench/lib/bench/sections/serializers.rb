# frozen_string_literal: true

require "json"
require "rbconfig"
require "tmpdir"
require_relative "../util"

module Bench
  module Sections
    # 9. Ruby object serializers: bench/lib/bench/serializers/program.rb in a
    # process of its own (Active Support's core extensions stay out of the
    # other sections), with the gem this run loaded and the same YJIT setting.
    # Missing Debian packages (bench/setup), a crash, a timeout or an output
    # that does not decode to the expected Hashes is an error: never pending.
    class Serializers
      PROGRAM = "bench/lib/bench/serializers/program.rb"
      PACKAGES = { "active_model" => "ruby-activemodel", "active_model_serializers" => "ruby-active-model-serializers",
                   "jbuilder" => "ruby-jbuilder", "oj" => "ruby-oj" }.freeze
      TIMEOUTS = { "full" => 300, "quick" => 120, "smoke" => 60 }.freeze

      def initialize(ctx)
        @ctx = ctx
      end

      def run
        if (missing = missing_packages).any?
          return error("#{missing.values.join(', ')} missing (#{missing.keys.join(', ')} do not load): run bench/setup")
        end
        Dir.mktmpdir("tersa-bench-serializers-") do |tmp|
          out = File.join(tmp, "result.json")
          log = File.join(tmp, "log.txt")
          cmd = [RbConfig.ruby, *(yjit? ? ["--yjit"] : []), File.join(@ctx.root, PROGRAM), "--json", out]
          @ctx.progress("serializers", "#{PROGRAM.sub('bench/lib/bench/', '')} (#{@ctx.mode})")
          env = { "BENCH_MODE" => @ctx.mode, "TERSA_LIB" => tersa_lib }
          status = Util.run_with_timeout(env, cmd, chdir: @ctx.root, log: log, limit: TIMEOUTS.fetch(@ctx.mode))
          tail = File.exist?(log) ? File.read(log).lines.last(15).join : ""
          result = (JSON.parse(File.read(out)) if File.exist?(out))
          unless status == 0 && result
            why = status == :timeout ? "timed out after #{TIMEOUTS.fetch(@ctx.mode)} s" : "exited with status #{status}"
            return error("#{PROGRAM} #{why}", tail).merge(result ? { "result" => result } : {})
          end
          @ctx.progress("serializers", "#{result['serializers'].size} serializers × #{result['sizes'].size} sizes", done: true)
          { "status" => "ok", "command" => cmd.map { |a| a.sub("#{@ctx.root}/", "") }.join(" ").sub(out, "OUT"), "result" => result }
        end
      end

      private

      def error(msg, log = "") = { "status" => "error", "error" => msg, "log" => log }

      def yjit? = defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?

      def missing_packages
        PACKAGES.reject do |lib, _|
          system(RbConfig.ruby, "-e", "require #{lib.dump}", out: File::NULL, err: File::NULL)
        end
      end

      # The gem this run loaded (the snapshot run.rb took of ruby/lib).
      def tersa_lib
        f = $LOADED_FEATURES.find { |x| x.end_with?("/tersa.rb") }
        f ? File.dirname(f) : File.join(@ctx.root, "ruby/lib")
      end
    end
  end
end
