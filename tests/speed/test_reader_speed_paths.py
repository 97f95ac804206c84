"""The fast paths of issue #11 give exactly what the careful paths give (no timings here).

* the msgspec line decoder against the stdlib path (``TimelineReader._parse_line``), line by line, on
  well-formed, odd and hostile lines;
* a budgeted read never reads far past its budget (the 8 MiB read per 32 KiB slice bug);
* the kind computed once at parse time equals the rules in :func:`kind_of`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import msgspec
import pytest

from magi_tui.model import RunModel
from magi_tui.model.events import Attrs, KeptAttrs, kind_of
from magi_tui.model.sources import reader as reader_mod
from magi_tui.model.sources.reader import ReadResult, TimelineReader

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synth import write_synthetic_run  # noqa: E402

_FIELDS = ("seq", "session", "index", "name", "scope", "subgraph_index", "phase", "lifecycle", "frag", "files",
           "timestamp", "duration_ms", "graph_index", "compile_id", "subgraph", "line_no", "offset", "length",
           "attrs", "summary", "kind")


def _kept_view(attrs: dict | None) -> dict | None:
    """What triage can read of a kept map: the keys the fast path keeps (``events.Attrs``), a null among
    the first six being the same as a missing key."""
    if attrs is None:
        return None
    keys = Attrs.__struct_fields__
    return {k: v for k, v in attrs.items() if k in keys and (v is not None or keys.index(k) >= 6)}


def _fields(ev) -> tuple:
    return tuple(_kept_view(ev.attrs) if f == "attrs" else getattr(ev, f) for f in _FIELDS)


ODD_LINES = [
    b'{"index": 0, "name": "fullgraph_before_x", "attributes": {"lifecycle_name": "x", "graph_index": 1}}',
    b'{"index": 1, "name": "fullgraph_after_x", "attributes": {"lifecycle_name": "x", "duration_ms": 2}}',
    b'{"index": 2, "name": "fullgraph_failed_x", "attributes": {"lifecycle_name": "x", "exception_type": "E"}}',
    b'{"index": 3, "name": "subgraph_3_after_cache_hit", "attributes": {"load_result": "hit", "reason": null}}',
    b'{"index": 4, "name": "fullgraph_after_y", "attributes": {"lifecycle_name": "y", "load_result": "miss"}}',
    b'{"index": 5, "name": "n", "attributes": {"x": NaN}, "timestamp": Infinity}',
    b'{"index": 6, "name": "n", "attributes": {"x": "\\ud800"}}',
    b'{"index": 7, "name": "n", "attributes": {"big": 123456789012345678901234567890}}',
    b'{"index": 8, "name": "n", "datetime": "\xff\xfe"}',  # invalid UTF-8 in a field the model skips
    b'{"index": 9, "name": "caf\xc3\xa9", "files": ["a.py", 3, "b.txt"]}',
    b'\xef\xbb\xbf{"index": 10, "name": "bom"}',
    b'  {"index": 11, "name": "lead"}  \r',
    b'',
    b'   ',
    b'[1, 2]',
    b'{"index": true, "name": "b"}',
    b'{"index": 12, "name": ""}',
    b'{"index": 13, "name": 5}',
    b'{"index": 14, "name": "a", "attributes": [1]}',
    b'{"index": 15, "name": "a"} trailing',
    b'{"index": 16, "name": "a", "name": "b"}',
    b'{"index": 3, "name": "restart_session"}',
    b'{"name": "no_index", "attributes": {"compile_id": 7, "subgraph": "", "subgraph_index": 70}}',
    b'{"index": 17, "name": "x", "timestamp": 1e400, "attributes": {"duration_ms": "5"}}',
    b'{"index": 18, "name": "fullgraph_skip_z", "attributes": {"lifecycle_name": "z"}}',
    b'{"index": 19, "name": "x", "attributes": {"frame": "f.py:1", "cache": "hit", "reasons": []}}',
    b'{"index": 20, "name": "x", "attributes": {"store_result": "stored"}}',
    b'[' * 5000 + b']' * 5000,
    b'{"a": ' * 3000 + b'1' + b'}' * 3000,
]


def _slow_read(path: Path) -> ReadResult:
    """What the reader gives when every line goes through the stdlib path."""
    r = TimelineReader(path)
    orig = reader_mod._fast_decode
    reader_mod._fast_decode = lambda raw: (_ for _ in ()).throw(ValueError("forced"))
    try:
        return r.read()
    finally:
        reader_mod._fast_decode = orig


def _compare(path: Path) -> None:
    fast = TimelineReader(path).read()
    slow = _slow_read(path)
    assert [_fields(e) for e in fast.events] == [_fields(e) for e in slow.events]
    # the fast path keeps part of a map (KeptAttrs); the whole map is read back from the line
    reader = TimelineReader(path)
    kept = 0
    for f, s in zip(fast.events, slow.events):
        if type(f.attrs) is KeptAttrs:
            kept += 1
            assert (json.loads(reader.read_line_bytes(f.offset, f.length)).get("attributes") or {}) == s.attrs
    assert kept or not any(e.attrs for e in slow.events)
    assert [(m.line_no, m.reason, m.text) for m in fast.malformed] == \
        [(m.line_no, m.reason, m.text) for m in slow.malformed]


def test_fast_decoder_agrees_with_the_stdlib_path_on_odd_lines(tmp_path):
    p = tmp_path / "timeline.jsonl"
    p.write_bytes(b"\n".join(ODD_LINES) + b"\n")
    _compare(p)
    fast = TimelineReader(p).read()
    assert len(fast.events) > 15 and len(fast.malformed) > 5  # the lines above do exercise both paths


@pytest.mark.parametrize("fail_last", [False, True])
def test_fast_decoder_agrees_on_a_synthetic_run(tmp_path, fail_last):
    run = tmp_path / "model_1_S_rank_0"
    write_synthetic_run(run, 3000, fail_last=fail_last)
    _compare(run / "timeline_events" / "timeline.jsonl")


def test_kind_computed_once_follows_the_rules(tmp_path):
    run = tmp_path / "model_1_S_rank_0"
    write_synthetic_run(run, 3000)
    p = tmp_path / "odd.jsonl"
    p.write_bytes(b"\n".join(ODD_LINES) + b"\n")
    events = RunModel(run).load().events + TimelineReader(p).read().events
    kinds = {ev.kind for ev in events}
    assert {"cache_hit", "cache_miss", "failed"} <= kinds
    for ev in events:
        assert ev.kind == kind_of(ev.phase, ev.frag, ev.summary)


def test_budgeted_reads_do_not_read_past_the_budget(tmp_path, monkeypatch):
    """Each 32 KiB read of a 376-byte-a-line file used to end in an 8 MiB read to finish one line."""
    run = tmp_path / "model_1_S_rank_0"
    write_synthetic_run(run, 4000)
    path = run / "timeline_events" / "timeline.jsonl"
    size = path.stat().st_size
    asked: list[int] = []
    real = os.pread

    def pread(fd, n, pos):
        asked.append(n)
        return real(fd, n, pos)

    monkeypatch.setattr(reader_mod.os, "pread", pread)
    r = TimelineReader(path)
    events = []
    while True:
        res = r.read(max_bytes=1 << 15)
        events.extend(res.events)
        if not res.events:
            break
    assert len(events) == 4000 and r.offset == size and r.partial == 0
    assert max(asked) <= 1 << 15
    assert sum(asked) < 2 * size  # the reads cover the file about once


def test_a_line_longer_than_the_budget_is_still_read(tmp_path):
    p = tmp_path / "timeline.jsonl"
    big = json.dumps({"index": 1, "name": "big", "attributes": {"x": "y" * 200_000}})
    p.write_text(json.dumps({"index": 0, "name": "a"}) + "\n" + big + "\n" + json.dumps({"index": 2, "name": "c"}) + "\n")
    r = TimelineReader(p)
    names = []
    for _ in range(10):
        res = r.read(max_bytes=1000)
        names += [e.name for e in res.events]
    assert names == ["a", "big", "c"] and r.partial == 0 and not r.more


# the same name and attributes again, with values of other types that compare equal (1, 1.0, True) or
# that the strict decoder refuses: what an earlier line of the same values gave must not be reused
SHAPE_LINES = [
    b'{"index": %d, "name": "fullgraph_after_cache_hit", "attributes": {"load_result": "hit", "reason": %s, "key": "k"}}',
    b'{"index": %d, "name": "fullgraph_after_x", "attributes": {"lifecycle_name": "x", "graph_index": %s, "compile_id": "3"}}',
    b'{"index": %d, "name": "fullgraph_after_x", "attributes": {"lifecycle_name": "x", "compile_id": %s, "duration_ms": 2.5}}',
    b'{"index": %d, "name": "fullgraph_failed_x", "attributes": {"lifecycle_name": "x", "exception_type": %s}}',
    b'{"index": %d, "name": "fullgraph_before_y", "files": ["a.py"], "attributes": {"lifecycle_name": "y", "frame": %s, "subgraph_index": 2}}',
    b'{"index": %d, "name": "fullgraph_after_y", "attributes": {"lifecycle_name": "y", "reasons": %s, "duration_ms": 1}}',
]
SHAPE_VALUES = [b'"1"', b"1", b"true", b"1.0", b"null", b'"1"', b"[1]", b'{"a": 1}', b"0", b"false", b"-0.0", b"0.0", b'"1"']


def test_lines_of_one_shape_with_values_of_other_types_agree_with_the_stdlib_path(tmp_path):
    p = tmp_path / "timeline.jsonl"
    lines = [tpl % (i, v) for i, (v, tpl) in enumerate((v, tpl) for v in SHAPE_VALUES for tpl in SHAPE_LINES)]
    p.write_bytes(b"\n".join(lines * 2) + b"\n")
    _compare(p)
    events = TimelineReader(p).read().events
    assert len(events) == 2 * len(lines)
    assert {e.graph_index for e in events} >= {1, None} and {e.compile_id for e in events} >= {"1", "1.0", "True", "3"}


def test_the_shape_cache_does_not_keep_a_hostile_files_long_strings(tmp_path):
    """Lines of long distinct values: what the cache of shapes holds stays bounded (and the events agree)."""
    from magi_tui.model import events as events_mod

    def held() -> int:
        return sum(len(name) + sum(len(v) for v in msgspec.structs.astuple(a) if type(v) is str)
                   for name, a in events_mod._SHAPES)

    before = held()
    p = tmp_path / "timeline.jsonl"
    long = [json.dumps({"index": i, "name": "fullgraph_before_x",
                        "attributes": {"lifecycle_name": "x", "frame": f"{i}" + "f" * 100_000}})
            for i in range(40)]
    p.write_text("\n".join(long) + "\n")
    _compare(p)
    assert held() - before <= events_mod._SHAPE_CHARS_MAX
    assert held() <= events_mod._SHAPE_CHARS_MAX
