"""Differential fuzzing of every Tersa implementation against the reference codec.

    python3 spec/tools/crossfuzz.py --impl c=c/build-asan/tersa_harness \\
        --impl python="python/.venv/bin/python python/tests/support/harness.py" \\
        --impl ruby="ruby -Iruby/lib ruby/test/support/harness.rb" \\
        --impl js="node js/test/support/harness.mjs" \\
        [--values N] [--mutations N] [--seconds S] [--seed S] [--save DIR]

Three checks, each answered by the reference codec (tersaref.py) and by every
implementation's harness, which must all agree:

  values     random values of the whole data model (gen_values.py) are encoded
             by every implementation to the reference's bytes, and decoding
             those bytes and re-encoding them gives them back;
  mutations  valid buffers (the values above, streams, spec/vectors) with bit
             flips, byte inserts and deletes, splices, truncations and varint
             edits are decoded: the same value (compared by its canonical
             re-encoding) or the same error code AND offset (SPEC 10);
  streams    random streams, with random sync-frame options, are encoded by
             every implementation to the reference's bytes, and decoded whole
             and incrementally in pieces of 1 byte, of a small constant and of
             random sizes: the same values, or the same error after the same
             values; so are their tails from a random frame boundary, by a
             joining decoder (SPEC 2.3), which must also join at the same
             offset. Mutations include streams and such tails.

Harness protocol: a harness is a long-lived process that reads one JSON
object per line on stdin and writes one JSON object per line on stdout.
Values are the extended JSON ("xvalue") of spec/vectors/README.md; buffers
are lowercase hex. Decoded values are answered as the hex of their canonical
single-value re-encoding by the implementation itself, so no language needs
a printer and nothing depends on the stream framing of the answer.

  {"op":"hello"}                                  -> {"impl": name, ...}
  {"op":"encode","value":X}                       -> {"hex": H}
  {"op":"encode_stream","values":[X...],          -> {"hex": H}
   ["sync_frames":N], ["sync_bytes":B], ["sync_before":[i...]]}
  {"op":"decode","hex":H}                         -> {"hex": H}
  {"op":"decode_stream","hex":H}                  -> {"values": [H...]}
  {"op":"decode_stream_chunks","hex":H,"pieces":[n...]}
        feed H in pieces of these sizes (the last size repeats), taking the
        values completed after every piece, then end the input
                                                  -> {"values": [H...]}
  {"op":"join_stream","hex":H}, {"op":"join_stream_chunks","hex":H,"pieces":[n...]}
        the same for frames from a frame boundary on, without a header
                                                  -> {"joined_at": n or null, "values": [H...]}
  a decode error                                  -> {"error": code, "offset": n}
                                                     (with "values" so far for chunks)
  an encoder refusing a value                     -> {"encode_error": message}
  a request the implementation cannot serve       -> {"unsupported": reason}
  anything else going wrong                       -> {"crash": message}

"unsupported" answers are listed as skips at the end, never counted as
agreement; every other answer that differs from the reference is a
disagreement: crossfuzz prints a shrunk reproducer, saves it with --save, and
exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import select
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_values  # noqa: E402
import tersaref as P  # noqa: E402

ROOT = HERE.parent.parent
REPLY_TIMEOUT = 60.0
MAX_SEED_BYTES = 4096
MAX_REPORTS = 20          # kinds of disagreement shrunk and printed; repeats are only counted
SHRINK_BUDGET = 400       # predicate evaluations per reproducer


# --------------------------------------------------------------------------
# Harness processes
# --------------------------------------------------------------------------


class Harness:
    def __init__(self, name: str, command: str):
        self.name, self.command = name, command
        self.proc = None
        self.deaths = 0
        self.start()

    def start(self):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(shlex.split(self.command), cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr)

    def send(self, req: dict) -> bool:
        try:
            self.proc.stdin.write(json.dumps(req).encode() + b"\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def receive(self) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], REPLY_TIMEOUT)
        line = self.proc.stdout.readline() if ready else b""
        if line:
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return {"crash": "unparsable reply: " + line[:300].decode("utf-8", "replace")}
        return self.died("no reply within %gs" % REPLY_TIMEOUT if not ready else "exited")

    def died(self, why: str) -> dict:
        self.proc.kill()
        status = self.proc.wait()
        self.stderr.seek(0)
        tail = self.stderr.read()[-3000:].decode("utf-8", "replace")
        self.stderr.close()
        self.deaths += 1
        self.start()
        return {"died": f"{why} (status {status}): {tail}"}

    def ask(self, reqs: list) -> list:
        """Answers to requests, one at a time: a harness that is still writing a
        long reply reads no more requests, so sending ahead could deadlock."""
        return [self.receive() if self.send(r) else self.died("stdin closed") for r in reqs]

    def close(self) -> str:
        """End the harness; what went wrong at its exit (a leak report), or ''."""
        try:
            self.proc.stdin.close()
            status = self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            status = "killed after 30 s"
        if status == 0:
            return ""
        self.stderr.seek(0)
        return f"exit status {status}: " + self.stderr.read()[-3000:].decode("utf-8", "replace")


POOL = None


def ask_all(harnesses, reqs, reference=None):
    """Every harness answers `reqs` in a thread of its own while the reference is computed."""
    global POOL
    POOL = POOL or ThreadPoolExecutor(max_workers=16)
    jobs = {h.name: POOL.submit(h.ask, reqs) for h in harnesses}
    ref = reference() if reference else None
    return ref, {name: job.result() for name, job in jobs.items()}


# --------------------------------------------------------------------------
# Answers: what the reference says and how harness replies compare
# --------------------------------------------------------------------------


def answer_of(reply: dict):
    """A comparable form of a reply: ('ok', hex or [hex]), ('error', code, offset), or a failure."""
    if "unsupported" in reply:
        return ("unsupported", reply["unsupported"])
    if "error" in reply:
        return ("error", reply["error"], reply["offset"])
    if "hex" in reply:
        return ("ok", reply["hex"])
    if "values" in reply:
        if "joined_at" in reply:
            return ("ok", reply["joined_at"], tuple(reply["values"]))
        return ("ok", tuple(reply["values"]))
    for kind in ("encode_error", "crash", "died"):
        if kind in reply:
            return (kind, reply[kind] + ("\n" + reply["trace"] if "trace" in reply else ""))
    return ("crash", "malformed reply " + json.dumps(reply)[:300])


def chunk_answer(reply: dict):
    if "unsupported" in reply or ("values" not in reply and "error" not in reply):
        return answer_of(reply)
    if "error" in reply:
        return ("chunks", tuple(reply.get("values", ())), ("error", reply["error"], reply["offset"]), None)
    return ("chunks", tuple(reply["values"]), None, reply.get("joined_at"))


# A buffer is decoded as one value, as a stream, or as a stream joined midway.
OPS = {"single": "decode", "stream": "decode_stream", "join": "join_stream"}
CHUNK_OPS = {"stream": "decode_stream_chunks", "join": "join_stream_chunks"}


class ContainerKeysRepeat:
    """SPEC 1: decoders MUST reject equal keys that are not arrays or maps, and MAY
    reject equal array or map keys. The reference rejects them, by its keys'
    diagnostic notation; within this context that notation is unique for every
    array and map, so its decoder accepts them, as other decoders may."""

    def __enter__(self):
        self.diag, counter = P.diag, iter(range(1 << 62))
        P.diag = lambda v: f"#{next(counter)}" if isinstance(v, (list, tuple, dict, P.Map)) else self.diag(v)

    def __exit__(self, *exc):
        P.diag = self.diag


def ref_decode(data: bytes, mode: str, container_keys_repeat: bool = False):
    try:
        with ContainerKeysRepeat() if container_keys_repeat else contextlib.nullcontext():
            if mode == "single":
                v = P.decode(data)
            elif mode == "stream":
                v = P.decode_stream(data)
            else:
                at, v = P.join_stream(data)
    except P.DecodeError as e:
        return ("error", e.code, e.offset)
    try:
        hexes = tuple(P.encode(x).hex() for x in ([v] if mode == "single" else v))
    except P.EncodeError as e:  # a decoded value the reference cannot write: its own defect
        return ("encode_error", f"reference: {e}")
    if container_keys_repeat:
        # The reference's encoder does not look for equal keys; other encoders refuse them.
        for h in hexes:
            try:
                P.decode(bytes.fromhex(h))
            except P.DecodeError as e:
                return ("encode_error", f"reference: a value with equal keys ({e.code})")
    if mode == "single":
        return ("ok", hexes[0])
    return ("ok", hexes) if mode == "stream" else ("ok", at, hexes)


def read_varint(data: bytes, pos: int):
    """(value, length) of the prefix varint at pos (SPEC 3.1), value None if cut short."""
    first = data[pos]
    n = 9 if first == 0 else (first & -first).bit_length()
    if pos + n > len(data):
        return None, n
    if n == 9:
        return int.from_bytes(data[pos + 1:pos + 9], "little"), 9
    return int.from_bytes(data[pos:pos + n], "little") >> n, n


def frame_starts(data: bytes, join: bool = False) -> list:
    """Offsets of a stream's frame length prefixes, as far as the lengths can be
    followed; a joining decoder's input has no header."""
    if len(data) < 3 and not join:
        return []
    pos = 0 if join else 11 if data[2] & P.FLAG_DICT else 3
    starts = []
    while pos < len(data):
        starts.append(pos)
        n, size = read_varint(data, pos)
        if n is None:
            break
        pos += size + n
    return starts


def ref_chunked(data: bytes, whole, mode: str, container_keys_repeat: bool = False):
    """What incremental decoding must give: the whole-buffer answer, and after an
    error the values of every frame before the one that failed."""
    if whole[0] == "ok":
        return ("chunks", whole[-1], None, whole[1] if mode == "join" else None)
    if whole[0] != "error":
        return whole
    # An error at a frame's start may be in that frame (its length) or at the end
    # of the one before (truncated where an item should start): the failing frame
    # is the last one whose predecessors decode.
    for start in reversed([s for s in frame_starts(data, mode == "join") if s <= whole[2]]):
        prefix = ref_decode(data[:start], mode, container_keys_repeat)
        if prefix[0] == "ok":
            return ("chunks", prefix[-1], whole, None)
    return ("chunks", (), whole, None)


def allowed(got, ref, data: bytes, mode: str, chunks: bool) -> bool:
    """Whether an answer is the reference's, or one SPEC 1 also allows: where the
    reference rejects equal array or map keys, what accepting them gives (a
    later error, or a value no encoder writes back: any encode_error)."""
    if got == ref:
        return True
    error = ref[2] if ref[0] == "chunks" else ref
    if not error or error[:2] != ("error", "duplicate_key"):
        return False
    alt = ref_decode(data, mode, container_keys_repeat=True)
    if chunks:
        alt = ref_chunked(data, alt, mode, container_keys_repeat=True)
    return got == alt or got[0] == alt[0] == "encode_error"


# --------------------------------------------------------------------------
# Bookkeeping
# --------------------------------------------------------------------------


class Tally:
    def __init__(self, names):
        self.names = names
        self.counts = Counter()                               # values, mutations, streams, ...
        self.agree = {n: Counter() for n in names}            # check -> agreements
        self.disagree = {n: Counter() for n in names}
        self.skips = {n: Counter() for n in names}            # (check, reason) -> count
        self.failures = []                                    # reproducers
        self.kinds = Counter()                                # signature -> occurrences

    def record(self, check: str, name: str, ok: bool, skip: str | None = None):
        if skip is not None:
            self.skips[name][(check, skip)] += 1
        elif ok:
            self.agree[name][check] += 1
        else:
            self.disagree[name][check] += 1

    def report(self, out=sys.stdout):
        c = self.counts
        print(f"\ncrossfuzz: {c['values']} values, {c['mutations']} mutations ({c['mutated_single']} single, "
              f"{c['mutated_stream']} stream, {c['mutated_join']} join), {c['streams']} streams and "
              f"{c['joins']} joined tails ({c['chunked']} chunked decodings per implementation), "
              f"{c['rounds']} round(s)", file=out)
        if c["container_keys_accepted"]:
            print(f"  {c['container_keys_accepted']} answers accepted equal array or map keys the reference "
                  "rejects (SPEC 1 allows either)", file=out)
        checks = sorted({k for n in self.names for k in list(self.agree[n]) + list(self.disagree[n])})
        for n in self.names:
            parts = []
            for k in checks:
                a, d = self.agree[n][k], self.disagree[n][k]
                parts.append(f"{k} {a}/{a + d}" + (f" ({d} DISAGREE)" if d else ""))
            print(f"  {n:8} " + ", ".join(parts), file=out)
            for (check, reason), count in sorted(self.skips[n].items()):
                print(f"  {'':8} skipped {count} {check}: {reason}", file=out)


def short(answer) -> str:
    text = json.dumps(answer, default=list)
    return text if len(text) < 600 else text[:600] + f"... ({len(text)} chars)"


def kind(answer) -> str:
    """An answer's outcome without its data: what a disagreement is grouped by."""
    if answer[0] == "error":
        return "error " + answer[1]
    if answer[0] == "chunks":
        return "chunks" + (" then error " + answer[2][1] if answer[2] else "")
    return answer[0]


def first_difference(ref, got) -> str:
    """Where two answers' hex first differ, for answers too long to read whole."""
    def hexes(a):
        if a[0] == "chunks":
            return list(a[1])
        if a[0] == "ok":
            return list(a[-1]) if isinstance(a[-1], tuple) else [a[-1]]
        return []
    for i, (x, y) in enumerate(zip(hexes(ref), hexes(got))):
        if x != y:
            at = next((k for k in range(0, min(len(x), len(y)), 2) if x[k:k + 2] != y[k:k + 2]), min(len(x), len(y)))
            lo = max(0, at - 32)
            return (f"value {i} differs from byte {at // 2}: reference ...{x[lo:at + 48]}..., "
                    f"implementation ...{y[lo:at + 48]}...")
    return ""


# --------------------------------------------------------------------------
# Shrinking
# --------------------------------------------------------------------------


def shrink_bytes(data: bytes, fails) -> bytes:
    """A smaller buffer on which `fails` still holds: cut the tail, then drop chunks."""
    budget = SHRINK_BUDGET
    step = max(1, len(data) // 2)
    while step >= 1 and budget > 0:
        changed = False
        i = len(data) - step
        while i >= 0 and budget > 0:
            candidate = data[:i] + data[i + step:]
            budget -= 1
            if fails(candidate):
                data, changed = candidate, True
                i = min(i, len(data) - step)
            else:
                i -= step
        if not changed:
            step //= 2
    return data


def children(v):
    if isinstance(v, list):
        return list(v)
    if isinstance(v, dict):
        return list(v.values()) + [k for k in v if isinstance(k, P.Symbol)]
    if isinstance(v, P.Map):
        return [x for pair in v.pairs for x in pair]
    return []


def smaller(v):
    """Candidates smaller than v: its parts, and v with half or one of its items."""
    out = children(v)
    if isinstance(v, list) and len(v) > 1:
        out += [v[:len(v) // 2], v[len(v) // 2:]] + [v[:i] + v[i + 1:] for i in range(min(len(v), 20))]
    if isinstance(v, dict) and len(v) > 1:
        items = list(v.items())
        out += [dict(items[:i] + items[i + 1:]) for i in range(min(len(items), 20))]
    if isinstance(v, P.Map) and len(v.pairs) > 1:
        out += [P.Map(v.pairs[:i] + v.pairs[i + 1:]) for i in range(min(len(v.pairs), 20))]
    return out


def shrink_value(v, fails):
    budget = SHRINK_BUDGET
    progress = True
    while progress and budget > 0:
        progress = False
        for c in smaller(v):
            budget -= 1
            if budget <= 0:
                break
            if fails(c):
                v, progress = c, True
                break
    return v


def shrink_list(items: list, fails) -> list:
    budget = SHRINK_BUDGET
    i = 0
    while i < len(items) and budget > 0:
        candidate = items[:i] + items[i + 1:]
        budget -= 1
        if candidate and fails(candidate):
            items = candidate
        else:
            i += 1
    return items


# --------------------------------------------------------------------------
# The fuzzer
# --------------------------------------------------------------------------


class CrossFuzz:
    def __init__(self, harnesses, args):
        self.h = harnesses
        self.names = [h.name for h in harnesses]
        self.by_name = {h.name: h for h in harnesses}
        self.args = args
        self.t = Tally(self.names)
        self.seeds = {m: [] for m in OPS}  # mode -> buffers to mutate
        self.deadline = time.monotonic() + args.seconds if args.seconds else None

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    # -- reporting ---------------------------------------------------------
    def disagreement(self, check: str, name: str, what: dict, ref, got, shrink=None):
        self.t.record(check, name, False)
        signature = (check, name, kind(ref), kind(got))
        self.t.kinds[signature] += 1
        if self.t.kinds[signature] > 1 or len(self.t.failures) >= MAX_REPORTS:
            return
        if shrink:
            what, ref, got = shrink()
        n = len(self.t.failures) + 1
        print(f"\nDISAGREEMENT #{n}: {check}, {name} (reference {kind(ref)}, {name} {kind(got)})", flush=True)
        for k, v in what.items():
            print(f"  {k}: {short(v)}")
        print(f"  reference: {short(ref)}")
        print(f"  {name}: {short(got)}", flush=True)
        where = first_difference(ref, got)
        if where:
            print(f"  {where}", flush=True)
        self.t.failures.append((check, name, what, ref, got))
        if self.args.save:
            d = Path(self.args.save)
            d.mkdir(parents=True, exist_ok=True)
            stem = d / f"{check}-{name}-{self.args.seed}-{n}"
            stem.with_suffix(".json").write_text(json.dumps(
                {"check": check, "impl": name, **what, "reference": ref, name: got},
                indent=1, default=list) + "\n")
            if "hex" in what:
                stem.with_suffix(".tersa").write_bytes(bytes.fromhex(what["hex"]))

    def compare(self, check, name, reply, ref, what, shrink=None, as_chunks=False):
        got = chunk_answer(reply) if as_chunks else answer_of(reply)
        if got[0] == "unsupported":
            self.t.record(check, name, False, skip=got[1])
        elif got == ref:
            self.t.record(check, name, True)
        elif "mode" in what and allowed(got, ref, bytes.fromhex(what["hex"]), what["mode"], as_chunks):
            self.t.record(check, name, True)
            self.t.counts["container_keys_accepted"] += 1
        else:
            self.disagreement(check, name, what, ref, got, shrink)

    # -- (a) values --------------------------------------------------------
    def check_values(self, values: list):
        for v in values:
            if self.out_of_time():
                return
            ref_bytes = P.encode(v)
            x, ref_hex = P.to_xjson(v), ref_bytes.hex()
            _, replies = ask_all(self.h, [{"op": "encode", "value": x}, {"op": "decode", "hex": ref_hex}])
            self.t.counts["values"] += 1
            for name, (enc, dec) in replies.items():
                self.compare("encode", name, enc, ("ok", ref_hex), {"value": x},
                             lambda name=name, v=v: self.shrink_encode(name, v))
                self.compare("roundtrip", name, dec, ("ok", ref_hex), {"hex": ref_hex, "mode": "single"},
                             lambda name=name, v=v: self.shrink_roundtrip(name, v))
            if len(ref_bytes) <= MAX_SEED_BYTES:
                self.seeds["single"].append(ref_bytes)

    def shrink_encode(self, name, v):
        h = self.by_name[name]

        def answer(c):
            return answer_of(h.ask([{"op": "encode", "value": P.to_xjson(c)}])[0])

        v = shrink_value(v, lambda c: answer(c) != ("ok", P.encode(c).hex()))
        return {"value": P.to_xjson(v), "diag": P.diag(v)}, ("ok", P.encode(v).hex()), answer(v)

    def shrink_roundtrip(self, name, v):
        h = self.by_name[name]

        def answer(c):
            return answer_of(h.ask([{"op": "decode", "hex": P.encode(c).hex()}])[0])

        v = shrink_value(v, lambda c: answer(c) != ("ok", P.encode(c).hex()))
        data = P.encode(v)
        return {"hex": data.hex(), "mode": "single", "diag": P.diag(v)}, ("ok", data.hex()), answer(v)

    def shrink_decode(self, name, data: bytes, mode: str):
        h = self.by_name[name]

        def answer(b):
            return answer_of(h.ask([{"op": OPS[mode], "hex": b.hex()}])[0])

        data = shrink_bytes(data, lambda b: not allowed(answer(b), ref_decode(b, mode), b, mode, False))
        return {"hex": data.hex(), "mode": mode}, ref_decode(data, mode), answer(data)

    # -- (c) streams -------------------------------------------------------
    def stream_options(self, r: random.Random, n: int) -> dict:
        k = r.randrange(5)
        if k == 1:
            return {"sync_frames": r.choice([1, 2, 3])}
        if k == 2:
            return {"sync_bytes": r.choice([1, 16, 100, 1000])}
        if k == 3 and n > 1:
            return {"sync_before": sorted(r.sample(range(n), r.randrange(1, n)))}
        return {}

    def piece_plans(self, r: random.Random, size: int) -> list:
        plans = [[1] if size <= 65536 else [7], [r.choice([2, 3, 4, 5, 7, 16, 64])]]
        plans.append([r.choice([1, 2, 3, r.randrange(1, 100), r.randrange(1, 5000)]) for _ in range(24)])
        return plans

    def check_stream(self, r: random.Random, values: list):
        opts = self.stream_options(r, len(values))
        ref_bytes = P.encode_stream(values, **{k: set(v) if k == "sync_before" else v for k, v in opts.items()})
        xs = [P.to_xjson(v) for v in values]
        _, replies = ask_all(self.h, [{"op": "encode_stream", "values": xs, **opts}])
        self.t.counts["streams"] += 1
        streams = {ref_bytes}
        for name, (rep,) in replies.items():
            self.compare("stream-encode", name, rep, ("ok", ref_bytes.hex()), {"values": xs, "options": opts},
                         lambda name=name: self.shrink_stream_encode(name, values, opts))
            got = answer_of(rep)
            if got[0] == "ok" and got[1] != ref_bytes.hex():
                streams.add(bytes.fromhex(got[1]))  # decoded everywhere too: whose stream is wrong shows there
        for data in sorted(streams):
            self.check_stream_decoding(r, data, "stream", (values, opts))
        tail = self.join_tail(r, ref_bytes)
        self.check_stream_decoding(r, tail, "join")
        self.t.counts["joins"] += 1
        if len(ref_bytes) <= MAX_SEED_BYTES:
            self.seeds["stream"].append(ref_bytes)
            self.seeds["join"].append(tail)

    def join_tail(self, r: random.Random, data: bytes) -> bytes:
        """The frames of a stream from a random frame boundary on (or none)."""
        starts = frame_starts(data) + [len(data)]
        return data[r.choice(starts):]

    def check_stream_decoding(self, r: random.Random, data: bytes, mode: str, source=None):
        """source: the (values, options) the stream was encoded from: its
        reproducers are shrunk value by value, as the reference encodes them."""
        plans = self.piece_plans(r, len(data))
        reqs = [{"op": OPS[mode], "hex": data.hex()}]
        reqs += [{"op": CHUNK_OPS[mode], "hex": data.hex(), "pieces": p} for p in plans]
        whole, replies = ask_all(self.h, reqs, lambda: ref_decode(data, mode))
        chunked = ref_chunked(data, whole, mode)
        self.t.counts["chunked"] += len(plans)
        for name, (rep, *chunk_reps) in replies.items():
            self.compare(f"{mode}-decode", name, rep, whole, {"hex": data.hex(), "mode": mode},
                         lambda name=name: self.shrink_stream_values(name, source, None) if source
                         else self.shrink_decode(name, data, mode))
            for plan, crep in zip(plans, chunk_reps):
                self.compare(f"{mode}-chunks", name, crep, chunked, {"hex": data.hex(), "mode": mode, "pieces": plan},
                             lambda name=name, plan=plan: self.shrink_stream_values(name, source, plan) if source
                             else self.shrink_chunks(name, data, plan, mode), as_chunks=True)

    def shrink_stream_values(self, name, source, plan):
        """A valid stream's disagreement shrunk by its values: fewer, then smaller."""
        h = self.by_name[name]
        values, opts = source
        sync = {k: set(v) if k == "sync_before" else v for k, v in opts.items() if k != "sync_before"}

        def attempt(vs):
            data = P.encode_stream(vs, **sync)
            whole = ref_decode(data, "stream")
            if plan is None:
                got = answer_of(h.ask([{"op": "decode_stream", "hex": data.hex()}])[0])
                return data, whole, got
            got = chunk_answer(h.ask([{"op": "decode_stream_chunks", "hex": data.hex(), "pieces": plan}])[0])
            return data, ref_chunked(data, whole, "stream"), got

        def fails(vs):
            _, ref, got = attempt(vs)
            return ref != got

        if not fails(values):  # it takes the sync_before frames (whose indices would not survive): bytes then
            data = P.encode_stream(values, **{k: set(v) if k == "sync_before" else v for k, v in opts.items()})
            return self.shrink_chunks(name, data, plan, "stream") if plan else self.shrink_decode(name, data, "stream")
        values = shrink_list(list(values), fails)
        for i in range(len(values)):
            values[i] = shrink_value(values[i], lambda c: fails(values[:i] + [c] + values[i + 1:]))
        data, ref, got = attempt(values)
        what = {"hex": data.hex(), "mode": "stream", "values": [P.to_xjson(v) for v in values], "options": sync}
        if plan is not None:
            what["pieces"] = plan
        return what, ref, got

    def shrink_stream_encode(self, name, values, opts):
        h = self.by_name[name]
        sync_before = opts.get("sync_before")

        def attempt(vs):
            o = dict(opts)
            if sync_before is not None:
                o["sync_before"] = [i for i in sync_before if i < len(vs)]
            ref = P.encode_stream(vs, **{k: set(v) if k == "sync_before" else v for k, v in o.items()})
            got = answer_of(h.ask([{"op": "encode_stream", "values": [P.to_xjson(v) for v in vs], **o}])[0])
            return o, ("ok", ref.hex()), got

        values = shrink_list(values, lambda vs: attempt(vs)[1] != attempt(vs)[2])
        o, ref, got = attempt(values)
        return {"values": [P.to_xjson(v) for v in values], "options": o}, ref, got

    def shrink_chunks(self, name, data: bytes, plan: list, mode: str):
        h = self.by_name[name]

        def attempt(b, p):
            ref = ref_chunked(b, ref_decode(b, mode), mode)
            got = chunk_answer(h.ask([{"op": CHUNK_OPS[mode], "hex": b.hex(), "pieces": p}])[0])
            return ref, got

        def fails(b, p):
            ref, got = attempt(b, p)
            return not allowed(got, ref, b, mode, True)

        data = shrink_bytes(data, lambda b: fails(b, plan))
        if len(plan) > 1 and fails(data, [1]):
            plan = [1]
        ref, got = attempt(data, plan)
        return {"hex": data.hex(), "mode": mode, "pieces": plan}, ref, got

    # -- (b) mutations -----------------------------------------------------
    def vector_seeds(self):
        for f in sorted((ROOT / "spec" / "vectors").glob("*valid/*.json")):
            for v in json.loads(f.read_text())["vectors"]:
                if v.get("dictionary") or len(v["hex"]) > 2 * MAX_SEED_BYTES:
                    continue
                stream = v.get("stream") or (len(v["hex"]) >= 6 and int(v["hex"][4:6], 16) & P.FLAG_STREAM)
                mode = "join" if v.get("join") else "stream" if stream else "single"
                self.seeds[mode].append(bytes.fromhex(v["hex"]))

    def mutate(self, r: random.Random, data: bytes, join: bool) -> bytes:
        b = bytearray(data)
        for _ in range(r.choice([1, 1, 1, 2, 3])):
            k = r.randrange(9)
            pos = r.randrange(len(b) + 1)
            if k == 0 and b:                       # bit flip
                i = r.randrange(len(b))
                b[i] ^= 1 << r.randrange(8)
            elif k == 1 and b:                     # byte set: tag boundaries and varint-shaped bytes
                b[r.randrange(len(b))] = r.choice([0x00, 0x01, 0x02, 0x80, 0xFF, 0xFD, 0xFE, 0xE7, 0xE9, 0xED,
                                                    0xF4, 0xF8, 0xC1, 0x3F, 0x60, 0x90, r.randrange(256)])
            elif k == 2:                           # insert
                b[pos:pos] = bytes(r.randrange(256) for _ in range(r.choice([1, 1, 2, 4])))
            elif k == 3 and b:                     # delete
                del b[pos:pos + r.choice([1, 1, 2, 5, 20])]
            elif k == 4:                           # truncate
                del b[r.randrange(len(b) + 1):]
            elif k == 5:                           # splice in part of another seed (its body)
                other = r.choice(self.seeds[r.choice(list(OPS))])
                i = r.randrange(3, max(4, len(other)))
                b[pos:pos + r.choice([0, 1, 4])] = other[i:i + r.randrange(1, 40)]
            elif k == 6 and len(b) > 3:            # duplicate a chunk
                i = r.randrange(3, len(b))
                b[pos:pos] = b[i:i + r.randrange(1, 16)]
            elif k == 7 and b:                     # varint edit: a value at a boundary, minimal or not
                n = r.choice([0, 1, 2, 23, 24, 127, 128, 2**14, 2**32, 2**56, 2**63, 2**64 - 1, r.randrange(300)])
                enc = P.varint(n)
                if r.random() < 0.3 and len(enc) < 8:
                    L = len(enc) + 1         # the same value in one byte too many: invalid_varint
                    enc = ((n << L) | (1 << (L - 1))).to_bytes(L, "little")
                i = r.randrange(len(b))
                b[i:i + r.choice([0, 1, len(enc)])] = enc
            elif k == 8:                           # a stream frame's length edited
                starts = frame_starts(bytes(b), join) if join or (len(b) > 2 and b[2] & P.FLAG_STREAM) else []
                if starts:
                    s = r.choice(starts)
                    n, size = read_varint(bytes(b), s)
                    if n is not None:
                        b[s:s + size] = P.varint(min(P.UINT64_MAX, max(0, n + r.choice([-2, -1, 1, 2, 50, -n]))))
        return bytes(b)

    def check_mutations(self, r: random.Random, count: int):
        for _ in range(count):
            if self.out_of_time():
                return
            # Streams and joins get as many mutants as single values, though fewer seeds.
            mode = r.choice(["single", "single", "stream", "join"])
            data = self.mutate(r, r.choice(self.seeds[mode]), mode == "join")
            if r.random() < 0.05:                  # another decoder: bad_flags, or a header read as frames
                mode = r.choice([m for m in OPS if m != mode])
            self.check_mutant(r, data, mode)

    def check_mutant(self, r: random.Random, data: bytes, mode: str):
        reqs = [{"op": OPS[mode], "hex": data.hex()}]
        plan = None
        if mode in CHUNK_OPS and r.random() < 0.5:
            plan = r.choice(self.piece_plans(r, len(data)))
            reqs.append({"op": CHUNK_OPS[mode], "hex": data.hex(), "pieces": plan})
        ref, replies = ask_all(self.h, reqs, lambda: ref_decode(data, mode))
        self.t.counts["mutations"] += 1
        self.t.counts["mutated_" + mode] += 1
        what = {"hex": data.hex(), "mode": mode}
        for name, reps in replies.items():
            self.compare("mutation", name, reps[0], ref, what,
                         lambda name=name: self.shrink_decode(name, data, mode))
            if plan:
                self.compare("mutation-chunks", name, reps[1], ref_chunked(data, ref, mode), {**what, "pieces": plan},
                             lambda name=name: self.shrink_chunks(name, data, plan, mode), as_chunks=True)

    # -- a round -----------------------------------------------------------
    def round(self, seed: int):
        r = random.Random(seed)
        values = [gen_values.rand_value(r) for _ in range(self.args.values)]
        self.check_values(values)
        i = 0
        while i < len(values) and not self.out_of_time():
            n = r.choice([1, 2, 3, 5, 8, 12])
            self.check_stream(r, values[i:i + n])
            i += n
        if not self.out_of_time():
            self.check_stream(r, [])
        self.check_mutations(r, self.args.mutations)
        self.t.counts["rounds"] += 1


def replay(harnesses, files) -> int:
    """Ask every harness the question of each saved reproducer (--save output,
    spec/tools/crossfuzz-findings): the number of answers that still differ."""
    bad = 0
    for f in files:
        case = json.loads(Path(f).read_text())
        check, mode, pieces = case["check"], case.get("mode"), case.get("pieces")
        if check == "encode":
            req = {"op": "encode", "value": case["value"]}
            ref, parse = ("ok", P.encode(P.from_xjson(case["value"])).hex()), answer_of
        elif check == "stream-encode":
            opts = case.get("options", {})
            req = {"op": "encode_stream", "values": case["values"], **opts}
            data = P.encode_stream([P.from_xjson(x) for x in case["values"]],
                                   **{k: set(v) if k == "sync_before" else v for k, v in opts.items()})
            ref, parse = ("ok", data.hex()), answer_of
        else:
            data = bytes.fromhex(case["hex"])
            ref = ref_decode(data, mode)
            if pieces:
                req = {"op": CHUNK_OPS[mode], "hex": case["hex"], "pieces": pieces}
                ref, parse = ref_chunked(data, ref, mode), chunk_answer
            else:
                req, parse = {"op": OPS[mode], "hex": case["hex"]}, answer_of
        _, replies = ask_all(harnesses, [req])
        print(f"{f}: {check} ({case.get('impl', '?')} found it); reference {short(ref)}")
        for name, (reply,) in replies.items():
            got = parse(reply)
            verdict = ("skipped" if got[0] == "unsupported" else "agrees" if got == ref
                       else "allowed by SPEC 1" if mode and allowed(got, ref, data, mode, bool(pieces)) else "DIFFERS")
            bad += verdict == "DIFFERS"
            print(f"  {name:8} {verdict}" + ("" if got == ref else f": {short(got)}"))
    return bad


def parse_impl(text: str):
    name, sep, command = text.partition("=")
    if not sep or not name or not command:
        raise argparse.ArgumentTypeError(f"--impl wants name=command, not {text!r}")
    return name, command


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", action="append", type=parse_impl, required=True, metavar="NAME=COMMAND",
                    help="a harness command (repeatable); run from the repository root")
    ap.add_argument("--values", type=int, default=400, help="random values per round")
    ap.add_argument("--mutations", type=int, default=4000, help="mutated buffers per round")
    ap.add_argument("--seconds", type=float, default=0,
                    help="long mode: repeat rounds (seed, seed+1, ...) until this many seconds have passed")
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--save", metavar="DIR", help="write each disagreement's input and answers here")
    ap.add_argument("--replay", nargs="+", metavar="FILE",
                    help="instead of fuzzing, ask the questions of saved reproducers (JSON files of --save)")
    args = ap.parse_args()
    sys.setrecursionlimit(100000)
    started = time.monotonic()

    harnesses = []
    for name, command in args.impl:
        h = Harness(name, command)
        hello = h.ask([{"op": "hello"}])[0]
        if "impl" not in hello:
            print(f"crossfuzz: harness {name} ({command}) does not answer hello: {short(hello)}")
            return 2
        print(f"crossfuzz: {name}: {json.dumps(hello)}")
        harnesses.append(h)

    if args.replay:
        try:
            bad = replay(harnesses, args.replay)
        finally:
            for h in harnesses:
                h.close()  # the answers are the result here
        print(f"crossfuzz: {bad} answer(s) still differ from the reference" if bad else
              "crossfuzz: every answer agrees with the reference")
        return 1 if bad else 0

    fuzz = CrossFuzz(harnesses, args)
    fuzz.vector_seeds()
    seed = args.seed
    exits = {}
    try:
        while True:
            fuzz.round(seed)
            seed += 1
            if not args.seconds or fuzz.out_of_time():
                break
    finally:
        exits = {h.name: h.close() for h in harnesses}

    t = fuzz.t
    t.report()
    for h in harnesses:
        if h.deaths:
            print(f"  {h.name}: harness died and was restarted {h.deaths} time(s)")
        if exits[h.name]:  # a sanitizer's leak report comes at exit
            print(f"  {h.name}: harness failed at exit, {exits[h.name]}")
    elapsed = time.monotonic() - started
    bad = sum(sum(d.values()) for d in t.disagree.values())
    if bad:
        print(f"crossfuzz: {bad} DISAGREEMENT(S) of {len(t.kinds)} kind(s) (rounds from seed {args.seed}; "
              f"{len(t.failures)} shown above, shrunk) in {elapsed:.0f}s")
        for (check, name, r, g), count in sorted(t.kinds.items()):
            print(f"  {count:6} x {check}, {name}: reference {r}, {name} {g}")
    if bad or any(exits.values()):
        return 1
    print(f"crossfuzz: every implementation agrees with the reference ({elapsed:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
