# frozen_string_literal: true

require "rbconfig"
require "etc"

module Bench
  # What the report says about where it ran.
  module Machine
    module_function

    def info(root)
      {
        "cpu" => cpu_model,
        "cores" => Etc.nprocessors,
        "memory_gb" => mem_total_gb,
        "os" => os_name,
        "kernel" => (File.read("/proc/sys/kernel/osrelease").strip rescue RbConfig::CONFIG["host_os"]),
        "ruby" => RUBY_DESCRIPTION,
        "yjit" => yjit_state,
        "gc" => "GC enabled during timings; disabled while counting allocations",
        "commit" => git_commit(root)
      }
    end

    def cpu_model
      File.foreach("/proc/cpuinfo") { |l| return l.split(":", 2)[1].strip if l.start_with?("model name") }
      "unknown"
    rescue StandardError
      "unknown"
    end

    def mem_total_gb
      kb = File.read("/proc/meminfo")[/MemTotal:\s+(\d+)/, 1].to_i
      (kb / 1024.0 / 1024).round(1)
    rescue StandardError
      nil
    end

    def os_name
      File.read("/etc/os-release")[/^PRETTY_NAME="?([^"\n]*)/, 1] || "unknown"
    rescue StandardError
      RbConfig::CONFIG["host_os"]
    end

    def yjit_available? = defined?(RubyVM::YJIT) ? true : false

    def yjit_enabled? = yjit_available? && RubyVM::YJIT.enabled?

    def yjit_state
      return "not available in this Ruby" unless yjit_available?
      yjit_enabled? ? "enabled (--yjit)" : "available, disabled (YJIT=0)"
    end

    def git_commit(root)
      sha = IO.popen(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], err: File::NULL, &:read).strip
      return nil if sha.empty?
      dirty = IO.popen(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"], err: File::NULL, &:read)
      dirty.strip.empty? ? sha : "#{sha} (with uncommitted changes)"
    rescue StandardError
      nil
    end

    def dpkg_version(pkg)
      @dpkg ||= {}
      return @dpkg[pkg] if @dpkg.key?(pkg)
      v = IO.popen(["dpkg-query", "-W", "-f", "${Version}", pkg], err: File::NULL, &:read).strip
      @dpkg[pkg] = v.empty? ? nil : v
    rescue StandardError
      @dpkg[pkg] = nil
    end
  end
end
