# frozen_string_literal: true

require_relative "helper"
require_relative "support/redis_server"
require "tersa/active_support"
require "active_support/cache/redis_cache_store"
require "active_support/testing/time_helpers"
require "tmpdir"
require "fileutils"

# Tersa::ActiveSupportCoder with Debian's ActiveSupport 6.1: MemoryStore,
# FileStore, and RedisCacheStore against a real redis-server on loopback. Expiry is checked
# by moving ActiveSupport's clock (travel), never by sleeping.
module ActiveSupportCoderCases
  include ActiveSupport::Testing::TimeHelpers

  VALUE = { "id" => 7, "tags" => %i[a b], "at" => Time.utc(2025, 3, 1, 12, 0, 0, 500_000), "price" => 9.99,
            "blob" => "\x00\xFF".b, "nested" => [{ "x" => nil, "y" => true }] }.freeze

  def teardown
    travel_back
  end

  def test_round_trips_values
    cache = store
    cache.write("k", VALUE)
    assert TersaTestHelper.exact?(VALUE, cache.read("k"))
    cache.write("s", "text")
    assert_equal "text", cache.read("s")
    cache.write("n", 42)
    assert_equal 42, cache.fetch("n") { flunk "fetch missed a written entry" }
    assert_nil cache.read("absent")
  end

  def test_the_class_is_a_coder
    cache = store(coder: Tersa::ActiveSupportCoder)
    cache.write("k", VALUE, version: "v1")
    assert TersaTestHelper.exact?(VALUE, cache.read("k", version: "v1"))
    assert_equal coder.dump(read_entry(cache, "k")).bytesize, payload(cache, "k").bytesize
  end

  def test_entry_keeps_expiry_and_version
    cache = store
    cache.write("k", VALUE, expires_in: 60, version: "v3")
    written = Time.now.to_f
    entry = read_entry(cache, "k")
    assert_kind_of ActiveSupport::Cache::Entry, entry
    assert_equal "v3", entry.version
    assert_in_delta written + 60, entry.expires_at, 1
    assert TersaTestHelper.exact?(VALUE, entry.value)

    assert_nil cache.read("k", version: "v2"), "a mismatched version must read as a miss"
    assert TersaTestHelper.exact?(VALUE, cache.read("k", version: "v3"))
    travel 59
    assert cache.read("k", version: "v3"), "expired too early: the expiry was not kept"
    travel 2
    assert_nil cache.read("k", version: "v3"), "not expired: the expiry was not kept"
  end

  def test_expires_at_exact
    cache = store
    cache.write("k", 1, expires_in: 123.456)
    stored = coder.load(payload(cache, "k"))
    again = coder.load(coder.dump(stored))
    assert_equal stored.expires_at, again.expires_at
    assert_nil coder.load(coder.dump(ActiveSupport::Cache::Entry.new(1))).expires_at
  end

  def test_race_condition_ttl_serves_the_stale_entry_once
    cache = store
    cache.write("k", "old", expires_in: 10)
    travel 11
    seen = []
    refreshed = cache.fetch("k", expires_in: 10, race_condition_ttl: 5) do
      seen << cache.fetch("k", expires_in: 10, race_condition_ttl: 5) { "inner" }
      "new"
    end
    assert_equal "new", refreshed
    assert_equal ["old"], seen, "the stale entry's extended expiry must be written through the coder"
  end

  def test_unsupported_value_raises_without_marshal
    cache = store
    error = assert_raises(Tersa::EncodeError) { cache.write("k", { "ok" => [1, Object.new] }) }
    assert_equal 'cache entry value: unsupported type Object at $["ok"][1]', error.message
    assert_nil cache.read("k")
  end

  def test_foreign_payload_is_a_miss_and_is_rewritten
    cache = store
    put_payload(cache, "k", Marshal.dump(ActiveSupport::Cache::Entry.new("marshal")))
    assert_nil cache.read("k")
    assert_equal "fresh", cache.fetch("k") { "fresh" }
    assert_equal "fresh", cache.read("k")
  end

  def test_tersa_that_is_not_an_entry_raises
    cache = store
    put_payload(cache, "k", Tersa.dump({ "not" => "an entry" }))
    error = assert_raises(Tersa::DecodeError) { cache.read("k") }
    assert_equal :not_a_cache_entry, error.code
    cut = Tersa.dump([1, 2, 3]).byteslice(0, 5)
    put_payload(cache, "k", cut)
    expected = assert_raises(Tersa::DecodeError) { Tersa.load(cut) }
    got = assert_raises(Tersa::DecodeError) { cache.read("k") }
    assert_equal [expected.code, expected.offset], [got.code, got.offset]
  end

  def test_entries_compressed_by_the_store
    cache = store(compress: true, compress_threshold: 64)
    big = { "rows" => Array.new(200) { |i| { "i" => i, "name" => "row" } } }
    cache.write("big", big)
    assert_equal big, cache.read("big")
    # The store's compression is Marshal's: the coder stores the Tersa value, not that blob.
    assert_equal big, Tersa.load(payload(cache, "big"))[0]
  end

  def test_coder_compression
    cache = store(coder: Tersa::ActiveSupportCoder.new(compress_threshold: 256))
    big = { "rows" => Array.new(200) { |i| { "i" => i, "name" => "row" } } }
    cache.write("big", big, expires_in: 60, version: "v1")
    fields = Tersa.load(payload(cache, "big"))
    assert_equal [4, :deflate], [fields.size, fields[3]]
    assert_operator payload(cache, "big").bytesize, :<, Tersa.dump(big).bytesize
    assert_equal big, cache.read("big", version: "v1")
    cache.write("small", [1, 2])
    assert_equal 3, Tersa.load(payload(cache, "small")).size
    assert_equal [1, 2], cache.read("small")
    noise = Random.new(1).bytes(1000)
    cache.write("noise", noise)
    assert_equal 3, Tersa.load(payload(cache, "noise")).size, "deflating that does not shorten is not kept"
    assert_equal noise, cache.read("noise")
  end

  def test_corrupt_deflated_value_raises
    cache = store(coder: Tersa::ActiveSupportCoder.new(compress_threshold: 1))
    put_payload(cache, "k", Tersa.dump(["not zlib".b, nil, nil, :deflate]))
    assert_equal :not_a_cache_entry, assert_raises(Tersa::DecodeError) { coder.load(payload(cache, "k")) }.code
    put_payload(cache, "k", Tersa.dump([1, nil, nil, :deflate]))
    assert_equal :not_a_cache_entry, assert_raises(Tersa::DecodeError) { coder.load(payload(cache, "k")) }.code
  end

  def test_dictionary_option
    dict = Tersa::Dictionary.new(strings: ["admin"], shapes: [%w[role name]])
    with_dict = Tersa::ActiveSupportCoder.new(dictionary: dict)
    cache = store(coder: with_dict)
    cache.write("u", { "role" => "admin", "name" => "ann" })
    assert_equal({ "role" => "admin", "name" => "ann" }, cache.read("u"))
    assert_equal :unknown_dictionary, assert_raises(Tersa::DecodeError) { Tersa.load(payload(cache, "u")) }.code
    assert_raises(ArgumentError) { Tersa::ActiveSupportCoder.new(symbolize_keys: true) }
  end

  private

  def coder
    @coder ||= Tersa::ActiveSupportCoder.new
  end

  def read_entry(cache, name)
    cache.send(:read_entry, cache.send(:normalize_key, name, {}))
  end
end

class TestActiveSupportMemoryStore < Minitest::Test
  include ActiveSupportCoderCases

  def store(coder: self.coder, **options)
    ActiveSupport::Cache::MemoryStore.new(coder: coder, **options)
  end

  def payload(cache, name)
    cache.instance_variable_get(:@data).fetch(cache.send(:normalize_key, name, {}))
  end

  def put_payload(cache, name, bytes)
    cache.instance_variable_get(:@data)[cache.send(:normalize_key, name, {})] = bytes
  end
end

class TestActiveSupportFileStore < Minitest::Test
  include ActiveSupportCoderCases

  def setup
    @dir = Dir.mktmpdir("tersa-test-cache-")
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
  end

  def store(coder: self.coder, **options)
    ActiveSupport::Cache::FileStore.new(@dir, coder: coder, **options)
  end

  def payload(cache, name)
    File.binread(cache.send(:normalize_key, name, {}))
  end

  def put_payload(cache, name, bytes)
    path = cache.send(:normalize_key, name, {})
    FileUtils.mkdir_p(File.dirname(path))
    File.binwrite(path, bytes)
  end

  # FileStore reads files in text mode and turns every error of a read into
  # a miss (it logs them), so the coder's error is seen by calling it.
  def test_tersa_that_is_not_an_entry_raises
    cache = store
    put_payload(cache, "k", Tersa.dump({ "not" => "an entry" }))
    assert_nil cache.read("k")
    error = assert_raises(Tersa::DecodeError) { coder.load(payload(cache, "k").force_encoding(Encoding::UTF_8)) }
    assert_equal :not_a_cache_entry, error.code
  end
end

class TestActiveSupportRedisCacheStore < Minitest::Test
  include ActiveSupportCoderCases

  SERVER = TestRedisServer.new
  Minitest.after_run { SERVER.stop }

  def setup
    @redis = Redis.new(host: "127.0.0.1", port: SERVER.port)
    @redis.flushdb
  end

  def teardown
    super
    @redis.close
  end

  # Errors must reach the test: the store's default handler would log and
  # return nil for a Redis error, hiding a broken connection as misses.
  def store(coder: self.coder, **options)
    ActiveSupport::Cache::RedisCacheStore.new(url: "redis://127.0.0.1:#{SERVER.port}/0", coder: coder,
                                              namespace: "t",
                                              error_handler: ->(exception:, **) { raise exception },
                                              **{ compress: false }.merge(options))
  end

  def payload(cache, name)
    @redis.get(cache.send(:normalize_key, name, {}))
  end

  def put_payload(cache, name, bytes)
    @redis.set(cache.send(:normalize_key, name, {}), bytes)
  end

  def test_redis_expires_the_key_too
    cache = store
    cache.write("k", VALUE, expires_in: 60)
    ttl = @redis.pttl(cache.send(:normalize_key, "k", {}))
    assert_operator ttl, :>, 50_000
    assert_operator ttl, :<=, 60_000
  end

  def test_read_multi_and_write_multi
    cache = store
    cache.write_multi({ "a" => [1], "b" => { "c" => :d } })
    assert_equal({ "a" => [1], "b" => { "c" => :d } }, cache.read_multi("a", "b", "z"))
  end
end
