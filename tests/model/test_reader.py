"""TimelineReader: incremental, tolerant reading of timeline.jsonl (FORMAT.md §4, §10.6, §10.7)."""

from __future__ import annotations

import json
import os
import threading

import pytest

from magi_tui.model import RunModel
from magi_tui.model.sources import reader as reader_mod
from magi_tui.model.sources.reader import TimelineReader
from tests.support.timeline import ev_line, lc, write_run


def tl(run_dir):
    return run_dir / "timeline_events" / "timeline.jsonl"


def append(path, data: str | bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data.encode() if isinstance(data, str) else data)


def test_missing_file_is_no_timeline_yet(tmp_path):
    r = TimelineReader(tmp_path / "timeline.jsonl")
    res = r.read()
    assert not res and res.reset is None and not r.exists and r.error is None


def test_reads_events_with_line_numbers_and_offsets(tmp_path):
    lines = [ev_line(0, "fullgraph_before_x", lifecycle_name="x"), ev_line(1, "fullgraph_after_x", lifecycle_name="x")]
    run = write_run(tmp_path / "r", lines)
    r = TimelineReader(tl(run))
    evs = r.read().events
    assert [(e.index, e.name, e.line_no, e.seq) for e in evs] == [
        (0, "fullgraph_before_x", 1, 0), (1, "fullgraph_after_x", 2, 1)]
    data = tl(run).read_bytes()
    for e in evs:
        assert json.loads(data[e.offset:e.offset + e.length])["name"] == e.name
    assert r.read().events == []  # nothing new


def test_partial_last_line_then_completion_counts_once(tmp_path):
    full = ev_line(0, "fullgraph_after_inductor_schedule", scheduler_node_count=3)
    run = write_run(tmp_path / "r", full[:40])
    r = TimelineReader(tl(run))
    res = r.read()
    assert res.events == [] and res.malformed == [] and r.partial == 40
    append(tl(run), full[40:-1])  # everything but the newline
    assert r.read().events == [] and r.partial == len(full) - 1
    append(tl(run), "\n")
    evs = r.read().events
    assert [e.name for e in evs] == ["fullgraph_after_inductor_schedule"]
    assert r.partial == 0
    assert r.read().events == []
    append(tl(run), ev_line(1, "fullgraph_after_inductor_schedule"))
    assert [e.index for e in r.read().events] == [1]


def test_garbage_lines_reported_with_line_numbers(tmp_path):
    lines = [
        ev_line(0, "fullgraph_a"),
        "not json at all\n",
        "[1, 2, 3]\n",
        '{"index": 1, "name": 5}\n',
        '{"index": 2, "name": "fullgraph_b", "attributes": [1]}\n',
        '{"index": true, "name": "fullgraph_c"}\n',
        '{"index": "3", "name": "fullgraph_c"}\n',
        '{"index": 4}\n',
        "\n",
        b"\xff\xfe{bad utf8}\n".decode("latin-1"),
        ev_line(5, "fullgraph_d"),
    ]
    run = write_run(tmp_path / "r", "".join(lines).encode("latin-1") if False else None or b"".join(
        line.encode("latin-1") if line.startswith("\xff") else line.encode() for line in lines))
    r = TimelineReader(tl(run))
    res = r.read()
    assert [e.name for e in res.events] == ["fullgraph_a", "fullgraph_d"]
    assert [e.line_no for e in res.events] == [1, 11]
    assert [m.line_no for m in res.malformed] == [2, 3, 4, 5, 6, 7, 8, 10]
    reasons = [m.reason for m in res.malformed]
    assert reasons[0].startswith("invalid JSON")
    assert "not a JSON object" in reasons[1]
    assert "name" in reasons[2] and "name" in reasons[6]
    assert "attributes" in reasons[3]
    assert "index" in reasons[4] and "index" in reasons[5]
    assert r.malformed_count == 8
    assert res.malformed[0].text == "not json at all"


def test_wrong_types_inside_an_event_are_tolerated(tmp_path):
    line = json.dumps({"index": 0, "name": "fullgraph_before_x", "relative_time": 5, "files": "nope",
                       "attributes": {"lifecycle_name": 7, "graph_index": True, "subgraph_index": "2",
                                      "duration_ms": "fast", "subgraph": ["x"], "compile_id": 1},
                       "datetime": None, "timestamp": "yesterday"}) + "\n"
    run = write_run(tmp_path / "r", [line])
    m = RunModel(run).load()
    (ev,) = m.events
    assert ev.files == () and ev.timestamp is None
    assert ev.lifecycle is None and not ev.is_lifecycle  # lifecycle_name not a string: a point event
    assert ev.graph_index is None and ev.subgraph is None and ev.compile_id == "1"
    assert m.status == "ok"


def test_index_drop_starts_a_new_session(tmp_path):
    idx = [0, 1, 2, 0, 1, 1, 5]
    run = write_run(tmp_path / "r", [ev_line(i, "fullgraph_p") for i in idx])
    evs = TimelineReader(tl(run)).read().events
    assert [e.session for e in evs] == [0, 0, 0, 1, 1, 2, 2]
    assert [e.seq for e in evs] == list(range(7))


def test_truncated_file_is_detected(tmp_path):
    run = write_run(tmp_path / "r", [ev_line(i, "fullgraph_p") for i in range(3)])
    r = TimelineReader(tl(run))
    assert len(r.read().events) == 3
    write_run(run, [ev_line(0, "fullgraph_q")])
    res = r.read()
    assert res.reset == "truncated"
    assert [e.name for e in res.events] == ["fullgraph_q"]
    assert res.events[0].seq == 0 and res.events[0].line_no == 1


def test_replaced_file_is_detected(tmp_path):
    run = write_run(tmp_path / "r", [ev_line(i, "fullgraph_p") for i in range(3)])
    r = TimelineReader(tl(run))
    r.read()
    new = tmp_path / "new.jsonl"
    new.write_text("".join(ev_line(i, "fullgraph_other") for i in range(5)))
    os.replace(new, tl(run))  # a new inode, bigger than before
    res = r.read()
    assert res.reset == "replaced"
    assert [e.name for e in res.events] == ["fullgraph_other"] * 5


def test_rewritten_in_place_with_other_content_is_detected(tmp_path):
    run = write_run(tmp_path / "r", [ev_line(0, "fullgraph_p")])
    r = TimelineReader(tl(run))
    r.read()
    with open(tl(run), "r+b") as fh:  # same inode, same size or bigger, other first bytes
        fh.write((ev_line(0, "fullgraph_X") + ev_line(1, "fullgraph_Y")).encode())
    res = r.read()
    assert res.reset == "replaced"
    assert [e.name for e in res.events] == ["fullgraph_X", "fullgraph_Y"]


def test_deleted_file_is_detected_then_recreated(tmp_path):
    run = write_run(tmp_path / "r", [ev_line(0, "fullgraph_p")])
    r = TimelineReader(tl(run))
    r.read()
    tl(run).unlink()
    res = r.read()
    assert res.deleted and res.reset is None and res.events == []  # what was read stays valid
    assert not r.read()  # said once
    write_run(run, [ev_line(0, "fullgraph_again")])
    res = r.read()
    assert res.reset == "replaced"  # a new file at the path is read from its start
    assert [e.name for e in res.events] == ["fullgraph_again"]


def test_run_model_keeps_events_when_the_timeline_is_deleted(tmp_path):
    run = write_run(tmp_path / "r", [lc(0, "before", "x"), lc(1, "after", "x")])
    m = RunModel(run).load()
    tl(run).unlink()
    up = m.update()
    assert up.deleted and not up.reset
    assert [e.name for e in m.events] == ["fullgraph_before_x", "fullgraph_after_x"]


def test_run_model_rebuilds_after_reset(tmp_path):
    run = write_run(tmp_path / "r", [lc(0, "before", "x"), lc(1, "failed", "x")])
    m = RunModel(run).load()
    assert m.status == "failed"
    write_run(run, [lc(0, "before", "y")])
    up = m.update()
    assert up.reset == "truncated"
    assert [e.name for e in m.events] == ["fullgraph_before_y"]
    assert m.triage.failures == [] and m.status == "incomplete"


def test_max_bytes_slices_give_the_same_events_and_no_false_partial(tmp_path):
    lines = [ev_line(i, f"fullgraph_e{i}") for i in range(50)]
    run = write_run(tmp_path / "r", lines)
    whole = [(e.index, e.name, e.offset) for e in TimelineReader(tl(run)).read().events]
    r = TimelineReader(tl(run))
    m = RunModel(run)
    got = []
    for _ in range(1000):
        up = m.update(max_bytes=300)
        if not up:
            break
        # a budget stopping the read is not a line "in progress": the status must not flicker
        assert not m.partial_line
        got.extend((e.index, e.name, e.offset) for e in up.events)
    assert got == whole
    first = r.read(max_bytes=1).events  # one whole line even with a tiny budget
    assert [e.index for e in first] == [0] and r.more and r.partial == 0


def test_line_longer_than_a_chunk(tmp_path, monkeypatch):
    monkeypatch.setattr(reader_mod, "CHUNK", 64)
    big = ev_line(0, "fullgraph_big", blob="x" * 1000)
    run = write_run(tmp_path / "r", [ev_line(0, "fullgraph_a"), big, ev_line(1, "fullgraph_b")])
    evs = TimelineReader(tl(run)).read().events
    assert [e.name for e in evs] == ["fullgraph_a", "fullgraph_big", "fullgraph_b"]


def test_directory_instead_of_file(tmp_path):
    (tmp_path / "r" / "timeline_events" / "timeline.jsonl").mkdir(parents=True)
    m = RunModel(tmp_path / "r").load()
    assert m.error == "not a regular file"
    assert m.events == [] and m.status == "empty"
    assert len(m.malformed) == 1
    m.update()
    assert len(m.malformed) == 1  # reported once, not on every poll


def test_fifo_does_not_hang(tmp_path):
    te = tmp_path / "r" / "timeline_events"
    te.mkdir(parents=True)
    os.mkfifo(te / "timeline.jsonl")
    done = []
    t = threading.Thread(target=lambda: done.append(RunModel(tmp_path / "r").load()), daemon=True)
    t.start()
    t.join(5)
    assert done, "reading a FIFO hung"
    assert done[0].error == "not a regular file"


def test_unreadable_file(tmp_path, monkeypatch):
    run = write_run(tmp_path / "r", [ev_line(0, "fullgraph_a")])
    real_open = os.open

    def deny(path, *a, **k):
        if str(path).endswith("timeline.jsonl"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr(reader_mod.os, "open", deny)
    m = RunModel(run).load()
    assert m.error == "cannot open: Permission denied"
    assert m.events == []


def test_read_error_midway_is_not_raised(tmp_path, monkeypatch):
    run = write_run(tmp_path / "r", [ev_line(0, "fullgraph_a")])

    def boom(*a, **k):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(reader_mod.os, "pread", boom)
    r = TimelineReader(tl(run))
    res = r.read()
    assert r.error == "cannot read: Input/output error" and res.events == []


@pytest.mark.parametrize("crlf", [False, True])
def test_crlf_and_blank_lines(tmp_path, crlf):
    nl = "\r\n" if crlf else "\n"
    data = ev_line(0, "fullgraph_a").replace("\n", nl) + nl + "   " + nl + ev_line(1, "fullgraph_b").replace("\n", nl)
    run = write_run(tmp_path / "r", data)
    res = TimelineReader(tl(run)).read()
    assert [e.line_no for e in res.events] == [1, 4] and res.malformed == []


def test_non_ascii_stays_raw(tmp_path):
    run = write_run(tmp_path / "r", [ev_line(0, "fullgraph_après_x", exception_message="ünïcode ✓")])
    m = RunModel(run).load()
    assert m.events[0].name == "fullgraph_après_x"
    assert m.attributes(m.events[0])["exception_message"] == "ünïcode ✓"
