# SPDX-License-Identifier: MIT
"""A local stand-in for the Hugging Face Hub, for the model-manager tests.

Serves, from a folder laid out as <root>/<owner>/<name>/<files>:
  GET /api/models/<owner>/<name>/tree/main[?recursive=1]   the listing: path, size, oid (git blob SHA-1) and, for
                                                          .gguf files, lfs {oid: SHA-256, size}
  GET /<owner>/<name>/resolve/main/<path>                 a redirect chain ending at the CDN URL below
  GET /cdn/<owner>/<name>/<path>                          the bytes, with Range support (206, Content-Range, 416)

The CDN is addressed as "localhost" while the hub is "127.0.0.1", so that a client that forwards the hub token to
the CDN host is caught. Faults are injected per request from the test (HubServer.add_fault), each used once unless
`times` says otherwise:
  drop(after)             send `after` body bytes, then reset the connection
  truncate(after)         send `after` body bytes, then close cleanly (the body is shorter than Content-Length)
  stall(after, seconds)   send `after` bytes, then send nothing for `seconds`
  flip(offset)            flip the bits of the byte at file offset `offset`
  status(code)            answer with that HTTP status and no file
  length(delta)           announce Content-Length + delta (send the true body, capped at the announced length)
  ignore_range()          answer a Range request with 200 and the whole file
  no_range(after)         the same for every request, closed after `after` bytes when after > 0 (a clean close,
                          so the client sees every byte and every header that was sent)
  html(content_type)      an HTML error page with status 200, chunked (no Content-Length), Content-Type `content_type`
  garbage()               `size` bytes with status 200 that are not the file (no GGUF magic)
  longer(delta)           the whole file and `delta` bytes more, chunked (no Content-Length), Range ignored
  throttle(bytes_per_s)   send slowly (for cancel and kill tests)
  huge() (listing)        an 80 MiB listing body
  moved() (listing)       a 301 to the same listing by a relative Location
The redirect chain of resolve/main uses absolute URLs; HubServer.redirect_style "path" makes its last hop an
absolute-path reference ("/cdn/..."), "dotdot" a relative one ("../../../../cdn/...").
Every request is recorded (method, path, host, Range, Authorization) in HubServer.requests.
"""
from __future__ import annotations

import hashlib
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Fault:
    kind: str
    path: str = "*"           # repository file path, or "*"
    times: int = 1
    after: int = 0
    seconds: float = 0.0
    offset: int = 0
    code: int = 500
    delta: int = 0
    bytes_per_s: int = 0
    content_type: str = "text/html; charset=utf-8"
    listing: bool = False     # applies to the listing endpoint instead of file bytes


@dataclass
class Request:
    method: str
    path: str
    host: str
    range: str | None
    authorization: str | None


class HubServer:
    def __init__(self, root: Path, redirects: int = 2):
        self.root = Path(root)
        self.redirects = redirects
        self.redirect_style = "absolute"
        self.faults: list[Fault] = []
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "HubServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def add_fault(self, kind: str, **kwargs) -> None:
        with self.lock:
            self.faults.append(Fault(kind=kind, **kwargs))

    def take_fault(self, path: str, listing: bool) -> Fault | None:
        with self.lock:
            for f in self.faults:
                if f.listing == listing and f.times > 0 and (f.path == "*" or f.path == path):
                    f.times -= 1
                    return f
        return None

    def file_requests(self, path: str) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.path.startswith("/cdn/") and r.path.endswith("/" + path)]

    def listing(self, repo: str) -> list[dict]:
        base = self.root / repo
        out = []
        for p in sorted(base.rglob("*")):
            rel = p.relative_to(base).as_posix()
            if p.is_dir():
                out.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": rel})
                continue
            data = p.read_bytes()
            entry = {"type": "file", "oid": git_blob_sha1(data), "size": len(data), "path": rel}
            if p.suffix == ".gguf":
                entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
                entry["oid"] = git_blob_sha1(b"version https://git-lfs.github.com/spec/v1\n")  # the pointer's id
            out.append(entry)
        return out


def _make_handler(server: HubServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet
            pass

        def record(self) -> None:
            with server.lock:
                server.requests.append(Request("GET", self.path, self.headers.get("Host", ""),
                                               self.headers.get("Range"), self.headers.get("Authorization")))

        def send_empty(self, code: int, extra: dict | None = None) -> None:
            self.send_response(code)
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self):
            self.record()
            path = urlsplit(self.path).path
            parts = [unquote(p) for p in path.split("/")]
            try:
                if path.startswith("/api/models/"):
                    return self.listing(parts)
                if len(parts) > 5 and parts[3] == "resolve" and parts[4] == "main":
                    return self.redirect(parts[1] + "/" + parts[2], "/".join(parts[5:]), 0)
                if parts[1] == "r" and len(parts) > 5:
                    return self.redirect(parts[3] + "/" + parts[4], "/".join(parts[5:]), int(parts[2]))
                if parts[1] == "cdn" and len(parts) > 4:
                    return self.file(parts[2] + "/" + parts[3], "/".join(parts[4:]))
                self.send_empty(404)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def listing(self, parts):
            repo = parts[3] + "/" + parts[4]
            fault = server.take_fault("*", listing=True)
            if fault and fault.kind == "status":
                return self.send_empty(fault.code)
            if fault and fault.kind == "huge":  # a listing that never ends (80 MiB of blanks)
                self.send_response(200)
                self.send_header("Content-Length", str(80 << 20))
                self.end_headers()
                for _ in range(80 * 16):
                    self.wfile.write(b" " * 65536)
                return
            if fault and fault.kind == "moved":
                return self.send_empty(301, {"Location": "main?recursive=1&moved=1"})
            if not (server.root / repo).is_dir() or parts[5:7] != ["tree", "main"]:
                return self.send_empty(404)
            body = json.dumps(server.listing(repo)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def redirect(self, repo: str, rel: str, hop: int):
            if hop < server.redirects - 1:
                target = f"{server.url}/r/{hop + 1}/{repo}/{rel}"
            elif server.redirect_style == "path":
                target = f"/cdn/{repo}/{rel}"
            elif server.redirect_style == "dotdot":  # from four folders deep (/r/N/owner/name/)
                target = "../" * (rel.count("/") + 4) + f"cdn/{repo}/{rel}"
            else:
                target = f"http://localhost:{server.port}/cdn/{repo}/{rel}"
            self.send_empty(302, {"Location": target})

        def file(self, repo: str, rel: str):
            p = server.root / repo / rel
            if not p.is_file():
                return self.send_empty(404)
            data = p.read_bytes()
            size = len(data)
            fault = server.take_fault(rel, listing=False)
            if fault and fault.kind == "status":
                extra = {"Content-Range": f"bytes */{size}"} if fault.code == 416 else {}
                return self.send_empty(fault.code, extra)
            if fault and fault.kind in ("html", "garbage", "longer"):
                return self.not_the_file(data, fault)
            if fault and fault.kind == "flip":
                data = bytearray(data)
                data[fault.offset] ^= 0xFF
                data = bytes(data)
            start, end, partial = 0, size - 1, False
            rng = self.headers.get("Range")
            if rng and not (fault and fault.kind in ("ignore_range", "no_range")):
                spec = rng.strip().removeprefix("bytes=")
                a, _, b = spec.partition("-")
                start = int(a)
                end = min(int(b), size - 1) if b else size - 1
                if start >= size:
                    return self.send_empty(416, {"Content-Range": f"bytes */{size}"})
                partial = True
            body = data[start:end + 1]
            length = len(body) + (fault.delta if fault and fault.kind == "length" else 0)
            self.send_response(206 if partial else 200)
            if partial:
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.send_header("Content-Length", str(length))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.end_headers()
            if fault and fault.kind == "length":
                self.wfile.write(body[:max(length, 0)])
                self.close_connection = True
                return
            self.send_body(body, fault)

        def not_the_file(self, data: bytes, fault: Fault):
            """A body that is not the listed file. Without a Content-Length it is sent chunked: a body ended by
            closing the connection races Qt, which may send the request again when the close comes first."""
            self.send_response(200)
            if fault.kind == "garbage":
                body = b"PK\x03\x04" + bytes(len(data) - 4)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                return self.send_body(body, None)
            if fault.kind == "html":
                body = (b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body>"
                        + b"<h1>Bad Gateway</h1>" * 100 + b"</body></html>\n")
                self.send_header("Content-Type", fault.content_type)
            else:
                body = data + b"\0" * fault.delta
                self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(body), 16384):
                chunk = body[i:i + 16384]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")

        def send_body(self, body: bytes, fault: Fault | None):
            cut = len(body)
            if fault and (fault.kind in ("drop", "truncate", "stall") or (fault.kind == "no_range" and fault.after)):
                cut = min(fault.after, len(body))
            rate = fault.bytes_per_s if fault and fault.kind == "throttle" else 0
            chunk = 16384
            sent = 0
            while sent < cut:
                n = min(chunk, cut - sent)
                self.wfile.write(body[sent:sent + n])
                sent += n
                if rate:
                    time.sleep(n / rate)
            self.wfile.flush()
            if fault and fault.kind == "stall":
                time.sleep(fault.seconds)
                self.close_connection = True
            elif fault and fault.kind == "drop" and cut < len(body):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
            elif fault and (fault.kind == "truncate" or (fault.kind == "no_range" and cut < len(body))):
                self.close_connection = True

    return Handler
