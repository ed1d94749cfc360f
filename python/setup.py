"""Build the tersa extension: the binding (src/tersa/_tersa.c) plus the C core.

Inside the repository the core's sources are copied from ../c into csrc/
before building (so that an sdist made here is self-contained); an unpacked
sdist builds from its csrc/ copy.
"""

import filecmp
import os
import shutil

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
# The C core: ../c in the repository, or another checkout named by TERSA_CORE_DIR.
CORE = os.path.abspath(os.environ.get("TERSA_CORE_DIR") or os.path.join(HERE, "..", "c"))
VENDOR = os.path.join(HERE, "csrc")


def sync_core() -> None:
    src = os.path.join(CORE, "src")
    header = os.path.join(CORE, "include", "tersa.h")
    if not (os.path.isdir(src) and os.path.isfile(header)):
        if not os.path.isfile(os.path.join(VENDOR, "include", "tersa.h")):
            raise SystemExit("tersa: the C core was not found (expected ../c or csrc/)")
        return
    wanted = {}
    for name in sorted(os.listdir(src)):
        if name.endswith((".c", ".h")):
            wanted[os.path.join("src", name)] = os.path.join(src, name)
    wanted[os.path.join("include", "tersa.h")] = header
    for rel, origin in wanted.items():
        dest = os.path.join(VENDOR, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if not os.path.exists(dest) or not filecmp.cmp(origin, dest, shallow=False):
            shutil.copyfile(origin, dest)
    for sub in ("src", "include"):
        for name in os.listdir(os.path.join(VENDOR, sub)):
            if os.path.join(sub, name) not in wanted:
                os.remove(os.path.join(VENDOR, sub, name))


sync_core()

CORE_SOURCES = sorted(
    os.path.join("csrc", "src", name)
    for name in os.listdir(os.path.join(VENDOR, "src"))
    if name.endswith(".c")
)


def core_allows_private_api() -> bool:
    """Newer cores let an embedder define TERSA_API (empty: the core's symbols stay private)."""
    with open(os.path.join(VENDOR, "include", "tersa.h"), encoding="utf-8") as f:
        return "#ifndef TERSA_API" in f.read()


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
            ext.extra_compile_args = flags + list(ext.extra_compile_args or [])
            if core_allows_private_api():
                ext.define_macros = list(ext.define_macros or []) + [("TERSA_API", "")]
        super().build_extensions()


setup(
    ext_modules=[
        Extension(
            "tersa._tersa",
            # _tersa.c includes the binding's other parts (one translation unit).
            sources=[os.path.join("src", "tersa", "_tersa.c")] + CORE_SOURCES,
            depends=[
                os.path.join("src", "tersa", name)
                for name in ("encode.c", "encode_shapes.c", "encode_other.c", "decode.c", "decode_keys.c",
                             "decode_generic.c", "streams.c")
            ],
            include_dirs=[os.path.join("csrc", "include"), os.path.join("csrc", "src")],
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
