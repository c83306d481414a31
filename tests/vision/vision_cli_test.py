# SPDX-License-Identifier: MIT
# ember-cli embed-image and ember-gguf inspect on the vision fixtures.
import json
import os
import subprocess

import numpy as np

FIX = os.path.join(os.environ["EMBER_FIXTURES"], "vision")
BIN = os.environ["EMBER_BIN"]


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


def test_embed_image_writes_reference_rows(tmp_path):
    out = tmp_path / "emb.f32"
    meta = json.load(open(os.path.join(FIX, "vision.json")))
    r = run(os.path.join(BIN, "ember-cli"), "embed-image", "--mmproj", os.path.join(FIX, "mmproj-F32.gguf"),
            "--image", os.path.join(FIX, meta["image"]), "-o", str(out), "--json", "--repeat", "2")
    if "not available" in r.stderr:
        import pytest
        pytest.skip("backend op missing: " + r.stderr.strip())
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["tokens"] == meta["tokens"]
    assert info["grid"] == [1, meta["patch_rows"] // 2, meta["patch_cols"] // 2]
    assert info["n_embd"] == 64
    assert len(info["seconds"]) == 2
    got = np.fromfile(out, np.float32)
    want = np.fromfile(os.path.join(FIX, "embedding_f32.f32"), np.float32)
    assert got.shape == want.shape
    assert np.abs(got - want).max() / np.abs(want).max() < 1e-4


def test_embed_image_bad_image_is_one_line(tmp_path):
    path = os.path.join(FIX, "text.png")
    r = run(os.path.join(BIN, "ember-cli"), "embed-image", "--mmproj", os.path.join(FIX, "mmproj-F32.gguf"),
            "--image", path, "-o", str(tmp_path / "x.f32"))
    assert r.returncode == 1
    assert r.stderr.strip() == path + ": not an image (unsupported format)"


def test_inspect_shows_projector_facts():
    r = run(os.path.join(BIN, "ember-gguf"), "inspect", os.path.join(FIX, "mmproj-F16.gguf"))
    assert r.returncode == 0, r.stderr
    for fact in ("qwen3vl_merger", "blocks 2", "width 64", "heads 4", "patch 16", "merge 2",
                 "projection_dim 64", "pixels 8192-131072"):
        assert fact in r.stdout, fact
