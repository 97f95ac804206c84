"""``dict_event`` (the TORCH_TRACE reader's way to make an Event of a map it built) gives the Event
``make_event`` gives of the same map, whatever the map holds: the fast way changes no answer."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from magi_tui.model import events as E
from magi_tui.model.events import attrs_values, dict_event, make_event

_SLOTS = [s for s in E.Event.__slots__ if s != "span"]

_values = st.one_of(st.none(), st.booleans(), st.integers(-3, 70), st.floats(allow_nan=True),
                    st.sampled_from(["hit", "miss", "bypass", "stored", "skipped", "fn_1", "", "0/1"]),
                    st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.just("k"), st.integers(), max_size=1))
_keys = st.sampled_from(list(E._FIELDS) + ["scope", "source", "attempt", "co_filename"])
_names = st.sampled_from(["fullgraph_before_compile", "fullgraph_after_compile", "fullgraph_failed_compile",
                          "fullgraph_skip_dynamo_capture", "fullgraph_graph_break", "subgraph_3_cache_hit",
                          "fullgraph_recompile_limit_hit", "fullgraph_export_issue", "trace_record", "x"])


def _state(ev: E.Event) -> dict:
    out = {s: getattr(ev, s) for s in _SLOTS}
    ts = out["timestamp"]
    out["timestamp"] = "nan" if isinstance(ts, float) and math.isnan(ts) else ts
    out["attrs_is_map"] = ev.attrs is not None
    out["summary_order"] = list(ev.summary.items()) if ev.summary else None  # labels show it in this order
    return out


@settings(max_examples=400, deadline=None)
@given(name=_names, attrs=st.dictionaries(_keys, _values, max_size=8),
       files=st.lists(st.sampled_from(["metrics.json", "user_stack.txt", "a.py"]), max_size=2, unique=True),
       ts=st.one_of(st.none(), st.floats(allow_nan=True)), seq=st.integers(0, 10**6))
def test_dict_event_is_make_event(name, attrs, files, ts, seq):
    fast = dict_event(name, seq, tuple(files), ts, attrs, seq + 5, 1000, 77)
    slow = make_event(name, seq, list(files), ts, attrs_values(attrs), attrs, seq, 0, seq + 5, 1000, 77)
    assert _state(fast) == _state(slow)
    assert (fast.attrs is attrs) == (slow.attrs is attrs)


@settings(max_examples=300, deadline=None)
@given(name=_names, keys=st.lists(_keys, max_size=8, unique=True), data=st.data())
def test_same_shape_other_values(name, keys, data):
    """Maps of one shape (name and keys) whose values differ: the second is made from the shape the first
    left (``_DICT_SHAPES``) and is still ``make_event``'s Event of its own values."""
    for seq in (1, 2, 3):
        attrs = {k: data.draw(_values) for k in keys}
        fast = dict_event(name, seq, (), 1.5, attrs, seq, 0, 10)
        slow = make_event(name, seq, [], 1.5, attrs_values(attrs), attrs, seq, 0, seq, 0, 10)
        assert _state(fast) == _state(slow)
        assert (fast.attrs is attrs) == (slow.attrs is attrs)
    assert (name, *keys) in E._DICT_SHAPES or E._LAST_SHAPE[name][0] == frozenset(keys)


def test_summary_shared_and_kinds():
    """A compile's events share one summary map; cache results give their kind, a failed phase wins."""
    a = dict_event("fullgraph_after_compile", 0, (), 1.0, {"lifecycle_name": "compile", "frame": "f",
                                                          "load_result": "hit"}, 0, 0, 1)
    b = dict_event("fullgraph_before_compile", 1, (), 1.0, {"lifecycle_name": "compile", "frame": "f",
                                                           "load_result": "hit"}, 1, 0, 1)
    assert a.summary == {"load_result": "hit", "frame": "f"} and a.summary is b.summary
    assert a.kind == "cache_hit"
    f = dict_event("fullgraph_failed_compile", 2, (), None, {"lifecycle_name": "compile", "reason": "x"}, 2, 0, 1)
    assert f.kind == "failed" and f.attrs is not None and f.summary == {"reason": "x"}


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["load_result", "store_result", "frame", "reason"]),
                       st.sampled_from(["hit", "miss", "bypass", "stored", "skipped", "x", ""]), min_size=1))
def test_result_kind_is_kind_ofs(summary):
    """The kind a summary's cache results give, read in one lookup, is the kind rules' (``kind_of``)."""
    assert E._result_kind(summary) == E.kind_of(None, "", summary)


@settings(max_examples=200, deadline=None)
@given(name=_names, keys=st.lists(_keys, min_size=2, max_size=8, unique=True), data=st.data())
def test_same_key_set_in_another_order(name, keys, data):
    """A map of a name's last key set, its keys in another order, takes that shape (``_LAST_SHAPE``, of the
    set) and is still ``make_event``'s Event of its own values, summary order included."""
    for order in (keys, keys[::-1], sorted(keys)):
        attrs = {k: data.draw(_values) for k in order}
        fast = dict_event(name, 7, (), 1.5, attrs, 7, 0, 10)
        slow = make_event(name, 7, [], 1.5, attrs_values(attrs), attrs, 7, 0, 7, 0, 10)
        assert _state(fast) == _state(slow)
        assert (fast.attrs is attrs) == (slow.attrs is attrs)
