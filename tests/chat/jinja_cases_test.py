# SPDX-License-Identifier: MIT
"""The records of jinja_cases.json are jinja2's own behaviour: each template, rendered by Python jinja2 under
Hugging Face's settings (render_golden.py's environment), gives the recorded output or raises. chat_test checks
Ember against the same records."""
import copy
import json
import os
import sys
from pathlib import Path

import pytest

TEMPLATES = Path(os.environ["EMBER_SHARED_DATA"]) / "templates"
sys.path.insert(0, str(TEMPLATES))
import render_golden  # noqa: E402  (the golden setup: environment, tojson, raise_exception, pinned strftime_now)

DATA = json.loads((Path(__file__).parent / "jinja_cases.json").read_text(encoding="utf-8"))
ENV = render_golden.make_env()


@pytest.mark.parametrize("case", DATA["cases"], ids=[c["name"] for c in DATA["cases"]])
def test_record_is_jinja2_behaviour(case):
    variables = copy.deepcopy(DATA["variables"])
    if "expected" in case:
        assert ENV.from_string(case["template"]).render(**variables) == case["expected"]
    else:
        with pytest.raises(Exception):
            ENV.from_string(case["template"]).render(**variables)


def test_records_cover_the_listed_filters_and_statements():
    text = " ".join(c["template"] for c in DATA["cases"])
    for name in ["tojson", "trim", "length", "first", "last", "join", "map", "select", "reject", "selectattr",
                 "rejectattr", "default", "replace", "string", "int", "float", "list", "unique", "sort", "dictsort",
                 "items", "indent", "lower", "upper", "capitalize", "title", "safe", "round", "abs"]:
        assert f"|{name}" in text or f"| {name}" in text, name
    for tag in ["{% if", "{% elif", "{% for", "{% else", "{% set", "{% endset", "{% macro", "{% call", "namespace(",
                "{% filter", "{% raw", "{% break", "{% continue", "loop.", "caller("]:
        assert tag in text, tag
