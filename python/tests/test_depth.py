"""Nesting at any allowed depth: encoding and decoding keep their open
containers on heap stacks, so neither the depth nor the thread's stack size
can exhaust the machine stack; the configured max_depth is the limit that
is reported (depth_exceeded at the right offset, or EncodeError). Python
code that recurses through dumps() (a `default` calling it) ends in a
RecursionError, never a crash.

The deep cases run in a child process (a crash there fails the test
instead of ending the run), inside a thread with a 128 KiB stack."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import tersa

SMALL_STACK = 128 * 1024

# Values nested `n` levels deep (n containers on the path to the innermost),
# built without recursion, and a check of their shape that does not recurse.
HELPERS = textwrap.dedent(
    """
    import threading
    import tersa

    def build(kind, n):
        v = 0
        for j in range(n):
            k = kind if kind != "mixed" else ("list", "dict", "gmap", "map", "tuplekey")[j % 5]
            if k == "list":
                v = [v]
            elif k == "dict":
                v = {"k": v}
            elif k == "gmap":
                v = {j: v}
            elif k == "map":
                v = tersa.Map([(1, v), (1.0, "one")])
            elif k == "tuplekey":
                v = {(j, "t"): v}
        return v

    def depth(v):
        # Containers on the deepest path (map values only; keys here are flat).
        d = 0
        while True:
            if isinstance(v, list) and not v:
                return d + 1
            if isinstance(v, list):
                v = v[0]
            elif isinstance(v, dict):
                v = next(iter(v.values()))
            elif isinstance(v, tersa.Map):
                v = v.pairs[0][1]
            else:
                return d
            d += 1

    def in_small_thread(fn, size):
        out = []

        def run():
            try:
                out.append(("ok", fn()))
            except BaseException as e:
                out.append(("error", e))

        old = threading.stack_size(size)
        try:
            t = threading.Thread(target=run)
            t.start()
            t.join()
        finally:
            threading.stack_size(old)
        assert out, "the thread died"
        return out[0]
    """
)


def run_child(body: str, timeout: float = 120) -> str:
    code = HELPERS + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"child exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.mark.parametrize("n", [10_000, 100_000])
@pytest.mark.parametrize("kind", ["list", "dict", "gmap", "map", "mixed"])
def test_deep_values_in_a_small_thread(kind, n):
    out = run_child(
        f"""
        kind, n, size = {kind!r}, {n}, {SMALL_STACK}
        value = build(kind, n)

        def work():
            data = tersa.dumps(value, max_depth=n)
            back = tersa.loads(data, max_depth=n)
            assert depth(back) == n, depth(back)
            assert type(back) is type(value)
            # The decoded value encodes to the same bytes: nothing changed on the way.
            assert tersa.dumps(back, max_depth=n) == data
            stream = tersa.dumps_stream([value, 1], max_depth=n)
            values = tersa.loads_stream(stream, max_depth=n)
            assert depth(values[0]) == n and values[1] == 1
            dec = tersa.Decoder(max_depth=n)
            for at in range(0, len(stream), 4096):
                dec.feed(stream[at : at + 4096])
            got = list(dec)
            dec.close()
            assert depth(got[0]) == n and got[1] == 1
            assert stream.startswith(tersa.Encoder(max_depth=n).write(value))
            return len(data)

        status, result = in_small_thread(work, size)
        assert status == "ok", repr(result)
        print("ok", result)
        """
    )
    assert out.startswith("ok ")


@pytest.mark.parametrize("op", ["loads", "dumps"])
def test_default_depth_in_a_small_thread(op):
    # 1,004 bytes of nested arrays: the default limit, no option.
    run_child(
        f"""
        op, size = {op!r}, {SMALL_STACK}
        value = build("list", 1000)
        data = tersa.dumps(value)
        assert len(data) == 1004

        def work():
            if op == "loads":
                return depth(tersa.loads(data))
            return len(tersa.dumps(value))

        status, result = in_small_thread(work, size)
        assert status == "ok" and result in (1000, 1004), repr(result)
        """
    )


@pytest.mark.parametrize("n", [10_000, 100_000])
def test_decoding_limit_is_exactly_max_depth_in_a_small_thread(n):
    run_child(
        f"""
        n, size = {n}, {SMALL_STACK}
        header = tersa.dumps([])[:-1]

        def nested(levels):
            return header + b"\\x81" * (levels - 1) + b"\\x80"

        def work():
            assert depth(tersa.loads(nested(n), max_depth=n)) == n
            try:
                tersa.loads(nested(n + 1), max_depth=n)
            except tersa.DecodeError as e:
                # The array at level n (0-based) is the first one too deep.
                assert e.code == "depth_exceeded" and e.offset == len(header) + n, (e.code, e.offset)
                return True
            raise AssertionError("no depth_exceeded")

        status, result = in_small_thread(work, size)
        assert status == "ok", repr(result)
        """
    )


@pytest.mark.parametrize("n", [10_000, 100_000])
def test_encoding_limit_is_exactly_max_depth_in_a_small_thread(n):
    run_child(
        f"""
        n, size = {n}, {SMALL_STACK}
        header = tersa.dumps([])[:-1]

        def work():
            deep = build("list", n)
            assert tersa.dumps(deep, max_depth=n) == header + b"\\x81" * n + tersa.dumps(0)[len(header) :]
            try:
                tersa.dumps([deep], max_depth=n)
            except tersa.EncodeError as e:
                assert f"nesting deeper than {{n}} levels" in str(e), str(e)[:200]
                return True
            raise AssertionError("no EncodeError")

        status, result = in_small_thread(work, size)
        assert status == "ok", repr(result)
        """
    )


def test_deep_key_in_a_small_thread():
    # A key nested deeper than C code may hash: the map becomes a tersa.Map.
    run_child(
        f"""
        size = {SMALL_STACK}
        key = ()
        for _ in range(100_000):
            key = (key,)
        data = tersa.dumps({{key: 1, "other": 2}}, max_depth=200_000)

        def work():
            back = tersa.loads(data, max_depth=200_000)
            assert type(back) is tersa.Map and len(back) == 2
            k, v = back.pairs[0]
            levels = 0
            while isinstance(k, tuple) and k:
                k = k[0]
                levels += 1
            assert levels == 100_000 and v == 1 and back.pairs[1] == ("other", 2)
            assert tersa.dumps(back, max_depth=200_000) == data
            return True

        status, result = in_small_thread(work, size)
        assert status == "ok", repr(result)
        """
    )


def test_shallow_keys_still_make_dicts():
    value = {(1, (2, (3,))): "a", (1, 2): "b"}
    assert tersa.loads(tersa.dumps(value)) == value
    assert type(tersa.loads(tersa.dumps(value))) is dict


def test_default_recursing_through_dumps_ends_in_recursion_error():
    run_child(
        f"""
        size = {SMALL_STACK}

        class Node:
            pass

        def default(o):
            return tersa.dumps([Node()], default=default)

        def work():
            try:
                tersa.dumps(Node(), default=default)
            except tersa.EncodeError as e:
                cause = e
                while cause.__cause__ is not None:
                    cause = cause.__cause__
                assert isinstance(cause, RecursionError), repr(cause)
                return True
            raise AssertionError("no error")

        for stack in (size, 1024 * 1024):
            status, result = in_small_thread(work, stack)
            assert status == "ok", repr(result)
        assert work()
        """
    )


@pytest.mark.parametrize("bad", [0, -1, -(2**70)])
def test_max_depth_must_be_positive(bad):
    with pytest.raises(ValueError, match="max_depth"):
        tersa.loads(tersa.dumps(1), max_depth=bad)
    with pytest.raises(ValueError, match="max_depth"):
        tersa.dumps(1, max_depth=bad)
    with pytest.raises(ValueError, match="max_depth"):
        tersa.Decoder(max_depth=bad)
    with pytest.raises(ValueError, match="max_depth"):
        tersa.Encoder(max_depth=bad)


def test_max_depth_has_no_upper_bound():
    for big in (10_001, 2**31, 2**64):
        assert tersa.loads(tersa.dumps([[1]], max_depth=big), max_depth=big) == [[1]]
    with pytest.raises(TypeError):
        tersa.loads(tersa.dumps(1), max_depth="10")
