"""Coverage-guided fuzzing of the Python binding with atheris (libFuzzer).

`make fuzz-python` builds a copy of python/ with clang under AddressSanitizer
and libFuzzer's coverage into its own venv and runs this file with atheris's
asan_with_fuzzer.so preloaded (see the Makefile). For every input:

  * tersa.loads, tersa.loads_stream and tersa.join_stream either return or raise
    tersa.DecodeError with a code of SPEC section 10 and an offset inside the
    input; anything else (another exception, a crash, a sanitizer report) is a
    finding;
  * a decoded value re-encodes (tersa.dumps), the re-encoding decodes, and
    encoding that again gives the same bytes; unless it holds a map with two
    equal array or map keys, which SPEC 1 lets a decoder accept and no encoder
    writes (then dumps must refuse it with EncodeError);
  * tersa.Decoder fed the input in pieces chosen by the input gives exactly
    the values (compared by their re-encodings) or the error of loads_stream,
    and tersa.Decoder(join=True) those of join_stream.

Input layout: the Tersa bytes, then the piece sizes, then one byte k: the k
bytes before it are the sizes (each byte b is a piece of b + 1 bytes, cycling),
k = 0 means pieces of one byte. `--write-seeds DIR` writes spec/vectors in
this layout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import atheris

tersa = None  # imported by main(): the instrumented build only loads with the sanitizer runtime preloaded

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "spec" / "tools"))
from tersaref import ERRORS  # noqa: E402  (the codes of SPEC section 10)

CODES = frozenset(ERRORS)
MAX_SIZES = 32


def split(data: bytes):
    """(Tersa bytes, piece sizes) of a fuzz input."""
    if not data:
        return b"", [1]
    k = min(data[-1], MAX_SIZES, len(data) - 1)
    body = data[: len(data) - 1 - k]
    sizes = [b + 1 for b in data[len(data) - 1 - k : -1]] or [1]
    return body, sizes


def checked_error(e: Exception, data: bytes) -> tuple:
    if type(e) is not tersa.DecodeError:
        raise AssertionError(f"{type(e).__name__} instead of tersa.DecodeError: {e!r}") from e
    if e.code not in CODES:
        raise AssertionError(f"DecodeError code {e.code!r} is not one of SPEC section 10")
    if not isinstance(e.offset, int) or not 0 <= e.offset <= len(data):
        raise AssertionError(f"DecodeError offset {e.offset!r} outside the input of {len(data)} bytes")
    return (e.code, e.offset)


def equal_container_keys(v) -> bool:
    """Whether a decoded value holds a map with two keys that are equal arrays or maps."""

    def identity(k):
        try:
            return tersa.dumps(k)
        except tersa.EncodeError:
            return object()  # the key holds equal keys itself: the walk gets there

    todo = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, (list, tuple)):
            todo.extend(x)
        elif isinstance(x, (dict, tersa.Map)):
            pairs = list(x.items() if isinstance(x, dict) else x)
            keys = [identity(k) for k, _ in pairs if isinstance(k, (tuple, list, dict, tersa.Map))]
            if len(set(keys)) < len(keys):
                return True
            for k, val in pairs:
                todo += [k, val]
    return False


class Unwritable(Exception):
    """A decoded value no encoder writes back (equal container keys)."""


UNWRITABLE = ("unwritable",)


def reencoded(v) -> bytes:
    """dumps(v); decoding that and encoding again must give the same bytes."""
    try:
        once = tersa.dumps(v)
    except tersa.EncodeError as e:
        if equal_container_keys(v):
            raise Unwritable() from e
        raise AssertionError(f"a decoded value does not re-encode: {e}") from e
    again = tersa.dumps(tersa.loads(once))
    if again != once:
        raise AssertionError(f"re-encoding is not stable: {once.hex()} then {again.hex()}")
    return once


def whole(fn, data: bytes):
    """('ok', re-encodings), ('error', (code, offset)) or UNWRITABLE for a whole-buffer call."""
    try:
        result = fn(data)
    except Unwritable:
        return UNWRITABLE
    except Exception as e:  # noqa: BLE001 - which exception it is is what is checked
        return ("error", checked_error(e, data))
    return ("ok", result)


def fed(data: bytes, sizes: list, join: bool):
    """What tersa.Decoder gives for `data` fed in pieces of `sizes` (cycling)."""
    dec = tersa.Decoder(join=True) if join else tersa.Decoder()
    out = []
    at = i = 0
    try:
        while at < len(data):
            size = sizes[i % len(sizes)]
            dec.feed(data[at : at + size])
            at, i = at + size, i + 1
            out.extend(reencoded(v) for v in dec)
        dec.close()
    except Unwritable:
        return UNWRITABLE
    except AssertionError:
        raise
    except Exception as e:  # noqa: BLE001
        return ("error", checked_error(e, data))
    return ("ok", (dec.joined_at, out) if join else out)


def same(whole_answer, fed_answer) -> bool:
    # Values with equal container keys cannot be compared by their encodings, and
    # where the whole-buffer call met a later error first the fed one meets them first.
    return whole_answer == fed_answer or UNWRITABLE in (whole_answer, fed_answer)


def TestOneInput(data: bytes) -> None:
    buf, sizes = split(data)

    whole(lambda b: reencoded(tersa.loads(b)), buf)  # checks its error, or the value's re-encoding

    stream = whole(lambda b: [reencoded(v) for v in tersa.loads_stream(b)], buf)
    got = fed(buf, sizes, join=False)
    if not same(stream, got):
        raise AssertionError(f"Decoder fed in pieces {sizes} gives {got}, loads_stream {stream}")
    if stream[0] == "ok" and stream[1]:
        restream = tersa.dumps_stream(tersa.loads_stream(buf))
        if [reencoded(v) for v in tersa.loads_stream(restream)] != stream[1]:
            raise AssertionError("dumps_stream of the decoded values decodes to other values")

    def join_whole(b):
        at, vs = tersa.join_stream(b)
        return (at, [reencoded(v) for v in vs])

    joined = whole(join_whole, buf)
    got = fed(buf, sizes, join=True)
    if not same(joined, got):
        raise AssertionError(f"Decoder(join=True) fed in pieces {sizes} gives {got}, join_stream {joined}")


def write_seeds(out: Path) -> None:
    """Every vector (valid, stream, join, must-fail; no dictionaries), fed
    byte by byte and in pieces of 7."""
    sys.setrecursionlimit(100000)  # the deep-nesting vectors
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for f in sorted((ROOT / "spec" / "vectors").glob("*valid/*.json")):
        for v in json.loads(f.read_text())["vectors"]:
            data = bytes.fromhex(v["hex"])
            if v.get("dictionary") or len(data) > 4096:
                continue
            for tail in (b"\x00", b"\x06\x01"):
                (out / f"{f.stem}-{count}").write_bytes(data + tail)
                count += 1
    print(f"{count} seeds in {out}")


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--write-seeds":
        write_seeds(Path(sys.argv[2]))
        return
    global tersa
    with atheris.instrument_imports():
        import tersa as module
    tersa = module
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
