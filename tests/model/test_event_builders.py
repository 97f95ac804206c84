"""Every way an Event is built sets every slot of it.

``make_event``, ``dict_event`` and ``line_event`` each build an :class:`~magi_tui.model.events.Event` slot
by slot (they run once per line of a huge file, so none calls a generic constructor). A slot added to
``Event.__slots__`` and forgotten by one builder would be an ``AttributeError`` far from here, on the
first screen that reads it; this test names the builder and the slot instead."""

from __future__ import annotations

import ast
import inspect

import pytest

from magi_tui.model import events as E

BUILDERS = ("make_event", "dict_event", "line_event")


def _slots_set(fn_name: str) -> set[str]:
    """The ``ev.<slot>`` a builder assigns (plain, chained and tuple-unpacking assignments)."""
    tree = ast.parse(inspect.getsource(E))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == fn_name)
    got: set[str] = set()

    def targets(t: ast.AST) -> None:
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "ev":
            got.add(t.attr)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)

    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                targets(t)
    return got


@pytest.mark.parametrize("builder", BUILDERS)
def test_each_builder_sets_every_slot(builder):
    missing = set(E.Event.__slots__) - _slots_set(builder)
    assert not missing, f"{builder} never sets Event slot(s) {sorted(missing)}"


def test_the_built_events_hold_every_slot():
    """The same, run: an event from each builder (and line_event's both paths) reads every slot."""
    la = E.LineAttrs(compile_id="0/0", lifecycle_name="compile")
    built = [
        E.make_event("fullgraph_before_compile", 0, ["a.py"], 1.0, E.attrs_values({"compile_id": "0/0"}),
                     {"compile_id": "0/0"}, 0, 0, 1, 0, 10),
        E.dict_event("fullgraph_after_compile", 1, ("a.py",), 2.0, {"compile_id": "0/0", "duration_ms": 3.0},
                     2, 10, 10),
        E.line_event("fullgraph_before_compile", 2, ("a.py",), 3.0, la, 2, 0, 3, 20, 10),
        E.line_event("fullgraph_before_compile", 3, ("a.py",), 4.0, E.LineAttrs(compile_id="0/0",
                     lifecycle_name="compile"), 3, 0, 4, 30, 10),  # the second: from the shape cache
    ]
    for ev in built:
        unset = [s for s in E.Event.__slots__ if not hasattr(ev, s)]
        assert not unset, f"{ev.name}: slot(s) never set {unset}"
