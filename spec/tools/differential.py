"""Differential test: the reference codec against an implementation's CLI.

Random values (gen_values.py) are encoded as one stream by the reference
codec. The CLI must re-encode that stream to exactly the same bytes
(`tersa recode`) and print exactly the reference's diagnostic notation for
every value (`tersa decode --diag`).

    python3 spec/tools/differential.py --cli c/build/tersa [--count N] [--seed S]

A binding without a diagnostic printer is checked by re-encoding alone: its
--recode command reads a stream on stdin and writes the re-encoded stream.

    python3 spec/tools/differential.py --recode "ruby ruby/test/support/recode.rb" --normalize-decimals

--normalize-decimals gives the reference the decimals a binding whose native
decimal keeps no scale (Ruby's BigDecimal) writes back: the coefficient without
trailing zeros, a zero with exponent 0, and zeros kept in the coefficient
where stripping them would push the exponent past SPEC 9's limit.
"""

import argparse
import decimal
import random
import shlex
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_values  # noqa: E402
import tersaref as P  # noqa: E402


def normalized_decimal(d: decimal.Decimal) -> decimal.Decimal:
    if not d.is_finite():
        return d
    sign, digits, exp = d.as_tuple()
    c = int("".join(map(str, digits)) or "0")
    if c == 0:
        return decimal.Decimal((sign, (0,), 0))
    while c % 10 == 0 and exp < P.MAX_DECIMAL_EXPONENT:
        c //= 10
        exp += 1
    return decimal.Decimal((sign, tuple(int(x) for x in str(c)), exp))


def normalize_decimals(v):
    if isinstance(v, decimal.Decimal):
        return normalized_decimal(v)
    if isinstance(v, list):
        return [normalize_decimals(x) for x in v]
    if isinstance(v, dict):
        return {k: normalize_decimals(x) for k, x in v.items()}
    if isinstance(v, P.Map):
        return P.Map([(normalize_decimals(k), normalize_decimals(x)) for k, x in v.pairs])
    return v


def main() -> int:
    ap = argparse.ArgumentParser()
    target = ap.add_mutually_exclusive_group(required=True)
    target.add_argument("--cli", help="a tersa CLI: checks `recode` and `decode --diag`")
    target.add_argument("--recode", help="a command re-encoding a stream from stdin to stdout")
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261120)
    ap.add_argument("--normalize-decimals", action="store_true",
                    help="decimals as a binding without scale writes them (see above)")
    args = ap.parse_args()
    sys.setrecursionlimit(100000)
    recode_cmd = [args.cli, "recode", "-"] if args.cli else shlex.split(args.recode)
    failures = 0
    for batch in range(4):
        r = random.Random(args.seed + batch)
        values = [gen_values.rand_value(r) for _ in range(args.count // 4)]
        if args.normalize_decimals:
            values = [normalize_decimals(v) for v in values]
        data = P.encode_stream(values)
        recoded = subprocess.run(recode_cmd, input=data, capture_output=True)
        if recoded.returncode != 0 or recoded.stdout != data:
            failures += 1
            print(f"batch {batch}: recode differs ({recoded.stderr.decode().strip()})")
            # Find the first differing value by recoding prefixes of the stream.
            for n in range(1, len(values) + 1):
                part = P.encode_stream(values[:n])
                out = subprocess.run(recode_cmd, input=part, capture_output=True).stdout
                if out != part:
                    print(f"  first differing value: {P.diag(values[n - 1])[:500]}")
                    break
        if not args.cli:
            print(f"batch {batch}: {len(values)} values, {len(data)} bytes: {'ok' if not failures else 'FAILED'}")
            continue
        diags = subprocess.run([args.cli, "decode", "--diag", "-"], input=data, capture_output=True)
        got = diags.stdout.decode("utf-8").split("\n")[:-1]
        want = [P.diag(v) for v in values]
        if diags.returncode != 0 or got != want:
            failures += 1
            bad = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), None)
            print(f"batch {batch}: diag differs at value {bad}: {diags.stderr.decode().strip()}")
            if bad is not None:
                print(f"  want {want[bad][:300]}\n  got  {got[bad][:300]}")
        print(f"batch {batch}: {len(values)} values, {len(data)} bytes: {'ok' if not failures else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
