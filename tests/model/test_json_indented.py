"""``magi_format.text.json_indented`` is ``json.dumps(indent=2, default=str)``, letter for letter, and
leaves no reference cycle behind (issue #21: the stdlib's left ~2.8 KB per compile of a log, frozen)."""

from __future__ import annotations

import json
import sys

from hypothesis import given
from hypothesis import strategies as st

from magi_format.text import json_indented
from tests.support import slow
from tests.support.paths import ROOT

_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                       | st.dictionaries(st.text(max_size=5), inner, max_size=4)
                       | st.dictionaries(st.integers(), inner, max_size=2), max_leaves=20)


@given(_values)
def test_the_same_text_as_the_stdlibs_indent_2(value):
    assert json_indented(value) == json.dumps(value, indent=2, default=str)


_COUNT_CYCLES = """
import gc, json
from magi_format.text import json_indented
from tests.support.paths import ROOT

class Thing:
    def __str__(self):
        return "thing"

value = {"a": [1, 2.5, {"b": None, "c": []}], "d": {}, "e": Thing(), "f": float("inf"), "g": "\\u00e9\\u2028"}
assert json_indented(value) == json.dumps(value, indent=2, default=str)
gc.disable()
gc.collect()
for _ in range(200):
    json_indented(value)
ours = gc.collect()
for _ in range(200):
    json.dumps(value, indent=2, default=str)
print(ours, gc.collect())
"""


def test_values_json_cannot_encode_are_spelt_by_default_and_no_cycle_is_left():
    # in a process of its own: in the suite, other tests' threads leave garbage while this one counts
    out = slow.run([sys.executable, "-c", _COUNT_CYCLES], cwd=ROOT, capture_output=True, text=True,
                   timeout=60)
    assert out.returncode == 0, out.stderr
    ours, stdlib = map(int, out.stdout.split())
    assert stdlib >= 200 * 20  # what the stdlib leaves: ~30 objects a call
    assert ours < stdlib // 10  # none per call
