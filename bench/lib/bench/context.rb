# frozen_string_literal: true

require "json"
require_relative "util"

module Bench
  class ConfigError < StandardError; end

  # Settings from the environment, the documents, progress output.
  class Context
    SECTIONS = %w[seed types scaling large kinds c python js redis http queue serializers].freeze

    # Per mode: seconds per timing slice and rounds after the warm-up round, per
    # section; calls per allocation count; the largest scaling array. The kinds
    # section's Python and TypeScript programs have their own plans.
    MODES = {
      "full" => { slice: 0.045, rounds: 6, mem_ops: 5000, type_slice: 0.1, type_rounds: 5,
                  scaling_max: 1_000_000, scaling_slice: 0.25, scaling_rounds: 3,
                  large_slice: 0.3, large_rounds: 3, kinds_slice: 0.04, kinds_warm: 0.08, kinds_rounds: 4, c_seconds: 0.4 },
      "quick" => { slice: 0.015, rounds: 3, mem_ops: 500, type_slice: 0.03, type_rounds: 3,
                   scaling_max: 100_000, scaling_slice: 0.05, scaling_rounds: 1,
                   large_slice: 0.05, large_rounds: 1, kinds_slice: 0.012, kinds_warm: 0.025, kinds_rounds: 2, c_seconds: 0.05 },
      "smoke" => { slice: 0.004, rounds: 1, mem_ops: 50, type_slice: 0.004, type_rounds: 1,
                   scaling_max: 1000, scaling_slice: 0.004, scaling_rounds: 1,
                   large_slice: 0.0, large_rounds: 1, kinds_slice: 0.003, kinds_warm: 0.001, kinds_rounds: 1, c_seconds: 0.02, docs: 2,
                   large_docs: ["twitter"] }
    }.freeze

    attr_reader :root, :env, :mode, :params, :codec_names, :corpus_dir, :sections, :started_at

    def initialize(root, env)
      @root = root
      @env = env
      @started_at = Time.now
      @t0 = Util.now
      @mode = if truthy?("SMOKE") then "smoke"
              elsif truthy?("QUICK") then "quick"
              else "full"
              end
      @params = MODES.fetch(@mode).dup
      @codec_names = select_codecs
      @corpus_dir = File.expand_path(env["CORPUS"] || File.join(root, "bench/corpus/seed"), Dir.pwd)
      raise ConfigError, "CORPUS=#{@corpus_dir}: not a directory" unless File.directory?(@corpus_dir)
      @sections = list_env("SECTIONS") || SECTIONS
      unknown = @sections - SECTIONS
      raise ConfigError, "SECTIONS: unknown #{unknown.join(', ')} (known: #{SECTIONS.join(', ')})" unless unknown.empty?
      @tty = $stderr.tty?
    end

    def truthy?(key) = !%w[0 false no].include?(env[key].to_s.downcase) && !env[key].to_s.empty?
    def smoke? = @mode == "smoke"
    def quick? = @mode != "full"
    def default_corpus? = @corpus_dir == File.join(root, "bench/corpus/seed")

    def list_env(key)
      v = env[key].to_s.strip
      v.empty? ? nil : v.split(/[\s,]+/).map(&:downcase)
    end

    def select_codecs
      all = Codecs::ORDER
      only = list_env("ONLY")
      except = list_env("EXCEPT") || []
      bad = ((only || []) + except) - all - Codecs::TYPES_ONLY
      raise ConfigError, "unknown codec(s) #{bad.join(', ')} (known: #{(all + Codecs::TYPES_ONLY).join(', ')})" unless bad.empty?
      (only ? all & only : all) - except
    end

    # The per-type section's own codecs (Codecs::TYPES_ONLY) that ONLY/EXCEPT keep.
    def types_only_codecs
      only = list_env("ONLY")
      (only ? Codecs::TYPES_ONLY & only : Codecs::TYPES_ONLY) - (list_env("EXCEPT") || [])
    end

    # The documents of the seed section: every *.json (or *.json.xz) in CORPUS,
    # sorted by name; DOCS=a,b keeps some; the smoke run keeps two.
    def documents
      @documents ||= begin
        files = Dir[File.join(corpus_dir, "*.json")] + Dir[File.join(corpus_dir, "*.json.xz")]
        files.reject! { |f| File.basename(f) == "manifest.json" } # bench/corpus/kinds describes itself
        files.sort_by! { |f| File.basename(f) }
        raise ConfigError, "no *.json files in #{corpus_dir}" if files.empty?
        if (want = list_env("DOCS"))
          files.select! { |f| want.include?(doc_name(f)) }
          raise ConfigError, "DOCS=#{env['DOCS']}: no such documents in #{corpus_dir}" if files.empty?
        elsif params[:docs]
          files = files.first(params[:docs])
        end
        files.map { |f| load_doc(f) }
      end
    end

    def doc_name(path) = File.basename(path).sub(/\.json(\.xz)?\z/, "")

    def load_doc(path)
      text = read_json_text(path)
      value = JSON.parse(text)
      { name: doc_name(path), path: path, value: value, json_bytes: JSON.generate(value).bytesize, file_bytes: text.bytesize }
    end

    def read_json_text(path)
      return File.binread(path).force_encoding(Encoding::UTF_8) unless path.end_with?(".xz")
      text = IO.popen(["xz", "-dc", path], "rb", &:read)
      raise ConfigError, "xz -dc #{path} failed (is xz-utils installed? run bench/setup)" unless $?.success?
      text.force_encoding(Encoding::UTF_8)
    end

    def elapsed = Util.now - @t0

    # One line per step; on a terminal, steps of the same section overwrite each other.
    def progress(section, msg, done: false)
      t = elapsed.round
      line = format("[%2d:%02d] %-8s %s", t / 60, t % 60, section, msg)
      if @tty && !done
        $stderr.print("\r\e[K#{line}")
      else
        $stderr.print("\r\e[K") if @tty
        $stderr.puts(line)
      end
    end
  end
end
