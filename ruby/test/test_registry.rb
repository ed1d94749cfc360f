# frozen_string_literal: true

require_relative "helper"
require_relative "support/redis_server"
require "redis"

# Tersa::DictionaryRegistry against a real redis-server (Debian's ruby-redis as
# the client): publish by id, fetch on first use, clear errors for ids the
# store does not have.
class TestRegistry < Minitest::Test
  SERVER = TestRedisServer.new
  Minitest.after_run { SERVER.stop }

  # Counts the store's reads, to see what the cache saves.
  class CountingStore
    attr_reader :gets

    def initialize(redis)
      @redis = redis
      @gets = 0
    end

    def get(key)
      @gets += 1
      @redis.get(key)
    end

    def set(key, value) = @redis.set(key, value)
  end

  STOCK = Tersa::Dictionary.new(strings: %w[AAPL MSFT GOOG], shapes: [%w[symbol price volume], %w[0 1 2]])
  RECORD = { "symbol" => "MSFT", "price" => 411.22, "volume" => 1_234_567 }.freeze

  def setup
    @redis = Redis.new(host: "127.0.0.1", port: SERVER.port)
    @redis.flushdb
    @prefix = "test:#{name}:"
  end

  def teardown
    @redis.close
  end

  def consumer
    store = CountingStore.new(Redis.new(host: "127.0.0.1", port: SERVER.port))
    [Tersa::DictionaryRegistry.new(store, prefix: @prefix), store]
  end

  def test_consumer_fetches_an_unknown_id_once
    producer = Tersa::DictionaryRegistry.new(@redis, prefix: @prefix)
    assert_equal STOCK.id, producer.publish(STOCK)
    assert_equal STOCK.to_s, @redis.get(producer.key(STOCK.id)).b
    bytes = Tersa.dump(RECORD, dictionary: STOCK)

    reg, store = consumer
    refute reg.cached?(STOCK.id)
    3.times { assert_equal RECORD, reg.load(bytes) }
    assert_equal 1, store.gets
    assert reg.cached?(STOCK.id)
    assert_equal STOCK.id, reg.fetch(STOCK.id).id
  end

  def test_single_record_with_the_dictionary_fits_in_msgpack_int_keyed_size
    reg = Tersa::DictionaryRegistry.new(@redis, prefix: @prefix)
    reg.publish(STOCK)
    bytes = Tersa.dump({ "0" => "AAPL", "1" => 150.25, "2" => 1_234_567 }, dictionary: STOCK)
    assert_operator bytes.bytesize, :<=, 26
    assert_equal STOCK.id, Tersa::DictionaryRegistry.dictionary_id(bytes)
    assert_equal({ "0" => "AAPL", "1" => 150.25, "2" => 1_234_567 }, consumer.first.load(bytes))
  end

  def test_an_id_the_store_lacks_is_a_typed_error
    bytes = Tersa.dump(RECORD, dictionary: STOCK)
    reg, = consumer
    err = assert_raises(Tersa::UnknownDictionaryError) { reg.load(bytes) }
    assert_kind_of Tersa::DecodeError, err
    assert_equal :unknown_dictionary, err.code
    assert_equal 3, err.offset
    assert_equal STOCK.id, err.dictionary_id
    assert_equal "#{@prefix}#{format('%016x', STOCK.id)}", err.key
    assert_includes err.message, format("0x%016x", STOCK.id)
    refute reg.cached?(STOCK.id)
    # published later: the next attempt finds it (misses are not cached)
    Tersa::DictionaryRegistry.new(@redis, prefix: @prefix).publish(STOCK)
    assert_equal RECORD, reg.load(bytes)
  end

  def test_an_entry_that_is_not_that_dictionary_is_refused
    other = Tersa::Dictionary.new(strings: %w[TSLA], shapes: [%w[symbol price volume]])
    reg, = consumer
    @redis.set(reg.key(STOCK.id), other.to_s)
    err = assert_raises(Tersa::UnknownDictionaryError) { reg.fetch(STOCK.id) }
    assert_includes err.message, format("0x%016x", other.id)
    @redis.set(reg.key(STOCK.id), "not a dictionary")
    err = assert_raises(Tersa::UnknownDictionaryError) { reg.load(Tersa.dump(RECORD, dictionary: STOCK)) }
    assert_match(/not a serialized dictionary/, err.message)
    refute reg.cached?(STOCK.id)
  end

  def test_buffers_without_a_dictionary_never_touch_the_store
    reg, store = consumer
    assert_equal RECORD, reg.load(Tersa.dump(RECORD))
    assert_nil Tersa::DictionaryRegistry.dictionary_id(Tersa.dump(RECORD))
    assert_equal 0, store.gets
    # not Tersa at all: the decoder's own error, no lookup
    assert_raises(Tersa::DecodeError) { reg.load("{\"json\": 1}") }
    assert_raises(Tersa::DecodeError) { reg.load("\xC1\x70\x11\x01".b) } # DICT flag, id cut short
    assert_equal 0, store.gets
  end

  def test_streams_and_joined_streams
    Tersa::DictionaryRegistry.new(@redis, prefix: @prefix).publish(STOCK)
    records = Array.new(50) { |i| { "symbol" => %w[AAPL MSFT GOOG][i % 3], "price" => 100 + i / 4.0, "volume" => i * 1000 } }
    enc = Tersa::Encoder.new(dictionary: STOCK, sync_frames: 10)
    stream = records.map { |r| enc.write(r) }.join
    reg, store = consumer
    assert_equal records, reg.load_stream(stream)

    # A late subscriber: frames from the 13th on, no header; it joins at frame 20.
    head = 11 # magic, VF, id
    frames = []
    pos = head
    while pos < stream.bytesize
      len = stream.getbyte(pos) >> 1 # one-byte length prefixes: frames here are short
      frames << stream.byteslice(pos, 1 + len)
      pos += 1 + len
    end
    tail = frames[13..].join
    fresh, fresh_store = consumer
    assert_equal STOCK.id, Tersa::DictionaryRegistry.dictionary_id(tail, join: true)
    assert_equal records[20..], fresh.load_stream(tail, join: true)
    assert_equal 1, fresh_store.gets
    assert_nil Tersa::DictionaryRegistry.dictionary_id(frames[13..19].join, join: true)
    assert_equal 1, store.gets
  end

  def test_the_store_must_have_get_and_set
    assert_raises(ArgumentError) { Tersa::DictionaryRegistry.new(Object.new) }
  end
end
