"""Where each event's line is, for a run dir's timeline read whole: the reader's table of line spans, by
``seq`` (an event holds the table, not an int of its own: issue 36, the app on 100k compile ids). Every
event's line is found again, whichever way it was read: the fast path, the careful one (a line msgspec
leaves to the stdlib), after a reset, past what a table's entry holds; a streamed load keeps no table."""

from __future__ import annotations

import json

from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import TimelineFold
from magi_tui.model.sources import reader as reader_mod
from magi_tui.model.sources.reader import TimelineReader
from tests.support.timeline import ev_line, write_run


def tl(run_dir):
    return run_dir / "timeline_events" / "timeline.jsonl"


def _lines(n: int, start: int = 0) -> list[str]:
    out = []
    for i in range(start, start + n):
        out.append(ev_line(2 * i, "fullgraph_before_compile", lifecycle_name="compile", compile_id=f"{i}/0"))
        out.append(ev_line(2 * i + 1, "fullgraph_after_compile", lifecycle_name="compile", compile_id=f"{i}/0"))
    return out


def _assert_each_line_found(reader: TimelineReader, events, data: bytes) -> None:
    for ev in events:
        line = data[ev.offset:ev.offset + ev.length]
        assert reader.event_line_bytes(ev) == line
        assert json.loads(line.lstrip(b"\xef\xbb\xbf"))["index"] == ev.index


def test_every_events_line_is_found_fast_and_careful_paths_alike(tmp_path):
    lines = _lines(20)
    lines[7] = "\ufeff" + lines[7]  # a BOM: msgspec refuses it, the careful path reads it
    lines.insert(12, "not json\n")  # a malformed line: no event, no place in the table
    run = write_run(tmp_path / "r", lines)
    r = TimelineReader(tl(run))
    res = r.read(max_bytes=900)  # a few reads, as the app reads
    events = list(res.events)
    while (more := r.read(max_bytes=900)).events or r.more:
        events.extend(more.events)
    assert [e.seq for e in events] == list(range(40))
    assert [e.line_no for e in events] == list(range(1, 13)) + list(range(14, 42))
    assert type(events[0]._bytes) is not int  # the table
    assert type(events[7]._bytes) is int  # the careful path's event holds its own
    _assert_each_line_found(r, events, tl(run).read_bytes())


def test_after_a_reset_the_lines_are_the_new_files(tmp_path):
    run = write_run(tmp_path / "r", _lines(5))
    r = TimelineReader(tl(run))
    assert len(r.read().events) == 10
    tl(run).write_text("".join(_lines(3, start=40)))  # truncated and rewritten: read from the start
    res = r.read()
    assert res.reset == "truncated" and [e.seq for e in res.events] == list(range(6))
    _assert_each_line_found(r, res.events, tl(run).read_bytes())


def test_a_line_past_what_a_table_entry_holds_keeps_its_own_span(tmp_path, monkeypatch):
    monkeypatch.setattr(reader_mod, "_TABLE_OFFSETS", 300)  # (4 GiB in truth)
    run = write_run(tmp_path / "r", _lines(6))
    r = TimelineReader(tl(run))
    events = r.read().events
    assert any(type(e._bytes) is int for e in events) and any(type(e._bytes) is not int for e in events)
    _assert_each_line_found(r, events, tl(run).read_bytes())


def test_a_streamed_load_keeps_no_table_and_its_kept_events_lines_read(tmp_path):
    lines = _lines(50) + [ev_line(100, "fullgraph_failed_compile", lifecycle_name="compile", compile_id="50/0",
                                  exception_type="BackendCompilerFailed", exception_message="boom")]
    run = RunModel(write_run(tmp_path / "r", lines)).load(fold=TimelineFold())
    assert run.reader._lines is None and run.event_count == 101
    (failure,) = run.triage.failures
    assert type(failure.event._bytes) is int
    assert run.attributes(failure.event)["exception_message"] == "boom"
