#!/usr/bin/env ruby
# frozen_string_literal: true
#
# Re-renders report.md and the charts of a finished run from its results.json,
# without measuring again:
#   ruby bench/report.rb bench/results/<date>
#   PUBLISH=1 ruby bench/report.rb bench/results/<date>   # and show it in bench/README.md
$LOAD_PATH.unshift(File.join(__dir__, "lib"))
require "json"
require "bench/report"

dir = ARGV[0] or abort "usage: ruby bench/report.rb RESULTS_DIR"
results = JSON.parse(File.read(File.join(dir, "results.json")))
report = Bench.render(dir, results)
Bench.publish(dir, report) if %w[1 true yes].include?(ENV["PUBLISH"].to_s.downcase)
puts report.text_summary
puts "wrote #{File.join(dir, 'report.md')} and #{report.charts.size} chart files"
