# frozen_string_literal: true

module Tersa
  # A UUID (SPEC 5.8, extension type 0xFF02): 16 bytes in RFC 9562 order.
  # Strings stay strings: only a Tersa::UUID encodes as a uuid.
  #
  #   id = Tersa::UUID.parse("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
  #   Tersa.load(Tersa.dump(id)) == id   # => true
  class UUID
    TEXT = /\A\h{8}-\h{4}-\h{4}-\h{4}-\h{12}\z/

    # The 16 bytes (a frozen binary String).
    attr_reader :bytes

    def initialize(bytes)
      raise TypeError, "expected a String of 16 bytes, got #{bytes.class}" unless bytes.is_a?(String)
      raise ArgumentError, "a UUID is 16 bytes, not #{bytes.bytesize}" unless bytes.bytesize == 16

      @bytes = bytes.b.freeze
      freeze
    end

    # From the text form (32 hex digits in groups of 8-4-4-4-12, either case).
    def self.parse(text)
      raise ArgumentError, "not a UUID: #{text.inspect}" unless text.is_a?(String) && TEXT.match?(text)

      new([text.delete("-")].pack("H*"))
    end

    # The text form, lowercase: "f81d4fae-7dec-11d0-a765-00a0c91e6bf6".
    def to_s
      h = @bytes.unpack1("H*")
      "#{h[0, 8]}-#{h[8, 4]}-#{h[12, 4]}-#{h[16, 4]}-#{h[20, 12]}"
    end

    def inspect = "#<Tersa::UUID #{self}>"

    def ==(other) = other.is_a?(UUID) && other.bytes == @bytes
    alias eql? ==

    def hash = [UUID, @bytes].hash
  end

  # A time of day without a date or zone (SPEC 5.8, extension type 0xFF03),
  # to the microsecond: hour 0..23, min 0..59, sec 0..59, usec 0..999_999.
  class TimeOfDay
    include Comparable

    attr_reader :hour, :min, :sec, :usec

    def initialize(hour, min = 0, sec = 0, usec = 0)
      [[hour, 23, "hour"], [min, 59, "min"], [sec, 59, "sec"], [usec, 999_999, "usec"]].each do |v, max, name|
        raise ArgumentError, "#{name} must be an Integer in 0..#{max}, not #{v.inspect}" unless v.is_a?(Integer) && v.between?(0, max)
      end
      @hour = hour
      @min = min
      @sec = sec
      @usec = usec
      freeze
    end

    # The time of day of a Time (or anything with hour, min, sec and usec).
    def self.of(time) = new(time.hour, time.min, time.sec, time.usec)

    # Microseconds since midnight.
    def to_i = ((((@hour * 60) + @min) * 60) + @sec) * 1_000_000 + @usec

    def <=>(other) = other.is_a?(TimeOfDay) ? to_i <=> other.to_i : nil

    def eql?(other) = other.is_a?(TimeOfDay) && to_i == other.to_i

    def hash = [TimeOfDay, to_i].hash

    # "HH:MM:SS", then ".ffffff" when usec is not zero.
    def to_s = format("%02d:%02d:%02d", @hour, @min, @sec) + (@usec.zero? ? "" : format(".%06d", @usec))

    def inspect = "#<Tersa::TimeOfDay #{self}>"
  end
end
