"""An HTTP service speaking Tersa (media type application/vnd.tersa), on the
standard library's http.server.

    python examples/http_server.py --port 8080

    POST /records        body: a Tersa value -> 201, {"id": n, "record": value}
    GET  /records/<id>   -> 200, the value as stored (404 if there is none)

Requests must send `Content-Type: application/vnd.tersa` (else 415) and a
Content-Length (else 411). A body that is not valid Tersa gets 400 with a
Tersa body {"error": "invalid_body", "code": <SPEC error code>, "offset":
<byte offset>, "message": ...}. Every response is Tersa, so a client whose
Accept header allows neither it nor */* gets 406 (with an empty body).

read_tersa and send_tersa are the two pieces to copy into another handler.
"""

from __future__ import annotations

import argparse
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import tersa

MEDIA_TYPE = "application/vnd.tersa"
MAX_BODY = 16 * 1024 * 1024


class HTTPError(Exception):
    def __init__(self, status: int, body: Any = None):
        super().__init__(status)
        self.status = status
        self.body = body


def media_type(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def accepts_tersa(accept: str | None) -> bool:
    """Whether an Accept header allows application/vnd.tersa (no header allows anything)."""
    if not accept:
        return True
    for item in accept.split(","):
        kind, *params = [p.strip() for p in item.split(";")]
        if kind.lower() in (MEDIA_TYPE, "application/*", "*/*") and quality(params) > 0:
            return True
    return False


def quality(params: list[str]) -> float:
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def read_tersa(handler: BaseHTTPRequestHandler) -> Any:
    """The request's body decoded, or HTTPError (415, 411, 413, 400 with the decode error)."""
    if media_type(handler.headers.get("Content-Type")) != MEDIA_TYPE:
        raise HTTPError(415, {"error": "unsupported_media_type", "expected": MEDIA_TYPE})
    length = handler.headers.get("Content-Length")
    if length is None or not length.isdigit():
        raise HTTPError(411, {"error": "length_required"})
    if int(length) > MAX_BODY:
        raise HTTPError(413, {"error": "body_too_large", "limit": MAX_BODY})
    body = handler.rfile.read(int(length))
    try:
        return tersa.loads(body)
    except tersa.DecodeError as e:
        raise HTTPError(400, {"error": "invalid_body", "code": e.code, "offset": e.offset, "message": str(e)})


def send_tersa(handler: BaseHTTPRequestHandler, status: int, value: Any) -> None:
    body = tersa.dumps(value)
    handler.send_response(status)
    handler.send_header("Content-Type", MEDIA_TYPE)
    handler.send_header("Content-Length", str(len(body)))
    if handler.close_connection:
        handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(body)


class RecordsHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    records: dict[int, Any] = {}
    lock = threading.Lock()

    def do_POST(self) -> None:
        self.respond(self.post)

    def do_GET(self) -> None:
        self.respond(self.get)

    def respond(self, action) -> None:
        try:
            if not accepts_tersa(self.headers.get("Accept")):
                raise HTTPError(406)
            status, value = action()
        except HTTPError as e:
            # A request body left unread would be taken for the next request: close instead.
            if self.command == "POST" and e.status != 400:
                self.close_connection = True
            if e.body is None:
                self.send_response(e.status)
                self.send_header("Content-Length", "0")
                if self.close_connection:
                    self.send_header("Connection", "close")
                self.end_headers()
            else:
                send_tersa(self, e.status, e.body)
            return
        send_tersa(self, status, value)

    def post(self) -> tuple[int, Any]:
        if self.path != "/records":
            raise HTTPError(404, {"error": "not_found", "path": self.path})
        record = read_tersa(self)
        with self.lock:
            record_id = len(self.records) + 1
            self.records[record_id] = record
        return 201, {"id": record_id, "record": record}

    def get(self) -> tuple[int, Any]:
        prefix, _, tail = self.path.rpartition("/")
        with self.lock:
            found = prefix == "/records" and tail.isdigit() and int(tail) in self.records
            if not found:
                raise HTTPError(404, {"error": "not_found", "path": self.path})
            return 200, self.records[int(tail)]


def make_server(host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server with an empty store of its own (port 0: a free one, see server_address)."""
    handler = type("Handler", (RecordsHandler,), {"records": {}, "lock": threading.Lock()})
    return ThreadingHTTPServer((host, port), handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0: any free port")
    args = parser.parse_args()
    server = make_server(args.host, args.port)
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
