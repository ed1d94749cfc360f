# frozen_string_literal: true

require "rbconfig"
require_relative "external"

module Bench
  module Sections
    # 7. Redis and HTTP: bench/node/redis.mjs and bench/node/http.mjs, run as
    # external programs (tersa-bench/1). Each starts its own redis-server (and
    # http.mjs its Express server) on loopback; what they need is installed by
    # bench/setup (redis-server), `make bench-node` (npm ci in bench/node) and
    # `make js` (js/dist). Missing any of these, or a server that does not
    # start, is an error that fails the run: these sections are never pending.
    class NodeServices
      # A full HTTP run takes about 3 minutes, longer on a loaded machine.
      TIMEOUTS = { "full" => 600, "quick" => 240, "smoke" => 90 }.freeze

      def initialize(ctx, id)
        @ctx = ctx
        @id = id
      end

      def run
        if (problem = missing_setup)
          title, program, = External::PLUGINS.fetch(@id)
          return { "title" => title, "program" => program, "status" => "error", "error" => problem }
        end
        External.new(@ctx, @id, timeouts: TIMEOUTS, missing: :error, keep_failed_result: true).run
      end

      def missing_setup
        root = @ctx.root
        unless File.exist?(File.join(root, "bench/node/node_modules/.package-lock.json"))
          return "bench/node/node_modules is missing: run `make bench-node` (npm ci in bench/node)"
        end
        return "js/dist is missing: run `make js`" unless File.exist?(File.join(root, "js/dist/esm/index.js"))
        redis = @ctx.env["REDIS_SERVER"] || "redis-server"
        found = redis.include?("/") ? File.executable?(redis) : ENV["PATH"].to_s.split(File::PATH_SEPARATOR).any? { |d| File.executable?(File.join(d, redis)) }
        return "#{redis} not found: run bench/setup (Debian package redis-server)" unless found
        nil
      end
    end
  end
end
