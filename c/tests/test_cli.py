#!/usr/bin/env python3
"""test_cli.py - the tersa tool's bounds: output size, nesting depth, stack use.

usage: test_cli.py TERSA_BINARY

Buffers are built byte by byte (SPEC sections 3 and 5) so that each test says
exactly what the input claims. Every command runs in a child process whose
stack is limited to 256 KiB: no command may need stack in proportion to the
nesting depth it is allowed to read.
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

TERSA = os.path.abspath(sys.argv[1])
SMALL_STACK = 256 << 10
MIB = 1 << 20
# The documented default: 256 times the input's size, at least 64 MiB.
def default_limit(input_size):
    return max(64 * MIB, 256 * input_size)

checks = failures = 0


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("check failed: " + what, file=sys.stderr)


def small_stack():
    resource.setrlimit(resource.RLIMIT_STACK, (SMALL_STACK, SMALL_STACK))


# More output than any test expects: the child is stopped there, so that a
# command that writes without bound fails the test instead of the machine.
OUTPUT_CAP = 384 * MIB


def run(args):
    """Run tersa with args; returns (exit status, stdout bytes, stderr text).
    The status is None if the command wrote more than OUTPUT_CAP bytes."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([TERSA] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                             preexec_fn=small_stack)
        chunks, size = [], 0
        while True:
            chunk = p.stdout.read(1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > OUTPUT_CAP:
                p.kill()
                break
            chunks.append(chunk)
        p.stdout.close()
        rc = p.wait(timeout=600)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return (None if size > OUTPUT_CAP else rc), b"".join(chunks), text


# --------------------------------------------------------------------------
# Tersa bytes
# --------------------------------------------------------------------------
HEADER = b"\xc1\x70\x10"


def varint(n):
    for length in range(1, 9):
        if n < 1 << (7 * length):
            return (((n << 1) | 1) << (length - 1)).to_bytes(length, "little")
    return b"\x00" + n.to_bytes(8, "little")


def arr(n):
    return bytes([0x80 + n]) if n < 16 else b"\xf2" + varint(n - 16)


def string(s):
    return bytes([0x40 + len(s)]) + s if len(s) < 32 else b"\xec" + varint(len(s) - 32) + s


NULL = b"\xe0"
REF0 = b"\x00"  # the first string of the table


def write(dirname, name, data):
    path = os.path.join(dirname, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def file_size(path):
    return os.path.getsize(path) if os.path.exists(path) else -1


def limit_error(err):
    return "--max-output" in err and "exceed" in err


# --------------------------------------------------------------------------
# Output bounds
# --------------------------------------------------------------------------
def test_reference_bomb(tmp):
    """One 64 KiB string and 20,000 references to it: 85 KB that claim 1.3 GB of JSON."""
    s = b"a" * 65536
    n = 20000
    data = HEADER + arr(n + 1) + string(s) + REF0 * n
    path = write(tmp, "bomb.tersa", data)
    limit = default_limit(len(data))
    for opts in ([], ["--diag"], ["--lossy"], ["--pretty"]):
        start = time.monotonic()
        rc, out, err = run(["decode"] + opts + [path])
        size = len(out)
        check(rc == 1 and limit_error(err), "decode %s of a reference bomb: exit %s, %r" % (opts, rc, err[:200]))
        check(size <= limit, "decode %s wrote %d bytes, over the default limit %d" % (opts, size, limit))
        check(time.monotonic() - start < 60, "decode %s stopped late" % opts)


def test_recode_bound(tmp):
    """Recoding reads every string and shape key again at each use: one 64 KiB
    string referenced 20,000 times, or one 64 KiB key shared by 20,000 maps,
    is 1.3 GB to hash and check from 85 KB of input."""
    s = b"k" * 65536

    def refs(n):
        return HEADER + arr(n + 1) + string(s) + REF0 * n

    def shapes(n):
        return HEADER + arr(n + 1) + b"\x91" + string(s) + NULL + (b"\x60" + NULL) * n

    for build in (refs, shapes):
        path = write(tmp, "many.tersa", build(20000))
        start = time.monotonic()
        rc, out, err = run(["recode", path])
        check(rc == 1 and out == b"" and limit_error(err) and "re-encode" in err,
              "recode of repeated %s: %s %r" % (build.__name__, rc, err[:300]))
        check(time.monotonic() - start < 30, "recode of repeated %s stopped late" % build.__name__)
        # Fewer uses fit the limit, and give the same (canonical) buffer back.
        few = build(100)
        path = write(tmp, "few.tersa", few)
        rc, out, err = run(["recode", path])
        check(rc == 0 and out == few, "recode of 100 repeated %s: %s %r" % (build.__name__, rc, err[:300]))


def test_limit_is_exact(tmp):
    data = HEADER + arr(3) + string(b"hello") + REF0 + NULL
    path = write(tmp, "small.tersa", data)
    for opts, want in (([], b'["hello","hello",null]\n'), (["--diag"], b'["hello", "hello", null]\n')):
        n = len(want)
        rc, out, err = run(["decode"] + opts + ["--max-output", str(n), path])
        check(rc == 0 and out == want, "decode %s within --max-output %d: %s %r %r" % (opts, n, rc, out, err))
        rc, out, err = run(["decode"] + opts + ["--max-output", str(n - 1), path])
        check(rc == 1 and out == b"" and limit_error(err) and str(n - 1) in err,
              "decode %s one byte over --max-output: %s %r %r" % (opts, rc, out, err))
    rc, out, err = run(["decode", "--max-output", "1K", path])
    check(rc == 0 and out == b'["hello","hello",null]\n', "--max-output with a suffix: %r" % err)
    for bad in ("-1", "x", "1Q", ""):
        rc, _, err = run(["decode", "--max-output", bad, path])
        check(rc != 0 and "--max-output" in err, "--max-output %r refused: %s %r" % (bad, rc, err))


def test_limit_can_be_lifted(tmp):
    """--max-output 0: no limit (72 MB of JSON from 1,100 references)."""
    s = b"b" * 65536
    n = 1100
    data = HEADER + arr(n + 1) + string(s) + REF0 * n
    path = write(tmp, "lift.tersa", data)
    rc, _, err = run(["decode", path])
    check(rc == 1 and limit_error(err), "72 MB of JSON is over the default limit: %s %r" % (rc, err))
    out = os.path.join(tmp, "lift.json")
    rc, _, err = run(["decode", "--max-output", "0", path, "-o", out])
    want = (n + 1) * (len(s) + 3) + 2  # quotes and a comma or ']' each, plus '[' and the newline
    check(rc == 0 and file_size(out) == want, "--max-output 0: %s %r %d" % (rc, err, file_size(out)))


def test_inspect_bound(tmp):
    """A 60-byte string of control characters and 200,000 one-byte references:
    each reference takes a ~430-byte line of the inspect view."""
    s = b"\x01" * 60
    n = 200000
    data = HEADER + arr(n + 1) + string(s) + REF0 * n
    path = write(tmp, "refs.tersa", data)
    limit = default_limit(len(data))
    rc, out, err = run(["inspect", path])
    size = len(out)
    check(rc == 1 and limit_error(err), "inspect over the default bound: %s %r" % (rc, err[:200]))
    check(size <= limit, "inspect wrote %d bytes, over the limit %d" % (size, limit))
    out = os.path.join(tmp, "refs.txt")
    rc, _, err = run(["inspect", "--max-output", "0", path, "-o", out])
    check(rc == 0 and file_size(out) > limit, "inspect --max-output 0: %s %r" % (rc, err[:200]))

    # 990 nested arrays that each claim the same million bytes, then
    # nulls that run out: the view stops at the limit, not after it.
    depth, count = 990, 1000000
    nested = HEADER + arr(count) * depth + NULL * count
    path = write(tmp, "claims.tersa", nested)
    rc, out, err = run(["inspect", "--max-output", "1M", path])
    check(rc == 1 and limit_error(err) and len(out) <= MIB, "inspect --max-output 1M: %s %d %r" % (rc, len(out), err))
    rc, out, err = run(["inspect", path])
    check(len(out) <= default_limit(len(nested)), "inspect of nested claims wrote %d bytes" % len(out))
    check(rc == 1 and ("truncated" in err or limit_error(err)), "inspect of nested claims: %s %r" % (rc, err))

    rc, out, err = run(["stats", "--max-output", "100", path])
    check(rc == 1 and limit_error(err) and len(out) <= 100, "stats --max-output 100: %s %r" % (rc, err))


# --------------------------------------------------------------------------
# Depth
# --------------------------------------------------------------------------
def test_max_depth_exact(tmp):
    """Ten nested arrays: --max-depth 10 reads them, 9 stops at the tenth's tag."""
    data = HEADER + arr(1) * 10 + NULL
    path = write(tmp, "ten.tersa", data)
    tenth = len(HEADER) + 9
    for cmd in ("decode", "recode", "inspect", "stats"):
        rc, out, err = run([cmd, "--max-depth", "10", path])
        check(rc == 0, "%s --max-depth 10: %s %r" % (cmd, rc, err))
        rc, out, err = run([cmd, "--max-depth", "9", path])
        check(rc == 1 and "depth_exceeded at byte offset %d" % tenth in err,
              "%s --max-depth 9: %s %r" % (cmd, rc, err))
    text = b"[" * 10 + b"]" * 10
    jpath = write(tmp, "ten.json", text)
    rc, out, err = run(["encode", "--max-depth", "10", jpath])
    check(rc == 0 and out == HEADER + arr(1) * 9 + arr(0), "encode --max-depth 10: %s %r" % (rc, err))
    rc, out, err = run(["encode", "--max-depth", "9", jpath])
    check(rc == 1 and "(byte 9)" in err, "encode --max-depth 9: %s %r" % (rc, err))
    rc, out, err = run(["dict", "build", "--max-depth", "9", jpath, "-o", os.path.join(tmp, "d")])
    check(rc == 1 and "nesting" in err, "dict build --max-depth 9: %s %r" % (rc, err))
    for bad in ("0", "x", "-3", "4294967296"):
        rc, _, err = run(["decode", "--max-depth", bad, path])
        check(rc != 0 and "--max-depth" in err, "--max-depth %r refused: %s %r" % (bad, rc, err))


def test_deep_small_stack(tmp):
    """100,000 levels, allowed by --max-depth 200000, on a 256 KiB stack."""
    depth = 100000
    data = HEADER + arr(1) * depth + NULL
    path = write(tmp, "deep.tersa", data)
    allow = ["--max-depth", "200000"]
    json_text = b"[" * depth + b"null" + b"]" * depth

    rc, out, err = run(["decode"] + allow + [path])
    check(rc == 0 and out == json_text + b"\n", "deep decode: %s %r" % (rc, err[:300]))
    rc, out, err = run(["decode", "--diag"] + allow + [path])
    check(rc == 0 and out == json_text + b"\n", "deep decode --diag: %s %r" % (rc, err[:300]))
    # Indented, the text grows with the square of the depth: the limit stops it.
    rc, out, err = run(["decode", "--pretty"] + allow + [path])
    check(rc == 1 and limit_error(err), "deep decode --pretty: %s %r" % (rc, err[:300]))
    rc, out, err = run(["recode"] + allow + [path])
    check(rc == 0 and out == data, "deep recode: %s %r" % (rc, err[:300]))
    rc, out, err = run(["inspect"] + allow + [path])
    check(rc == 0 and out.endswith(b"end (%d bytes)\n" % len(data)), "deep inspect: %s %r" % (rc, err[:300]))
    rc, out, err = run(["stats"] + allow + [path])
    check(rc == 0 and b"arrays" in out, "deep stats: %s %r" % (rc, err[:300]))

    jpath = write(tmp, "deep.json", json_text)
    rc, out, err = run(["encode"] + allow + [jpath])
    check(rc == 0 and out == data, "deep encode: %s %r" % (rc, err[:300]))
    sample = b"[" * depth + b'{"key":"value","other":1}' + b"]" * depth
    spath = write(tmp, "deep_sample.json", sample + b"\n" + sample)
    dpath = os.path.join(tmp, "deep.dict")
    rc, out, err = run(["dict", "build"] + allow + [spath, "-o", dpath])
    check(rc == 0, "deep dict build: %s %r" % (rc, err[:300]))
    rc, out, err = run(["dict", "show", dpath])
    check(rc == 0 and b'"value"' in out and b'shape #0 "key" "other"' in out, "deep dict show: %s %r" % (rc, out))


def test_dict_build_many_strings(tmp):
    """200,000 distinct strings are counted in linear time."""
    n = 200000
    text = b"[" + b",".join(b'"s%07d"' % i for i in range(n)) + b"]"
    path = write(tmp, "many.json", text + b"\n" + text)
    start = time.monotonic()
    rc, _, err = run(["dict", "build", "--max-strings=10", path, "-o", os.path.join(tmp, "many.dict")])
    elapsed = time.monotonic() - start
    check(rc == 0 and "10 strings" in err, "dict build of many strings: %s %r" % (rc, err))
    check(elapsed < 30, "dict build of 200,000 strings took %.1f s" % elapsed)


def test_dict_build_samples(tmp):
    """Each top-level value is a sample; what recurs across samples is kept."""
    lines = [b'{"sym": "MSFT", "px": 1, "note": "first first"}', b'{"sym": "MSFT", "px": 2, "note": "x"}',
             b'{"sym": "AAPL", "px": 3, "note": "third"}', b'["AAPL", "AAPL", "AAPL", "GOOG", "GOOG"]']
    path = write(tmp, "samples.jsonl", b"\n".join(lines))
    rc, _, err = run(["dict", "build", path, "-o", os.path.join(tmp, "s.dict")])
    check(rc == 0 and "2 strings, 1 shapes" in err, "dict build keeps what is in 2+ samples: %s %r" % (rc, err))
    rc, out, err = run(["dict", "show", os.path.join(tmp, "s.dict")])
    check(rc == 0 and b"GOOG" not in out and b"MSFT" in out and b"AAPL" in out,
          "repeats inside one sample count once: %r" % out)
    rc, _, err = run(["dict", "build", "--min-count=1", "--max-shapes=0", "--max-strings=1", path,
                      "-o", os.path.join(tmp, "s1.dict")])
    check(rc == 0 and "1 strings, 1 shapes" in err, "--max-strings caps, 0 takes the default: %s %r" % (rc, err))


def ext(type_, payload):
    return bytes([0xF7]) + varint(type_) + varint(len(payload)) + payload


def test_well_known(tmp):
    """Well-known values (SPEC 5.8) by name in every output; their bad payloads are invalid_value."""
    items = [ext(0xFF00, b"\x00" + varint(3) + b"\x64"),                    # decimal 1.00 (c=100, e=-2)
             ext(0xFF01, varint(3)),                                            # date -2 days: 1969-12-30
             ext(0xFF02, bytes(range(16))),
             ext(0xFF03, varint(86399999999)),
             bytes([0xF4]) + varint(1) + ext(0xFF00, b"\x01\x01") + bytes([0xA9])]  # {-0: 1}
    path = write(tmp, "wk.tersa", b"\xc1\x70\x10" + arr(len(items)) + b"".join(items))
    rc, out, err = run(["decode", "--diag", path])
    check(rc == 0 and out == b'[decimal("1.00"), date("1969-12-30"), uuid("00010203-0405-0607-0809-0a0b0c0d0e0f"), '
          b'time_of_day("23:59:59.999999"), {decimal("-0"): 1}]\n', "decode --diag: %s %r %r" % (rc, out, err))
    rc, out, err = run(["decode", "--ext=object", "--keys=string", path])
    check(rc == 0 and out == b'[{"$decimal":"1.00"},{"$date":"1969-12-30"},'
          b'{"$uuid":"00010203-0405-0607-0809-0a0b0c0d0e0f"},{"$time_of_day":"23:59:59.999999"},{"-0":1}]\n',
          "decode --ext=object --keys=string: %s %r %r" % (rc, out, err))
    rc, out, err = run(["decode", path])
    check(rc != 0 and "well-known value" in err, "decode without --ext=object refuses: %s %r" % (rc, err))
    rc, out, err = run(["inspect", path])
    check(rc == 0 and b'EXT         decimal("1.00")' in out and b'time_of_day("23:59:59.999999")' in out,
          "inspect names them: %r" % out)
    rc, out, err = run(["stats", path])
    check(rc == 0 and b"well-known values                           5" in out, "stats counts them: %r" % out)
    rc, out, _ = run(["recode", path])
    check(rc == 0 and out == open(path, "rb").read(), "recode keeps them")
    bad = write(tmp, "bad.tersa", b"\xc1\x70\x10" + arr(2) + bytes([0xE0]) + ext(0xFF03, varint(86400000000)))
    rc, out, err = run(["decode", "--diag", bad])
    check(rc != 0 and "invalid_value at byte offset 5:" in err, "time of day 24:00:00: invalid_value at the EXT tag: %r" % err)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for test in (test_well_known, test_dict_build_samples, test_limit_is_exact, test_max_depth_exact, test_reference_bomb, test_limit_can_be_lifted,
                     test_recode_bound, test_inspect_bound, test_deep_small_stack, test_dict_build_many_strings):
            start = time.monotonic()
            test(tmp)
            print("%-28s %.1f s" % (test.__name__, time.monotonic() - start))
    print("test_cli: %d checks, %d failures" % (checks, failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
