# frozen_string_literal: true

require "socket"
require "tmpdir"
require "fileutils"

# A redis-server of the test's own on 127.0.0.1 and a free port, in a
# temporary directory, without persistence; stopped by #stop.
# Raises when redis-server is missing or does not answer: the registry tests
# need the real store and are never skipped (make deps-ruby installs it).
class TestRedisServer
  attr_reader :port

  def initialize
    @dir = Dir.mktmpdir("tersa-test-redis-")
    @port = free_port
    @owner = Process.pid
    bin = ENV["REDIS_SERVER"] || "redis-server"
    @pid = Process.spawn(bin, "--port", @port.to_s, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                         "--dir", @dir, out: File::NULL, err: File::NULL)
    wait_ready
  rescue Errno::ENOENT
    FileUtils.rm_rf(@dir)
    raise "redis-server not found: install Debian's redis-server (make deps-ruby does)"
  end

  def stop
    return unless @pid && Process.pid == @owner # a forked child leaves the server to its parent

    Process.kill("TERM", @pid)
    Process.wait(@pid)
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  ensure
    @pid = nil
    FileUtils.rm_rf(@dir)
  end

  private

  def free_port
    s = TCPServer.new("127.0.0.1", 0)
    s.addr[1]
  ensure
    s&.close
  end

  def wait_ready
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
    loop do
      begin
        sock = TCPSocket.new("127.0.0.1", @port)
        sock.write("PING\r\n")
        return if sock.gets&.start_with?("+PONG")
      rescue SystemCallError
        nil
      ensure
        sock&.close
      end
      raise "redis-server did not answer on 127.0.0.1:#{@port} within 10 s" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

      sleep 0.02
    end
  end
end
