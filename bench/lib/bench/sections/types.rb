# frozen_string_literal: true

require_relative "../util"
require_relative "../exact"
require_relative "../measure"

module Bench
  # The application class of the "custom" row: what each codec's extension hook carries.
  class Money
    attr_reader :cents, :currency

    def initialize(cents, currency)
      @cents = cents
      @currency = currency
    end

    def ==(other) = other.class == self.class && other.cents == cents && other.currency == currency
    alias eql? ==
    def hash = [cents, currency].hash
    def inspect = "#<Money #{cents} #{currency}>"

    # json's hook (json/add protocol: JSON.create_id + json_create, parsed with create_additions: true)
    def to_json(*args) = { JSON.create_id => self.class.name, "c" => cents, "u" => currency }.to_json(*args)
    def self.json_create(h) = new(h["c"], h["u"])

    # The ext payload msgpack and Pith carry: int64 cents + currency text.
    def self.pack(m) = [m.cents].pack("q<") + m.currency.b
    def self.unpack(s) = new(s.unpack1("q<"), s.byteslice(8, s.bytesize - 8).force_encoding(Encoding::UTF_8))

    CBOR_TAG = 40_000 # an unassigned CBOR tag

    # cbor's hook: an object answering to_cbor; decoding gives CBOR::Tagged back
    def to_cbor(*args) = CBOR::Tagged.new(CBOR_TAG, [cents, currency]).to_cbor(*args)
  end

  module Sections
    # 2. Per-type round trips: encode + decode of one value of each type, per
    # second, through each codec's own mechanism for the type (none = n/a).
    class Types
      EXT_ID = 1

      def self.values
        {
          "Hash" => { "id" => 48_213, "name" => "Ada Lovelace", "email" => "ada@example.com", "active" => true,
                      "score" => 98.25, "roles" => %w[admin editor], "created_at" => "2024-03-01T09:30:00Z",
                      "address" => { "city" => "Zürich", "zip" => "8001" } },
          "String" => "Grüße aus Zürich – naïve café, 東京 and plain ASCII text: 64+ bytes".encode(Encoding::UTF_8),
          "Float" => 0.1 + 0.2,
          "Time" => Time.at(1_700_000_000, 123_456_789, :nsec, in: "+05:30"),
          "custom" => Money.new(1999, "EUR")
        }
      end

      def initialize(ctx, codecs)
        @ctx = ctx
        @codecs = codecs
        @p = ctx.params
      end

      def run
        values = self.class.values
        res = { "types" => values.keys, "codecs" => @codecs.map(&:name), "rows" => {}, "how" => {},
                "params" => { "slice_s" => @p[:type_slice], "rounds" => @p[:type_rounds] },
                "values" => values.transform_values(&:inspect) }
        jobs = []
        @codecs.each do |c|
          row = res["rows"][c.name] = {}
          values.each do |type, v|
            c.prepare(v)
            enc_dec, how = adapter(c, type, v)
            unless enc_dec
              row[type] = { "supported" => false, "how" => how }
              next
            end
            enc, dec = enc_dec
            r = row[type] = { "supported" => true, "how" => how, "rounds" => [] }
            begin
              s = enc.call(v)
              back = dec.call(s)
              d = Exact.diff(v, back)
              r.merge!("bytes" => s.bytesize, "exact" => d.nil?)
              r["diff"] = d if d
              jobs << [r, -> { dec.call(enc.call(v)) }]
            rescue StandardError, NotImplementedError => e
              r.merge!("exact" => false, "error" => "#{e.class}: #{e.message.lines.first&.strip}")
            end
          end
        end
        total = @p[:type_rounds]
        (0..total).each do |round|
          @ctx.progress("types", round.zero? ? "warm-up" : "round #{round}/#{total}")
          jobs.shuffle(random: Random.new(round + 11)).each do |r, pr|
            rate = Measure.rate(@p[:type_slice]) { pr.call }
            r["rounds"] << rate unless round.zero?
          end
        end
        jobs.each { |r, _| r["per_s"] = Util.median(r["rounds"]) }
        @ctx.progress("types", "#{jobs.size} round trips timed, #{total} rounds", done: true)
        res
      end

      private

      # [[encode, decode], how] or [nil, why not]
      def adapter(c, type, v)
        send("adapt_#{c.name}", c, type, v)
      end

      def plain(c) = [[c.method(:encode), c.method(:decode)], "native"]

      def adapt_pith(c, type, _v)
        case type
        when "custom"
          return [nil, "Pith.register_type missing"] unless ::Pith.respond_to?(:register_type)
          @pith_ext ||= begin
            ::Pith.register_type(EXT_ID, Money, packer: Money.method(:pack), unpacker: Money.method(:unpack))
            [::Pith::Encoder.new, ::Pith::Decoder.new]
          end
          e, d = @pith_ext
          [[e.method(:encode), d.method(:decode)], "Pith.register_type(#{EXT_ID}, Money, packer:, unpacker:)"]
        else plain(c)
        end
      end

      def adapt_json(c, type, _v)
        case type
        when "Time"
          require "json/add/time"
          [[->(t) { JSON.generate(t) }, ->(s) { JSON.parse(s, create_additions: true) }],
           "json/add/time + create_additions: true"]
        when "custom"
          [[->(m) { JSON.generate(m) }, ->(s) { JSON.parse(s, create_additions: true) }],
           "#to_json + .json_create, create_additions: true"]
        else plain(c)
        end
      end

      OJ_OBJECT = { mode: :object, time_format: :unix_zone }.freeze

      def adapt_oj(c, type, _v)
        case type
        when "Time", "custom"
          [[->(x) { ::Oj.dump(x, OJ_OBJECT) }, ->(s) { ::Oj.load(s, OJ_OBJECT) }], "mode: :object, time_format: :unix_zone"]
        else plain(c)
        end
      end

      def adapt_msgpack(c, type, _v)
        case type
        when "Time", "custom"
          @mp ||= begin
            f = MessagePack::Factory.new
            f.register_type(-1, Time, packer: MessagePack::Time::Packer, unpacker: MessagePack::Time::Unpacker)
            f.register_type(EXT_ID, Money, packer: Money.method(:pack), unpacker: Money.method(:unpack))
            [f.packer, f.unpacker]
          end
          pk, up = @mp
          how = type == "Time" ? "Factory#register_type(-1, Time, MessagePack::Time) (timestamp ext)" : "Factory#register_type(#{EXT_ID}, Money, packer:, unpacker:)"
          [[->(x) { pk.write(x).full_pack }, ->(s) { up.feed_reference(s).full_unpack }], how]
        else plain(c)
        end
      end

      def adapt_cbor(c, type, _v)
        case type
        when "Time" then [[c.method(:encode), c.method(:decode)], "native (tag 1, epoch)"]
        when "custom"
          [[c.method(:encode), ->(s) { t = c.decode(s); Money.new(*t.value) if t.is_a?(CBOR::Tagged) && t.tag == Money::CBOR_TAG }],
           "#to_cbor → CBOR::Tagged(#{Money::CBOR_TAG}), converted back by the caller"]
        else plain(c)
        end
      end

      def adapt_marshal(c, _type, _v) = plain(c)

      def adapt_bson(c, type, _v)
        type == "Hash" ? plain(c) : [nil, "the top level of a BSON document must be a document"]
      end

      def adapt_yajl(c, type, _v)
        %w[Time custom].include?(type) ? [nil, "no extension hook"] : plain(c)
      end
    end
  end
end
