"""Decodes hex buffers with the reference codec (spec/tools/tersaref.py) for the
differential fuzz test. Input: one JSON object per line {"hex", "stream", "join"}.
Output: one JSON object per line: {"ok": [diag, ...]} (with "at": the joined_at
offset when joining) or {"err": code, "off": offset}."""
import json
import os
import sys

sys.setrecursionlimit(20000)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "spec", "tools"))
import tersaref  # noqa: E402

for line in sys.stdin:
    req = json.loads(line)
    data = bytes.fromhex(req["hex"])
    try:
        if req.get("join"):
            at, values = tersaref.join_stream(data)
            out = {"ok": [tersaref.diag(v) for v in values], "at": at}
        elif req.get("stream"):
            out = {"ok": [tersaref.diag(v) for v in tersaref.decode_stream(data)]}
        else:
            out = {"ok": [tersaref.diag(tersaref.decode(data))]}
    except tersaref.DecodeError as e:
        out = {"err": e.code, "off": e.offset}
    except RecursionError:
        out = {"err": "recursion", "off": -1}
    sys.stdout.write(json.dumps(out) + "\n")
