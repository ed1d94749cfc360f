# frozen_string_literal: true
#
# The serializers section's models and serializers (program.rb runs them):
# Active Model posts with a has-many association of comments, as the
# panko/alba write-ups measure Ruby object serializers, and each way to turn
# a collection of them into bytes. Loaded only in the section's own process:
# Active Support's core extensions (to_json, as_json) would change what the
# other sections measure.

require "json"
require "oj"
require "logger"
require "active_model"
require "active_support/core_ext/object/deep_dup" # active_model_serializers expects Rails to have loaded it
require "active_model_serializers"
require "jbuilder"
require "tersa"

module SerializersBench
  COMMENT_ATTRS = %i[id body author likes].freeze
  POST_ATTRS = %i[id title body author_name published rating views].freeze

  class Comment
    include ActiveModel::Model
    include ActiveModel::Serializers::JSON
    attr_accessor(*COMMENT_ATTRS)

    # The attribute names as_json (serializable_hash) writes.
    def attributes = COMMENT_ATTRS.to_h { |a| [a.to_s, nil] }
  end

  class Post
    include ActiveModel::Model
    include ActiveModel::Serializers::JSON
    attr_accessor(*POST_ATTRS, :comments)

    def attributes = POST_ATTRS.to_h { |a| [a.to_s, nil] }
  end

  # active_model_serializers 0.10
  class CommentSerializer < ActiveModel::Serializer
    attributes(*COMMENT_ATTRS)
  end

  class PostSerializer < ActiveModel::Serializer
    attributes(*POST_ATTRS)
    has_many :comments, serializer: CommentSerializer
  end

  WORDS = %w[lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore
             et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi].freeze

  module_function

  # n posts with 3 comments each, the same every run (a 64-bit LCG).
  def posts(n)
    seed = 0x2545F4914F6CDD1D
    rnd = lambda do |m|
      seed = (seed * 6_364_136_223_846_793_005 + 1_442_695_040_888_963_407) & 0xFFFF_FFFF_FFFF_FFFF
      (seed >> 33) % m
    end
    text = ->(k) { Array.new(k) { WORDS[rnd.call(WORDS.size)] }.join(" ") }
    Array.new(n) do |i|
      comments = Array.new(3) do |j|
        Comment.new(id: i * 3 + j + 1, body: text.call(8 + rnd.call(8)), author: "user#{rnd.call(500)}", likes: rnd.call(100))
      end
      Post.new(id: i + 1, title: text.call(4).capitalize, body: text.call(30 + rnd.call(20)), author_name: "author#{rnd.call(50)}",
               published: rnd.call(4) != 0, rating: rnd.call(50) / 10.0, views: rnd.call(100_000), comments: comments)
    end
  end

  # The Hashes every serializer must produce (and plain Tersa.dump's input).
  def hashes(posts)
    posts.map do |p|
      h = POST_ATTRS.to_h { |a| [a.to_s, p.public_send(a)] }
      h["comments"] = p.comments.map { |c| COMMENT_ATTRS.to_h { |a| [a.to_s, c.public_send(a)] } }
      h
    end
  end

  def setup
    # Rendering logs a line per call through Active Support notifications (as the alba benchmark does, off).
    ActiveSupport::Notifications.unsubscribe(ActiveModelSerializers::Logging::RENDER_EVENT)
    ActiveModelSerializers.logger = Logger.new(IO::NULL)
    ActiveModelSerializers.config.adapter = :attributes
    Tersa.register_class(Comment, attributes: COMMENT_ATTRS)
    Tersa.register_class(Post, attributes: POST_ATTRS + [:comments])
  end

  AS_JSON = { include: :comments }.freeze
  OJ = { mode: :compat }.freeze

  # name => [how, serialize(posts) -> String, decode(String) -> Hashes]. "tersa
  # (Hashes given)" is no serializer: it starts from Hashes that already exist,
  # the reference the declared path is compared with.
  def serializers
    tersa = ->(s) { Tersa.load(s) }
    json = ->(s) { JSON.parse(s) }
    {
      "tersa (declared)" => ["Tersa.register_class(Post, attributes: [..., :comments]), Comment likewise; Tersa.dump(posts)",
                            ->(ps, _) { Tersa.dump(ps) }, tersa],
      "ams 0.10" => ["ActiveModelSerializers::SerializableResource.new(posts, each_serializer: PostSerializer, adapter: :attributes).to_json",
                     ->(ps, _) { ActiveModelSerializers::SerializableResource.new(ps, each_serializer: PostSerializer, adapter: :attributes).to_json },
                     json],
      "jbuilder" => ["Jbuilder.encode { json.array! posts { json.extract! post, ...; json.comments post.comments { json.extract! ... } } }",
                     ->(ps, _) { jbuilder(ps) }, json],
      "as_json + json" => ["JSON.generate(posts.as_json(include: :comments))", ->(ps, _) { JSON.generate(ps.as_json(AS_JSON)) }, json],
      "as_json + oj" => ["Oj.dump(posts.as_json(include: :comments), mode: :compat)", ->(ps, _) { Oj.dump(ps.as_json(AS_JSON), OJ) }, json],
      "as_json + tersa" => ["Tersa.dump(posts.as_json(include: :comments))", ->(ps, _) { Tersa.dump(ps.as_json(AS_JSON)) }, tersa],
      "tersa (Hashes given)" => ["Tersa.dump(hashes): the equivalent Hashes, built beforehand", ->(_, hs) { Tersa.dump(hs) }, tersa]
    }
  end

  def jbuilder(posts)
    Jbuilder.encode do |json|
      json.array!(posts) do |post|
        json.extract!(post, *POST_ATTRS)
        json.comments(post.comments) { |c| json.extract!(c, *COMMENT_ATTRS) }
      end
    end
  end
end
