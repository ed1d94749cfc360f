# Build the Tersa extension: the C core (../../../c, or a copy vendored into
# the gem as core/) plus the Ruby bindings in this directory.
require "mkmf"

here = File.expand_path(__dir__)
core = [File.join(here, "core"), File.expand_path("../../../c", here)].find do |dir|
  File.exist?(File.join(dir, "include", "tersa.h"))
end
abort "tersa: cannot find the C core (looked for core/ and ../../../c)" unless core

core_src = File.join(core, "src")
$INCFLAGS << " -I#{File.join(core, 'include')} -I#{core_src}"
$VPATH << core_src
core_files = Dir[File.join(core_src, "*.c")].map { |f| File.basename(f) }.sort
$srcs = Dir[File.join(here, "*.c")].map { |f| File.basename(f) }.sort + core_files

# C11; decimal floats decode with one IEEE operation, so no fused multiply-add;
# only Init_tersa is exported. TERSA_API empty keeps the core's functions out of
# the dynamic symbol table, so calls to them are direct, not through the PLT.
$CFLAGS << " -std=gnu11 -O2 -ffp-contract=off -fvisibility=hidden -DTERSA_API= -Wall -Wextra -Wno-unused-parameter"
# Link-time optimisation inlines the core's small writer and reader entry
# points into the binding loops (a few per cent of encoding), where the
# toolchain supports it.
if try_link("int main(void) { return 0; }", "-flto=auto")
  $CFLAGS << " -flto=auto"
  $LDFLAGS << " -flto=auto -O2"
end
$CFLAGS << " -Werror" if ENV["TERSA_WERROR"]
if ENV["TERSA_SANITIZE"]
  $CFLAGS << " -fsanitize=address,undefined -fno-omit-frame-pointer -g"
  $LDFLAGS << " -fsanitize=address,undefined"
end

# Hash iteration without rb_hash_foreach's ensure frame and iteration-level
# bookkeeping, when libruby exports it (Ruby 3.1+): about half the cost of
# walking a Hash. The encoder's callback only copies two VALUEs and cannot
# raise or run Ruby code, which is what makes skipping those safe.
have_func("rb_hash_stlike_foreach", "ruby.h")

create_makefile("tersa/tersa")
