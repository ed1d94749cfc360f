# frozen_string_literal: true
#
# The serializers section (9), in a process of its own (sections/serializers.rb
# starts it): collections of Active Model posts, each with three comments,
# turned into bytes by each serializer of models.rb. Per serializer and
# collection size: calls per second (median of interleaved, shuffled rounds,
# GC enabled), objects and bytes allocated per call (GC disabled), output
# bytes, and whether the output decodes to the expected Hashes.
#
#   ruby bench/lib/bench/serializers/program.rb --json OUT
#   env: BENCH_MODE=full|quick|smoke, TERSA_LIB=dir of tersa.rb (the run's snapshot; default ruby/lib)

tersa_lib = ENV["TERSA_LIB"].to_s
$LOAD_PATH.unshift(tersa_lib.empty? ? File.expand_path("../../../../ruby/lib", __dir__) : tersa_lib)
$LOAD_PATH.unshift(File.expand_path("../..", __dir__)) # bench/lib
require "json"
require "bench/measure"
require "bench/util"
require "bench/serializers/models"

module SerializersBench
  # sizes: posts per collection; alloc_calls: calls per allocation count, per size.
  PLANS = {
    "full" => { sizes: [1, 100], slice: 0.1, rounds: 5, alloc_calls: { 1 => 200, 100 => 20 } },
    "quick" => { sizes: [1, 100], slice: 0.03, rounds: 3, alloc_calls: { 1 => 50, 100 => 5 } },
    "smoke" => { sizes: [1, 10], slice: 0.003, rounds: 1, alloc_calls: { 1 => 3, 10 => 3 } }
  }.freeze

  module Program
    module_function

    def main(argv)
      out = argv[argv.index("--json") + 1] if argv.include?("--json")
      abort "usage: program.rb --json OUT" unless out
      mode = ENV.fetch("BENCH_MODE", "full")
      plan = PLANS.fetch(mode)
      SerializersBench.setup
      sers = SerializersBench.serializers
      rows = sers.keys.to_h { |n| [n, {}] }
      jobs = []
      plan[:sizes].each do |size|
        posts = SerializersBench.posts(size)
        hashes = SerializersBench.hashes(posts)
        sers.each do |name, (_, fn, decode)|
          r = rows[name][size.to_s] = { "rounds" => [] }
          begin
            bytes = fn.call(posts, hashes)
            r["bytes"] = bytes.bytesize
            r["correct"] = decode.call(bytes) == hashes
            fn.call(posts, hashes) # inline caches filled before counting
            n = plan[:alloc_calls].fetch(size)
            objs, mem = Bench::Measure.allocations(n) { fn.call(posts, hashes) }
            r["objects"] = (objs.to_f / n).round(1)
            r["alloc_bytes"] = (mem.to_f / n).round
            jobs << [r, -> { fn.call(posts, hashes) }]
          rescue StandardError => e
            r["correct"] = false
            r["error"] = "#{e.class}: #{e.message.lines.first&.strip}"
          end
        end
      end
      (0..plan[:rounds]).each do |round|
        jobs.shuffle(random: Random.new(round + 29)).each do |r, job|
          rate = Bench::Measure.rate(plan[:slice]) { job.call }
          r["rounds"] << rate unless round.zero?
        end
      end
      jobs.each { |r, _| r["per_s"] = Bench::Util.median(r["rounds"]) }
      result = {
        "schema" => "tersa-serializers/1",
        "mode" => mode,
        "runtime" => RUBY_DESCRIPTION,
        "libraries" => libraries,
        "model" => "Post {#{POST_ATTRS.join(', ')}} has_many :comments, 3 per post: Comment {#{COMMENT_ATTRS.join(', ')}}; " \
                   "ActiveModel::Model + ActiveModel::Serializers::JSON, attr_accessor attributes",
        "sizes" => plan[:sizes],
        "serializers" => sers.keys,
        "how" => sers.transform_values(&:first),
        "params" => { "slice_s" => plan[:slice], "rounds" => plan[:rounds], "alloc_calls" => plan[:alloc_calls].transform_keys(&:to_s) },
        "rows" => rows
      }
      File.write(out, JSON.pretty_generate(result))
      bad = rows.flat_map { |n, by| by.filter_map { |size, r| "#{n} at #{size}: #{r['error'] || 'output differs'}" unless r["correct"] } }
      bad.each { |b| warn "serializers: #{b}" }
      exit(bad.empty? ? 0 : 1)
    end

    def libraries
      {
        "activemodel" => ActiveModel::VERSION::STRING,
        "active_model_serializers" => ActiveModel::Serializer::VERSION,
        "jbuilder" => Gem.loaded_specs["jbuilder"]&.version&.to_s || dpkg("ruby-jbuilder"),
        "json" => JSON::VERSION,
        "oj" => Oj::VERSION,
        "tersa" => Tersa::VERSION
      }
    end

    def dpkg(pkg)
      v = IO.popen(["dpkg-query", "-W", "-f=${Version}", pkg], err: File::NULL, &:read)
      $?.success? ? "#{v} (Debian)" : "?"
    rescue SystemCallError
      "?"
    end
  end
end

SerializersBench::Program.main(ARGV) if $PROGRAM_NAME == __FILE__
