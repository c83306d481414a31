# SPDX-License-Identifier: MIT
"""Images through the OpenAI-compatible server (issue 19): ember-cli serve on the tiny vision text model with the
small projector, driven by the official openai client. image_url parts with data: URLs reach the model (usage
counts the image tokens), a corrupt image or a remote URL is a 400 naming the part, and /v1/models tells that the
model reads images."""
import base64
import json
import os
from pathlib import Path

import openai
import pytest

from conftest import fixture

VISION = Path(os.environ.get("EMBER_FIXTURES", "build/fixtures")) / "vision"


def data_url(path: Path, mime="image/png") -> str:
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode()


@pytest.fixture(scope="module")
def server():
    from conftest import Server
    s = Server(fixture("qwen35moe", "qwen35moe-vision-f32.gguf"), "--mmproj", str(fixture("vision", "mmproj-F32.gguf")),
               "--ctx", "256", "--backend", "cpu")
    yield s
    s.stop()


def ask(client, content, **kwargs):
    return client.chat.completions.create(model="any", messages=[{"role": "user", "content": content}],
                                          temperature=0, max_tokens=3, **kwargs)


def test_models_lists_vision(server):
    status, body = server.get("/v1/models")
    assert status == 200
    assert json.loads(body)["data"][0]["meta"]["vision"] is True


def test_image_tokens_are_counted_in_the_prompt(server):
    meta = json.loads(fixture("vision", "vision.json").read_text())
    client = server.client()
    text_only = ask(client, [{"type": "text", "text": "what is it?"}])
    image_url = data_url(fixture("vision", meta["image"]))
    with_image = ask(client, [{"type": "image_url", "image_url": {"url": image_url}},
                              {"type": "text", "text": "what is it?"}])
    # The template adds <|vision_start|><|image_pad|><|vision_end|>; the pad expands to the image's tokens.
    assert with_image.usage.prompt_tokens == text_only.usage.prompt_tokens + meta["tokens"] + 2
    raw = with_image.model_extra.get("timings") or {}
    assert raw.get("image_n") == meta["tokens"]

    # Streamed, with usage: the same count; two images count twice.
    stream = client.chat.completions.create(
        model="any", temperature=0, max_tokens=2, stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": image_url}},
                                               {"type": "image_url", "image_url": {"url": image_url}},
                                               {"type": "text", "text": "what is it?"}]}])
    usage = [c.usage for c in stream if c.usage][0]
    assert usage.prompt_tokens == text_only.usage.prompt_tokens + 2 * (meta["tokens"] + 2)


@pytest.mark.parametrize("name", ["text.png", "truncated.png", "bomb.png", "zero.png"])
def test_corrupt_image_is_a_400_naming_the_part(server, name):
    client = server.client()
    with pytest.raises(openai.BadRequestError) as e:
        ask(client, [{"type": "text", "text": "look"},
                     {"type": "image_url", "image_url": {"url": data_url(fixture("vision", name))}}])
    error = e.value.response.json()["error"]
    assert error["param"] == "messages[0].content[1].image_url.url"
    assert error["message"].startswith("messages[0].content[1].image_url.url: ")
    assert error["code"] == "invalid_image"
    assert ask(client, "still there?").choices[0].message.content is not None  # the server keeps serving


def test_remote_image_url_is_refused(server):
    with pytest.raises(openai.BadRequestError) as e:
        ask(server.client(), [{"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}])
    assert "remote image URLs are not allowed" in e.value.response.json()["error"]["message"]


def test_server_without_projector_refuses_images(serve, tmp_path):
    s = serve(fixture("qwen35moe", "qwen35moe-vision-f32.gguf"), "--no-mmproj", "--ctx", "64", "--backend", "cpu")
    status, body = s.get("/v1/models")
    assert json.loads(body)["data"][0]["meta"]["vision"] is False
    with pytest.raises(openai.BadRequestError) as e:
        ask(s.client(), [{"type": "image_url", "image_url": {"url": data_url(fixture("vision", "image_50x70.png"))}}])
    assert "no vision projector" in e.value.response.json()["error"]["message"]
