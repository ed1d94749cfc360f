# frozen_string_literal: true

require_relative "helper"

# Decoded Strings of every short length, wherever they sit in the input (the
# decoder copies short strings inside the input by whole words when 24 bytes
# can be read from their start, and by their length otherwise): same bytes,
# UTF-8, the right coderange, mutable, and independent of each other.
class TestDecodedStrings < Minitest::Test
  # Texts of 0..40 bytes: ASCII, two-byte characters, and ASCII digits that
  # the bytes after them in the input would extend if a copy ran past its end.
  def texts
    (0..40).flat_map do |n|
      [("a".."z").cycle.take(n).join, ("é" * (n / 2)) + ("x" * (n % 2)), "7" * n]
    end
  end

  def check(got, want)
    assert_equal want, got
    assert_equal want.bytesize, got.bytesize
    assert_equal Encoding::UTF_8, got.encoding
    assert_equal want.ascii_only?, got.ascii_only?
    assert got.valid_encoding?
    refute got.frozen?
  end

  def test_short_strings_at_every_position
    texts.each do |t|
      # last in the input (fewer than 24 bytes follow), first, and repeated
      # by reference between digits
      [[t], [t, 12_345_678_901_234_567, "9" * 30], ["9" * 30, t, t, "8" * 30, t]].each do |value|
        got = Tersa.load(Tersa.dump(value))
        assert_equal value.size, got.size
        assert_equal value, got
        got.zip(value).each { |g, w| check(g, w) if w.is_a?(String) }
        assert_equal t.to_i, got[value.index(t)].to_i if t.start_with?("7")
      end
    end
  end

  def test_rows_of_strings_are_independent_copies
    rows = Array.new(50) { |i| ["ab", "row #{i}", "Los Angeles", "é" * (i % 12), "x" * (i % 30)] }
    got = Tersa::Decoder.new.decode(Tersa.dump(rows))
    assert_equal rows, got
    got.flatten.zip(rows.flatten).each { |g, w| check(g, w) }
    got[0][0] << "!"
    got[1][2].replace("Boston")
    assert_equal "ab!", got[0][0]
    assert_equal "ab", got[1][0]
    assert_equal "Los Angeles", got[2][2]
    assert_equal "Boston", got[1][2]
  end

  def test_strings_in_a_stream_and_fed
    values = texts.each_slice(7).to_a
    enc = Tersa::Encoder.new
    bytes = values.map { |v| enc.write(v) }.join
    assert_equal values, Tersa::Decoder.new.decode_stream(bytes)
    dec = Tersa::Decoder.new
    got = []
    bytes.each_char.each_slice(5) do |part|
      dec << part.join
      dec.each { |v| got << v }
    end
    assert_equal values, got
    got.flatten.zip(values.flatten).each { |g, w| check(g, w) }
  end

  # A long string is made once per table index and later ones share its
  # bytes: a value yielded by #each and changed by the caller must not change
  # the values of later frames that repeat the string.
  def test_fed_values_changed_by_the_caller
    big = "x" * 100
    short = "row 1"
    enc = Tersa::Encoder.new
    bytes = enc.write([big, short]) + enc.write([big, short, big]) + enc.write([short, big])
    dec = Tersa::Decoder.new
    dec << bytes
    got = []
    dec.each do |v|
      got << v.map(&:dup)
      v.each { |s| s << "!" }
    end
    assert_equal [[big, short], [big, short, big], [short, big]], got
  end
end
