# frozen_string_literal: true

# Reads a Tersa stream on stdin, decodes every value into Ruby objects and
# writes the stream Tersa::Encoder makes of them: the differential test
# (spec/tools/differential.py --recode) requires the reference's exact bytes.
# Sync frames (SPEC 2.3) are requested where the input has them, so a stream
# written with any sync options comes back the same.
$LOAD_PATH.unshift File.expand_path("../../lib", __dir__)
require "tersa"

# Which frames of the stream `data` are sync frames (the stream is valid:
# Tersa.load_stream read it first).
def sync_frames(data)
  at = (data.getbyte(2) & 0x01).zero? ? 3 : 11
  out = []
  while at < data.bytesize
    first = data.getbyte(at)
    n = first.zero? ? 9 : (first & -first).bit_length
    len = n == 9 ? data.byteslice(at + 1, 8).unpack1("Q<") : data.byteslice(at, n).unpack("C*").reverse.inject(0) { |v, b| (v << 8) | b } >> n
    out << (data.getbyte(at + n) == 0xFD)
    at += n + len
  end
  out
end

data = $stdin.binmode.read
values = Tersa.load_stream(data)
out = $stdout.binmode
enc = Tersa::Encoder.new(output: out)
enc.header
values.zip(sync_frames(data)).each do |v, sync|
  enc.sync if sync
  enc.write(v)
end
