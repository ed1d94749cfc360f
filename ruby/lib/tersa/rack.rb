# frozen_string_literal: true

require "json"
require "rack"
require "tersa"

module Tersa
  # Tersa over HTTP with Rack (tested with Rack 2.2 under WEBrick): request
  # bodies of the media type application/vnd.tersa are decoded into
  # env["tersa.body"], and values returned through Tersa::Rack.response are
  # encoded as Tersa, or as JSON for clients that accept only JSON when the
  # middleware is given json: true.
  #
  #   require "tersa/rack"
  #   use Tersa::Rack::Middleware, symbolize_keys: true
  #   run ->(env) { Tersa::Rack.response({ "echo" => env["tersa.body"] }) }
  #
  # Constants of ::Rack are written with the leading :: throughout: inside
  # module Tersa, Rack names this module.
  module Rack
    MEDIA_TYPE = "application/vnd.tersa"
    BODY = "tersa.body"
    STREAM = "tersa.stream"
    STREAM_FLAG = 0x02 # SPEC 2.1: the header's flags, in the third byte

    # A response whose body is a value, encoded once the client's Accept is
    # known: the middleware negotiates it; without the middleware it is Tersa.
    def self.response(value, status: 200, headers: {})
      headers = headers.reject { |k, _| %w[content-type content-length].include?(k.to_s.downcase) }
      [status, headers.merge("content-type" => MEDIA_TYPE), Body.new(value)]
    end

    # The decoded request body; nil when the request had no single-value
    # Tersa body (env.key?(BODY) tells that apart from a body that is nil).
    def self.body(env) = env[BODY]

    # The values of a stream request body, nil when it was not a stream.
    def self.stream(env) = env[STREAM]

    # A response body holding the value itself; #each writes it as Tersa.
    class Body
      attr_reader :value

      def initialize(value)
        @value = value
      end

      def each
        yield Tersa.dump(@value)
      end
    end

    # Decodes Tersa request bodies and encodes Tersa::Rack.response values.
    #
    # Requests: a body whose Content-Type is application/vnd.tersa (any
    # parameters) is read in full and decoded with the load options: a
    # single-value buffer into env["tersa.body"], a stream (SPEC 2.3) into
    # env["tersa.stream"] as the Array of its values; an empty body sets
    # neither. Malformed Tersa gets 400 with the decode error's code and
    # offset, a body over max_body bytes 413, a Content-Encoding other than
    # identity 415, and with tersa_only: true a body of any other media type
    # 415; the application is not called for these. Other requests pass
    # through untouched.
    #
    # Responses: a Tersa::Rack.response value is written in the client's
    # preferred type by Accept (q-values, wildcards, q=0 refuses): Tersa, or
    # JSON (JSON.generate) when json: true; Tersa when both rank equal or
    # Accept is absent, 406 when neither is acceptable. These responses say
    # Vary: Accept. Error bodies are maps {"error", "message", and for 400
    # "code" and "offset"}, in Tersa when the client accepts it, else JSON.
    #
    # Use it innermost (the last `use`): the value is found by the body's
    # class, so a middleware between it and the application that wraps
    # bodies hides it, and the response then goes out as Tersa, unnegotiated.
    class Middleware
      LOAD_OPTIONS = %i[symbolize_keys freeze max_depth dictionary dictionaries].freeze
      DUMP_OPTIONS = %i[default dictionary max_depth].freeze
      JSON_TYPE = "application/json"
      ERROR_TYPES = [MEDIA_TYPE, JSON_TYPE].freeze
      DEFAULT_MAX_BODY = 16 << 20

      def initialize(app, json: false, tersa_only: false, max_body: DEFAULT_MAX_BODY, dump: {}, **load_options)
        unknown = load_options.keys - LOAD_OPTIONS
        raise ArgumentError, "unknown load options: #{unknown.join(', ')}" unless unknown.empty?
        unknown = dump.keys - DUMP_OPTIONS
        raise ArgumentError, "unknown dump options: #{unknown.join(', ')}" unless unknown.empty?

        @app = app
        @tersa_only = tersa_only
        @max_body = max_body
        @dump_options = dump.dup.freeze
        @load_options = load_options.dup
        if @load_options.key?(:dictionary)
          @load_options[:dictionaries] = [*@load_options[:dictionaries], @load_options.delete(:dictionary)]
        end
        @load_options.freeze
        @offered = json ? [MEDIA_TYPE, JSON_TYPE] : [MEDIA_TYPE]
      end

      def call(env)
        refused = decode_request(env)
        return refused if refused

        status, headers, body = @app.call(env)
        return [status, headers, body] unless body.is_a?(Body)

        encode_response(env, status, headers, body.value)
      end

      private

      def decode_request(env)
        type = ::Rack::MediaType.type(env["CONTENT_TYPE"])
        if type != MEDIA_TYPE
          return nil unless @tersa_only && body?(env)

          return error(env, 415, "unsupported_media_type", "request bodies must be #{MEDIA_TYPE}, not #{type}")
        end

        encoding = env["HTTP_CONTENT_ENCODING"].to_s.strip.downcase
        unless encoding.empty? || encoding == "identity"
          return error(env, 415, "unsupported_encoding", "content encoding #{encoding} is not supported")
        end

        bytes = read_body(env)
        return error(env, 413, "body_too_large", "request body over #{@max_body} bytes", "limit" => @max_body) unless bytes
        # Servers differ on whether an empty body has a length (WEBrick gives
        # none), so an empty body is no body, whatever the Content-Type says.
        return nil if bytes.empty?

        if bytes.bytesize > 2 && bytes.getbyte(2).anybits?(STREAM_FLAG)
          env[STREAM] = Tersa.load_stream(bytes, **@load_options)
        else
          env[BODY] = Tersa.load(bytes, **@load_options)
        end
        nil
      rescue Tersa::DecodeError => e
        error(env, 400, "invalid_body", e.message, "code" => e.code.to_s, "offset" => e.offset)
      end

      def body?(env)
        env["CONTENT_LENGTH"].to_i.positive? || env.key?("HTTP_TRANSFER_ENCODING")
      end

      # The body, or nil when it is over max_body: read to one byte past the
      # limit, so that a missing or false Content-Length cannot make it read more.
      def read_body(env)
        return nil if env["CONTENT_LENGTH"].to_i > @max_body

        input = env["rack.input"]
        return "".b unless input

        bytes = input.read(@max_body + 1) || "".b
        input.rewind if input.respond_to?(:rewind)
        bytes.bytesize > @max_body ? nil : bytes.b
      end

      def encode_response(env, status, headers, value)
        type = negotiate(env["HTTP_ACCEPT"])
        unless type
          return error(env, 406, "not_acceptable", "this resource is available as #{@offered.join(' or ')}")
        end

        bytes = type == MEDIA_TYPE ? Tersa.dump(value, **@dump_options) : JSON.generate(value)
        vary = headers.find { |k, _| k.to_s.casecmp?("vary") }&.last
        headers = headers.reject { |k, _| %w[content-type content-length vary].include?(k.to_s.downcase) }
        finish(env, status, headers.merge("vary" => [vary, "Accept"].compact.join(", ")), type, bytes)
      end

      # A HEAD response has the length GET's would have and no body.
      def finish(env, status, headers, type, bytes)
        headers = headers.merge("content-type" => type, "content-length" => bytes.bytesize.to_s)
        [status, headers, env["REQUEST_METHOD"] == "HEAD" ? [] : [bytes]]
      end

      # The offered type of highest quality; on a tie the one offered first.
      # A type's quality is that of the most specific range that matches it.
      def negotiate(accept, offered = @offered)
        return offered.first if accept.nil? || accept.strip.empty?

        ranges = ::Rack::Utils.q_values(accept)
        best = nil
        offered.each do |type|
          q = quality(ranges, type)
          best = [type, q] if q.positive? && (best.nil? || q > best[1])
        end
        best&.first
      end

      def quality(ranges, type)
        major = type.split("/").first
        match = ranges.map { |range, q| [specificity(range.downcase, type, major), q] }.select { |s, _| s }.max_by(&:first)
        match ? match[1] : 0.0
      end

      def specificity(range, type, major)
        return 2 if range == type
        return 1 if range == "#{major}/*"

        0 if range == "*/*"
      end

      def error(env, status, name, message, extra = {})
        body = { "error" => name, "message" => message }.merge(extra)
        type = negotiate(env["HTTP_ACCEPT"], ERROR_TYPES) || JSON_TYPE
        bytes = type == MEDIA_TYPE ? Tersa.dump(body) : JSON.generate(body)
        finish(env, status, { "vary" => "Accept" }, type, bytes)
      end
    end
  end
end
