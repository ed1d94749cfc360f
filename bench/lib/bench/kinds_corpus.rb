# frozen_string_literal: true

require "json"

module Bench
  # The kinds corpus (bench/corpus/kinds/manifest.json): which documents a run
  # measures and how they are read. The manifest lists bench/corpus/large too.
  module KindsCorpus
    DIR = "bench/corpus/kinds"

    module_function

    def manifest(root)
      path = File.join(root, DIR, "manifest.json")
      raise ConfigError, "#{path} is missing (python3 #{DIR}/generate.py writes it)" unless File.exist?(path)
      JSON.parse(File.read(path))
    end

    # KINDS_DOCS=a,b keeps some documents; a smoke run keeps the manifest's
    # "smoke" list; otherwise every document.
    def select(ctx, m)
      docs = m["documents"]
      want = ctx.list_env("KINDS_DOCS") || (ctx.smoke? ? m["smoke"] : nil)
      return docs unless want
      unknown = want - docs.map { |d| d["name"] }
      raise ConfigError, "KINDS_DOCS: unknown document(s) #{unknown.join(', ')} (known: #{docs.map { |d| d['name'] }.join(', ')})" unless unknown.empty?
      docs.select { |d| want.include?(d["name"]) }
    end

    # The value of a document. JSON.parse's max_nesting would refuse the deep
    # tree (JSON's own limit, which its codec row reports), so it is off here.
    def load(ctx, entry)
      path = File.expand_path(entry["file"], File.join(ctx.root, DIR))
      JSON.parse(ctx.read_json_text(path), max_nesting: false)
    end
  end
end
