# frozen_string_literal: true
#
# SVG charts written by hand (no chart library), turned into PNG with
# rsvg-convert (Debian package librsvg2-bin, installed by bench/setup).

require_relative "util"

module Bench
  module Charts
    FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
    COLORS = {
      "tersa" => "#d9480f", "json" => "#868e96", "oj" => "#f08c00", "msgpack" => "#1971c2",
      "cbor" => "#2f9e44", "marshal" => "#7048e8", "bson" => "#9c6644", "yajl" => "#c2255c",
      "msgpackr" => "#1971c2", "msgpackr-records" => "#74c0fc",
      "floor" => "#212529", "json + zstd" => "#343a40",
      "raw" => "#1971c2", "LZ4" => "#74c0fc", "Zstd" => "#a5d8ff"
    }.freeze
    EXTRA = %w[#0c8599 #5c940d #e8590c #862e9c #364fc7 #a61e4d].freeze

    def self.color(name, i = 0) = COLORS[name] || EXTRA[i % EXTRA.size]

    def self.esc(s) = s.to_s.gsub("&", "&amp;").gsub("<", "&lt;").gsub(">", "&gt;").gsub('"', "&quot;")

    # A minimal SVG writer.
    class Svg
      attr_reader :width, :height

      def initialize(width, height)
        @width = width
        @height = height
        @out = []
      end

      def raw(s) = @out << s

      def rect(x, y, w, h, fill:, stroke: nil, extra: "")
        s = stroke ? %( stroke="#{stroke}") : ""
        @out << %(<rect x="#{r(x)}" y="#{r(y)}" width="#{r(w)}" height="#{r(h)}" fill="#{fill}"#{s} #{extra}/>)
      end

      def line(x1, y1, x2, y2, stroke: "#000", width: 1, dash: nil, opacity: nil)
        d = dash ? %( stroke-dasharray="#{dash}") : ""
        o = opacity ? %( stroke-opacity="#{opacity}") : ""
        @out << %(<line x1="#{r(x1)}" y1="#{r(y1)}" x2="#{r(x2)}" y2="#{r(y2)}" stroke="#{stroke}" stroke-width="#{width}"#{d}#{o}/>)
      end

      def polyline(points, stroke:, width: 2, fill: "none", dash: nil, fill_opacity: nil, closed: false)
        pts = points.map { |x, y| "#{r(x)},#{r(y)}" }.join(" ")
        d = dash ? %( stroke-dasharray="#{dash}") : ""
        fo = fill_opacity ? %( fill-opacity="#{fill_opacity}") : ""
        tag = closed ? "polygon" : "polyline"
        @out << %(<#{tag} points="#{pts}" fill="#{fill}"#{fo} stroke="#{stroke}" stroke-width="#{width}" stroke-linejoin="round"#{d}/>)
      end

      def circle(x, y, rad, fill:, stroke: nil)
        s = stroke ? %( stroke="#{stroke}" stroke-width="1.5") : ""
        @out << %(<circle cx="#{r(x)}" cy="#{r(y)}" r="#{rad}" fill="#{fill}"#{s}/>)
      end

      def text(x, y, str, size: 12, anchor: "start", weight: nil, fill: "#212529", rotate: nil, baseline: nil)
        w = weight ? %( font-weight="#{weight}") : ""
        t = rotate ? %( transform="rotate(#{rotate} #{r(x)} #{r(y)})") : ""
        b = baseline ? %( dominant-baseline="#{baseline}") : ""
        @out << %(<text x="#{r(x)}" y="#{r(y)}" font-size="#{size}" text-anchor="#{anchor}" fill="#{fill}"#{w}#{t}#{b}>#{Charts.esc(str)}</text>)
      end

      def to_s
        <<~SVG
          <svg xmlns="http://www.w3.org/2000/svg" width="#{@width}" height="#{@height}" viewBox="0 0 #{@width} #{@height}" font-family="#{FONT}">
          <rect x="0" y="0" width="#{@width}" height="#{@height}" fill="#ffffff"/>
          #{@out.join("\n")}
          </svg>
        SVG
      end

      private

      def r(v) = v.is_a?(Float) ? v.round(1) : v
    end

    # Rough text width for layout (DejaVu Sans averages ~0.6 em).
    def self.text_w(s, size) = s.to_s.size * size * 0.6

    def self.title(svg, title, subtitle)
      svg.text(20, 28, title, size: 18, weight: "bold")
      svg.text(20, 48, subtitle, size: 12, fill: "#495057") if subtitle
    end

    # Horizontal legend wrapping at `right`; returns the y below it.
    def self.legend(svg, names, x, y, right, colors: nil, dashed: [])
      cx = x
      names.each_with_index do |n, i|
        w = 18 + text_w(n, 12) + 18
        if cx + w > right
          cx = x
          y += 20
        end
        c = colors ? colors[i] : color(n, i)
        if dashed.include?(n)
          svg.line(cx, y - 4, cx + 14, y - 4, stroke: c, width: 2.5, dash: "4 3")
        else
          svg.rect(cx, y - 10, 12, 12, fill: c)
        end
        svg.text(cx + 18, y, n, size: 12, weight: n == "tersa" ? "bold" : nil)
        cx += w
      end
      y + 22
    end

    def self.nice_step(range, ticks)
      raw = range / ticks.to_f
      mag = 10**Math.log10(raw).floor
      [1, 2, 2.5, 5, 10].map { |m| m * mag }.find { |s| s >= raw }
    end

    # Grouped column chart. series: [{name:, values: [..per category..]}]
    def self.columns(title:, categories:, series:, y_label:, subtitle: nil, width: 1000, height: 440,
                     log: false, value_labels: false, value_fmt: nil, reference: nil)
      svg = Svg.new(width, height)
      title(svg, title, subtitle)
      top = legend(svg, series.map { |s| s[:name] }, 20, subtitle ? 74 : 56, width - 20,
                   colors: series.each_with_index.map { |s, i| s[:color] || color(s[:name], i) }) + 8
      rotate = categories.size > 6 && categories.map { |c| text_w(c, 12) }.max > (width - 110) / categories.size.to_f - 6
      bottom = rotate ? 78 : 40
      left = 78
      right = 20
      pw = width - left - right
      ph = height - top - bottom
      vals = series.flat_map { |s| s[:values] }.compact.select(&:positive?)
      return nil if vals.empty?
      if log
        lo = 10**Math.log10(vals.min * 0.999).floor # a bar at a power of ten keeps some height
        hi = 10**Math.log10(vals.max).ceil
        hi *= 10 if hi == lo
        ymap = ->(v) { top + ph - (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) * ph }
        ticks = []
        t = lo
        while t <= hi * 1.0001
          ticks << t
          t *= 10
        end
      else
        step = nice_step(vals.max * 1.08, 5)
        hi = (vals.max * 1.08 / step).ceil * step
        ymap = ->(v) { top + ph - v / hi.to_f * ph }
        ticks = (0..(hi / step).round).map { |i| i * step }
      end
      ticks.each do |tv|
        y = ymap.(tv)
        svg.line(left, y, left + pw, y, stroke: "#dee2e6")
        svg.text(left - 6, y + 4, Util.short(tv), size: 11, anchor: "end", fill: "#495057")
      end
      svg.text(16, top + ph / 2, y_label, size: 12, anchor: "middle", rotate: -90, fill: "#495057")
      if reference
        y = ymap.(reference[:value])
        svg.line(left, y, left + pw, y, stroke: "#212529", width: 1.2, dash: "5 4")
        svg.text(left + pw - 4, y - 4, reference[:label], size: 11, anchor: "end", fill: "#212529")
      end
      gw = pw / categories.size.to_f
      bw = gw * 0.82 / series.size
      categories.each_with_index do |cat, ci|
        gx = left + gw * ci + gw * 0.09
        series.each_with_index do |s, si|
          v = s[:values][ci]
          x = gx + bw * si
          next if v.nil? || !v.positive?
          y = ymap.(v)
          y0 = top + ph
          bad = s[:marks] && s[:marks][ci]
          svg.rect(x, y, [bw - 1, 1].max, y0 - y, fill: s[:color] || color(s[:name], si), extra: bad ? 'fill-opacity="0.35"' : "")
          if bad
            svg.text(x + bw / 2, y - 4, "✗", size: 12, anchor: "middle", fill: "#c92a2a", weight: "bold")
            next
          end
          next unless value_labels
          lbl = value_fmt ? value_fmt.(v) : Util.short(v)
          if bw >= text_w(lbl, 10) + 2
            svg.text(x + bw / 2, y - 4, lbl, size: 10, anchor: "middle", fill: "#343a40")
          else
            svg.text(x + bw / 2 + 3, y - 4, lbl, size: 10, anchor: "start", rotate: -90, fill: "#343a40")
          end
        end
        lx = left + gw * ci + gw / 2
        if rotate
          svg.text(lx + 4, top + ph + 14, cat, size: 12, anchor: "end", rotate: -35)
        else
          svg.text(lx, top + ph + 18, cat, size: 12, anchor: "middle")
        end
      end
      svg.line(left, top + ph, left + pw, top + ph, stroke: "#495057")
      svg.to_s
    end

    # Radar chart: one axis per category, one closed polygon per series.
    def self.radar(title:, axes:, series:, subtitle: nil, width: 820, height: 640, ring_label: ->(v) { v.to_s }, dashed: [])
      return nil if axes.size < 3
      # series with identical values would hide each other: one polygon, named "a = b"
      series = series.group_by { |x| x[:values].map { |v| v&.round(6) } }.values.map do |same|
        same.size == 1 ? same.first : same.first.merge(name: same.map { |x| x[:name] }.join(" = "), color: same.first[:color] || color(same.first[:name]))
      end
      svg = Svg.new(width, height)
      title(svg, title, subtitle)
      top = legend(svg, series.map { |s| s[:name] }, 20, subtitle ? 74 : 56, width - 20,
                   colors: series.each_with_index.map { |s, i| s[:color] || color(s[:name], i) }, dashed: dashed)
      cx = width / 2.0
      rad = [(height - top - 60) / 2.0, width / 2.0 - 120].min
      cy = top + 30 + rad
      max = series.flat_map { |s| s[:values] }.compact.max
      step = nice_step(max, 4)
      outer = (max / step).ceil * step
      n = axes.size
      ang = ->(i) { -Math::PI / 2 + 2 * Math::PI * i / n }
      pt = ->(i, v) { [cx + Math.cos(ang.(i)) * rad * v / outer, cy + Math.sin(ang.(i)) * rad * v / outer] }
      # ring labels half-way between the first two axes, away from the data points
      lab = -Math::PI / 2 + Math::PI / n
      labels = []
      (1..(outer / step).round).each do |k|
        v = k * step
        svg.polyline((0...n).map { |i| pt.(i, v) }, stroke: "#dee2e6", width: 1, closed: true)
        r = rad * v / outer * Math.cos(Math::PI / n)
        labels << %(<text x="#{(cx + Math.cos(lab) * r).round(1)}" y="#{(cy + Math.sin(lab) * r + 4).round(1)}" font-size="10" ) +
                  %(text-anchor="middle" fill="#495057" stroke="#ffffff" stroke-width="3" paint-order="stroke">#{Charts.esc(ring_label.(v))}</text>)
      end
      axes.each_with_index do |a, i|
        x, y = pt.(i, outer)
        svg.line(cx, cy, x, y, stroke: "#dee2e6")
        lx, ly = pt.(i, outer * 1.09)
        c = Math.cos(ang.(i))
        anchor = c.abs < 0.2 ? "middle" : (c.positive? ? "start" : "end")
        svg.text(lx, ly + 4, a, size: 12, anchor: anchor)
      end
      # draw the widest first so smaller polygons stay visible on top
      order = series.each_with_index.sort_by { |s, _| -(s[:values].compact.sum) }
      order.each do |s, si|
        pts = s[:values].each_with_index.map { |v, i| pt.(i, v || 0) }
        c = s[:color] || color(s[:name], si)
        bold = s[:name] == "tersa"
        svg.polyline(pts, stroke: c, width: bold ? 3 : 1.8, fill: bold ? c : "none",
                          fill_opacity: bold ? 0.18 : nil, closed: true, dash: dashed.include?(s[:name]) ? "6 4" : nil)
        pts.each { |x, y| svg.circle(x, y, bold ? 3 : 2, fill: c) } unless dashed.include?(s[:name])
      end
      labels.each { |l| svg.raw(l) } # on top of the polygons
      svg.to_s
    end

    # Line chart on a log-log grid: series [{name:, points: [[x, y], ...]}]
    def self.lines(title:, series:, x_label:, y_label:, subtitle: nil, width: 1000, height: 420, panels: nil)
      panels ||= [{ title: nil, series: series, y_label: y_label }]
      svg = Svg.new(width, height)
      title(svg, title, subtitle)
      names = panels.flat_map { |p| p[:series].map { |s| s[:name] } }.uniq
      top = legend(svg, names, 20, subtitle ? 74 : 56, width - 20) + 14
      pw_total = width - 20
      each_w = pw_total / panels.size.to_f
      panels.each_with_index do |p, pi|
        left = 20 + each_w * pi + 64
        pw = each_w - 64 - 16
        ph = height - top - 50
        svg.text(left + pw / 2, top - 2, p[:title], size: 13, anchor: "middle", weight: "bold") if p[:title]
        pts = p[:series].flat_map { |s| s[:points] }.select { |_, y| y&.positive? }
        next if pts.empty?
        xs = pts.map(&:first)
        ys = pts.map(&:last)
        xlo = 10**Math.log10(xs.min).floor
        xhi = 10**Math.log10(xs.max).ceil
        xhi *= 10 if xhi == xlo
        ylo = 10**Math.log10(ys.min).floor
        yhi = 10**Math.log10(ys.max).ceil
        yhi *= 10 if yhi == ylo
        ptop = top + 10
        xm = ->(x) { left + (Math.log10(x) - Math.log10(xlo)) / (Math.log10(xhi) - Math.log10(xlo)) * pw }
        ym = ->(y) { ptop + ph - (Math.log10(y) - Math.log10(ylo)) / (Math.log10(yhi) - Math.log10(ylo)) * ph }
        t = ylo
        while t <= yhi * 1.0001
          [1, 2, 5].each do |m|
            v = t * m
            next if v > yhi * 1.0001
            svg.line(left, ym.(v), left + pw, ym.(v), stroke: m == 1 ? "#dee2e6" : "#f1f3f5")
            svg.text(left - 6, ym.(v) + 4, Util.short(v), size: 11, anchor: "end", fill: "#495057")
          end
          t *= 10
        end
        t = xlo
        while t <= xhi * 1.0001
          svg.line(xm.(t), ptop, xm.(t), ptop + ph, stroke: "#f1f3f5")
          svg.text(xm.(t), ptop + ph + 16, Util.short(t), size: 11, anchor: "middle", fill: "#495057")
          t *= 10
        end
        svg.line(left, ptop + ph, left + pw, ptop + ph, stroke: "#495057")
        svg.text(left + pw / 2, ptop + ph + 36, x_label, size: 12, anchor: "middle", fill: "#495057")
        svg.text(left - 50, ptop + ph / 2, p[:y_label] || y_label, size: 12, anchor: "middle", rotate: -90, fill: "#495057")
        p[:series].each_with_index do |s, si|
          c = color(s[:name], si)
          ps = s[:points].select { |_, y| y&.positive? }.map { |x, y| [xm.(x), ym.(y)] }
          svg.polyline(ps, stroke: c, width: s[:name] == "tersa" ? 3 : 2, dash: s[:dash])
          ps.each { |x, y| svg.circle(x, y, 3, fill: c) }
        end
      end
      svg.to_s
    end

    # Writes name.svg and name.png into dir; returns the file names written.
    def self.write(dir, name, svg)
      return [] unless svg
      path = File.join(dir, "#{name}.svg")
      File.write(path, svg)
      out = ["#{name}.svg"]
      png = File.join(dir, "#{name}.png")
      ok = system("rsvg-convert", "--zoom", "1.5", "--background-color", "white", "-o", png, path, err: File::NULL)
      out << "#{name}.png" if ok && File.exist?(png)
      out
    rescue Errno::ENOENT
      out
    end

    def self.png_tool? = system("sh", "-c", "command -v rsvg-convert >/dev/null 2>&1")
  end
end
