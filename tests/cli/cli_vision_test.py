# SPDX-License-Identifier: MIT
"""ember-cli with images (issue 19.6): --mmproj / --image / --max-pixels on run, chat, logits and bench, pairing
with an mmproj*.gguf beside the model, and the one-line errors. logits of an image prompt are checked against the
numpy reference (tests/reference/qwen35moe_reference.py) with the reference embeddings of the image and the M-RoPE
positions of vision-qwen3vl.md §6 worked out here."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
import qwen35moe_reference  # noqa: E402
from logit_metrics import rel_error  # noqa: E402

BIN = Path(os.environ["EMBER_BIN"])
VISION = Path(os.environ["EMBER_FIXTURES"]) / "vision"
MODEL = Path(os.environ["EMBER_FIXTURES"]) / "qwen35moe" / "qwen35moe-vision-f32.gguf"
MMPROJ = VISION / "mmproj-F32.gguf"
META = json.loads((VISION / "vision.json").read_text())
IMAGE = VISION / META["image"]
N_IMAGE = META["tokens"]                                         # 12: a 3 x 4 merged grid
ROWS, COLS = META["patch_rows"] // 2, META["patch_cols"] // 2


def cli(*args, stdin=None):
    return subprocess.run([str(BIN / "ember-cli"), *map(str, args)], capture_output=True, text=True, timeout=120,
                          input=stdin)


def one_line(result):
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def ref():
    return qwen35moe_reference.Qwen35Reference(MODEL)


def vocab_id(ref, text):
    return ref.w.key("tokenizer.ggml.tokens").index(text)


def image_prompt(ref, pads=N_IMAGE):
    """<|im_start|>He<|vision_start|> [pads x <|image_pad|>] <|vision_end|>d!\\n; the image starts at s = 4."""
    start, end, pad = (vocab_id(ref, t) for t in ("<|vision_start|>", "<|vision_end|>", "<|image_pad|>"))
    return [vocab_id(ref, "<|im_start|>"), 72, 101, start] + [pad] * pads + [end, 100, 33, 10]


def spec_positions(n_text_after):
    """§6: text t = h = w = index; image token (r, c) at (s, s + r, s + c); then s + max(rows, cols) onwards."""
    s = 4
    thw = [[p, p, p] for p in range(s)] + [[s, s + r, s + c] for r in range(ROWS) for c in range(COLS)]
    after = s + max(ROWS, COLS)
    return np.array(thw + [[p, p, p] for p in range(after, after + n_text_after)], dtype=np.int64)


# The backends the image prompt runs on: the CPU and Vulkan (lavapipe in CI) by default; EMBER_IMAGE_BACKENDS=cuda,vulkan
# on a GPU machine.
BACKENDS = os.environ.get("EMBER_IMAGE_BACKENDS", "cpu,vulkan").split(",")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch", [0, 1, 7])
def test_logits_of_an_image_prompt_match_the_reference(ref, batch, backend, tmp_path):
    tokens = image_prompt(ref)
    out = tmp_path / "logits.f32"
    r = cli("logits", "-m", MODEL, "--mmproj", MMPROJ, "--image", IMAGE, "--tokens", ",".join(map(str, tokens)),
            "-o", out, "--batch", batch, "--backend", backend, "--kv-type", "f32")
    if r.returncode != 0 and backend != "cpu" and "this build of Ember has no" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    embedding = np.fromfile(VISION / "embedding_f32.f32", np.float32).reshape(N_IMAGE, -1)
    want, _, _ = ref.forward(tokens, embedded=[(4, embedding)], thw=spec_positions(4))
    got = np.fromfile(out, np.float32).reshape(want.shape)
    assert rel_error(got, want) < 1e-4
    # The image matters: the same ids without the embeddings and positions give other logits.
    plain, _, _ = ref.forward(tokens)
    assert rel_error(plain, want) > 1e-3


@pytest.mark.parametrize("pads", [N_IMAGE - 1, N_IMAGE + 1])
def test_logits_placeholder_count_mismatch_is_one_line(ref, pads, tmp_path):
    r = cli("logits", "-m", MODEL, "--mmproj", MMPROJ, "--image", IMAGE,
            "--tokens", ",".join(map(str, image_prompt(ref, pads))), "-o", tmp_path / "x.f32", "--backend", "cpu")
    assert r.returncode == 1
    line = one_line(r)
    assert line.startswith(str(IMAGE) + ": ") and f"{N_IMAGE} tokens" in line and line.endswith(str(pads)), line


def test_logits_images_and_runs_differ_in_number(ref, tmp_path):
    r = cli("logits", "-m", MODEL, "--mmproj", MMPROJ, "--image", IMAGE, "--image", IMAGE,
            "--tokens", ",".join(map(str, image_prompt(ref))), "-o", tmp_path / "x.f32", "--backend", "cpu")
    assert r.returncode == 1
    assert "1 run(s) of <|image_pad|> ids for 2 images" in one_line(r)


def test_image_without_projector_is_one_line():
    r = cli("run", "-m", MODEL, "--chat", "--image", IMAGE, "-p", "hi", "-n", "2", "--backend", "cpu")
    assert r.returncode == 1
    line = one_line(r)
    assert line.startswith(str(IMAGE) + ": ") and "no vision projector" in line, line


@pytest.mark.parametrize("name", ["text.png", "truncated.png", "bomb.png", "missing.png"])
def test_unreadable_image_is_one_line_naming_it(name):
    path = VISION / name
    r = cli("run", "-m", MODEL, "--mmproj", MMPROJ, "--chat", "--image", path, "-p", "hi", "-n", "2",
            "--backend", "cpu")
    assert r.returncode == 1
    assert one_line(r).startswith(str(path) + ": ")


def test_image_needs_chat():
    r = cli("run", "-m", MODEL, "--mmproj", MMPROJ, "--image", IMAGE, "-p", "hi")
    assert r.returncode == 2 and "--image needs --chat" in r.stderr


def test_a_projector_for_a_model_that_cannot_read_images_names_both_files():
    other = Path(os.environ["EMBER_FIXTURES"]) / "dense" / "llama-f32.gguf"
    r = cli("run", "-m", other, "--mmproj", MMPROJ, "--chat", "-p", "hi", "-n", "1", "--backend", "cpu")
    assert r.returncode == 1
    line = one_line(r)
    assert str(MMPROJ) in line and str(other) in line, line


def test_run_chat_with_an_image(tmp_path):
    r = cli("run", "-m", MODEL, "--mmproj", MMPROJ, "--chat", "--image", IMAGE, "-p", "what is it?", "-n", "3",
            "--backend", "cpu", "--temp", "0")
    assert r.returncode == 0, r.stderr
    assert f"[{N_IMAGE} image tokens of the prompt" in r.stderr
    assert "[vision projector: " + str(MMPROJ) in r.stderr


def test_a_projector_beside_the_model_is_paired(tmp_path):
    (tmp_path / MODEL.name).symlink_to(MODEL)
    (tmp_path / "mmproj-F32.gguf").symlink_to(MMPROJ)
    (tmp_path / "mmproj-wrong-width.gguf").write_bytes(b"GGUF not really")  # unreadable: skipped
    model = tmp_path / MODEL.name
    r = cli("run", "-m", model, "--chat", "--image", IMAGE, "-p", "hi", "-n", "2", "--backend", "cpu")
    assert r.returncode == 0, r.stderr
    assert "[vision projector: " + str(tmp_path / "mmproj-F32.gguf") in r.stderr
    info = cli("info", model)
    assert info.returncode == 0 and "paired projector      " + str(tmp_path / "mmproj-F32.gguf") in info.stdout
    r = cli("run", "-m", model, "--no-mmproj", "--chat", "-p", "hi", "-n", "1", "--backend", "cpu")
    assert r.returncode == 0 and "vision projector" not in r.stderr


def test_max_pixels_lowers_the_token_count(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
    from make_vision_fixtures import png_bytes, test_image
    big = tmp_path / "big_300x400.png"
    big.write_bytes(png_bytes(test_image(300, 400, 7)))
    tokens = {}
    for limit in (None, 16384):
        extra = ["--max-pixels", limit] if limit else []
        r = cli("bench", "-m", MODEL, "--mmproj", MMPROJ, "--image", big, *extra, "-p", 4, "-n", 1, "-r", 1, "--json",
                "--backend", "cpu")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["projector"]["path"] == str(MMPROJ)
        tokens[limit] = out["images"][0]["tokens"]
        if limit:
            assert out["projector"]["max_pixels"] == limit
    assert tokens == {None: 9 * 12, 16384: 3 * 4}  # smart_resize: 288 x 384, and 96 x 128 under the limit


def test_bench_json_names_the_projector_and_times_the_image():
    r = cli("bench", "-m", MODEL, "--mmproj", MMPROJ, "--image", IMAGE, "-p", 4, "-n", 1, "-r", 2, "--json",
            "--backend", "cpu")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["projector"]["projection_dim"] == 64
    image = out["images"][0]
    assert image["tokens"] == N_IMAGE and image["grid"] == [1, ROWS, COLS]
    assert len(image["encode_seconds"]["runs"]) == 2


def test_chat_attaches_an_image_to_the_next_message():
    script = f"/image {VISION / 'text.png'}\n/image {IMAGE}\nwhat is it?\nand now?\n"
    r = cli("chat", "-m", MODEL, "--mmproj", MMPROJ, "-n", "2", "--temp", "0", "--backend", "cpu", stdin=script)
    assert r.returncode == 0, r.stderr
    assert str(VISION / "text.png") + ": " in r.stderr  # refused, the chat goes on
    assert f"[{IMAGE} attached to the next message]" in r.stderr
    assert r.stderr.count("[reading image 1 of 1]") >= 1
