# frozen_string_literal: true

module Tersa
  # Classes whose instances the encoder writes as maps of declared attributes.
  module Declared
    # Instances of these are written by the encoder before any declaration is
    # looked at (or are what a declaration's map stands for), so declaring
    # them would have no effect or a surprising one.
    VALUE_CLASSES = [Hash, Array, String, Symbol, Integer, Float, NilClass, TrueClass, FalseClass, Time,
                     Tersa::Map, Tersa::Timestamp, Tersa::Ext].freeze

    module_function

    # [keys, readers] for Native.declare_class, or ArgumentError/TypeError.
    def normalize(klass, attributes)
      raise TypeError, "expected a Class, got #{klass.class}" unless klass.is_a?(Class)
      raise ArgumentError, "#{klass} is a singleton class: declare the object's class" if klass.singleton_class?
      if (base = VALUE_CLASSES.find { |c| klass <= c })
        what = base == klass ? "a class" : "a subclass of #{base}"
        raise ArgumentError, "#{klass} is #{what} whose instances Tersa writes itself"
      end

      pairs = case attributes
              when Array then attributes.map { |name| [name_key(name), name] }
              when Hash then attributes.to_a
              else raise TypeError, "attributes: must be an Array of names or a Hash of key => reader, not #{attributes.class}"
              end
      keys = pairs.map { |key, _| utf8_key(key) }
      readers = pairs.map { |_, reader| reader_of(klass, reader) }
      [keys, readers]
    end

    # A name of the Array form is its reader's name and, as a String, its key.
    def name_key(name)
      raise TypeError, "attribute names must be Symbols or Strings, not #{name.class}" unless name.is_a?(Symbol) || name.is_a?(String)

      name.to_s
    end

    def utf8_key(key)
      case key
      when Symbol then key
      when String
        key = key.encode(Encoding::UTF_8) unless key.encoding == Encoding::UTF_8 || key.encoding == Encoding::US_ASCII
        key.frozen? ? key : key.dup.freeze
      else raise TypeError, "keys must be Strings or Symbols, not #{key.class}"
      end
    rescue EncodingError => e
      raise ArgumentError, "key #{key.inspect} cannot be converted to UTF-8 (#{e.message})"
    end

    # The reader as a Symbol, once it is known to be a method of klass that
    # takes no argument (or an attribute the class lists: Active Record
    # defines those methods on first use).
    def reader_of(klass, reader)
      raise TypeError, "readers must be Symbols or Strings, not #{reader.class}" unless reader.is_a?(Symbol) || reader.is_a?(String)

      reader = reader.to_sym
      if klass.method_defined?(reader) || klass.private_method_defined?(reader)
        arity = klass.instance_method(reader).arity
        return reader if arity.zero? || arity == -1

        raise ArgumentError, "#{klass}##{reader} takes arguments (arity #{arity}); a reader takes none"
      end
      return reader if klass.respond_to?(:attribute_names) && klass.attribute_names.include?(reader.to_s)

      raise ArgumentError, "unknown attribute #{reader.inspect} for #{klass}: no such instance method"
    end
  end

  class << self
    # Write instances of +klass+ (that class exactly: subclasses declare
    # themselves) as the map of their attributes, read through their readers,
    # in order, with no Hash built: the bytes are those of Tersa.dump of the
    # equivalent Hash.
    #
    #   Tersa.register_class(User, attributes: [:id, :name, :posts])   # keys "id", "name", "posts"
    #   Tersa.register_class(User, attributes: { "userName" => :name }) # key => reader
    #
    # Names of the Array form become String keys; the Hash form's keys are
    # written as given (Strings, or Symbols as Tersa symbols). Readers are
    # methods taking no argument; an unknown one is an ArgumentError here,
    # and an exception a reader raises while encoding passes through
    # unchanged. Declaring a class again replaces its attributes; a declared
    # class is written this way before #to_tersa, register_type or default:
    # are considered. Decoding gives Hashes (README: Declared classes).
    # Declarations are per Ractor.
    def register_class(klass, attributes:)
      keys, readers = Declared.normalize(klass, attributes)
      Native.declare_class(klass, keys, readers)
      nil
    end

    # Forget a declaration; true if +klass+ was declared.
    def unregister_class(klass) = Native.undeclare_class(klass)

    # The declaration of +klass+ as {key => reader}, or nil.
    def registered_class(klass)
      keys, readers = Native.declared_class(klass)
      keys&.zip(readers)&.to_h
    end
  end
end
