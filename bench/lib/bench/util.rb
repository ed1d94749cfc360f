# frozen_string_literal: true

module Bench
  module Util
    module_function

    def median(xs)
      xs = xs.compact.sort
      return nil if xs.empty?
      m = xs.size / 2
      xs.size.odd? ? xs[m] : (xs[m - 1] + xs[m]) / 2.0
    end

    def mean(xs)
      xs = xs.compact
      xs.empty? ? nil : xs.sum.to_f / xs.size
    end

    def geomean(xs)
      xs = xs.compact
      return nil if xs.empty? || xs.any? { |x| x <= 0 }
      Math.exp(xs.sum { |x| Math.log(x) } / xs.size)
    end

    # 1234567 -> "1,234,567"
    def commas(n)
      return "–" if n.nil?
      s = n.round.abs.to_s.reverse.scan(/\d{1,3}/).join(",").reverse
      n.negative? ? "-#{s}" : s
    end

    # Three significant figures, thousands separated: 123456 -> "123,456", 12.345 -> "12.3"
    def sig(x, digits = 3)
      return "–" if x.nil?
      return "0" if x.zero?
      mag = Math.log10(x.abs).floor
      return commas(x) if mag >= digits - 1
      decimals = digits - 1 - mag
      format("%.#{decimals}f", x)
    end

    # Short axis labels: 1500 -> "1.5k", 2000000 -> "2M"
    def short(x)
      return "0" if x.zero?
      a = x.abs
      s, div = if a >= 1e9 then ["G", 1e9]
               elsif a >= 1e6 then ["M", 1e6]
               elsif a >= 1e3 then ["k", 1e3]
               else ["", 1]
               end
      v = x / div
      txt = v == v.round ? v.round.to_s : format(v.abs >= 10 ? "%.0f" : "%.1f", v).sub(/\.0$/, "")
      txt + s
    end

    def ratio(x, ref)
      return nil if x.nil? || ref.nil? || ref.zero?
      x.to_f / ref
    end

    def fmt_ratio(r)
      return "–" if r.nil?
      r >= 10 ? format("%.0f×", r) : format("%.2f×", r)
    end

    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    # Runs cmd (in its own process group, output and errors to log) and waits
    # at most `limit` seconds: its exit status, "signal N", or :timeout after
    # the whole group is stopped (TERM, then KILL `grace` seconds later; with
    # grace 0 KILL at once).
    def run_with_timeout(env, cmd, chdir:, log:, limit:, grace: 0, poll: 0.1)
      pid = Process.spawn(env, *cmd, chdir: chdir, out: log, err: [:child, :out], pgroup: true)
      deadline = now + limit
      loop do
        done, st = Process.waitpid2(pid, Process::WNOHANG)
        return st.exitstatus || "signal #{st.termsig}" if done
        if now > deadline
          if grace.positive?
            Process.kill("TERM", -pid) rescue nil
            sleep grace
          end
          Process.kill("KILL", -pid) rescue nil
          Process.waitpid(pid) rescue nil
          return :timeout
        end
        sleep poll
      end
    end

    def duration(sec)
      sec < 60 ? format("%.0f s", sec) : format("%d min %02d s", sec / 60, sec % 60)
    end
  end
end
