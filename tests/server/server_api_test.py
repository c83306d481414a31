# SPDX-License-Identifier: MIT
"""ember-cli serve through the official openai client: models, chat (plain and streamed), completions, reasoning,
tool calls, structured output, prompt reuse, the API key, health and metrics."""
import json

import openai
import pytest

from conftest import expected, fixture, small_model

# As OpenAI clients commonly send it (the small model needs the system line to answer in English).
QUESTION = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "What is the capital of France?"}]


def test_models_health_and_metrics(serve):
    s = serve(small_model(), "--alias", "smollm2")
    models = s.client().models.list()
    assert [m.id for m in models.data] == ["smollm2"]
    assert s.get("/health") == (200, '{"status":"ok"}')
    assert s.metric("queue_length") == 0


def test_small_model_answers_paris(serve):
    s = serve(small_model())
    client = s.client()
    reply = client.chat.completions.create(model="any", messages=QUESTION, temperature=0, max_tokens=40)
    assert "Paris" in reply.choices[0].message.content
    assert reply.choices[0].finish_reason in ("stop", "length")
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens

    stream = client.chat.completions.create(model="any", messages=QUESTION, temperature=0, max_tokens=40,
                                            stream=True, stream_options={"include_usage": True})
    text, usage, finish = "", None, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    assert "Paris" in text
    assert text == reply.choices[0].message.content  # greedy: the same answer, streamed
    assert finish in ("stop", "length")
    assert usage.completion_tokens == reply.usage.completion_tokens
    # The second request repeats the first prompt: all but its last token come from the session.
    assert usage.prompt_tokens_details.cached_tokens == usage.prompt_tokens - 1

    done = client.completions.create(model="any", prompt="The capital of France is", max_tokens=5, temperature=0)
    assert "Paris" in done.choices[0].text
    assert s.metric("generated_tokens_total") >= 2 * reply.usage.completion_tokens + 1


def test_cached_tokens_on_the_second_turn(serve):
    s = serve(small_model())
    client = s.client()
    messages = list(QUESTION)
    first = client.chat.completions.create(model="any", messages=messages, temperature=0, max_tokens=16)
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    messages += [{"role": "assistant", "content": first.choices[0].message.content},
                 {"role": "user", "content": "And of Germany?"}]
    second = client.chat.completions.create(model="any", messages=messages, temperature=0, max_tokens=16)
    cached = second.usage.prompt_tokens_details.cached_tokens
    assert cached >= first.usage.prompt_tokens, (cached, first.usage.prompt_tokens)
    assert second.model_extra["timings"]["cache_n"] == cached


def test_reasoning_content_is_separated(serve):
    s = serve(fixture("desktop", "scripted.gguf"))
    want = expected("desktop", "expected.json")
    client = s.client()
    reply = client.chat.completions.create(model="any", messages=QUESTION, temperature=0)
    message = reply.choices[0].message
    assert message.reasoning_content == want["reasoning"]
    assert message.content == want["answer"]

    stream = client.chat.completions.create(model="any", messages=QUESTION, temperature=0, stream=True)
    reasoning, content = "", ""
    for chunk in stream:
        for choice in chunk.choices:
            reasoning += getattr(choice.delta, "reasoning_content", None) or ""
            content += choice.delta.content or ""
    assert (reasoning, content) == (want["reasoning"], want["answer"])

    # Thinking off, either way: no reasoning at all.
    for extra in ({"reasoning_effort": "none"}, {"extra_body": {"chat_template_kwargs": {"enable_thinking": False}}}):
        reply = client.chat.completions.create(model="any", messages=QUESTION, temperature=0, **extra)
        assert getattr(reply.choices[0].message, "reasoning_content", None) is None
        assert reply.choices[0].message.content == want["answer"]


WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def test_tool_call_round_trip(serve):
    s = serve(fixture("server", "scripted-tools.gguf"))
    want = expected("server", "expected.json")
    client = s.client()
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    reply = client.chat.completions.create(model="any", messages=messages, tools=[WEATHER_TOOL], temperature=0)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.function.name == want["call"]["name"]
    assert json.loads(call.function.arguments) == want["call"]["arguments"]
    assert not choice.message.content

    # Streamed, the call arrives as one tool_calls delta.
    stream = client.chat.completions.create(model="any", messages=messages, tools=[WEATHER_TOOL], temperature=0,
                                            stream=True)
    calls, finish = [], None
    for chunk in stream:
        for c in chunk.choices:
            calls += c.delta.tool_calls or []
            finish = c.finish_reason or finish
    assert finish == "tool_calls" and [c.function.name for c in calls] == ["get_weather"]

    messages += [choice.message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": '{"sky": "sunny"}'}]
    answer = client.chat.completions.create(model="any", messages=messages, tools=[WEATHER_TOOL], temperature=0)
    assert answer.choices[0].message.content == want["answer"]
    assert answer.choices[0].finish_reason == "stop"


PERSON = {"type": "object", "additionalProperties": False, "required": ["name", "age", "pets"],
          "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                         "pets": {"type": "array", "maxItems": 3, "items": {"enum": ["cat", "dog", "fish"]}},
                         "home": {"type": "object", "properties": {"city": {"type": "string"}},
                                  "required": ["city"], "additionalProperties": False}}}


def validates(value, schema) -> bool:
    """The subset of JSON Schema the tests use."""
    if "enum" in schema:
        return value in schema["enum"]
    kind = schema.get("type")
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "array":
        return (isinstance(value, list) and len(value) <= schema.get("maxItems", len(value))
                and all(validates(v, schema["items"]) for v in value))
    if kind == "object":
        props = schema.get("properties", {})
        return (isinstance(value, dict) and all(k in value for k in schema.get("required", []))
                and (schema.get("additionalProperties", True) or set(value) <= set(props))
                and all(validates(v, props[k]) for k, v in value.items() if k in props))
    return True


# For the random model every string is an enum: a random walk inside a free string would take hundreds of tokens
# to draw its closing quote.
PERSON_ENUMS = {"type": "object", "additionalProperties": False, "required": ["name", "age", "pets"],
                "properties": {"name": {"enum": ["Ann", "Bob"]}, "age": {"type": "integer"},
                               "pets": {"type": "array", "maxItems": 3, "items": {"enum": ["cat", "dog", "fish"]}}}}


def ask_json(client, fmt, seed):
    messages = [{"role": "user", "content": "Describe a person called Ann, 31, with a cat, as JSON."}]
    reply = client.chat.completions.create(model="any", messages=messages, response_format=fmt, temperature=0.7,
                                           seed=seed, max_tokens=300)
    assert reply.choices[0].finish_reason == "stop", reply.choices[0].message.content
    return json.loads(reply.choices[0].message.content)


def test_json_schema_with_a_random_model(serve):
    # A model with random weights writes valid JSON only because the sampler is constrained token by token.
    s = serve(fixture("dense", "llama-f32.gguf"))
    client = s.client()
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON_ENUMS, "strict": True}}
    for seed in (1, 2, 3):
        value = ask_json(client, fmt, seed)
        assert validates(value, PERSON_ENUMS), value
    free = client.chat.completions.create(model="any", temperature=0.7, seed=1, max_tokens=60,
                                          messages=[{"role": "user", "content": "JSON please"}])
    with pytest.raises(ValueError):
        json.loads(free.choices[0].message.content)  # unconstrained, the same model writes no JSON


def test_json_schema_and_json_object_with_the_small_model(serve):
    s = serve(small_model())
    client = s.client()
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}}
    for seed in (1, 2):
        value = ask_json(client, fmt, seed)
        assert validates(value, PERSON), value
    assert isinstance(ask_json(client, {"type": "json_object"}, 3), dict)


def test_api_key_is_enforced(serve):
    s = serve(fixture("dense", "llama-f32.gguf"), "--api-key", "s3cret-key")
    with pytest.raises(openai.AuthenticationError) as e:
        s.client(api_key="wrong").models.list()
    assert e.value.body["code"] == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        s.client(api_key="s3cret-ke").chat.completions.create(model="any", messages=QUESTION, max_tokens=2)
    assert s.get("/metrics")[0] == 401
    assert s.get("/health")[0] == 200  # health checks need no key
    ok = s.client(api_key="s3cret-key")
    assert ok.models.list().data
    assert ok.chat.completions.create(model="any", messages=QUESTION, max_tokens=2).usage.completion_tokens == 2
