#!/usr/bin/env ruby
# frozen_string_literal: true
#
# bench/run.rb - the Tersa benchmark suite (`make bench`). See bench/README.md.
#
#   ruby bench/run.rb                  full run (< 20 min), report in bench/results/<date>/
#   QUICK=1 ruby bench/run.rb          short run (< 6 min), bench/results/<date>-quick/
#   SMOKE=1 ruby bench/run.rb          `make test`: two documents, every section, seconds;
#                                      exits non-zero if a section breaks or a round trip is inexact
#   ONLY=tersa,msgpack / EXCEPT=bson    codec filters
#   CORPUS=dir  DOCS=a,b               documents of section 1 (any folder of *.json / *.json.xz)
#   SECTIONS=seed,types,scaling,large,kinds,c,python,js,redis,http,queue,serializers
#   KINDS_DOCS=a,b  KINDS_LANGS=ruby,python,js   documents and languages of the kinds section
#   OUT=dir  PUBLISH=1  YJIT=0  TERSA_LIB=dir

require "rbconfig"

ROOT = File.expand_path("..", __dir__)

# Measure under YJIT when this Ruby has it (Debian's 3.1 does): re-exec once.
if ENV["YJIT"] != "0" && defined?(RubyVM::YJIT) && !RubyVM::YJIT.enabled? && ENV["TERSA_BENCH_REEXEC"].nil?
  ENV["TERSA_BENCH_REEXEC"] = "1"
  exec(RbConfig.ruby, "--yjit", __FILE__, *ARGV)
end

require "json"
require "fileutils"
require "tmpdir"

$LOAD_PATH.unshift(File.join(__dir__, "lib"))
# The gem, compiled in place by `make ruby` (or TERSA_LIB=dir for another build).
# It is loaded from a copy taken now: rebuilding ruby/ during a long run would
# otherwise rewrite the mapped tersa.so under the running process (SIGBUS) or
# mix two builds in one report.
TERSA_LIB = File.expand_path(ENV["TERSA_LIB"] || File.join(ROOT, "ruby/lib"))
if File.exist?(File.join(TERSA_LIB, "tersa.rb"))
  snapshot = Dir.mktmpdir("tersa-bench-lib-")
  FileUtils.cp_r(File.join(TERSA_LIB, "."), snapshot)
  at_exit { FileUtils.rm_rf(snapshot) }
  $LOAD_PATH.unshift(snapshot)
else
  $LOAD_PATH.unshift(TERSA_LIB)
end
require "compress"
require "bench/util"
require "bench/codecs"
require "bench/machine"
require "bench/context"
require "bench/exact"
require "bench/measure"
require "bench/charts"
require "bench/report"
require "bench/sections/seed"
require "bench/sections/types"
require "bench/sections/scaling"
require "bench/sections/large"
require "bench/sections/kinds"
require "bench/kinds_summary"
require "bench/sections/external"
require "bench/sections/node_services"
require "bench/sections/queue"
require "bench/sections/serializers"

module Bench
  module Runner
    module_function

    def main
      ctx = Context.new(ROOT, ENV)
      ctx.documents if ctx.sections.include?("seed") # fail early on a bad CORPUS
      if ctx.sections.include?("kinds") # ... or KINDS_DOCS, KINDS_LANGS
        KindsCorpus.select(ctx, KindsCorpus.manifest(ROOT))
        Sections::Kinds.languages(ctx)
      end
      out = out_dir(ctx)
      FileUtils.mkdir_p(out)
      $stderr.puts "Tersa benchmark: #{ctx.mode} run, #{ctx.sections.join(' ')} → #{out.sub("#{ROOT}/", '')}"

      codecs, unavailable = Codecs.load(ctx.codec_names)
      floor = nil
      if ctx.codec_names.include?("tersa")
        begin
          floor = Codecs::Floor.new
        rescue LoadError, StandardError => e
          unavailable["floor"] = "#{e.class}: #{e.message.lines.first&.strip}" unless unavailable["tersa"]
        end
      end
      $stderr.puts "codecs: #{codecs.map(&:name).join(' ')}#{unavailable.empty? ? '' : "; unavailable: #{unavailable.keys.join(' ')}"}"

      results = {
        "meta" => meta(ctx, out),
        "machine" => Machine.info(ROOT),
        "libraries" => libraries(codecs, unavailable),
        "unavailable" => unavailable,
        "sections" => {},
        "errors" => []
      }

      ctx.sections.each { |id| results["sections"][id] = run_section(ctx, id, codecs, floor, results) }
      results["meta"]["duration_s"] = ctx.elapsed.round(1)
      results["meta"]["duration"] = Util.duration(ctx.elapsed)
      results["failures"] = failures(ctx, results)

      report = Bench.render(out, results)
      Bench.publish(out, report) if ctx.truthy?("PUBLISH")

      puts
      puts report.text_summary
      puts
      puts "report: #{File.join(out, 'report.md').sub("#{Dir.pwd}/", '')} (#{report.charts.count { |c| c.end_with?('.svg') }} charts#{report.charts.any? { |c| c.end_with?('.png') } ? ', SVG + PNG' : ', SVG only: rsvg-convert missing, run bench/setup'})"
      puts "total: #{Util.duration(ctx.elapsed)}"
      if ctx.smoke? && ctx.env["OUT"].to_s.empty? && results["failures"].empty?
        FileUtils.rm_rf(out) # a passing smoke run leaves nothing behind (OUT=dir keeps it)
        puts "smoke run passed; report discarded (OUT=dir keeps it)"
      end
      unless results["failures"].empty?
        $stderr.puts
        $stderr.puts "FAILED:"
        results["failures"].each { |f| $stderr.puts "  - #{f}" }
        exit 1
      end
    rescue ConfigError => e
      warn "bench/run.rb: #{e.message}"
      exit 2
    end

    def out_dir(ctx)
      return File.expand_path(ctx.env["OUT"]) if ctx.env["OUT"] && !ctx.env["OUT"].empty?
      return Dir.mktmpdir("tersa-bench-smoke-") if ctx.smoke?
      name = Time.now.strftime("%Y-%m-%d")
      name += "-#{File.basename(ctx.corpus_dir)}" unless ctx.default_corpus?
      name += "-quick" if ctx.quick?
      File.join(ROOT, "bench/results", name)
    end

    def meta(ctx, out)
      vars = %w[SMOKE QUICK ONLY EXCEPT CORPUS DOCS SECTIONS KINDS_DOCS KINDS_LANGS YJIT].filter_map { |k| "#{k}=#{ctx.env[k]}" if ctx.env[k] && !ctx.env[k].empty? }
      p = ctx.params
      {
        "date" => ctx.started_at.strftime("%Y-%m-%d"),
        "started_at" => ctx.started_at.strftime("%Y-%m-%d %H:%M:%S %z"),
        "mode" => ctx.mode,
        "command" => (vars + ["ruby bench/run.rb"]).join(" "),
        "corpus" => ctx.corpus_dir.sub("#{ROOT}/", ""),
        "codecs" => ctx.codec_names,
        "sections" => ctx.sections,
        "params" => p.transform_keys(&:to_s),
        "params_text" => "seed: #{p[:rounds]} rounds × #{(p[:slice] * 1000).round} ms slices, allocations over #{p[:mem_ops]} calls; " \
                         "scaling up to #{Util.commas(p[:scaling_max])} records; kinds: #{p[:kinds_rounds]} rounds × #{(p[:kinds_slice] * 1000).round} ms slices"
      }
    end

    def libraries(codecs, unavailable)
      libs = codecs.map do |c|
        { "name" => c.name, "version" => c.version, "api" => c.api, "package" => c.package,
          "package_version" => c.package.start_with?("ruby-") ? Machine.dpkg_version(c.package) : nil }
      end
      so = Dir[File.join(TERSA_LIB, "tersa", "*.so")].first
      if so && (tersa = libs.find { |l| l["name"] == "tersa" })
        tersa["package_version"] = "(#{TERSA_LIB.sub("#{ROOT}/", '')}, #{File.basename(so)} built #{File.mtime(so).utc.strftime('%Y-%m-%d %H:%M UTC')})"
      end
      unavailable.each { |n, why| libs << { "name" => n, "version" => "unavailable", "api" => why } }
      libs << { "name" => "ffi", "version" => FFI::VERSION, "package" => "ruby-ffi", "package_version" => Machine.dpkg_version("ruby-ffi"),
                "api" => "binds the two libraries below, in process" }
      libs << { "name" => "zstd", "version" => BenchCompress::Zstd.version, "package" => "libzstd1", "package_version" => Machine.dpkg_version("libzstd1"),
                "api" => "ZSTD_compress level #{BenchCompress::Zstd::LEVEL} / ZSTD_decompress" }
      libs << { "name" => "lz4", "version" => BenchCompress::LZ4.version, "package" => "liblz4-1", "package_version" => Machine.dpkg_version("liblz4-1"),
                "api" => "LZ4_compress_default / LZ4_decompress_safe (block + 4-byte length)" }
      libs << { "name" => "rsvg-convert", "version" => (IO.popen(%w[rsvg-convert --version], err: File::NULL, &:read).split.last rescue "missing"),
                "package" => "librsvg2-bin", "package_version" => Machine.dpkg_version("librsvg2-bin"), "api" => "charts: SVG → PNG" }
      libs
    end

    def run_section(ctx, id, codecs, floor, results)
      t0 = Util.now
      entry = case id
              when "seed"
                return skipped("no codec available") if codecs.empty?
                { "result" => Sections::Seed.new(ctx, codecs, floor).run }
              when "types"
                return skipped("no codec available") if codecs.empty?
                { "result" => Sections::Types.new(ctx, codecs).run }
              when "scaling"
                cs = codecs.select { |c| Sections::Scaling::CODECS.include?(c.name) }
                return skipped("needs one of #{Sections::Scaling::CODECS.join(', ')}") if cs.empty?
                { "result" => Sections::Scaling.new(ctx, cs).run }
              when "large"
                return skipped("no codec available") if codecs.empty?
                { "result" => Sections::Large.new(ctx, codecs).run }
              when "kinds"
                { "result" => Sections::Kinds.new(ctx, codecs).run }
              when "c" then Sections::CCore.new(ctx).run
              when "redis", "http" then Sections::NodeServices.new(ctx, id).run
              when "queue" then Sections::Queue.new(ctx).run
              when "serializers" then Sections::Serializers.new(ctx).run
              else Sections::External.new(ctx, id).run
              end
      entry["status"] ||= "ok"
      entry["seconds"] ||= (Util.now - t0).round(1)
      if entry["status"] == "error"
        results["errors"] << { "section" => id, "message" => entry["error"] }
        ctx.progress(id, "ERROR: #{entry['error']}", done: true)
      elsif entry["status"] == "pending"
        ctx.progress(id, "pending (#{entry['program']} does not exist yet)", done: true)
      end
      entry
    rescue StandardError, NotImplementedError, SystemStackError => e
      ctx.progress(id, "ERROR: #{e.class}: #{e.message.lines.first&.strip}", done: true)
      results["errors"] << { "section" => id, "message" => "#{e.class}: #{e.message.lines.first&.strip}" }
      { "status" => "error", "error" => "#{e.class}: #{e.message.lines.first&.strip}", "log" => e.backtrace.first(8).join("\n") }
    end

    def skipped(reason) = { "status" => "skipped", "reason" => reason }

    # What makes the run fail (non-zero exit; the smoke test in `make test`).
    def failures(ctx, results)
      f = results["errors"].map { |e| "section #{e['section']} broke: #{e['message']}" }
      if ctx.codec_names.include?("tersa") && results["unavailable"]["tersa"] && File.exist?(File.join(ROOT, "ruby/lib/tersa.rb"))
        f << "ruby/lib/tersa.rb exists but the gem does not load (run `make ruby`): #{results['unavailable']['tersa']}"
      end
      s = results["sections"]
      if (seed = s.dig("seed", "result"))
        seed["rows"].each do |c, row|
          row.each { |d, r| f << "seed #{d}: #{c} round trip not exact: #{r['error'] || r['diff']}" unless r["exact"] }
          row.each { |d, r| f << "seed #{d}: tersa bytes differ from spec/vectors/corpus/seed/#{d}.tersa" if r["canonical"] == false }
        end
        seed["floor"]&.each { |d, r| f << "seed #{d}: Tersa::Native.deep_copy result differs from its input" unless r["exact"] }
        seed.dig("published", "mismatches")&.each do |x|
          f << "seed #{x['document']}: #{x['codec']} gives #{x['measured']} bytes, the published seed table #{x['published']}"
        end
      end
      if (t = s.dig("types", "result"))
        t["rows"].each do |c, row|
          row.each do |ty, r|
            next unless r["supported"]
            f << "types #{ty}: #{c} raised #{r['error']}" if r["error"]
            f << "types #{ty}: tersa round trip not exact: #{r['diff']}" if c == "tersa" && r["exact"] == false && !r["error"]
          end
        end
      end
      if (sc = s.dig("scaling", "result"))
        sc["rows"].each { |c, row| row.each { |n, r| f << "scaling #{n}: #{c} round trip not exact: #{r['error'] || r['diff']}" unless r["exact"] } }
      end
      if (l = s.dig("large", "result"))
        l["rows"].each do |c, row|
          row.each { |d, r| f << "large #{d}: #{c} round trip not exact: #{r['error'] || r['diff']}" unless r["exact"] }
          row.each { |d, r| f << "large #{d}: tersa bytes differ from the canonical encoding" if r["canonical"] == false }
        end
      end
      if (k = s.dig("kinds", "result"))
        f.concat(KindsSummary.failures(k))
      end
      f.concat(Sections::Queue.failures(s["queue"]))
      if (sr = s.dig("serializers", "result"))
        sr["rows"].each { |n, by| by.each { |size, r| f << "serializers #{n} at #{size}: #{r['error'] || 'output differs from the expected Hashes'}" unless r["correct"] } }
      end
      %w[python js redis http].each do |id|
        next unless s.dig(id, "status") == "ok"
        s[id]["result"]["documents"].each do |x|
          f << "#{id} #{x['document']}: #{x['codec']} #{x['error'] ? "failed: #{x['error']}" : 'round trip not exact'}" unless x["correct"]
        end
      end
      f
    end
  end
end

Bench::Runner.main if $PROGRAM_NAME == __FILE__
