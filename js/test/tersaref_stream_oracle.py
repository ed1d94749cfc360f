"""Streams with the reference codec (spec/tools/tersaref.py) for the sync-frame
tests. Input: one JSON object per line, either
  {"values": [xvalue, ...], "sync_frames": n, "sync_bytes": n, "sync_before": [i, ...], "dictionary": dict}
    -> {"hex": the stream}
or
  {"join": hex, "dictionary": dict}
    -> {"joined_at": offset or null, "diags": [diag, ...]} or {"err": code, "off": offset}
where dict (optional) is {"strings": [...], "shapes": [[xkey, ...], ...]}."""
import json
import os
import sys

sys.setrecursionlimit(20000)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "spec", "tools"))
import tersaref  # noqa: E402


def dictionary(req):
    d = req.get("dictionary")
    if not d:
        return None
    return tersaref.Dictionary(list(d["strings"]), [[tersaref.from_xjson(k) for k in s] for s in d["shapes"]])


for line in sys.stdin:
    req = json.loads(line)
    d = dictionary(req)
    if "join" in req:
        try:
            at, values = tersaref.join_stream(bytes.fromhex(req["join"]), [d] if d else [])
            out = {"joined_at": at, "diags": [tersaref.diag(v) for v in values]}
        except tersaref.DecodeError as e:
            out = {"err": e.code, "off": e.offset}
    else:
        values = [tersaref.from_xjson(v) for v in req["values"]]
        b = tersaref.encode_stream(values, d, req.get("sync_frames", 0), req.get("sync_bytes", 0),
                                  req.get("sync_before", ()))
        out = {"hex": b.hex()}
    sys.stdout.write(json.dumps(out) + "\n")
