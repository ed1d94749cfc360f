"""The type stubs (__init__.pyi) match the runtime module (mypy's stubtest)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tersa


def test_package_data_is_installed():
    pkg = Path(tersa.__file__).parent
    assert (pkg / "py.typed").exists() and (pkg / "__init__.pyi").exists()


def test_stubtest(tmp_path):
    pytest.importorskip("mypy")
    env = dict(os.environ)
    parent = Path(tersa.__file__).resolve().parents[1]
    if parent.name not in ("site-packages", "dist-packages"):
        # tersa imported from a source tree (PYTHONPATH=src): let mypy find it the same way
        env["PYTHONPATH"] = str(parent) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "mypy.stubtest", "tersa"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
