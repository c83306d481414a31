# SPDX-License-Identifier: MIT
"""The bad-request table: every malformed or hostile request gets a 4xx with an OpenAI error object (or a closed
connection, for a client too slow to send one), and the server keeps serving."""
import base64
import json
import socket
import time

import pytest

from conftest import fixture

GOOD = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 32).decode()


@pytest.fixture(scope="module")
def server():
    from conftest import Server
    s = Server(fixture("dense", "llama-f32.gguf"), "--ctx", "64", "--request-timeout", "1.5", "--max-body-mb", "8")
    yield s
    s.stop()


def http(s, raw: bytes, timeout=30.0):
    """Sends raw bytes, returns (status, body as JSON or text)."""
    with socket.create_connection(("127.0.0.1", s.port), timeout=timeout) as sock:
        try:
            sock.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before reading everything: read its answer
        data = b""
        while True:
            try:
                part = sock.recv(65536)
            except ConnectionResetError:
                break
            if not part:
                break
            data += part
            head, _, body = data.partition(b"\r\n\r\n")
            length = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")]
            if length and len(body) >= length[0]:
                break
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode(errors="replace")


def post(s, body, path="/v1/chat/completions", content_length=None):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    n = len(data) if content_length is None else content_length
    return http(s, b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Connection: close\r\nContent-Length: " + str(n).encode() + b"\r\n\r\n" + data)


CASES = {
    "malformed json": (b'{"messages": [', 400, "not valid JSON"),
    "not an object": ([1, 2], 400, "must be a JSON object"),
    "missing messages": ({"max_tokens": 3}, 400, "messages: is missing"),
    "empty messages": ({"messages": []}, 400, "messages: must be a non-empty list"),
    "messages wrong type": ({"messages": "hi"}, 400, "messages: must be a non-empty list"),
    "role wrong type": ({"messages": [{"role": 3, "content": "x"}]}, 400, "messages[0].role: must be a string"),
    "unknown role": ({"messages": [{"role": "wizard", "content": "x"}]}, 400, "'wizard' is not one of"),
    "content wrong type": ({"messages": [{"role": "user", "content": 7}]}, 400, "messages[0].content"),
    "temperature wrong type": ({**GOOD, "temperature": "hot"}, 400, "temperature: must be a number"),
    "temperature out of range": ({**GOOD, "temperature": 9}, 400, "temperature: must be between"),
    "max_tokens negative": ({**GOOD, "max_tokens": -1}, 400, "max_tokens: must be between"),
    "max_tokens fractional": ({**GOOD, "max_tokens": 2.5}, 400, "max_tokens: must be an integer"),
    "stream wrong type": ({**GOOD, "stream": "yes"}, 400, "stream: must be true or false"),
    "stop wrong type": ({**GOOD, "stop": 5}, 400, "stop: must be a string"),
    "tools wrong type": ({**GOOD, "tools": {"a": 1}}, 400, "tools: must be a list"),
    "bad response_format": ({**GOOD, "response_format": {"type": "yaml"}}, 400, "response_format.type"),
    "unsupported schema": ({**GOOD, "response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"anyOf": [{"type": "string"}]}}}}, 400, "'anyOf' is not supported"),
    "n > 1": ({**GOOD, "n": 2}, 400, "n: only 1 choice"),
    "bad base64 image": ({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,@@not base64@@"}}]}]}, 400,
        "not valid base64"),
    "image without projector": ({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG}}]}]}, 400,
        "this model has no vision projector"),
    "remote image": ({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]}]}, 400,
        "remote image URLs are not allowed"),
    "context overflow": ({"messages": [{"role": "user", "content": "word " * 200}]}, 400, "context full"),
}


@pytest.mark.parametrize("name", CASES)
def test_bad_request(server, name):
    body, status, message = CASES[name]
    got_status, got = post(server, body)
    assert got_status == status, got
    assert message in got["error"]["message"], got
    assert got["error"]["type"] == "invalid_request_error"
    assert server.alive()


def test_completions_and_unknown_paths(server):
    assert post(server, {"prompt": 3}, "/v1/completions")[1]["error"]["param"] == "prompt"
    status, got = http(server, b"GET /v1/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 404 and got["error"]["code"] == "not_found"
    assert post(server, GOOD)[0] == 200


def test_ten_megabyte_body(server):
    # httplib reads an oversized body through (discarding it, so memory stays bounded), then answers 413.
    body = b'{"messages": [{"role": "user", "content": "' + b"x" * (10 << 20) + b'"}]}'
    status, got = post(server, body)
    assert status == 413 and "larger than" in got["error"]["message"], got
    assert server.alive()


def test_slowloris_is_cut_off(server):
    # A client that sends its request a byte at a time never gets past the request deadline (1.5 s here), and
    # other clients are served meanwhile.
    slow = socket.create_connection(("127.0.0.1", server.port))
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
    t0 = time.monotonic()
    closed_after = None
    for byte in request * 10:
        try:
            slow.sendall(bytes([byte]))
            time.sleep(0.1)
            if time.monotonic() - t0 > 1.0:
                assert post(server, GOOD)[0] == 200  # served while the slow client dribbles
            slow.settimeout(0.001)
            if slow.recv(1) == b"":
                closed_after = time.monotonic() - t0
                break
        except socket.timeout:
            continue
        except (BrokenPipeError, ConnectionResetError):
            closed_after = time.monotonic() - t0
            break
        if time.monotonic() - t0 > 8:
            break
    slow.close()
    assert closed_after is not None and closed_after < 4, closed_after
    assert server.alive()
