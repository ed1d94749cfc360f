# frozen_string_literal: true

# Runs test files under valgrind and fails on memory errors or leaks that are
# the extension's own. Ruby itself leaves most of its heap allocated at exit
# and its conservative GC reads uninitialised stack words, so a raw valgrind
# report is thousands of records long; like the ruby_memcheck gem, this keeps
# only what points at tersa.so:
# - a leak of memory tersa.so owns: malloc called by the C core, or Ruby's
#   allocator called through the binding's wrappers (tersa_rb_xalloc) - the
#   memory of Ruby objects we create is Ruby's to free;
# - an invalid read, write or free with tersa.so anywhere on its stack;
# - use of an uninitialised value decided inside tersa.so itself.
#
#   ruby test/memcheck.rb test/test_vectors.rb test/test_errors.rb ...
require "rbconfig"
require "tmpdir"

EXT = "tersa.#{RbConfig::CONFIG['DLEXT']}"
# The binding's own allocation wrappers (ext/tersa/common.h).
OWN_ALLOCATORS = %w[tersa_rb_xalloc tersa_rb_xrealloc].freeze

Frame = Struct.new(:fn, :obj, :file, :line) do
  def ours? = obj.to_s.end_with?(EXT)
  def to_s = "#{fn || '???'} (#{file ? "#{file}:#{line}" : File.basename(obj.to_s)})"
end

def tag(xml, name) = xml[%r{<#{name}>(.*?)</#{name}>}m, 1]

# valgrind's XML is regular enough to take apart with patterns, and a DOM
# parser takes minutes on the tens of megabytes Ruby's exit leaks produce.
def frames_of(error_xml)
  stack = tag(error_xml, "stack") or return []
  stack.scan(%r{<frame>(.*?)</frame>}m).map do |(f)|
    Frame.new(tag(f, "fn"), tag(f, "obj"), tag(f, "file"), tag(f, "line"))
  end
end

def relevant?(kind, frames)
  case kind
  when /\ALeak_/
    # Ours if the C core called malloc itself, or the binding's wrapper
    # asked Ruby for it; not if a Ruby API made it for an object (whose
    # memory Ruby 3.1 never frees at exit).
    above_malloc = frames.find { |f| !f.obj.to_s.include?("vgpreload") }
    first_ours = frames.find(&:ours?)
    above_malloc&.ours? || OWN_ALLOCATORS.include?(first_ours&.fn)
  when "UninitCondition", "UninitValue"
    frames.first&.ours?
  else
    frames.any?(&:ours?)
  end
end

def main(tests)
  abort "usage: ruby test/memcheck.rb TEST_FILE..." if tests.empty?
  lib = File.expand_path("../lib", __dir__)
  abort "#{lib}/tersa/#{EXT} is missing: run rake compile first" unless File.exist?(File.join(lib, "tersa", EXT))

  Dir.mktmpdir do |dir|
    xml = File.join(dir, "valgrind.xml")
    cmd = ["valgrind", "--tool=memcheck", "--leak-check=full", "--show-leak-kinds=definite",
           "--num-callers=24", "--error-limit=no", "--xml=yes", "--xml-file=#{xml}",
           RbConfig.ruby, "-I#{lib}", "-I#{__dir__}", "-e", "ARGV.each { |f| require File.expand_path(f) }", *tests]
    env = { "TERSA_PROPERTY_SCALE" => ENV.fetch("TERSA_PROPERTY_SCALE", "0.05") }
    ok = system(env, *cmd)
    abort "memcheck: the tests failed under valgrind" unless ok

    errors = File.read(xml).scan(%r{<error>(.*?)</error>}m).map(&:first)
    found = errors.filter_map do |e|
      kind = tag(e, "kind")
      frames = frames_of(e)
      next unless relevant?(kind, frames)

      what = tag(e, "what") || tag(tag(e, "xwhat").to_s, "text")
      "#{kind}: #{what}\n" + frames.first(14).map { |f| "    #{f}\n" }.join
    end
    total = errors.size
    if found.empty?
      puts "memcheck: no errors or leaks in #{EXT} (#{total} records from Ruby itself ignored)"
    else
      warn found.join("\n")
      abort "memcheck: #{found.size} problem(s) in #{EXT}"
    end
  end
end

main(ARGV)
