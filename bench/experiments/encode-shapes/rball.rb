require 'json'
$LOAD_PATH.unshift ENV["RBLIB"]
require 'tersa'
names = ENV["DOCS"].split
docs = names.map { |n| JSON.parse(File.read("/tmp/kj/#{n}.json"), max_nesting: false) }
e = Tersa::Encoder.new
docs.each { |d| 3.times { e.encode(d) } }
