# frozen_string_literal: true

module Pith
  VERSION = "0.1.0"
end
