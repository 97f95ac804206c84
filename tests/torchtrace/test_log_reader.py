"""A TORCH_TRACE log read as a run: streaming and tolerant like the run-dir reader — what a user sees
when the log is being written, cut short, or has garbage in it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from magi_format.names import frag
from magi_tui.model import RunModel
from magi_tui.model.events import Event
from magi_tui.model.outputs.report import triage_json
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.logkit import BREAKS_LOG, DYNAMIC_LOG, kind, make_record, records

pytestmark = pytest.mark.usefixtures("torch_trace_dir")


def snapshot(run: RunModel) -> list[tuple]:
    return [(e.index, e.name, e.line_no, e.compile_id, json.dumps(run.attributes(e), sort_keys=True))
            for e in run.events]


@pytest.fixture(scope="module")
def whole() -> RunModel:
    return RunModel(BREAKS_LOG).load()


def test_log_opens_as_a_run_without_torch():
    code = ("import sys\nfrom magi_tui.model import RunModel, find_runs\n"
            f"r = RunModel(find_runs({str(BREAKS_LOG)!r})[0].path).load()\n"
            "print(len(r.events), r.status, 'torch' in sys.modules)")
    out = slow.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    n, status, torch_loaded = out.stdout.split()
    assert int(n) > 100 and status == "failed" and torch_loaded == "False"


def test_read_in_slices_equals_one_read(whole):
    run = RunModel(BREAKS_LOG)
    steps = 0
    while True:
        before = run.reader.offset
        run.update(max_bytes=64 << 10)
        steps += 1
        if run.reader.offset == before:
            break
    assert steps > 10
    assert snapshot(run) == snapshot(whole)
    assert not run.partial_line and not run.malformed


def test_log_written_in_chunks_gives_each_event_once(tmp_path, whole):
    recs = records()[:400]
    data = b"".join(recs)
    log = tmp_path / "dedicated_log_torch_trace_abc.log"
    log.write_bytes(b"")
    run = RunModel(log)
    run.reader.followed = True  # read again and again as the live follower does (each append closes the file)
    seen_partial = False
    pos, step = 0, 1
    while pos < len(data):
        step = step * 7 % 9973 + 1
        with open(log, "ab") as f:
            f.write(data[pos:pos + step])
        pos += step
        run.update()
        seen_partial = seen_partial or run.partial_line
    run.update()
    one = RunModel(log).load()
    assert seen_partial
    assert snapshot(run) == snapshot(one)
    assert [e.index for e in run.events] == list(range(len(run.events)))
    # the same events as the first part of the whole log
    assert snapshot(run)[:len(one.events) - 5] == snapshot(whole)[:len(one.events) - 5]


def test_truncated_last_record_is_pending_until_written(tmp_path):
    recs = records()
    i = next(i for i, r in enumerate(recs) if kind(r) == "dynamo_output_graph")
    log = tmp_path / "dedicated_log_torch_trace_x.log"
    cut = len(recs[i]) // 2
    log.write_bytes(b"".join(recs[:i]) + recs[i][:cut])
    run = RunModel(log)
    run.reader.followed = True  # followed while written (a log read once with no writer is final at its end)
    run.load()
    n = len(run.events)
    assert run.partial_line and run.status in ("incomplete", "failed", "recovered")
    assert not any(e.name.endswith("after_dynamo_capture") for e in run.events)
    assert not run.malformed  # half a record is not garbage: it is being written
    with open(log, "ab") as f:
        f.write(recs[i][cut:])
    up = run.update()
    assert [e.name for e in up.events] == ["fullgraph_after_dynamo_capture"]
    assert not run.partial_line and len(run.events) == n + 1
    assert run.update().events == []  # never twice


def test_last_record_without_payload_is_read_at_end_of_file(tmp_path):
    recs = records()
    i = next(i for i, r in enumerate(recs) if kind(r) == "compilation_metrics")
    log = tmp_path / "dedicated_log_torch_trace_x.log"
    log.write_bytes(b"".join(recs[:i + 1]))
    run = RunModel(log).load()
    assert not run.partial_line
    assert run.events[-1].name in ("fullgraph_after_compile", "fullgraph_failed_compile")


def test_garbage_lines_are_reported_with_their_line_numbers(tmp_path, whole):
    recs = records()
    lines_before = b"".join(recs[:50]).count(b"\n")
    garbage = [b"Traceback (most recent call last):\n",
               b"V1122 11:12:39.772000 5512 torch/x.py:1] {not json\n", b"\tits payload\n"]
    log = tmp_path / "dedicated_log_torch_trace_x.log"
    log.write_bytes(b"\tan orphan payload line\n" + b"".join(recs[:50]) + b"".join(garbage) + b"".join(recs[50:]))
    run = RunModel(log).load()
    got = [(m.line_no, m.reason.split(":")[0]) for m in run.malformed]
    assert got == [(1, "payload line without a record"),
                   (lines_before + 2, "not a TORCH_TRACE record line"),
                   (lines_before + 3, "invalid JSON")]
    assert [e.name for e in run.events] == [e.name for e in whole.events]
    tj = triage_json(run)
    assert tj["malformed_lines"] == 3 and [m["line"] for m in tj["malformed"]] == [g[0] for g in got]
    # the events after the garbage keep their own log line numbers
    assert run.events[-1].line_no == whole.events[-1].line_no + len(garbage) + 1


def test_payload_that_does_not_match_its_md5_is_reported_and_shown(tmp_path):
    rec = make_record({"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"},
                       "frame_id": 0, "frame_compile_id": 0, "attempt": 0},
                      "Graph break in user code at /x.py:3\nGraph Break Reason: boom", md5="0" * 32)
    log = tmp_path / "dedicated_log_torch_trace_x.log"
    log.write_bytes(rec + make_record({"chromium_event": {}}, "{}"))
    run = RunModel(log).load()
    assert [m.reason for m in run.malformed] == ["payload does not match its has_payload md5 (shown anyway)"]
    assert run.malformed[0].line_no == 1
    assert [e.kind for e in run.events] == ["graph_break"]
    assert run.attributes(run.events[0])["reason"] == "boom"


def test_unknown_record_types_are_counted_and_shown(tmp_path):
    ctx = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    log = tmp_path / "dedicated_log_torch_trace_x.log"
    log.write_bytes(b"".join(records()[:20])
                    + make_record({"future_thing": {"a": 1}, **ctx}, "future payload\nline 2")
                    + make_record({"future_thing": {"a": 2}, **ctx})
                    + make_record({"other_new_kind": {}}))
    run = RunModel(log).load()
    assert dict(run.reader.unknown_types) == {"future_thing": 2, "other_new_kind": 1}
    shown = [e for e in run.events if run.attributes(e).get("unknown")]
    assert [e.name for e in shown] == ["fullgraph_future_thing", "fullgraph_future_thing", "fullgraph_other_new_kind"]
    assert [run.attributes(e)["record_type"] for e in shown] == ["future_thing", "future_thing", "other_new_kind"]
    assert shown[0].compile_id == "0/0"
    files = {n: p for n, p, _ in run.files(shown[0])}
    assert Path(files["future_thing.txt"]).read_text() == "future payload\nline 2"
    assert not run.malformed


def test_event_files_hold_the_payloads(whole):
    recs = [r for r in records() if kind(r) in ("dynamo_output_graph", "inductor_output_code")]
    payloads = {b"\n".join(ln[1:] for ln in r.split(b"\n")[1:] if ln.startswith(b"\t")).decode() for r in recs}
    graphs = [e for e in whole.events if ("captured_graph.py" in e.files or "inductor_output.py" in e.files)
              and e.phase != "failed"]  # a failed compile also carries the graph it rejected (issue 31.10)
    assert len(graphs) == len(recs)
    texts = set()
    for ev in graphs:
        for name, path, problem in whole.files(ev):
            assert problem is None and path is not None
            if name in ("captured_graph.py", "inductor_output.py"):
                texts.add(Path(path).read_text(encoding="utf-8"))
    assert texts == payloads
    # the files live in a private folder, not beside the log
    assert os.stat(Path(path).parent.parent).st_mode & 0o077 == 0
    assert not any(p.name != BREAKS_LOG.name for p in BREAKS_LOG.parent.iterdir() if p.suffix != ".log")


def test_unmapped_payloads_open_as_artifact_events(whole):
    arts = [e for e in whole.events if "artifact" in whole.attributes(e)]
    # each under its own name (tlparse's), never a bare trace_artifact
    assert all(e.name in ("fullgraph_" + frag(a), "fullgraph_trace_" + frag(a))
               for e in arts for a in [whole.attributes(e)["artifact"]])
    names = {whole.attributes(e)["artifact"] for e in arts}
    assert {"torch_version", "torch_dynamo_resume_in_forward_at_149_MODIFIED_BYTECODE"} <= names
    # fx_graph_runnable has an event of its own now (the reproducer of each compiled graph)
    assert "fx_graph_runnable" not in names
    assert [e.files for e in whole.events if e.name == "fullgraph_fx_graph_runnable"][0] == ("fx_graph_runnable.py",)
    ev = next(e for e in arts if whole.attributes(e)["artifact"] == "torch_version")
    (name, path, _), = [f for f in whole.files(ev) if f[0] != "attributes.json"]
    assert name == "torch_version.json" and "pytorch_version" in json.loads(Path(path).read_text())


def test_truncated_then_replaced_log_starts_over(tmp_path):
    recs = records()
    log = tmp_path / "dedicated_log_torch_trace_x.log"
    log.write_bytes(b"".join(recs[:300]))
    run = RunModel(log).load()
    n = len(run.events)
    assert n > 10
    log.write_bytes(b"".join(recs[:40]))
    up = run.update()
    assert up.reset == "truncated"
    assert len(run.events) == len(RunModel(log).load().events) < n
    os.unlink(log)
    up = run.update()
    assert up.deleted and len(run.events) > 0  # what was read is kept


def test_dynamic_shapes_log_reads_clean():
    run = RunModel(DYNAMIC_LOG).load()
    assert run.status == "ok" and not run.malformed and not run.partial_line
    assert any(run.attributes(e).get("backward") for e in run.events)
    assert {"[0/0]", "[0/1]", "[1/0]"} == set(run.reader.compile_ids)


def test_event_lines_are_the_writers_lines():
    """Each event's in-memory line is the line the tracer's writer makes of the same fields
    (``timeline_record``, compact JSON), though the reader assembles it from parts made once."""
    import msgspec

    from magi_format.layout import timeline_record
    from magi_tui.model.sources.torchtrace.reader import TraceLogReader

    for log in (BREAKS_LOG, DYNAMIC_LOG):
        reader = TraceLogReader(log)
        evs = []
        while (got := reader.read(1 << 16).events):
            evs += got
        t0 = next(e.timestamp for e in evs if e.timestamp is not None)
        assert len(evs) > 50
        for ev in evs:
            line = reader.event_line_bytes(ev)
            obj = json.loads(line)
            want = timeline_record(ev.seq, ev.name, list(ev.files), obj["attributes"], ev.timestamp, t0)
            assert line == msgspec.json.encode(want), ev


@pytest.mark.parametrize("lean", [False, True])
def test_compile_before_sites_are_handed_over_as_their_lines_read(lean):
    """``opening_site``: co_filename / co_firstlineno of compile ``before`` events, as their lines read
    back (the fold reads them instead of making and decoding the lines again); None for other events.
    A lean (streamed) reader hands over only the last read's; one that keeps every event (the app's,
    whose analysis folds them after the load) those of every read."""
    from magi_tui.model.sources.torchtrace.reader import TraceLogReader

    reader = TraceLogReader(BREAKS_LOG)
    reader.lean = lean
    first = reader.read(1 << 14).events
    opening = [e for e in first if e.lifecycle == "compile" and e.phase == "before"]
    assert opening and all(reader.opening_site(e) is not None for e in opening)
    sites = []
    for e in opening:
        attrs = json.loads(reader.event_line_bytes(e))["attributes"]
        sites.append((attrs.get("co_filename"), attrs.get("co_firstlineno")))
        assert reader.opening_site(e) == sites[-1]
    assert all(reader.opening_site(e) is None for e in first if e not in opening)
    reader.read(1 << 14)
    if lean:
        assert all(reader.opening_site(e) is None for e in opening)
    else:
        assert [reader.opening_site(e) for e in opening] == sites


def test_epoch_search_is_the_regexs():
    """The year hint's search (a literal found first, the pattern matched there) finds what the regex
    search finds: the first match, or none."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from magi_tui.model.sources.torchtrace.reader import _EPOCH_S, _EPOCH_US, _search_at

    parts = st.sampled_from([b'"start_time": ', b'"ts": ', b"1", b"17639827", b"1763982759", b".5", b"x",
                             b"1763982759123456", b'"start_time": 9', b'"ts":'])

    @settings(max_examples=500, deadline=None)
    @given(st.lists(parts, max_size=12).map(b"".join))
    def check(data):
        for pattern in (_EPOCH_S, _EPOCH_US):
            want, got = pattern.search(data), _search_at(pattern, data)
            assert (want and (want.start(), want.group(1))) == (got and (got.start(), got.group(1)))

    check()


def _surrogate_log(tmp_path: Path) -> Path:
    """BREAKS_LOG with a lone surrogate (``\\udc80``, which msgspec refuses) in every compile's ``co_name``:
    its frame name, on every event of the compile, takes the careful way (the whole line kept)."""
    from tests.torchtrace.logkit import retag, write_log

    recs = [retag(r, b'"co_name": "', b'"co_name": "\\udc80') if kind(r) == "compilation_metrics" else r
            for r in records()]
    return write_log(tmp_path / "surrogates.log", recs)


@pytest.mark.parametrize("hostile", [False, True])
def test_lean_reader_keeps_the_lines_and_files_of_the_events_still_held(hostile, tmp_path):
    """A lean reader (a streamed headless load) stores an event's attributes and lists its files only when
    something still holds the event once its read is folded in (``settle``): those read back exactly as a
    reader that keeps every event gives them, and its Events are the same; one asked for before ``settle``
    is kept at once; what no one held is never stored (nor encoded: a lean reader encodes the attributes of
    an event when it keeps it, so one msgspec refuses -- a lone surrogate -- takes the careful way then)."""
    from magi_tui.model.sources.torchtrace.reader import TraceLogReader

    log = _surrogate_log(tmp_path) if hostile else BREAKS_LOG

    def seen(reader: TraceLogReader, e: Event) -> tuple:
        return reader.event_line_bytes(e), [(n, reader.file_text(e, n, 10**9)) for n in e.files]

    def state(e: Event) -> tuple:
        return (e.seq, e.name, e.compile_id, e.lifecycle, e.phase, e.files, e.timestamp, e.duration_ms,
                e.summary, e.kind, e.attrs)

    full = TraceLogReader(log)
    want, want_state = {}, {}
    while True:
        for e in full.read(1 << 14).events:
            want[e.seq] = seen(full, e)
            want_state[e.seq] = state(e)
        if not full.more:
            break
    lean = TraceLogReader(log)
    lean.lean = True
    held: list[Event] = []
    early = None
    while True:
        got = lean.read(1 << 14).events
        assert [state(e) for e in got] == [want_state[e.seq] for e in got]
        if early is None and any(e.files for e in got):  # asked for while its read is being folded in
            early = next(e for e in got if e.files and e.seq % 3)
            assert seen(lean, early) == want[early.seq]
        held += got[::3] if not hostile else got
        del got
        lean.settle()
        if not lean.more:
            break
    assert len(want) > 150 and len(held) > 50 and early is not None
    for e in [*held, early]:
        assert seen(lean, e) == want[e.seq]
    if hostile:
        assert len(full._whole) > 10 and lean._whole == full._whole  # the careful way, for the same events
    else:
        assert len(lean._store) < len(full._store) * 0.6  # the events no one held: not stored


def test_lean_reader_keeps_no_line_for_an_event_held_for_its_index_alone():
    """An event held, once folded in, only by what reads its Event alone (``index_only``: a streamed load's
    fold holds each frame's first event for its index and name) is not kept by a lean reader: its line reads
    None and it lists no file. Held by anything else too, or not so marked, it is kept and reads back as a
    reader that keeps every event gives it."""
    from magi_tui.model.sources.torchtrace.reader import TraceLogReader

    full = TraceLogReader(BREAKS_LOG)
    want: dict[int, bytes | None] = {}
    while True:
        for e in full.read(1 << 14).events:
            want[e.seq] = full.event_line_bytes(e)
        if not full.more:
            break
    lean = TraceLogReader(BREAKS_LOG)
    lean.lean = True

    def mark(events: list[Event]) -> None:  # (a loop here would leave its last event held by its variable)
        for e in events:
            lean.index_only(e)

    alone: list[Event] = []      # marked, held here alone
    also: list[Event] = []       # marked, held here and below
    kept: list[Event] = []
    while True:
        got = lean.read(1 << 14).events
        mark(got[1::4] + got[3::4])
        alone += got[1::4]
        also += got[3::4]
        kept += got[3::4] + got[0::2]
        del got
        lean.settle()
        if not lean.more:
            break
    assert len(alone) > 30 and len(also) > 30
    assert all(lean.event_line_bytes(e) is None and lean.file_text(e, "x", 10) is None for e in alone)
    for e in kept:
        assert lean.event_line_bytes(e) == want[e.seq] is not None


@pytest.mark.parametrize(("ids", "want"), [
    ({"frame_id": 0, "frame_compile_id": 1}, "[0/1]"),
    ({"frame_id": 0, "frame_compile_id": 1, "attempt": 0}, "[0/1]"),
    ({"frame_id": 0, "frame_compile_id": 1, "attempt": 2}, "[0/1_2]"),
    ({"frame_id": 0, "frame_compile_id": 1, "attempt": "2"}, "[0/1]"),   # (tlparse: an attempt is a number)
    ({"frame_id": 0, "frame_compile_id": 1, "attempt": 0.0}, "[0/1]"),
    ({"frame_id": 0, "frame_compile_id": 1, "compiled_autograd_id": 3}, "[!3/0/1]"),
    ({"frame_id": 0, "frame_compile_id": 1, "compiled_autograd_id": 0, "attempt": 1}, "[!0/0/1_1]"),
    ({"frame_id": 5}, None),
])
def test_tlparse_compile_id_spelling(ids, want):
    """A record's compile id as tlparse spells it (``compile_ids``: the ids ``runs`` and ``ranks`` list)."""
    from magi_tui.model.sources.torchtrace.reader import tlparse_compile_id

    assert tlparse_compile_id({"dynamo_start": {}, **ids}) == want
