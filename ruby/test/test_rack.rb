# frozen_string_literal: true

require_relative "helper"
require "tersa/rack"
require "rack/handler/webrick"
require "rack/lint"
require "net/http"
require "stringio"
require "zlib"

# Tersa::Rack::Middleware through a real HTTP server: Rack 2.2 under WEBrick
# on 127.0.0.1 and a free port, with Net::HTTP as the client; Rack::Lint
# checks what the middleware gives the server.
class TestRack < Minitest::Test
  # The application the tests talk to: echoes the decoded body back with what
  # it saw, and answers plain Rack responses where the path says so.
  APP = lambda do |env|
    case env["PATH_INFO"]
    when "/echo"
      Tersa::Rack.response({ "got" => Tersa::Rack.body(env), "has_body" => env.key?(Tersa::Rack::BODY),
                             "stream" => Tersa::Rack.stream(env), "method" => env["REQUEST_METHOD"] },
                           status: 201, headers: { "x-app" => "1", "Vary" => "Origin" })
    when "/fixed"
      Tersa::Rack.response({ "items" => [1, 2, 3] })
    when "/plain"
      body = env["rack.input"].read
      [200, { "content-type" => "text/plain" }, ["plain #{body.bytesize} #{env.key?(Tersa::Rack::BODY)}"]]
    else
      [404, { "content-type" => "text/plain" }, ["no route"]]
    end
  end

  # One server per configuration, each on its own port, stopped after the run.
  def self.server(**options)
    @servers ||= {}
    @servers[options] ||= begin
      app = Rack::Lint.new(Tersa::Rack::Middleware.new(APP, **options))
      http = WEBrick::HTTPServer.new(BindAddress: "127.0.0.1", Port: 0, Logger: WEBrick::Log.new(File::NULL),
                                     AccessLog: [])
      http.mount("/", Rack::Handler::WEBrick, app)
      thread = Thread.new { http.start }
      Minitest.after_run do
        http.shutdown
        thread.join
      end
      http.listeners.first.addr[1]
    end
  end

  def post(path, body, type: Tersa::Rack::MEDIA_TYPE, accept: nil, port: self.class.server)
    Net::HTTP.start("127.0.0.1", port) do |h|
      req = Net::HTTP::Post.new(path)
      req["content-type"] = type if type
      req["accept"] = accept if accept
      req.body = body
      h.request(req)
    end
  end

  def get(path, accept: nil, port: self.class.server)
    Net::HTTP.start("127.0.0.1", port) do |h|
      req = Net::HTTP::Get.new(path)
      req["accept"] = accept if accept
      h.request(req)
    end
  end

  VALUE = { "id" => 7, "tags" => %i[a b], "at" => Time.utc(2025, 3, 1, 12), "blob" => "\x00\xFF".b, "n" => 2**70 }.freeze

  def test_decodes_the_request_and_encodes_the_response
    res = post("/echo", Tersa.dump(VALUE))
    assert_equal "201", res.code
    assert_equal Tersa::Rack::MEDIA_TYPE, res["content-type"]
    assert_equal "1", res["x-app"]
    assert_equal "Origin, Accept", res["vary"]
    assert_equal res.body.bytesize, Integer(res["content-length"])
    got = Tersa.load(res.body)
    assert_equal "POST", got["method"]
    assert TersaTestHelper.exact?(VALUE, got["got"])
  end

  def test_head_has_the_length_of_get_and_no_body
    get = get("/fixed")
    assert_equal Tersa.dump({ "items" => [1, 2, 3] }), get.body
    res = Net::HTTP.start("127.0.0.1", self.class.server) { |h| h.request(Net::HTTP::Head.new("/fixed")) }
    assert_equal ["200", Tersa::Rack::MEDIA_TYPE, get["content-length"]], [res.code, res["content-type"], res["content-length"]]
    assert_nil res.body
  end

  def test_stream_body
    enc = Tersa::Encoder.new
    values = [{ "i" => 1 }, { "i" => 2 }, "three"]
    stream = values.map { |v| enc.write(v) }.join
    got = Tersa.load(post("/echo", stream).body)
    assert_equal [values, nil, false], got.values_at("stream", "got", "has_body")
    cut = stream.byteslice(0, stream.bytesize - 1)
    expected = assert_raises(Tersa::DecodeError) { Tersa.load_stream(cut) }
    res = post("/echo", cut)
    assert_equal ["400", expected.code.to_s, expected.offset], [res.code, *Tersa.load(res.body).values_at("code", "offset")]
  end

  def test_content_encoding_is_415
    res = Net::HTTP.start("127.0.0.1", self.class.server) do |h|
      req = Net::HTTP::Post.new("/echo")
      req["content-type"] = Tersa::Rack::MEDIA_TYPE
      req["content-encoding"] = "gzip"
      req.body = Zlib.gzip(Tersa.dump(1))
      h.request(req)
    end
    assert_equal ["415", "unsupported_encoding"], [res.code, Tersa.load(res.body)["error"]]
  end

  def test_media_type_parameters_and_case
    res = post("/echo", Tersa.dump([1, "x"]), type: "Application/VND.Tersa; charset=binary")
    assert_equal [1, "x"], Tersa.load(res.body)["got"]
  end

  def test_bad_body_is_400_with_code_and_offset
    bytes = Tersa.dump({ "a" => "text" })
    cut = bytes.byteslice(0, bytes.bytesize - 2)
    expected = assert_raises(Tersa::DecodeError) { Tersa.load(cut) }
    res = post("/echo", cut)
    assert_equal "400", res.code
    assert_equal Tersa::Rack::MEDIA_TYPE, res["content-type"]
    err = Tersa.load(res.body)
    assert_equal "invalid_body", err["error"]
    assert_equal [expected.code.to_s, expected.offset], [err["code"], err["offset"]]

    json = "{\"json\": 1}"
    expected = assert_raises(Tersa::DecodeError) { Tersa.load(json) }
    res = post("/echo", json, accept: "application/json")
    assert_equal ["400", "application/json"], [res.code, res["content-type"]]
    err = JSON.parse(res.body)
    assert_equal [expected.code.to_s, expected.offset], [err["code"], err["offset"]]
  end

  def test_empty_body_is_no_body
    res = post("/echo", "")
    assert_equal "201", res.code
    assert_equal [nil, false], Tersa.load(res.body).values_at("got", "has_body")
    assert_equal [nil, true], Tersa.load(post("/echo", Tersa.dump(nil)).body).values_at("got", "has_body")
  end

  def test_other_media_types_pass_through
    res = post("/plain", "hello", type: "text/plain")
    assert_equal ["200", "plain 5 false"], [res.code, res.body]
    res = post("/echo", "hello", type: "text/plain")
    assert_nil Tersa.load(res.body)["got"]
  end

  def test_tersa_only_refuses_other_bodies_with_415
    port = self.class.server(tersa_only: true)
    res = post("/plain", "{}", type: "application/json", port: port)
    assert_equal "415", res.code
    assert_equal "unsupported_media_type", Tersa.load(res.body)["error"]
    assert_equal "200", get("/plain", port: port).code, "a request without a body is not refused"
    assert_equal "201", post("/echo", Tersa.dump(1), port: port).code
  end

  def test_body_over_max_body_is_413
    port = self.class.server(max_body: 64)
    assert_equal "201", post("/echo", Tersa.dump("x" * 40), port: port).code
    res = post("/echo", Tersa.dump("x" * 100), port: port)
    assert_equal "413", res.code
    assert_equal ["body_too_large", 64], Tersa.load(res.body).values_at("error", "limit")
  end

  def test_chunked_bodies_without_length
    [[self.class.server, Tersa.dump("x" * 40), "201"], [self.class.server(max_body: 64), Tersa.dump("x" * 100), "413"]].each do |port, bytes, code|
      res = Net::HTTP.start("127.0.0.1", port) do |h|
        req = Net::HTTP::Post.new("/echo")
        req["content-type"] = Tersa::Rack::MEDIA_TYPE
        req["transfer-encoding"] = "chunked"
        req.body_stream = StringIO.new(bytes)
        h.request(req)
      end
      assert_equal code, res.code
      assert_equal(code == "201" ? "x" * 40 : "body_too_large", Tersa.load(res.body)[code == "201" ? "got" : "error"])
    end
  end

  def test_negotiation_without_json
    assert_equal Tersa::Rack::MEDIA_TYPE, get("/echo", accept: "*/*")["content-type"]
    assert_equal Tersa::Rack::MEDIA_TYPE, get("/echo", accept: "application/*;q=0.5")["content-type"]
    res = get("/echo", accept: "application/json")
    assert_equal "406", res.code
    assert_equal "not_acceptable", JSON.parse(res.body)["error"]
    assert_equal "406", get("/echo", accept: "application/vnd.tersa;q=0, */*").code
  end

  def test_negotiation_with_json
    port = self.class.server(json: true)
    tersa = Tersa::Rack::MEDIA_TYPE
    cases = {
      nil => tersa,
      "*/*" => tersa,
      "application/json" => "application/json",
      "application/json, application/vnd.tersa" => tersa,
      "application/json;q=0.9, application/vnd.tersa;q=0.8" => "application/json",
      "application/vnd.tersa;q=0, */*;q=0.1" => "application/json",
      "text/html, application/*;q=0.2" => tersa
    }
    cases.each do |accept, type|
      res = get("/echo", accept: accept, port: port)
      assert_equal ["201", type], [res.code, res["content-type"]], "Accept: #{accept.inspect}"
      got = type == tersa ? Tersa.load(res.body) : JSON.parse(res.body)
      assert_equal "GET", got["method"]
    end
    assert_equal "406", get("/echo", accept: "text/html", port: port).code
  end

  def test_response_without_the_middleware_is_tersa
    status, headers, body = Tersa::Rack.response([1, 2], headers: { "Content-Type" => "text/plain" })
    assert_equal [200, { "content-type" => Tersa::Rack::MEDIA_TYPE }], [status, headers]
    bytes = +""
    body.each { |chunk| bytes << chunk }
    assert_equal [1, 2], Tersa.load(bytes)
  end

  def test_options_are_checked
    assert_raises(ArgumentError) { Tersa::Rack::Middleware.new(APP, bogus: 1) }
    assert_raises(ArgumentError) { Tersa::Rack::Middleware.new(APP, dump: { symbolize_keys: true }) }
  end

  def test_load_options_reach_the_decoder
    port = self.class.server(symbolize_keys: true)
    res = post("/echo", Tersa.dump({ "k" => 1 }), port: port)
    assert_equal({ k: 1 }, Tersa.load(res.body)["got"])
  end
end
