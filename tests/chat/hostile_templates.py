# SPDX-License-Identifier: MIT
"""The hostile chat templates of issue 20's outside fault run and more of their kind, each with what its one-line
error says: used by hostile_template_test.py and written as fuzzer seeds by make_chat_fixtures.py."""

APPEND_CHAIN = ("{% set ns = namespace(cur=[]) %}{% set root = ns.cur %}{% for i in range(20000) %}{% set n = [] %}"
                "{% set _ = ns.cur.append(n) %}{% set ns.cur = n %}{% endfor %}")

# name: (template, what the one-line error says). "limit of": the step limit, or on a busy machine the time limit.
HOSTILE = {
    "replace": ("{% set s='a'*100000 %}{{ s.replace('a', s)|length }}", "exceeds the output limit"),
    "replace_filter": ("{% set s='a'*100000 %}{{ (s|replace('a', s))|length }}", "exceeds the output limit"),
    "replace_empty": ("{% set s='a'*100000 %}{{ s.replace('', s)|length }}", "exceeds the output limit"),
    "range_2_64": ("{{ range(-9223372036854775807-1, 9223372036854775807)|length }}", "steps"),
    "range_huge_step": ("{{ range(-9223372036854775807-1, 9223372036854775807, 3)|length }}", "steps"),
    "padding": ("{{ 'x'.center(9223372036854775807, 'é') }}", "exceeds the output limit"),
    "zfill": ("{{ '1'.zfill(9223372036854775807) }}", "exceeds the output limit"),
    "repeat": ("{{ 'ab' * 9223372036854775807 }}", "exceeds the output limit"),
    "list_repeat": ("{% set a = [0] * 5000000 %}{% set b = [a] * 5000000 %}{{ b|length }}", "steps"),
    "many_big_strings": ("{% set l = [] %}{% for i in range(1000) %}{% set _ = l.append('x' * 16000000 ~ i) %}"
                         "{% endfor %}{{ l|length }}", "limit of"),
    "join": ("{{ (['x' * 1000000] * 1000)|join }}", "exceeds the output limit"),
    "join_method": ("{{ ('x' * 1000000).join(['a'] * 1000) }}", "exceeds the output limit"),
    "recursion": ("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}", "recursion deeper"),
    "format_width": ("{{ '%0999999999d' % 1 }}", "format width too large"),
    "deep_value": (APPEND_CHAIN + "{{ root }}", "nested deeper than the limit"),
    "nested_loops": ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "limit of"),
}
