# SPDX-License-Identifier: MIT
"""Loopback load on ember-cli serve: 8 clients x 20 requests (bounded, no error, first come first served, latency
and throughput printed), and a client that hangs up mid-generation frees the engine at once."""
import socket
import statistics
import threading
import time

from conftest import fixture, wait_until

CLIENTS, REQUESTS, MAX_TOKENS = 8, 20, 8


def test_eight_clients_twenty_requests(serve):
    s = serve(fixture("dense", "llama-f32.gguf"))
    latencies, tokens, orders, errors = [], [], [], []
    lock = threading.Lock()

    def client(k):
        c = s.client(timeout=60)
        for i in range(REQUESTS):
            try:
                t0 = time.monotonic()
                raw = c.chat.completions.with_raw_response.create(
                    model="any", messages=[{"role": "user", "content": f"client {k} request {i}"}],
                    max_tokens=MAX_TOKENS, temperature=0.8, seed=k * 100 + i)
                reply = raw.parse()
                elapsed = time.monotonic() - t0
                order = dict(kv.split("=") for kv in raw.headers["x-ember-queue"].split())
                with lock:
                    latencies.append(elapsed)
                    tokens.append(reply.usage.completion_tokens)
                    orders.append((int(order["admitted"]), int(order["started"])))
            except Exception as e:  # noqa: BLE001 (collected and reported below)
                with lock:
                    errors.append(repr(e))

    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    wall = time.monotonic() - t0
    assert not any(t.is_alive() for t in threads), "the load test did not end"
    assert errors == []
    assert len(latencies) == CLIENTS * REQUESTS
    # First come, first served: the engine took every request in the order the server admitted it.
    assert all(admitted == started for admitted, started in orders), sorted(orders)[:10]
    assert sorted(a for a, _ in orders) == list(range(1, CLIENTS * REQUESTS + 1))
    q = statistics.quantiles(latencies, n=100)
    p50, p99 = statistics.median(latencies), q[98]
    # Fair: with 8 clients each waits for at most the 7 others, so no request waits far longer than the median.
    assert max(latencies) < 4 * p50 + 1.0, (max(latencies), p50)
    assert s.metric("queue_length") == 0 and s.metric("requests_running") == 0
    print(f"\nload: {CLIENTS} clients x {REQUESTS} requests, {MAX_TOKENS} tokens each: p50 {p50 * 1e3:.1f} ms, "
          f"p99 {p99 * 1e3:.1f} ms, {sum(tokens) / wall:.1f} generated tokens/s overall "
          f"({len(latencies) / wall:.1f} requests/s)")


def open_stream(s, body: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", s.port))
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    return sock


def test_disconnect_frees_the_engine(serve):
    s = serve(fixture("desktop", "scripted-endless.gguf"))
    client = s.client(timeout=60)
    for stream in (True, False):
        body = ('{"messages": [{"role": "user", "content": "go"}], "max_tokens": 1000000, "stream": %s}'
                % ("true" if stream else "false")).encode()
        sock = open_stream(s, body)
        if stream:
            got = b""
            while got.count(b"data: ") < 20:
                got += sock.recv(65536)
        else:
            assert wait_until(lambda: s.metric("requests_running") == 1, 10)
            time.sleep(0.3)
        # A second request waits in the queue behind the first; the first client hangs up.
        result = {}

        def second():
            result["reply"] = client.chat.completions.create(
                model="any", messages=[{"role": "user", "content": "hi"}], max_tokens=3)
            result["done"] = time.monotonic()

        waiter = threading.Thread(target=second)
        waiter.start()
        assert wait_until(lambda: s.metric("queue_length") == 1, 10)
        closed = time.monotonic()
        sock.close()
        waiter.join(timeout=30)
        timings = result["reply"].model_extra["timings"]
        # From the hang-up to the end of the second request, less the second request's own work: how long the
        # engine stayed with the request whose client had gone (an upper bound: it includes the HTTP round trip).
        waited_ms = 1e3 * (result["done"] - closed) - timings["prompt_ms"] - timings["predicted_ms"]
        per_token_ms = 1e3 * s.metric("decode_seconds_total") / s.metric("generated_tokens_total")
        print(f"\ndisconnect ({'stream' if stream else 'plain'}): the engine was free at most {waited_ms:.1f} ms "
              f"after the client hung up ({per_token_ms:.2f} ms per token here; hang-ups are polled every 20 ms)")
        assert waited_ms < 250, waited_ms
        assert s.metric("requests_running") == 0
        assert s.alive()
