"""The message-queue section's broker run (bench/README.md): a nats-server
and a redis-server started here on 127.0.0.1, then per codec and count a
consumer process that subscribes and decodes and a producer process that
publishes N Stock records (stock.py), one per message. Measured: messages per
second end to end (the producer's first publish to the consumer's last
decode, both on CLOCK_MONOTONIC), bytes on the wire (what the producer's and
the consumer's TCP sockets sent and received during the run, from the
kernel's TCP_INFO, NATS framing included; and the payload bytes the broker
counted), and each side's CPU per message.

Tersa with a dictionary goes through the dictionary registry: the producer
publishes the dictionary to Redis under its id, and the consumer, meeting that
id in the first message, fetches it from Redis (tersa.DictionaryRegistry).
tersa-stream sends one stream: each message is one frame (sync every 1,000),
so keys and repeated tickers cost nothing after the first frames.

NATS, not RabbitMQ: nats-server is one Go binary that starts in milliseconds
with no Erlang runtime, which keeps the bench's own start and stop of the
broker cheap; core NATS publish/subscribe is the queue's transport, with
credit-based flow control (the consumer acknowledges every 1,000 messages,
the producer keeps at most 10,000 unacknowledged) so that no message is
dropped for a slow consumer.

    python bench/queue/broker.py --json OUT        (BENCH_MODE=full|quick|smoke)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stock  # noqa: E402

CODECS = ["json", "msgpack", "tersa", "tersa-dict", "tersa-stream"]
WINDOW = 10_000  # messages the producer may have unacknowledged
ACK_EVERY = 1_000
SYNC_FRAMES = 1_000

# max: the most messages per run; rounds per (keys, count, codec), codecs
# shuffled in each round; trial_s: a trial that takes longer fails the run.
PLANS = {
    "full": {"max": 1_000_000, "rounds": 3, "big_rounds": 1, "keys": ["int", "named"], "trial_s": 180},
    "quick": {"max": 100_000, "rounds": 1, "big_rounds": 1, "keys": ["int", "named"], "trial_s": 90},
    "smoke": {"max": 1_000, "only": [1, 1_000], "rounds": 1, "big_rounds": 1, "keys": ["int"], "trial_s": 30},
}


def codec_pair(name, registry=None):
    """(encode, decode) of one message; tersa-dict decodes through the registry."""
    import orjson
    import ormsgpack
    import tersa

    strings, shapes = stock.dictionary_parts()
    d = tersa.Dictionary(strings=strings, shapes=shapes)
    if name == "json":
        return orjson.dumps, orjson.loads
    if name == "msgpack":
        return ormsgpack.packb, ormsgpack.unpackb
    if name == "tersa":
        return tersa.dumps, tersa.loads
    if name == "tersa-dict":
        return (lambda v: tersa.dumps(v, dictionary=d)), (registry.loads if registry else None)
    if name == "tersa-stream":
        enc = tersa.Encoder(sync_frames=SYNC_FRAMES)
        dec = tersa.Decoder()

        def decode(data):
            dec.feed(data)
            return next(dec)
        return enc.write, decode
    raise ValueError(name)


# --------------------------------------------------------------------------
# The two processes of a trial
# --------------------------------------------------------------------------
def tcp_bytes(nc):
    """(bytes acknowledged, bytes received) of the client's TCP socket, from
    the kernel's TCP_INFO: the wire bytes, protocol framing included. Read
    the acknowledged count once the peer has answered after the last byte
    (tcpi_bytes_sent undercounted some runs). nats-py does not expose its
    socket; its transport's StreamWriter does."""
    sock = nc._transport._io_writer.get_extra_info("socket")  # noqa: SLF001
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    if len(info) < 136:
        raise RuntimeError("TCP_INFO without byte counters (Linux 4.2 or later needed)")
    acked, received = struct.unpack_from("<QQ", info, 120)  # tcpi_bytes_acked, tcpi_bytes_received
    return acked, received


async def produce(a):
    import nats
    import tersa
    import redis

    records = stock.records(a.count, a.keys)
    if a.codec == "tersa-dict":
        strings, shapes = stock.dictionary_parts()
        d = tersa.Dictionary(strings=strings, shapes=shapes)
        tersa.DictionaryRegistry(redis.Redis(host="127.0.0.1", port=a.redis)).publish(d)
    encode, _ = codec_pair(a.codec)
    nc = await nats.connect(f"nats://127.0.0.1:{a.port}", allow_reconnect=False)
    acked = 0
    moved = asyncio.Event()

    async def on_ack(msg):
        nonlocal acked
        acked = int(msg.data)
        moved.set()
    await nc.subscribe(a.subject + ".ack", cb=on_ack)
    await nc.flush()
    w0, c0 = tcp_bytes(nc)[0], time.process_time()
    payload = 0
    t_first = time.monotonic()
    for i, r in enumerate(records):
        while i - acked >= WINDOW:
            moved.clear()
            await nc.flush()
            await asyncio.wait_for(moved.wait(), a.timeout)
        data = encode(r)
        payload += len(data)
        await nc.publish(a.subject, data)
    await nc.flush()
    t_published = time.monotonic()
    cpu = time.process_time() - c0
    # the consumer's last acknowledgement comes after the broker delivered
    # every message: all the producer sent is acknowledged by then
    while acked < a.count:
        moved.clear()
        await asyncio.wait_for(moved.wait(), a.timeout)
    wrote = tcp_bytes(nc)[0] - w0
    await nc.drain()
    print(json.dumps({"t_first": t_first, "t_published": t_published, "payload_bytes": payload,
                      "socket_bytes": wrote, "cpu_s": cpu}), flush=True)


async def consume(a):
    import nats
    import tersa
    import redis

    expected = stock.records(a.count, a.keys)
    store = CountingStore(redis.Redis(host="127.0.0.1", port=a.redis))
    registry = tersa.DictionaryRegistry(store)
    _, decode = codec_pair(a.codec, registry)
    nc = await nats.connect(f"nats://127.0.0.1:{a.port}", allow_reconnect=False)
    done = asyncio.Event()
    state = {"n": 0, "bad": 0, "bytes": 0, "error": None, "t_last": None, "c0": None}

    async def on_msg(msg):
        i = state["n"]
        if state["c0"] is None:
            state["c0"] = time.process_time()
        try:
            if decode(msg.data) != expected[i]:
                state["bad"] += 1
        except Exception as e:  # noqa: BLE001 - reported, and the trial fails
            state["bad"] += 1
            state["error"] = state["error"] or f"{type(e).__name__}: {e}"
        state["bytes"] += len(msg.data)
        state["n"] = i + 1
        if state["n"] % ACK_EVERY == 0 or state["n"] == a.count:
            await nc.publish(a.subject + ".ack", str(state["n"]).encode())
        if state["n"] == a.count:
            state["t_last"] = time.monotonic()
            done.set()
    await nc.subscribe(a.subject, cb=on_msg, pending_msgs_limit=4 * WINDOW, pending_bytes_limit=256 << 20)
    await nc.flush()
    r0 = tcp_bytes(nc)[1]
    print("ready", flush=True)
    try:
        await asyncio.wait_for(done.wait(), a.timeout)
    except asyncio.TimeoutError:
        state["error"] = state["error"] or f"received {state['n']} of {a.count} messages in {a.timeout} s"
    cpu = time.process_time() - state["c0"] if state["c0"] is not None else 0.0
    received = tcp_bytes(nc)[1] - r0
    await nc.flush()
    await nc.close()
    print(json.dumps({"received": state["n"], "bad": state["bad"], "error": state["error"], "t_last": state["t_last"],
                      "payload_bytes": state["bytes"], "socket_bytes": received, "cpu_s": cpu, "dictionary_fetches": store.gets}), flush=True)


class CountingStore:
    """The registry's store, counting reads (one per dictionary id is expected)."""

    def __init__(self, client):
        self.client = client
        self.gets = 0

    def get(self, key):
        self.gets += 1
        return self.client.get(key)

    def set(self, key, value):
        return self.client.set(key, value)


# --------------------------------------------------------------------------
# The orchestrator: servers, trials, result
# --------------------------------------------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what, limit=15.0):
    deadline = time.monotonic() + limit
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode} before listening on 127.0.0.1:{port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {limit} s")
            time.sleep(0.01)


class Servers:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="tersa-bench-queue-")
        self.procs = []

    def start(self):
        nats_bin = os.environ.get("NATS_SERVER", "nats-server")
        redis_bin = os.environ.get("REDIS_SERVER", "redis-server")
        for b in (nats_bin, redis_bin):
            if shutil.which(b) is None:
                raise RuntimeError(f"{b} not found: run bench/setup (Debian packages nats-server, redis-server)")
        self.nats_port, self.monitor_port, self.redis_port = free_port(), free_port(), free_port()
        t0 = time.monotonic()
        # -a binds both the client and the monitoring port to loopback
        with open(os.path.join(self.dir, "nats.log"), "w") as log:
            nats = subprocess.Popen([nats_bin, "-a", "127.0.0.1", "-p", str(self.nats_port), "-m", str(self.monitor_port)],
                                    stdout=subprocess.DEVNULL, stderr=log)
        self.procs.append(nats)
        wait_port(self.nats_port, nats, "nats-server")
        wait_port(self.monitor_port, nats, "nats-server monitoring")
        self.nats_start_ms = (time.monotonic() - t0) * 1000
        redis = subprocess.Popen([redis_bin, "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
                                  "--appendonly", "no", "--dir", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(redis)
        wait_port(self.redis_port, redis, "redis-server")
        self.nats_version = self.varz()["version"]
        return self

    def varz(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_port}/varz", timeout=5) as r:
            return json.load(r)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def child(role, srv, codec, keys, count, subject, timeout):
    return [sys.executable, os.path.abspath(__file__), role, "--port", str(srv.nats_port), "--redis", str(srv.redis_port),
            "--codec", codec, "--keys", keys, "--count", str(count), "--subject", subject, "--timeout", str(timeout)]


def kill(p):
    if p.poll() is None:
        p.kill()
    p.wait()


def trial(srv, codec, keys, count, subject, limit):
    """One producer and one consumer; a row, with "error" if anything went wrong."""
    row = {"codec": codec, "keys": keys, "count": count}
    cons = subprocess.Popen(child("consume", srv, codec, keys, count, subject, limit), stdout=subprocess.PIPE, text=True)
    prod = None
    try:
        line = cons.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"consumer did not subscribe (said {line!r}, status {cons.poll()})")
        before = srv.varz()
        prod = subprocess.Popen(child("produce", srv, codec, keys, count, subject, limit), stdout=subprocess.PIPE, text=True)
        pout, _ = prod.communicate(timeout=limit + 10)
        cout, _ = cons.communicate(timeout=limit + 10)
        if prod.returncode != 0 or cons.returncode != 0:
            raise RuntimeError(f"producer exited {prod.returncode}, consumer {cons.returncode}")
        after = srv.varz()
        p, c = json.loads(pout.strip().splitlines()[-1]), json.loads(cout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, RuntimeError, ValueError, IndexError) as e:
        for x in (prod, cons):
            if x is not None:
                kill(x)
        row["error"] = f"{type(e).__name__}: {e}"
        row["correct"] = False
        return row
    row["correct"] = c["received"] == count and c["bad"] == 0 and not c["error"]
    if c["error"] or c["bad"]:
        row["error"] = c["error"] or f"{c['bad']} messages decoded wrong"
    seconds = (c["t_last"] or time.monotonic()) - p["t_first"]
    row.update({
        "seconds": seconds,
        "msgs_per_s": count / seconds if c["t_last"] else None,
        "payload_bytes": p["payload_bytes"],
        "payload_bytes_received": c["payload_bytes"],
        "broker_in_bytes": after["in_bytes"] - before["in_bytes"],
        "broker_in_msgs": after["in_msgs"] - before["in_msgs"],
        "wire_bytes_sent": p["socket_bytes"],
        "wire_bytes_received": c["socket_bytes"],
        "producer_cpu_us_per_msg": p["cpu_s"] * 1e6 / count,
        "consumer_cpu_us_per_msg": c["cpu_s"] * 1e6 / count,
        "dictionary_fetches": c["dictionary_fetches"],
    })
    return row


def counts(top):
    c = [1]
    while c[-1] * 10 <= top:
        c.append(c[-1] * 10)
    return c


def orchestrate(mode):
    plan = PLANS[mode]
    srv = Servers()
    try:
        srv.start()
        rows = []
        seq = 0
        for keys in plan["keys"]:
            for n in plan.get("only") or counts(plan["max"]):
                rounds = plan["big_rounds"] if n >= 100_000 else plan["rounds"]
                trials = {c: [] for c in CODECS}
                for rnd in range(rounds):
                    order = list(CODECS)
                    random.Random(n * 31 + rnd).shuffle(order)
                    for codec in order:
                        # subjects of one length: NATS framing repeats the subject in every message
                        seq += 1
                        t = trial(srv, codec, keys, n, f"stocks.{seq:06d}", plan["trial_s"])
                        trials[codec].append(t)
                for codec, ts in trials.items():
                    bad = [t for t in ts if not t["correct"]]
                    row = dict(bad[0] if bad else ts[0])
                    ok = [t["msgs_per_s"] for t in ts if t.get("msgs_per_s")]
                    if ok and not bad:
                        row["msgs_per_s"] = statistics.median(ok)
                        row["msgs_per_s_all"] = ok
                        for k in ("producer_cpu_us_per_msg", "consumer_cpu_us_per_msg"):
                            row[k] = statistics.median(t[k] for t in ts)
                    rows.append(row)
                print(f"broker {keys} {n}: " + ", ".join(
                    f"{r['codec']} {r.get('msgs_per_s') or 0:,.0f} msg/s {r.get('payload_bytes', 0)} B"
                    + ("" if r["correct"] else f" FAILED {r.get('error')}") for r in rows[-len(CODECS):]), file=sys.stderr)
        return {
            "schema": "tersa-bench-queue/1", "language": "python", "part": "broker",
            "runtime": f"CPython {sys.version.split()[0]}",
            "broker": f"nats-server {srv.nats_version} (core publish/subscribe, loopback)",
            "broker_start_ms": round(srv.nats_start_ms, 1),
            "libraries": {n: metadata.version(n) for n in ("nats-py", "redis", "orjson", "ormsgpack", "tersa")},
            "params": {**plan, "window": WINDOW, "ack_every": ACK_EVERY, "sync_frames": SYNC_FRAMES},
            "rows": rows,
        }
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role", nargs="?", choices=["produce", "consume"])
    ap.add_argument("--json")
    for k in ("port", "redis", "count"):
        ap.add_argument(f"--{k}", type=int)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--codec")
    ap.add_argument("--keys")
    ap.add_argument("--subject")
    a = ap.parse_args()
    if a.role == "produce":
        asyncio.run(produce(a))
        return
    if a.role == "consume":
        asyncio.run(consume(a))
        return
    mode = os.environ.get("BENCH_MODE") or ("smoke" if os.environ.get("SMOKE") else "quick" if os.environ.get("QUICK") else "full")
    try:
        result = orchestrate(mode)
    except RuntimeError as e:
        print(f"broker.py: {e}", file=sys.stderr)
        sys.exit(2)
    text = json.dumps(result, indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text)
    else:
        print(text)
    bad = [r for r in result["rows"] if not r["correct"]]
    for r in bad:
        print(f"broker {r['keys']} {r['count']} {r['codec']}: {r.get('error') or 'incorrect'}", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
