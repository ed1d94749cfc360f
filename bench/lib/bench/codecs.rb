# frozen_string_literal: true
#
# The codecs under test, each behind the same two calls (encode(obj) -> String,
# decode(String) -> obj), each used the way its documentation recommends for
# repeated calls (reused packers, parsers and option hashes), so that the
# comparison is fair to every peer. Peers are loaded optionally: a codec whose
# library is missing is reported as unavailable, never silently dropped.

module Bench
  class Codec
    attr_reader :name, :api, :package

    def initialize(name, api:, package:)
      @name = name
      @api = api         # how it is called, for the report
      @package = package # the Debian package it comes from
    end

    def version = "?"
    def prepare(_doc) = nil # called once per document before it is measured
    def label = name
  end

  module Codecs
    class Json < Codec
      def initialize
        require "json"
        super("json", api: "JSON.generate / JSON.parse", package: "ruby-json")
      end
      def version = JSON::VERSION
      def encode(obj) = JSON.generate(obj)
      def decode(str) = JSON.parse(str)
    end

    class Oj < Codec
      OPTS = { mode: :compat }.freeze

      def initialize
        require "oj"
        super("oj", api: "Oj.dump / Oj.load, mode: :compat (one frozen options hash)", package: "ruby-oj")
      end
      def version = ::Oj::VERSION
      def encode(obj) = ::Oj.dump(obj, OPTS)
      def decode(str) = ::Oj.load(str, OPTS)
    end

    class Msgpack < Codec
      def initialize
        require "msgpack"
        super("msgpack", api: "one Factory#packer (write + full_pack) and #unpacker (feed_reference + full_unpack), reused",
                         package: "ruby-msgpack")
        @factory = MessagePack::Factory.new
        @packer = @factory.packer
        @unpacker = @factory.unpacker
      end
      attr_reader :factory
      def version = MessagePack::VERSION
      def encode(obj) = @packer.write(obj).full_pack
      def decode(str) = @unpacker.feed_reference(str).full_unpack
    end

    class Cbor < Codec
      def initialize
        require "cbor"
        super("cbor", api: "one CBOR::Packer (write + to_s + clear) and CBOR::Unpacker (feed + read + reset), reused",
                      package: "ruby-cbor")
        @packer = CBOR::Packer.new
        @unpacker = CBOR::Unpacker.new
      end
      def version = CBOR::VERSION

      def encode(obj)
        s = @packer.write(obj).to_s
        @packer.clear
        s
      end

      def decode(str)
        @unpacker.feed(str)
        v = @unpacker.read
        @unpacker.reset
        v
      end
    end

    class Tersa < Codec
      def initialize
        require "tersa"
        super("tersa", api: "one Tersa::Encoder#encode and Tersa::Decoder#decode, reused", package: "ruby/ (this repository)")
        @encoder = ::Tersa::Encoder.new
        @decoder = ::Tersa::Decoder.new
      end
      def version = defined?(::Tersa::VERSION) ? ::Tersa::VERSION : "?"
      def encode(obj) = @encoder.encode(obj)
      def decode(str) = @decoder.decode(str)
    end

    class Marshal < Codec
      def initialize
        super("marshal", api: "Marshal.dump / Marshal.load", package: "ruby (core)")
      end
      def version = "#{::Marshal::MAJOR_VERSION}.#{::Marshal::MINOR_VERSION} (Ruby #{RUBY_VERSION})"
      def encode(obj) = ::Marshal.dump(obj)
      def decode(str) = ::Marshal.load(str)
    end

    class Bson < Codec
      def initialize
        require "bson"
        super("bson", api: "obj.to_bson.to_s / Hash.from_bson (Array.from_bson for a top-level array)", package: "ruby-bson")
        @top = ::Hash
      end
      def version = BSON::VERSION

      # BSON's top level is a document; bson-ruby writes a top-level Array as an
      # array document (keys "0", "1", ...), which only Array.from_bson reads back
      # as an Array, so the decoder is told what the top level was.
      def prepare(doc)
        @top = doc.is_a?(::Array) ? ::Array : ::Hash
      end

      def encode(obj) = obj.to_bson.to_s
      def decode(str) = @top.from_bson(BSON::ByteBuffer.new(str))
    end

    class Yajl < Codec
      def initialize
        require "yajl"
        super("yajl", api: "one Yajl::Encoder#encode, reused / Yajl::Parser.parse", package: "ruby-yajl")
        @encoder = ::Yajl::Encoder.new
      end

      def version
        Gem.loaded_specs["yajl-ruby"]&.version&.to_s || Bench::Machine.dpkg_version("ruby-yajl") || "?"
      end

      def encode(obj) = @encoder.encode(obj)
      def decode(str) = ::Yajl::Parser.parse(str)
    end

    # YAML through Psych (Ruby's standard library). Only in the per-type
    # section: at tens of microseconds per small value it would dominate the
    # document sections' run time. Psych 4's load is safe_load: Time and
    # application classes are permitted per call (the per-type adapters).
    class Yaml < Codec
      def initialize
        require "yaml"
        super("yaml", api: "YAML.dump / YAML.load (Psych; safe load, classes permitted per type)", package: "ruby (Psych, stdlib)")
      end
      def version = "Psych #{::Psych::VERSION}"
      def encode(obj) = ::YAML.dump(obj)
      def decode(str) = ::YAML.load(str)
    end

    # The floor for decoding: a native deep copy (new Hash/Array/String for every
    # node) of the decoded value, i.e. the cost of creating the objects at all.
    class Floor
      def initialize
        require "tersa"
        raise LoadError, "Tersa::Native.deep_copy is missing" unless defined?(::Tersa::Native) && ::Tersa::Native.respond_to?(:deep_copy)
      end
      def name = "floor"
      def copy(obj) = ::Tersa::Native.deep_copy(obj)
    end

    # Order of the rows in every table: Tersa first, then the seed benchmark's peers.
    ORDER = %w[tersa json oj msgpack cbor marshal bson yajl].freeze
    # Codecs of the per-type section alone (ONLY/EXCEPT name them too).
    TYPES_ONLY = %w[yaml].freeze
    CLASSES = {
      "tersa" => Tersa, "json" => Json, "oj" => Oj, "msgpack" => Msgpack, "cbor" => Cbor,
      "marshal" => Marshal, "bson" => Bson, "yajl" => Yajl, "yaml" => Yaml
    }.freeze

    # Returns [available codecs (in ORDER), {name => reason} for the unavailable].
    def self.load(names)
      ok = []
      missing = {}
      names.each do |n|
        ok << CLASSES.fetch(n).new
      rescue LoadError, StandardError => e
        missing[n] = "#{e.class}: #{e.message.lines.first&.strip}"
      end
      [ok, missing]
    end
  end
end
