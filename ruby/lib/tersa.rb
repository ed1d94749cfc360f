# frozen_string_literal: true

require_relative "tersa/version"
require_relative "tersa/tersa"
require_relative "tersa/coder"
require_relative "tersa/dictionary"
require_relative "tersa/map"
require_relative "tersa/registry"
require_relative "tersa/declared"
require_relative "tersa/well_known"

# Tersa: a compact, fast, schemaless binary serialization format.
#
#   bytes = Tersa.dump({"id" => 1, "tags" => [:a, :b], "at" => Time.now})
#   Tersa.load(bytes)   # => {"id"=>1, "tags"=>[:a, :b], "at"=>2026-...}
#
# See README.md for types, options and errors.
module Tersa
  # The base class of Tersa's errors.
  class Error
  end

  # Raised when bytes are not valid Tersa. #code is the specification's error
  # name (a Symbol such as :truncated), #offset the byte offset of the item
  # that failed.
  class DecodeError
    attr_reader :offset, :code
  end

  # Raised when a value cannot be represented; the message names its class
  # and where it is in the value (e.g. $[3]["user"]).
  class EncodeError
  end

  class Timestamp
    # A Tersa timestamp Ruby's Time cannot hold (a floating wall time), or one
    # built by hand: seconds since the epoch (as if UTC for floating), nanos,
    # zone (:utc, :offset, :floating) and offset in minutes (:offset only).
    def self.floating(seconds, nanos = 0)
      new(seconds, nanos, :floating, nil)
    end
  end
end
