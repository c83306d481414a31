# SPDX-License-Identifier: MIT
"""Ember against Python jinja2 on generated templates: typed random expressions (operators, filters, tests,
methods, slicing over strings, numbers, lists and dicts) and random whitespace-control layouts. Each is rendered
by jinja2 under Hugging Face's settings and by `ember-cli template` (variables passed as kwargs); the outputs
must be identical, or both must fail."""
import copy
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

TEMPLATES = Path(os.environ["EMBER_SHARED_DATA"]) / "templates"
sys.path.insert(0, str(TEMPLATES))
import render_golden  # noqa: E402

CLI = Path(os.environ["EMBER_BIN"]) / "ember-cli"
ENV = render_golden.make_env()
VARIABLES = {
    "n": 7, "m": -3, "f": 2.5, "g": -0.125, "s": "Hello, World", "u": "naïve café 日本 😀", "e": "", "w": "  padded\ttext \n",
    "xs": [4, -1, 9, 0, 3], "ys": [1.5, 2, -3], "ws": ["pear", "Apple", "fig", "apple", "Date"],
    "d": {"k": "v", "n": 2, "nested": {"a": [1, 2]}, "Z": None}, "t": True, "no": False, "nul": None,
    "people": [{"name": "ann", "age": 31, "team": "x"}, {"name": "Bob", "age": 25, "team": "y"},
               {"name": "cid", "age": 31, "team": "x"}],
}

INTS = ["n", "m", "0", "1", "2", "-5", "13", "xs[0]", "xs[-1]", "d.n", "d['n']", "xs|length", "s|length", "u|length",
        "ws|length", "xs|sum", "xs|max", "xs|min", "people[1].age", "s.find('o')", "s.count('l')", "'42'|int",
        "f|int", "range(4)|sum", "xs|first", "xs|last"]
FLOATS = ["f", "g", "1.25", "-0.5", "1e3", "2.5e-3", "ys[0]", "n / 4", "'3.5'|float", "n|float"]
STRS = ["s", "u", "e", "w", "'abc'", "'it''s'", "\"q\\\"t\"", "'tab\\tnew\\nline'", "'é😀'", "ws[1]", "d.k", "people[0].name",
        "'a-b_c d'", "'  x  '", "'%'", "'{}'"]
LISTS = ["xs", "ys", "ws", "[]", "[1, 'a', none]", "[3, 1, 2]", "['b', 'a', 'B']", "people|map(attribute='name')|list",
         "d|list", "range(5)|list", "range(10, 0, -3)|list", "(1, 2)", "s|list", "ws[1:3]"]
DICTS = ["d", "{}", "{'b': 1, 'a': [2, 3]}", "people[0]", "d.nested", "dict(x=1, y='z')"]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def pick(self, xs):
        return self.r.choice(xs)

    def int_(self, depth):
        if depth <= 0 or self.r.random() < 0.35:
            return self.pick(INTS)
        a, b = self.int_(depth - 1), self.int_(depth - 1)
        return self.pick([f"({a} + {b})", f"({a} - {b})", f"({a} * {b})", f"({a} // 3)", f"({a} % 4)",
                          f"({a} // -2)", f"({a} % -3)", f"({a}|abs)", f"({self.str_(depth - 1)}|length)",
                          f"({self.list_(depth - 1)}|length)", f"({a} if {self.bool_(depth - 1)} else {b})",
                          f"(({a}) ** 2)", f"({self.float_(depth - 1)}|round|int)"])

    def float_(self, depth):
        if depth <= 0 or self.r.random() < 0.4:
            return self.pick(FLOATS)
        a = self.float_(depth - 1)
        return self.pick([f"({a} + {self.int_(depth - 1)})", f"({a} * {a})", f"({self.int_(depth - 1)} / 8)",
                          f"({a}|round(1))", f"({a}|round(0, 'floor'))", f"({a}|abs)", f"(-{a})", f"({a} // 0.75)",
                          f"({a} % 0.75)"])

    def str_(self, depth):
        if depth <= 0 or self.r.random() < 0.3:
            return self.pick(STRS)
        a = self.str_(depth - 1)
        return self.pick([
            f"({a} ~ {self.any_(depth - 1)})", f"({a} + {self.str_(depth - 1)})", f"({a}|upper)", f"({a}|lower)",
            f"({a}|trim)", f"({a}|title)", f"({a}|capitalize)", f"({a}|replace('l', 'L'))", f"({a}|reverse)",
            f"({a}[1:4])", f"({a}[::-1])", f"({a}[-3:])", f"({a}[::2])", f"({a}.strip())", f"({a}.lstrip('H '))",
            f"({a}.rstrip('d\\n'))", f"({a}.split()|join('_'))", f"({a}.split('l')|join('|'))",
            f"({self.list_(depth - 1)}|join(', '))", f"({self.any_(depth - 1)}|string)", f"({self.any_(depth - 1)}|tojson)",
            f"({self.json_(depth - 1)}|tojson(indent=2))", f"({self.json_(depth - 1)}|tojson(sort_keys=true))",
            f"('%s|%d'|format({a}, {self.int_(depth - 1)}))", f"('{{}}:{{}}'.format({a}, {self.int_(depth - 1)}))",
            f"({a} * 2)", f"({a}|indent(2))", f"({a}|center(20))", f"({a}.title())", f"({a}.replace(' ', ''))",
            f"({a}|truncate(12))", f"({a}|wordcount|string)", f"({a}.zfill(6))", f"({a}|default('dflt'))",
            f"(undefined_name|default({a}))", f"({self.dict_(depth - 1)}|dictsort|string)",
        ])

    def list_(self, depth):
        if depth <= 0 or self.r.random() < 0.35:
            return self.pick(LISTS)
        a = self.list_(depth - 1)
        return self.pick([
            "(xs|sort)", "(ws|sort)", "(ws|sort(case_sensitive=true))", f"({a}|sort(reverse=true))",
            f"({a}|reverse|list)", f"({a}[1:])", f"({a}[::-1])", f"({a} + {self.list_(depth - 1)})",
            f"({self.str_(depth - 1)}.split())", f"(ws|unique|list)", f"({a}|map('string')|list)",
            f"(xs|select('odd')|list)", f"(xs|reject('even')|list)", f"(xs|select('gt', 2)|list)",
            f"(people|selectattr('age', 'equalto', 31)|map(attribute='name')|list)",
            f"(people|rejectattr('team', '==', 'x')|list)", f"(people|sort(attribute='age,name')|map(attribute='name')|list)",
            f"({self.dict_(depth - 1)}|dictsort)", f"({self.dict_(depth - 1)}|items|list)", f"(ws|map('upper')|list)",
            f"([{self.int_(depth - 1)}, {self.str_(depth - 1)}])", f"(range({self.pick(['3', '0', '6', '-2'])})|list)",
        ])

    def dict_(self, depth):
        if depth <= 0 or self.r.random() < 0.5:
            return self.pick(DICTS)
        return f"{{'k{self.r.randint(0, 9)}': {self.any_(depth - 1)}, 'z': {self.json_(depth - 1)}}}"

    def json_(self, depth):
        return self.pick([self.int_(depth), self.str_(depth), self.list_(depth), self.dict_(depth), "none", "true", "f"])

    def bool_(self, depth):
        if depth <= 0 or self.r.random() < 0.3:
            return self.pick(["t", "no", "true", "false", "nul is none", "n is odd", "undefined_name is defined"])
        a, b = self.int_(depth - 1), self.int_(depth - 1)
        return self.pick([
            f"({a} < {b})", f"({a} == {b})", f"({a} >= {self.float_(depth - 1)})", f"({self.str_(depth - 1)} in {self.str_(depth - 1)})",
            f"({a} in {self.list_(depth - 1)})", f"('k' in {self.dict_(depth - 1)})", f"(not {self.bool_(depth - 1)})",
            f"({self.bool_(depth - 1)} and {self.bool_(depth - 1)})", f"({self.bool_(depth - 1)} or {self.bool_(depth - 1)})",
            f"({self.any_(depth - 1)} is string)", f"({self.any_(depth - 1)} is number)", f"({self.any_(depth - 1)} is mapping)",
            f"({self.any_(depth - 1)} is iterable)", f"({self.any_(depth - 1)} is sequence)", f"({a} is divisibleby 3)",
            f"({self.str_(depth - 1)}.startswith('H'))", f"({self.str_(depth - 1)}.endswith(('d', 'e')))",
            f"({self.str_(depth - 1)} is lower)", f"({self.list_(depth - 1)} == {self.list_(depth - 1)})",
            f"({self.str_(depth - 1)} < {self.str_(depth - 1)})",
        ])

    def any_(self, depth):
        return self.pick([self.int_, self.float_, self.str_, self.list_, self.dict_, self.bool_])(depth)

    def statement(self, depth):
        kind = self.r.randint(0, 5)
        if kind == 0:
            return f"{{{{ {self.any_(depth)} }}}}"
        if kind == 1:
            return f"{{% if {self.bool_(depth)} %}}A{{{{ {self.int_(1)} }}}}{{% elif {self.bool_(1)} %}}B{{% else %}}C{{% endif %}}"
        if kind == 2:
            return (f"{{% for x in {self.list_(depth)} %}}{{{{ loop.index }}}}:{{{{ x }}}}"
                    f"{{% if not loop.last %}},{{% endif %}}{{% else %}}empty{{% endfor %}}")
        if kind == 3:
            return f"{{% set v = {self.any_(depth)} %}}[{{{{ v }}}}|{{{{ v|string|length }}}}]"
        if kind == 4:
            return (f"{{% macro m(a, b='B') %}}<{{{{ a }}}}/{{{{ b }}}}>{{% endmacro %}}"
                    f"{{{{ m({self.any_(depth - 1)}) }}}}{{{{ m(1, b={self.str_(1)}) }}}}")
        return (f"{{% set ns = namespace(acc=0) %}}{{% for x in xs %}}{{% set ns.acc = ns.acc + x * {self.int_(1)} %}}"
                f"{{% endfor %}}{{{{ ns.acc }}}}")


def whitespace_layout(r):
    """Text with spaces, tabs and newlines around tags with random -/+ markers: trim_blocks, lstrip_blocks and
    whitespace control interacting."""
    pieces = []
    for _ in range(r.randint(3, 9)):
        pieces.append(r.choice(["", " ", "  ", "\t", "\n", "\n  ", "text", "a b", " \n \n", "x\n    "]))
        left = r.choice(["", "-", "+"])
        right = r.choice(["", "-", "+"])
        pieces.append(r.choice([
            f"{{%{left} if t {right}%}}IN{{%{r.choice(['', '-'])} endif {r.choice(['', '-', '+'])}%}}",
            f"{{{{{r.choice(['', '-'])} n {r.choice(['', '-'])}}}}}",
            f"{{#{r.choice(['', '-'])} note {r.choice(['', '-', '+'])}#}}",
            f"{{%{left} for i in [1, 2] {right}%}}\n  <{{{{ i }}}}>\n{{%{r.choice(['', '-'])} endfor {r.choice(['', '-'])}%}}",
            f"{{%{left} set q = 1 {right}%}}",
            f"{{%{left} raw {right}%}} {{{{ raw }}}} {{%{r.choice(['', '-'])} endraw {r.choice(['', '-'])}%}}",
        ]))
    pieces.append(r.choice(["", "\n", "end\n", "\n\n"]))
    return "".join(pieces)


def jinja2_render(source):
    try:
        return ENV.from_string(source).render(**copy.deepcopy(VARIABLES)), None
    except Exception as e:  # any failure counts: Ember must fail too
        return None, f"{type(e).__name__}: {e}"


def ember_render(source, tmp_path):
    template = tmp_path / "t.jinja"
    template.write_bytes(source.encode("utf-8"))
    conversation = tmp_path / "c.json"
    conversation.write_text(json.dumps({"messages": [], "kwargs": VARIABLES}), encoding="utf-8")
    proc = subprocess.run([str(CLI), "template", "--messages", str(conversation), "--template", str(template),
                           "--now", "2025-01-15T12:00:00"], capture_output=True)
    if proc.returncode != 0:
        return None, proc.stderr.decode("utf-8", "replace").strip()
    return proc.stdout.decode("utf-8"), None


def compare(source, tmp_path):
    want, want_error = jinja2_render(source)
    got, got_error = ember_render(source, tmp_path)
    if want_error:
        assert got_error, f"jinja2 failed ({want_error}) but Ember rendered {got!r}\n{source}"
    else:
        assert not got_error, f"Ember failed: {got_error}\njinja2: {want!r}\n{source}"
        assert got == want, source


@pytest.mark.parametrize("seed", range(300))
def test_generated_statements(seed, tmp_path):
    g = Gen(seed)
    source = "".join(g.statement(3) + g.pick(["", "\n", " | "]) for _ in range(3))
    compare(source, tmp_path)


@pytest.mark.parametrize("seed", range(120))
def test_generated_whitespace_layouts(seed, tmp_path):
    compare(whitespace_layout(random.Random(1000 + seed)), tmp_path)


def test_generated_snippets_mostly_render():
    # The generator is meant to produce valid templates; a drift towards errors would hollow the comparison.
    failures = sum(1 for seed in range(300)
                   if jinja2_render("".join(Gen(seed).statement(3) for _ in range(3)))[1])
    assert failures < 60, failures
