# frozen_string_literal: true

module Tersa
  VERSION = "0.1.0"
end
