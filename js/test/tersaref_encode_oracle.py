"""Encodes values with the reference codec (spec/tools/tersaref.py) for the
regression tests. Input: one extended-JSON value (spec/vectors/README.md) per
line. Output: one line per value, the canonical buffer in hex."""
import json
import os
import sys

sys.setrecursionlimit(20000)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "spec", "tools"))
import tersaref  # noqa: E402

for line in sys.stdin:
    sys.stdout.write(tersaref.encode(tersaref.from_xjson(json.loads(line))).hex() + "\n")
