"""Build the tersa extension: the binding (src/tersa/_tersa.c) plus the C core.

The core is compiled from where it lies: TERSA_CORE_DIR if set, else ../c (the
repository), else csrc/ (an unpacked sdist, into which `sdist` copies it; a
csrc/ left in a checkout by older builds is ignored).
Nothing is written into the source tree: build/ and the egg-info go to a
temporary directory removed when the build ends (unless --build-base or
--egg-base name one), and the core reaches an sdist only inside its archive.
"""

import atexit
import os
import shutil
import tempfile

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.command.egg_info import egg_info
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))


def find_core() -> str:
    candidates = [os.environ.get("TERSA_CORE_DIR"), os.path.join(HERE, "..", "c"), os.path.join(HERE, "csrc")]
    for path in filter(None, candidates):
        if os.path.isfile(os.path.join(path, "include", "tersa.h")) and os.path.isdir(os.path.join(path, "src")):
            return os.path.abspath(path)
        if path is candidates[0]:
            raise SystemExit(f"tersa: TERSA_CORE_DIR={path} holds no C core (include/tersa.h, src/)")
    raise SystemExit("tersa: the C core was not found (TERSA_CORE_DIR, ../c or csrc/)")


CORE = find_core()
# The core's files an sdist carries and the build compiles: src/*.c, src/*.h, include/tersa.h.
CORE_FILES = sorted(
    os.path.join("src", name) for name in os.listdir(os.path.join(CORE, "src")) if name.endswith((".c", ".h"))
) + [os.path.join("include", "tersa.h")]

_scratch = []


def scratch(name: str) -> str:
    """A directory outside the source tree that lives as long as this process."""
    if not _scratch:
        _scratch.append(tempfile.mkdtemp(prefix="tersa-build-"))
        atexit.register(shutil.rmtree, _scratch[0], True)
    path = os.path.join(_scratch[0], name)
    os.makedirs(path, exist_ok=True)
    return path


def core_allows_private_api() -> bool:
    """Newer cores let an embedder define TERSA_API (empty: the core's symbols stay private)."""
    with open(os.path.join(CORE, "include", "tersa.h"), encoding="utf-8") as f:
        return "#ifndef TERSA_API" in f.read()


class Build(build):
    def finalize_options(self):
        if self.build_base == "build":  # the default: not asked for on the command line
            self.build_base = scratch("build")
        super().finalize_options()


class EggInfo(egg_info):
    def finalize_options(self):
        if self.egg_base is None:
            self.egg_base = scratch("egg-info")
        super().finalize_options()


class Sdist(sdist):
    def make_release_tree(self, base_dir, files):
        # The egg-info lives outside the tree (absolute paths): the sdist gets PKG-INFO instead.
        super().make_release_tree(base_dir, [f for f in files if not os.path.isabs(f)])
        for rel in CORE_FILES:
            dest = os.path.join(base_dir, "csrc", rel)
            self.mkpath(os.path.dirname(dest))
            self.copy_file(os.path.join(CORE, rel), dest)


class BuildExt(build_ext):
    def build_extensions(self):
        if self.compiler.compiler_type == "msvc":
            flags = ["/O2", "/fp:precise"]
        else:
            # Decimal floats decode with exactly one IEEE operation: no fused multiply-add.
            # -fno-semantic-interposition: the core's TERSA_API functions are exported, which
            # would otherwise force calls between them (and from the binding) through the PLT.
            flags = ["-O3", "-ffp-contract=off", "-fvisibility=hidden", "-fno-semantic-interposition",
                     "-Wno-missing-field-initializers"]
        for ext in self.extensions:
            # The core's sources join here, not in setup(): sdist would list them as project files.
            ext.sources = list(ext.sources) + [os.path.join(CORE, rel) for rel in CORE_FILES if rel.endswith(".c")]
            ext.depends = list(ext.depends) + [os.path.join(CORE, rel) for rel in CORE_FILES if rel.endswith(".h")]
            ext.extra_compile_args = flags + list(ext.extra_compile_args or [])
            if core_allows_private_api():
                ext.define_macros = list(ext.define_macros or []) + [("TERSA_API", "")]
        super().build_extensions()


setup(
    ext_modules=[
        Extension(
            "tersa._tersa",
            # _tersa.c includes the binding's other parts (one translation unit).
            sources=[os.path.join("src", "tersa", "_tersa.c")],
            depends=[
                os.path.join("src", "tersa", name)
                for name in sorted(os.listdir(os.path.join(HERE, "src", "tersa")))
                if name.endswith(".c") and name != "_tersa.c"
            ],
            include_dirs=[os.path.join(CORE, "include"), os.path.join(CORE, "src")],
        )
    ],
    cmdclass={"build": Build, "build_ext": BuildExt, "egg_info": EggInfo, "sdist": Sdist},
)
