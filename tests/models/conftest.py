# SPDX-License-Identifier: MIT
"""Shared pieces of the model-manager tests: the fixture folder, a local hub, and a runner for ember-models."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hub_server import HubServer  # noqa: E402


def fixture_root() -> Path:
    root = os.environ.get("EMBER_FIXTURES")
    if not root:
        pytest.fail("EMBER_FIXTURES is not set: run the tests through ctest")
    return Path(root) / "models"


def ember_models() -> Path:
    return Path(os.environ["EMBER_BIN"]) / "ember-models"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Cli:
    """Runs ember-models against one hub and one models folder."""

    def __init__(self, hub: HubServer, models: Path, tmp: Path):
        self.hub = hub
        self.models = models
        self.env = dict(os.environ, HOME=str(tmp / "home"), HF_HUB_CACHE=str(tmp / "hf-cache"))
        self.env.pop("HF_TOKEN", None)

    def args(self, *args: str, stall: float = 1.0) -> list[str]:
        return [str(ember_models()), "--models-dir", str(self.models), "--mirror", self.hub.url,
                "--catalog", str(fixture_root() / "catalog.json"), "--stall-timeout", str(stall),
                "--retry-base-ms", "50", "--retries", "4", *args]

    def run(self, *args: str, timeout: float = 60, stall: float = 1.0, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(self.args(*args, stall=stall), env=self.env, capture_output=True, text=True,
                              timeout=timeout, **kwargs)

    def start(self, *args: str, **kwargs) -> subprocess.Popen:
        return subprocess.Popen(self.args(*args), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, **kwargs)

    def library(self) -> list[dict]:
        r = self.run("--json", "list")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    def entry(self, model_file: str) -> dict | None:
        for e in self.library():
            if any(Path(f["path"]).name == model_file and f["role"] == "model" for f in e["files"]):
                return e
        return None


@pytest.fixture
def hub():
    with HubServer(fixture_root() / "hub") as server:
        yield server


@pytest.fixture
def cli(hub, tmp_path):
    models = tmp_path / "models"
    return Cli(hub, models, tmp_path)
