# frozen_string_literal: true

require_relative "helper"

# Tersa.register_class: instances written as the map of their declared
# attributes, byte for byte what Tersa.dump writes for the equivalent Hash.
class TestDeclaredClass < Minitest::Test
  Comment = Struct.new(:id, :body)

  class Post
    attr_accessor :id, :title, :published, :score, :comments, :extra

    def initialize(id, title, comments = [])
      @id = id
      @title = title
      @published = id.even?
      @score = id * 1.5
      @comments = comments
    end

    def to_tersa = raise("to_tersa must not be called for a declared class")
  end

  class SpecialPost < Post; end

  class Widget
    def initialize(name) = @name = name
    def name = @name
    def boom = raise(KeyError, "boom from a reader")
    def needs(arg) = arg
  end

  POST_KEYS = %w[id title published score comments].freeze

  def setup
    Tersa.register_class(Comment, attributes: %i[id body])
    Tersa.register_class(Post, attributes: POST_KEYS.map(&:to_sym))
  end

  def teardown
    [Comment, Post, SpecialPost, Widget].each { |k| Tersa.unregister_class(k) }
  end

  def posts(n = 4)
    Array.new(n) { |i| Post.new(i, "post #{i} – ü", Array.new(i % 3) { |j| Comment.new(10 * i + j, "c#{j}") }) }
  end

  def as_hash(x)
    case x
    when Array then x.map { |y| as_hash(y) }
    when Comment then { "id" => x.id, "body" => x.body }
    when Post then POST_KEYS.to_h { |k| [k, as_hash(x.public_send(k))] }
    else x
    end
  end

  def test_bytes_equal_dump_of_the_equivalent_hashes
    ps = posts(6)
    bytes = Tersa.dump(ps)
    assert_equal Tersa.dump(as_hash(ps)), bytes
    assert_equal as_hash(ps), Tersa.load(bytes)
    assert_equal Tersa.dump(as_hash(ps.first)), Tersa.dump(ps.first)
    # Hashes of the same keys next to declared objects share their shape.
    mixed = [ps[1], as_hash(ps[2]), ps[3], { "posts" => ps }]
    assert_equal Tersa.dump(as_hash(mixed)), Tersa.dump(mixed)
  end

  def test_reused_encoder_and_interleaved_encoders
    a = Tersa::Encoder.new
    b = Tersa::Encoder.new
    5.times do |i|
      ps = posts(i + 1)
      want = Tersa.dump(as_hash(ps))
      assert_equal want, a.encode(ps)
      assert_equal want, b.encode(ps)
      assert_equal want, Tersa.dump(ps)
    end
  end

  def test_hash_form_renames_and_symbol_keys
    Tersa.register_class(Widget, attributes: { "widgetName" => :name, kind: "name", "naïve" => :name })
    assert_equal({ "widgetName" => :name, kind: :name, "naïve" => :name }, Tersa.registered_class(Widget))
    w = Widget.new("w1")
    want = { "widgetName" => "w1", kind: "w1", "naïve" => "w1" }
    assert_equal Tersa.dump(want), Tersa.dump(w)
    assert_equal want, Tersa.load(Tersa.dump(w))
    # Keys in another encoding are converted to UTF-8, as the encoder converts Hash keys.
    Tersa.register_class(Widget, attributes: { (+"caf\xE9").force_encoding(Encoding::ISO_8859_1) => :name })
    assert_equal Tersa.dump({ "café" => "w1" }), Tersa.dump(w)
  end

  def test_decodes_to_hashes
    ps = posts(3)
    assert_equal as_hash(ps), Tersa.load(Tersa.dump(ps))
    sym = Tersa.load(Tersa.dump(ps[2]), symbolize_keys: true)
    assert_equal %i[id title published score comments], sym.keys
    assert_equal [{ id: 20, body: "c0" }, { id: 21, body: "c1" }], sym[:comments]
    assert_equal Comment.new(20, "c0"), Comment.new(*sym[:comments][0].values_at(:id, :body))
  end

  def test_streams_and_sync_frames
    [{}, { sync_frames: 1 }, { sync_frames: 2 }].each do |opts|
      enc = Tersa::Encoder.new(**opts)
      ref = Tersa::Encoder.new(**opts)
      bytes = Array.new(5) { |i| enc.write(posts(i + 2)) }.join
      assert_equal Array.new(5) { |i| ref.write(as_hash(posts(i + 2))) }.join, bytes, opts.inspect
      assert_equal Array.new(5) { |i| as_hash(posts(i + 2)) }, Tersa.load_stream(bytes)
    end
  end

  def test_empty_attribute_list
    Tersa.register_class(Widget, attributes: [])
    assert_equal Tersa.dump({}), Tersa.dump(Widget.new("x"))
    assert_equal Tersa.dump([{}, { "a" => {} }]), Tersa.dump([Widget.new("x"), { "a" => Widget.new("y") }])
  end

  def test_declared_class_comes_before_to_tersa_and_default
    never = ->(_) { flunk "default: called for a declared class" }
    assert_equal Tersa.dump(as_hash(posts(2))), Tersa.dump(posts(2), default: never)
  end

  def test_only_the_exact_class
    assert_raises(RuntimeError) { Tersa.dump(SpecialPost.new(1, "x")) } # its inherited to_tersa
    Tersa.register_class(SpecialPost, attributes: %i[id])
    assert_equal Tersa.dump({ "id" => 1 }), Tersa.dump(SpecialPost.new(1, "x"))
  end

  def test_unregister
    assert Tersa.unregister_class(Comment)
    refute Tersa.unregister_class(Comment)
    assert_nil Tersa.registered_class(Comment)
    err = assert_raises(Tersa::EncodeError) { Tersa.dump([Comment.new(1, "x")]) }
    assert_match(/unsupported type TestDeclaredClass::Comment at \$\[0\]/, err.message)
  end

  def test_reader_raising_passes_through_and_encoder_stays_usable
    Tersa.register_class(Widget, attributes: %i[name boom])
    enc = Tersa::Encoder.new
    err = assert_raises(KeyError) { enc.encode([1, { "w" => Widget.new("a") }]) }
    assert_equal "boom from a reader", err.message
    assert_raises(KeyError) { Tersa.dump(Widget.new("a")) }
    assert_equal Tersa.dump(as_hash(posts(3))), enc.encode(posts(3))
    assert_equal Tersa.dump(as_hash(posts(3))), Tersa.dump(posts(3))
    # The frames written before a stream's frame failed are whole.
    bytes = enc.write(posts(1))
    assert_raises(KeyError) { enc.write(Widget.new("b")) }
    assert_equal [as_hash(posts(1))], Tersa.load_stream(bytes)
  end

  def test_reader_removed_after_declaring
    klass = Class.new { attr_reader :gone }
    Tersa.register_class(klass, attributes: %i[gone])
    klass.send(:remove_method, :gone)
    assert_raises(NoMethodError) { Tersa.dump(klass.new) }
  ensure
    Tersa.unregister_class(klass)
  end

  def test_registration_errors
    e = assert_raises(ArgumentError) { Tersa.register_class(Widget, attributes: %i[name nope]) }
    assert_match(/unknown attribute :nope for TestDeclaredClass::Widget/, e.message)
    assert_match(/takes arguments/, assert_raises(ArgumentError) { Tersa.register_class(Widget, attributes: %i[needs]) }.message)
    assert_match(/appears twice/, assert_raises(ArgumentError) { Tersa.register_class(Widget, attributes: ["name", :name]) }.message)
    assert_match(/appears twice/, assert_raises(ArgumentError) { Tersa.register_class(Widget, attributes: { "a" => :name, "a".encode("UTF-16LE") => :name }) }.message)
    assert_raises(ArgumentError) { Tersa.register_class(Widget, attributes: { "\xFF" => :name }) }
    assert_raises(TypeError) { Tersa.register_class(Widget, attributes: :name) }
    assert_raises(TypeError) { Tersa.register_class(Widget, attributes: [1]) }
    assert_raises(TypeError) { Tersa.register_class(Comparable, attributes: []) }
    assert_raises(ArgumentError) { Tersa.register_class(Widget.new("x").singleton_class, attributes: %i[name]) }
    [Hash, Class.new(Array), String, Time, Integer, Tersa::Map].each do |k|
      assert_raises(ArgumentError, k.inspect) { Tersa.register_class(k, attributes: []) }
    end
    assert_raises(TypeError) { Tersa::Native.declare_class(Widget, [1], [:name]) }
    assert_raises(TypeError) { Tersa::Native.declare_class(Widget, ["a"], ["name"]) }
    assert_raises(ArgumentError) { Tersa::Native.declare_class(Widget, %w[a b], [:name]) }
    assert_raises(ArgumentError) { Tersa::Native.declare_class(Widget, ["a", "a"], %i[name name]) }
    assert_nil Tersa.registered_class(Widget), "a failed declaration declares nothing"
  end

  def test_unsupported_value_names_the_path
    ps = posts(3)
    ps[2].comments[1] = Comment.new(5, Object.new)
    err = assert_raises(Tersa::EncodeError) { Tersa.dump(ps) }
    assert_equal 'unsupported type Object at $[2]["comments"][1]["body"]', err.message
  end

  def test_cycles_and_depth
    Tersa.register_class(Post, attributes: %i[id extra])
    a = Post.new(1, "a")
    b = Post.new(2, "b")
    a.extra = b
    b.extra = a
    err = assert_raises(Tersa::EncodeError) { Tersa.dump(a) }
    assert_equal 'circular reference: the value at $ contains itself at $["extra"]["extra"]', err.message
    b.extra = [nil]
    assert_equal Tersa.dump({ "id" => 1, "extra" => { "id" => 2, "extra" => [nil] } }), Tersa.dump(a)
    assert_raises(Tersa::EncodeError) { Tersa.dump(a, max_depth: 2) }
    assert_equal Tersa.dump(a, max_depth: 3), Tersa.dump({ "id" => 1, "extra" => { "id" => 2, "extra" => [nil] } })
  end

  def test_hooks_returning_declared_objects
    holder = Struct.new(:post) { def to_tersa = post }
    p1 = posts(2)[1]
    assert_equal Tersa.dump([as_hash(p1)]), Tersa.dump([holder.new(p1)])
    assert_equal Tersa.dump({ "x" => as_hash(p1) }), Tersa.dump({ "x" => 1 }.merge("x" => holder.new(p1)))
  end

  def test_allocates_only_the_output
    ps = posts(20)
    enc = Tersa::Encoder.new
    # The second run: the first fills the call site's inline caches.
    counts = 2.times.map do
      before = GC.stat(:total_allocated_objects)
      enc.encode(ps)
      GC.stat(:total_allocated_objects) - before
    end
    assert_equal 1, counts.last
  end

  # A reader that declares the class again and collects garbage: the
  # declaration in use for the object being opened stays alive.
  def test_redeclared_from_a_reader_under_gc
    klass = Class.new do
      attr_reader :a

      def initialize(a) = @a = a

      def b
        Tersa.register_class(self.class, attributes: %i[a])
        GC.start
        "b"
      end
    end
    Tersa.register_class(klass, attributes: %i[a b])
    assert_equal Tersa.dump([{ "a" => 1, "b" => "b" }, { "a" => 2 }]), Tersa.dump([klass.new(1), klass.new(2)])
  ensure
    Tersa.unregister_class(klass)
  end

  # A reader that encodes with another encoder (Tersa.dump's own is busy):
  # each encoder's shape indices stay its own.
  def test_nested_dump_from_a_reader
    klass = Class.new do
      def inner = Tersa.dump(TestDeclaredClass::Comment.new(1, "x"))
      def c = TestDeclaredClass::Comment.new(2, "y")
    end
    Tersa.register_class(klass, attributes: { "c" => :c, "inner" => :inner, "d" => :c })
    inner = Tersa.dump({ "id" => 1, "body" => "x" })
    want = Tersa.dump([{ "c" => { "id" => 2, "body" => "y" }, "inner" => inner, "d" => { "id" => 2, "body" => "y" } }] * 3)
    assert_equal want, Tersa.dump([klass.new] * 3)
    assert_equal want, Tersa::Encoder.new.encode([klass.new] * 3)
  ensure
    Tersa.unregister_class(klass)
  end

  def test_gc_compaction
    enc = Tersa::Encoder.new
    ps = posts(8)
    want = Tersa.dump(as_hash(ps))
    assert_equal want, enc.encode(ps)
    GC.verify_compaction_references(double_heap: true, toward: :empty)
    assert_equal want, enc.encode(ps)
    assert_equal want, Tersa.dump(ps)
    Tersa.register_class(Widget, attributes: { "n#{rand(10)}".dup => :name }) # a key String the GC may move
    GC.verify_compaction_references(double_heap: true, toward: :empty)
    assert_equal want, enc.encode(ps)
    assert_equal Tersa.dump(as_hash(ps[3])), enc.encode(ps[3])
  end

  def test_gc_stress
    ps = posts(3)
    want = Tersa.dump(as_hash(ps))
    GC.stress = true
    begin
      2.times do
        assert_equal want, Tersa.dump(ps)
        Tersa.register_class(Comment, attributes: %i[id body])
      end
    ensure
      GC.stress = false
    end
  end
end
