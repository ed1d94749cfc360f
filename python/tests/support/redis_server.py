"""A real redis-server for the tests, started on a free loopback port.

A missing redis-server fails the tests (never skips them): make deps-python
installs Debian's. REDIS_SERVER names another binary.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import redis


@contextlib.contextmanager
def redis_server() -> Iterator[int]:
    """Yields the port of a fresh redis-server (no persistence), stopped on exit."""
    binary = os.environ.get("REDIS_SERVER", "redis-server")
    if shutil.which(binary) is None:
        raise RuntimeError(f"{binary} not found: install Debian's redis-server (make deps-python does)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    workdir = tempfile.mkdtemp(prefix="tersa-test-redis-")
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", workdir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(host="127.0.0.1", port=port)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"redis-server did not answer on 127.0.0.1:{port}")
                time.sleep(0.02)
        client.close()
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
