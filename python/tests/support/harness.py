"""Harness of the Python binding for spec/tools/crossfuzz.py.

One JSON request per line on stdin, one JSON reply per line on stdout (the
protocol is described at the top of crossfuzz.py). Values arrive in the
extended JSON of spec/vectors/README.md; decoded values are answered with
their canonical re-encoding by this binding, so every language is compared
on bytes and nothing depends on how a language prints its values.

    python/.venv/bin/python python/tests/support/harness.py
"""

from __future__ import annotations

import json
import sys
import traceback

import tersa
from xvalue import from_x  # run as a script: its own folder is on sys.path


def decode_error(e: tersa.DecodeError) -> dict:
    return {"error": e.code, "offset": e.offset}


def chunked(data: bytes, pieces: list, join: bool = False) -> dict:
    """Feed `data` to tersa.Decoder in pieces of the given sizes (the last size
    repeats), iterating after every piece, then close()."""
    try:
        dec = tersa.Decoder(join=True) if join else tersa.Decoder()
    except TypeError as e:
        return {"unsupported": f"tersa.Decoder(join=True): {e}"}
    values: list = []
    at, i = 0, 0
    try:
        while at < len(data):
            size = pieces[min(i, len(pieces) - 1)]
            i += 1
            dec.feed(data[at : at + size])
            at += size
            for v in dec:
                values.append(tersa.dumps(v).hex())
        dec.close()
    except tersa.DecodeError as e:
        return {"values": values, **decode_error(e)}
    return {"values": values, "joined_at": dec.joined_at} if join else {"values": values}


def encode_stream(req: dict) -> dict:
    """tersa.Encoder with the sync-frame options of the request (SPEC 2.3)."""
    opts = {k: req[k] for k in ("sync_frames", "sync_bytes") if k in req}
    before = set(req.get("sync_before", ()))
    try:
        enc = tersa.Encoder(**opts)
    except TypeError as e:
        return {"unsupported": f"tersa.Encoder({', '.join(opts)}=...): {e}"}
    if before and not hasattr(enc, "sync"):
        return {"unsupported": "tersa.Encoder has no sync()"}
    parts = []
    try:
        for i, v in enumerate(req["values"]):
            if i in before:
                enc.sync()
            parts.append(enc.write(from_x(v)))
    except tersa.EncodeError as e:
        return {"encode_error": str(e)}
    return {"hex": (b"".join(parts) if parts else enc.header()).hex()}


def handle(req: dict) -> dict:
    op = req["op"]
    if op == "hello":
        return {"impl": "python", "tersa": tersa.__version__}
    if op == "encode":
        try:
            return {"hex": tersa.dumps(from_x(req["value"])).hex()}
        except tersa.EncodeError as e:
            return {"encode_error": str(e)}
    if op == "encode_stream":
        return encode_stream(req)
    data = bytes.fromhex(req["hex"])
    if op == "decode":
        try:
            v = tersa.loads(data)
        except tersa.DecodeError as e:
            return decode_error(e)
        return {"hex": tersa.dumps(v).hex()}
    if op == "decode_stream":
        try:
            vs = tersa.loads_stream(data)
        except tersa.DecodeError as e:
            return decode_error(e)
        return {"values": [tersa.dumps(v).hex() for v in vs]}
    if op == "decode_stream_chunks":
        return chunked(data, req["pieces"])
    if op == "join_stream":
        if not hasattr(tersa, "join_stream"):
            return {"unsupported": "no tersa.join_stream"}
        try:
            at, vs = tersa.join_stream(data)
        except tersa.DecodeError as e:
            return decode_error(e)
        return {"joined_at": at, "values": [tersa.dumps(v).hex() for v in vs]}
    if op == "join_stream_chunks":
        return chunked(data, req["pieces"], join=True)
    return {"unsupported": f"unknown op {op!r}"}


def main() -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = handle(json.loads(line))
        except tersa.EncodeError as e:  # a decoded value this binding cannot write back
            reply = {"encode_error": str(e)}
        except Exception as e:  # anything but a DecodeError/EncodeError is a defect to report
            reply = {"crash": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
