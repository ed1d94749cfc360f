# frozen_string_literal: true

require_relative "helper"
require "open3"

# The seed and large corpora encode to exactly their committed canonical
# bytes (spec/vectors/corpus) and decode back exactly.
class TestCorpus < Minitest::Test
  include TersaTestHelper

  def read(path)
    return File.binread(path) unless path.end_with?(".xz")

    out, status = Open3.capture2("xz", "-dc", path, binmode: true)
    raise "xz failed on #{path}" unless status.success?

    out
  end

  def test_corpus_canonical_bytes
    docs = JSON.parse(File.read(File.join(VECTORS, "corpus", "manifest.json")))["documents"]
    assert_equal 14, docs.size
    docs.each do |d|
      value = JSON.parse(read(File.join(ROOT, d["json"])), max_nesting: false)
      want = read(File.join(ROOT, d["tersa"]))
      got = Tersa.dump(value)
      assert got == want, "#{d['name']}: #{got.bytesize} bytes, canonical #{want.bytesize}"
      assert exact?(value, Tersa.load(want)), "#{d['name']}: decoded value differs"
    end
  end
end
