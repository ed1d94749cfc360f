"""examples/http_server.py as users run it: its own process, listening on a
free loopback port, exercised over real HTTP with urllib."""

from __future__ import annotations

import datetime
import http.client
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import tersa

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "http_server.py"
MEDIA_TYPE = "application/vnd.tersa"

RECORD = {
    "symbol": tersa.Symbol("MSFT"),
    "price": 411.22,
    "volume": 2**70,
    "raw": b"\x00\x01\xfe\xff",
    "at": datetime.datetime(2025, 4, 16, 9, 23, 47, 250000, tzinfo=datetime.timezone.utc),
    (1, 2): ["tuple key", None],
}


@pytest.fixture(scope="module")
def base_url():
    proc = subprocess.Popen([sys.executable, str(EXAMPLE), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"the example server did not start (exit {proc.poll()}): {line!r}")
        yield line.split()[-1].rstrip("/")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def request(url, data=None, headers=None, method=None):
    """(status, headers, body) of a request; HTTP errors are answers too."""
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.headers, e.read()


def post(base_url, body: bytes, content_type=MEDIA_TYPE, **headers):
    return request(base_url + "/records", body, {"Content-Type": content_type, **headers})


def test_post_then_get_round_trips_exactly(base_url):
    status, headers, body = post(base_url, tersa.dumps(RECORD), Accept=MEDIA_TYPE)
    assert status == 201
    assert headers["Content-Type"] == MEDIA_TYPE
    created = tersa.loads(body)
    assert created["record"] == RECORD
    status, headers, body = request(f"{base_url}/records/{created['id']}", headers={"Accept": MEDIA_TYPE})
    assert (status, headers["Content-Type"]) == (200, MEDIA_TYPE)
    # The server re-encodes what it decoded: the same canonical bytes come back.
    assert body == tersa.dumps(RECORD)
    assert isinstance(tersa.loads(body)["symbol"], tersa.Symbol)


def test_each_post_gets_its_own_id(base_url):
    ids = [tersa.loads(post(base_url, tersa.dumps([i]))[2])["id"] for i in range(3)]
    assert len(set(ids)) == 3
    for i, record_id in enumerate(ids):
        assert tersa.loads(request(f"{base_url}/records/{record_id}")[2]) == [i]


@pytest.mark.parametrize("body", [
    b"\x00not tersa",                     # not the magic bytes
    tersa.dumps({"a": [1, 2, 3]})[:-2],   # cut short
    tersa.dumps("x") + b"\x00",           # a byte after the value
    b"",
], ids=["bad-magic", "truncated", "trailing", "empty"])
def test_bad_body_is_400_with_code_and_offset(base_url, body):
    with pytest.raises(tersa.DecodeError) as expected:
        tersa.loads(body)
    status, headers, answer = post(base_url, body)
    assert (status, headers["Content-Type"]) == (400, MEDIA_TYPE)
    error = tersa.loads(answer)
    assert error["error"] == "invalid_body"
    assert (error["code"], error["offset"]) == (expected.value.code, expected.value.offset)
    assert error["message"] == str(expected.value)


def test_bad_magic_is_reported_at_byte_0(base_url):
    error = tersa.loads(post(base_url, b"\x00not tersa")[2])
    assert (error["code"], error["offset"]) == ("bad_magic", 0)


def test_other_media_type_is_415(base_url):
    status, _, answer = post(base_url, b'{"a": 1}', content_type="application/json")
    assert status == 415
    assert tersa.loads(answer)["expected"] == MEDIA_TYPE


def test_media_type_parameters_are_allowed(base_url):
    status, _, _ = post(base_url, tersa.dumps(1), content_type="Application/VND.tersa; version=1")
    assert status == 201


def test_client_that_accepts_only_json_gets_406(base_url):
    status, _, answer = post(base_url, tersa.dumps(1), Accept="application/json")
    assert (status, answer) == (406, b"")
    status, _, _ = request(base_url + "/records/1", headers={"Accept": "application/json, */*;q=0"})
    assert status == 406
    status, _, _ = request(base_url + "/records/1", headers={"Accept": "application/json, */*;q=0.1"})
    assert status == 200


def test_unknown_record_is_404(base_url):
    status, _, answer = request(base_url + "/records/999999")
    assert status == 404
    assert tersa.loads(answer)["error"] == "not_found"


def test_connection_survives_a_bad_body_and_closes_after_an_unread_one(base_url):
    """Keep-alive: a 400 read the whole body, so the next request on the same
    connection works; a 415 left its body unread, so the server closes."""
    host, port = base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("POST", "/records", b"\x00bad", {"Content-Type": MEDIA_TYPE})
        resp = conn.getresponse()
        assert (resp.status, tersa.loads(resp.read())["code"]) == (400, "bad_magic")
        conn.request("POST", "/records", tersa.dumps("ok"), {"Content-Type": MEDIA_TYPE})
        resp = conn.getresponse()
        assert (resp.status, tersa.loads(resp.read())["record"]) == (201, "ok")
        conn.request("POST", "/records", b"x" * 100, {"Content-Type": "text/plain"})
        resp = conn.getresponse()
        assert (resp.status, resp.getheader("Connection")) == (415, "close")
        resp.read()
    finally:
        conn.close()
