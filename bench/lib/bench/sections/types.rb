# frozen_string_literal: true

require_relative "../util"
require_relative "../exact"
require_relative "../measure"
require "bigdecimal"
require "date"

module Bench
  # The application class of the "custom" row, as an application has it: no
  # method for any codec. A codec handles it through a registration or by
  # reflection, or not at all (json's create_additions and cbor's #to_cbor
  # need methods defined in the class).
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
  end

  # The ext payload msgpack and Tersa carry for a Money: int64 cents + currency
  # text, packed and unpacked outside the class.
  module MoneyExt
    module_function

    def pack(m) = [m.cents].pack("q<") + m.currency.b
    def unpack(s) = Money.new(s.unpack1("q<"), s.byteslice(8, s.bytesize - 8).force_encoding(Encoding::UTF_8))
  end

  # msgpack has no standard form for these: an application registers ext
  # types of its own (the decimal's text, the Julian day number).
  module WellKnownExt
    module_function

    def pack_decimal(d) = d.to_s
    def unpack_decimal(s) = BigDecimal(s)
    def pack_date(d) = [d.jd].pack("l<")
    def unpack_date(s) = Date.jd(s.unpack1("l<"))
  end

  module Sections
    # 2. Per-type round trips: encode + decode of one value of each type, per
    # second, and the objects each direction allocates, through each codec's
    # own mechanism for the type (none = n/a). YAML (Codecs::TYPES_ONLY) is
    # measured here only.
    class Types
      EXT_ID = 1
      DECIMAL_EXT_ID = 2
      DATE_EXT_ID = 3

      def self.values
        {
          "Hash" => { "id" => 48_213, "name" => "Ada Lovelace", "email" => "ada@example.com", "active" => true,
                      "score" => 98.25, "roles" => %w[admin editor], "created_at" => "2024-03-01T09:30:00Z",
                      "address" => { "city" => "Zürich", "zip" => "8001" } },
          "String" => "Grüße aus Zürich – naïve café, 東京 and plain ASCII text: 64+ bytes".encode(Encoding::UTF_8),
          "Float" => 0.1 + 0.2,
          "Time" => Time.at(1_700_000_000, 123_456_789, :nsec, in: "+05:30"),
          "BigDecimal" => BigDecimal("-12345678901234567890.0123456789012345678901"),
          "Date" => Date.new(2024, 2, 29),
          "custom" => Money.new(1999, "EUR")
        }
      end

      def initialize(ctx, codecs)
        @ctx = ctx
        extra, @unavailable = Codecs.load(ctx.types_only_codecs)
        @codecs = codecs + extra
        @p = ctx.params
      end

      def run
        values = self.class.values
        res = { "types" => values.keys, "codecs" => @codecs.map(&:name), "rows" => {}, "how" => {},
                "params" => { "slice_s" => @p[:type_slice], "rounds" => @p[:type_rounds] },
                "values" => values.transform_values(&:inspect), "unavailable" => @unavailable,
                "libraries" => @codecs.to_h { |c| [c.name, c.version] }, "mem_ops" => @p[:mem_ops] }
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
              allocations(r, enc, dec, v, s)
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

      # Objects and bytes (Measure.allocations) per encode and per decode.
      def allocations(r, enc, dec, v, s)
        n = @p[:mem_ops]
        eo, eb = Measure.allocations(n) { enc.call(v) }
        d_o, db = Measure.allocations(n) { dec.call(s) }
        r.merge!("enc_objects" => (eo.to_f / n).round(1), "enc_alloc_bytes" => (eb.to_f / n).round,
                 "dec_objects" => (d_o.to_f / n).round(1), "dec_alloc_bytes" => (db.to_f / n).round)
      end

      # [[encode, decode], how] or [nil, why not]
      def adapter(c, type, v)
        send("adapt_#{c.name}", c, type, v)
      end

      def plain(c) = [[c.method(:encode), c.method(:decode)], "native"]

      def adapt_tersa(c, type, _v)
        case type
        when "custom"
          return [nil, "Tersa.register_type missing"] unless ::Tersa.respond_to?(:register_type)
          @tersa_ext ||= begin
            ::Tersa.register_type(EXT_ID, Money, packer: MoneyExt.method(:pack), unpacker: MoneyExt.method(:unpack))
            [::Tersa::Encoder.new, ::Tersa::Decoder.new]
          end
          e, d = @tersa_ext
          [[e.method(:encode), d.method(:decode)], "Tersa.register_type(#{EXT_ID}, Money, packer:, unpacker:)"]
        when "BigDecimal", "Date"
          [[c.method(:encode), c.method(:decode)], "native (a well-known type, SPEC 5.8)"]
        else plain(c)
        end
      end

      def adapt_json(c, type, _v)
        case type
        when "Time", "BigDecimal", "Date"
          addition = { "Time" => "time", "BigDecimal" => "bigdecimal", "Date" => "date" }.fetch(type)
          require "json/add/#{addition}"
          [[->(t) { JSON.generate(t) }, ->(s) { JSON.parse(s, create_additions: true) }],
           "json/add/#{addition} + create_additions: true"]
        when "custom" then [nil, "needs #to_json and .json_create defined in the class (json/add protocol)"]
        else plain(c)
        end
      end

      OJ_OBJECT = { mode: :object, time_format: :unix_zone }.freeze

      def adapt_oj(c, type, _v)
        case type
        when "Time", "BigDecimal", "Date", "custom"
          [[->(x) { ::Oj.dump(x, OJ_OBJECT) }, ->(s) { ::Oj.load(s, OJ_OBJECT) }],
           "mode: :object, time_format: :unix_zone#{type == 'custom' ? ' (instance variables, by reflection)' : ''}"]
        else plain(c)
        end
      end

      def adapt_msgpack(c, type, _v)
        case type
        when "Time", "BigDecimal", "Date", "custom"
          @mp ||= begin
            f = MessagePack::Factory.new
            f.register_type(-1, Time, packer: MessagePack::Time::Packer, unpacker: MessagePack::Time::Unpacker)
            f.register_type(EXT_ID, Money, packer: MoneyExt.method(:pack), unpacker: MoneyExt.method(:unpack))
            f.register_type(DECIMAL_EXT_ID, BigDecimal, packer: WellKnownExt.method(:pack_decimal),
                                                        unpacker: WellKnownExt.method(:unpack_decimal))
            f.register_type(DATE_EXT_ID, Date, packer: WellKnownExt.method(:pack_date),
                                               unpacker: WellKnownExt.method(:unpack_date))
            [f.packer, f.unpacker]
          end
          pk, up = @mp
          how = {
            "Time" => "Factory#register_type(-1, Time, MessagePack::Time) (timestamp ext)",
            "BigDecimal" => "Factory#register_type(#{DECIMAL_EXT_ID}, BigDecimal) with the decimal's text",
            "Date" => "Factory#register_type(#{DATE_EXT_ID}, Date) with the Julian day number"
          }.fetch(type, "Factory#register_type(#{EXT_ID}, Money, packer:, unpacker:)")
          [[->(x) { pk.write(x).full_pack }, ->(s) { up.feed_reference(s).full_unpack }], how]
        else plain(c)
        end
      end

      def adapt_cbor(c, type, _v)
        case type
        when "Time" then [[c.method(:encode), c.method(:decode)], "native (tag 1, epoch)"]
        when "BigDecimal", "Date" then [nil, "no #{type} support and no registry (cbor-ruby)"]
        when "custom" then [nil, "needs #to_cbor defined in the class (no registry); decoding gives CBOR::Tagged"]
        else plain(c)
        end
      end

      def adapt_marshal(c, _type, _v) = plain(c)

      def adapt_bson(c, type, _v)
        type == "Hash" ? plain(c) : [nil, "the top level of a BSON document must be a document"]
      end

      # Psych 4's YAML.load refuses other classes than JSON's unless permitted.
      def adapt_yaml(c, type, _v)
        case type
        when "Time", "BigDecimal", "Date", "custom"
          allowed = [{ "Time" => Time, "BigDecimal" => BigDecimal, "Date" => Date }.fetch(type, Money)].freeze
          [[c.method(:encode), ->(s) { ::YAML.load(s, permitted_classes: allowed) }],
           "YAML.load(permitted_classes: [#{allowed.first.name.split('::').last}])#{type == 'custom' ? ' (instance variables, by reflection)' : ''}"]
        else plain(c)
        end
      end

      def adapt_yajl(c, type, _v)
        %w[Time BigDecimal Date custom].include?(type) ? [nil, "no extension hook"] : plain(c)
      end
    end
  end
end
