lib = ARGV[0]
$LOAD_PATH.unshift lib
require 'tersa'
names = Dir['/tmp/dcm/enc/*.tersa'].map { |f| File.basename(f, '.tersa') }.sort
d = Tersa::Decoder.new(max_depth: 100000)
m = Tersa::Decoder.new
GC.disable
names.each do |n|
  data = File.binread("/tmp/dcm/enc/#{n}.tersa")
  bufs = if n == 'tiny_messages'
    a = []; i = 0
    while i < data.bytesize; l = data.byteslice(i, 4).unpack1('V'); a << data.byteslice(i + 4, l); i += 4 + l; end
    a
  else [data] end
  m.reset
  2.times { bufs.each { |b| d.decode(b) } }
  m.reset
  GC.start; GC.disable
end
