# frozen_string_literal: true

# Chains of nested containers for test_depth.rb (also loaded by the
# subprocess it runs with small stacks): arrays, {"a" => ...} Hashes,
# {1 => ...} generic maps, Tersa::Maps, or all four in turn ("mixed").
module DeepChains
  module_function

  KINDS = %i[array hash generic tersa_map mixed].freeze
  CYCLE = %i[array hash generic tersa_map].freeze

  def kind_at(kind, level) = kind == :mixed ? CYCLE[level % CYCLE.size] : kind

  # `levels` nested containers (level 0 outermost), the innermost holding 1.
  def build(kind, levels)
    value = 1
    (levels - 1).downto(0) do |level|
      value = case kind_at(kind, level)
              when :array then [value]
              when :hash then { "a" => value }
              when :generic then { 1 => value }
              else Tersa::Map.new([["a", value], ["a".b, 0]])
              end
    end
    value
  end

  # The number of levels of a chain `build` made, checking every level
  # without recursion (Ruby's == and inspect would recurse).
  def levels_of(kind, value)
    level = 0
    loop do
      expected = kind_at(kind, level)
      case value
      when Array
        raise "level #{level}: Array, expected #{expected}" unless expected == :array && value.size == 1

        value = value[0]
      when Hash
        key = expected == :hash ? "a" : 1
        raise "level #{level}: #{value.keys.inspect}, expected #{expected}" unless value.size == 1 && value.key?(key)

        value = value[key]
      when Tersa::Map
        raise "level #{level}: Tersa::Map, expected #{expected}" unless expected == :tersa_map && value.size == 2

        value = value["a"]
      else
        raise "innermost value #{value.inspect}" unless value == 1

        return level
      end
      level += 1
    end
  end

  # Bytes before the child in each container's encoding (the MAPDEF of the
  # first {"a" => ...} defines the shape the others name in one byte).
  def offset_of_level(kind, target)
    offset = 3
    shape_defined = false
    target.times do |level|
      offset += case kind_at(kind, level)
                when :array then 1                         # 81
                when :hash then shape_defined ? 1 : 3      # 60 | 91 41 61
                when :generic then 3                       # f4 03 a9
                else 4                                     # f4 05 41 61
                end
      shape_defined ||= kind_at(kind, level) == :hash
    end
    offset
  end
end
