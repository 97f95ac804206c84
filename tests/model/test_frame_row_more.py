"""A frame row holds the fields most rows leave at their defaults (graph breaks, cache counts, recompile
limit, runtime counts, ...) in a :class:`FrameMore` only once it sets one (issue 36, compile_ids row: a log
of 100k frames makes 100k rows). Each of those fields reads and writes through the row as a field would,
and what the JSON says of a row is the same whichever way it holds them."""

from __future__ import annotations

from collections import Counter

import msgspec

from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.analysis.checks.results import FrameMore, FrameRow
from tests.support.paths import TORCH_TRACE, require

#: a value other than the default for each FrameMore field
_SET = {"graph_breaks": 2, "cache_hits": 3, "cache_misses": 1, "cache_bypasses": 4,
        "bypass_reasons": Counter({"a reason": 4}), "recompile_limit": 64, "limit_recorded": True,
        "limit_hit": True, "limit_raised": True, "limit_event": None, "cf_rel": "compiled_functions/forward",
        "entries": (), "eager_calls": 5, "compiled_autograd": True}


def test_every_more_field_is_an_attribute_of_the_row() -> None:
    fields = {f.name for f in msgspec.structs.fields(FrameMore)}
    assert fields == set(_SET)  # a field added to FrameMore is added here (and given a _More on FrameRow)
    for name in fields - {"bypass_reasons"}:
        row = FrameRow("f", "0", "f")
        assert getattr(row, name) == getattr(FrameMore(), name)
        if name in ("limit_event", "entries"):
            continue  # their defaults are the only values without an event or a runtime
        setattr(row, name, _SET[name])
        assert getattr(row, name) == _SET[name] and row.more is not None
        assert getattr(FrameRow("g", "1", "g"), name) == getattr(FrameMore(), name)  # nothing shared


def test_a_default_written_keeps_the_row_small() -> None:
    row = FrameRow("f", "0", "f")
    row.eager_calls = None
    row.entries = ()
    row.limit_hit = False
    row.recompile_limit = 8
    assert row.more is None
    assert row.bypass_reasons == Counter() and row.more is None
    row.add_bypass_reason("no cache key", 2)
    row.add_bypass_reason("no cache key")
    assert row.bypass_reasons == Counter({"no cache key": 3}) and row.more is not None
    assert FrameRow("g", "1", "g").bypass_reasons == Counter()


def test_the_json_of_a_row_is_the_same_however_it_holds_its_fields() -> None:
    plain = FrameRow("f", "0", "f", compiles=2)
    j = plain.as_json()
    assert (j["graph_breaks"], j["cache"], j["never_hits_cache"], j["recompile_limit"], j["limit_hit"],
            j["entries"], j["eager_calls"], j["first_call_s"], j["compiled_autograd"], j["recompiles"]) == \
        (0, {"hits": 0, "misses": 0, "bypasses": 0, "bypass_reasons": {}}, False, 8, False, [], None, None,
         False, 1)
    row = FrameRow("f", "0", "f", compiles=2)
    row.cache_bypasses = 1
    row.add_bypass_reason("no cache key")
    row.recompile_limit = 8  # the default, written after another field: still the default
    j = row.as_json()
    assert j["cache"] == {"hits": 0, "misses": 0, "bypasses": 1, "bypass_reasons": {"no cache key": 1}}
    assert j["never_hits_cache"] is True and row.never_hits_cache is True and j["recompile_limit"] == 8


def test_rows_of_a_real_log_hold_more_only_where_they_set_it() -> None:
    """The fixture log's frames: a row with graph breaks, cache lookups or a limit has its own FrameMore and
    says so in the JSON; a row without any has none."""
    log = require(TORCH_TRACE) / "graph_breaks_recompiles_failure.log"
    a = analyse(RunModel(log).load())
    assert a.frames
    for row in a.frames:
        j = row.as_json()
        set_any = (j["graph_breaks"] or any(j["cache"][k] for k in ("hits", "misses", "bypasses"))
                   or j["limit_hit"] or j["recompile_limit_recorded"] or j["recompile_limit"] != 8 or j["entries"]
                   or j["eager_calls"] is not None or j["compiled_functions"] or j["compiled_autograd"])
        assert (row.more is not None) == bool(set_any), j
    assert any(r.more is not None for r in a.frames)
