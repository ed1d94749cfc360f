# frozen_string_literal: true

# Reads a Pith stream on stdin, decodes every value into Ruby objects and
# writes the stream Pith::Encoder makes of them: the differential test
# (spec/tools/differential.py --recode) requires the reference's exact bytes.
$LOAD_PATH.unshift File.expand_path("../../lib", __dir__)
require "pith"

values = Pith.load_stream($stdin.binmode.read)
enc = Pith::Encoder.new
values.each { |v| enc << v }
$stdout.binmode.write(enc.to_s)
