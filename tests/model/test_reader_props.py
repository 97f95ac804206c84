"""Property tests (hypothesis) for the reader and the model on top of it.

Whatever is in ``timeline.jsonl`` — arbitrary bytes, a file cut at any byte, JSON of the wrong types,
garbage between good lines, a file that grows in random pieces — no exception escapes, valid lines
are never lost nor returned twice, and malformed ones are counted with their line numbers.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magi_tui.model import RunModel
from magi_tui.model.outputs.report import run_row, triage_json, triage_text
from magi_tui.model.sources.reader import TimelineReader
from tests.support.timeline import ev_line, lc

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STATUSES = {"ok", "failed", "recovered", "incomplete", "empty"}


_BASE: list[Path] = []


@pytest.fixture(autouse=True, scope="module")
def _tmp_base():
    """Hypothesis runs many examples per test: they share one temp dir, removed at the end."""
    _BASE.append(Path(tempfile.mkdtemp(prefix="magi-props-")))
    yield
    shutil.rmtree(_BASE.pop(), ignore_errors=True)


def _fresh_dir() -> Path:
    d = Path(tempfile.mkdtemp(dir=_BASE[-1]))
    (d / "timeline_events").mkdir()
    return d


def _write(run: Path, data: bytes, mode: str = "wb") -> Path:
    p = run / "timeline_events" / "timeline.jsonl"
    with open(p, mode) as fh:
        fh.write(data)
    return p


def _complete_lines(data: bytes) -> list[bytes]:
    """The lines a reader may consume: those terminated by a newline."""
    return data.split(b"\n")[:-1]


def _key(ev):
    return (ev.seq, ev.index, ev.name, ev.offset, ev.length, ev.line_no, ev.session)


def _check_model(run: Path) -> RunModel:
    m = RunModel(run).load()
    assert m.status in STATUSES
    json.dumps(triage_json(m))
    json.dumps(run_row(m))
    triage_text(m)
    return m


# -- strategies ------------------------------------------------------------------------------------
NAMES = st.sampled_from([
    "fullgraph_before_compiler_compile", "fullgraph_after_compiler_compile", "fullgraph_failed_compiler_compile",
    "subgraph_0_before_pass_context", "subgraph_0_after_pass_context", "subgraph_1_failed_pass_context",
    "fullgraph_after_inductor_schedule", "fullgraph_skip_x", "fullgraph_recompile", "fullgraph_graph_break",
    "fullgraph_cache_hit", "weird", "subgraph_x_before_y", "fullgraph_",
])
LIFECYCLES = st.sampled_from(["compiler_compile", "pass_context", "magi_backend_call", "X"])
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=True),
                         st.text(max_size=12))
ANY_JSON = st.recursive(JSON_SCALARS, lambda c: st.one_of(st.lists(c, max_size=3),
                                                          st.dictionaries(st.text(max_size=5), c, max_size=3)),
                        max_leaves=6)
ATTR_KEYS = ["scope", "lifecycle_name", "subgraph", "subgraph_index", "graph_index", "duration_ms",
             "exception_type", "exception_message", "load_result", "store_result", "reason", "compile_id",
             "restart_reason", "frame", "key"]


@st.composite
def event_objs(draw, well_typed: bool = False):
    """An event-like object; with ``well_typed`` its top-level types are right (attributes vary)."""
    attrs = {}
    for k in draw(st.lists(st.sampled_from(ATTR_KEYS), max_size=6, unique=True)):
        if k == "lifecycle_name":
            attrs[k] = draw(st.one_of(LIFECYCLES, ANY_JSON))
        else:
            attrs[k] = draw(ANY_JSON)
    obj = {"index": draw(st.integers(0, 20)), "name": draw(NAMES), "relative_time": "0.0ms",
           "files": draw(st.one_of(st.lists(st.text(max_size=8), max_size=2), ANY_JSON)),
           "attributes": attrs, "datetime": "2026-11-22 11:19:01.460",
           "timestamp": draw(st.one_of(st.floats(1e9, 2e9), ANY_JSON))}
    if not well_typed:
        for k in draw(st.lists(st.sampled_from(["index", "name", "attributes", "files"]), max_size=2, unique=True)):
            if draw(st.booleans()):
                obj[k] = draw(ANY_JSON)
            else:
                del obj[k]
    return obj


def _is_valid(obj) -> bool:
    if not isinstance(obj, dict):
        return False
    name, idx, attrs = obj.get("name"), obj.get("index"), obj.get("attributes")
    return (isinstance(name, str) and bool(name)
            and (idx is None or (isinstance(idx, int) and not isinstance(idx, bool)))
            and (attrs is None or isinstance(attrs, dict)))


GARBAGE = st.one_of(
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
    st.sampled_from([b"{", b"}", b"null", b"[]", b'"name"', b"{\"name\": 1}", b"\xff\xfe", b"{}" * 3,
                     b"[" * 50000, b'{"index": 1, "name": "x"']),
)


# -- properties ------------------------------------------------------------------------------------
@SETTINGS
@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_raise_and_every_line_is_accounted_for(data):
    run = _fresh_dir()
    _write(run, data)
    r = TimelineReader(run / "timeline_events" / "timeline.jsonl")
    res = r.read()
    lines = _complete_lines(data)
    non_blank = [i + 1 for i, raw in enumerate(lines) if raw.strip()]
    # every non-blank complete line is either an event or a malformed line, in order
    got = sorted([e.line_no for e in res.events] + [m.line_no for m in res.malformed])
    assert got == non_blank
    assert r.malformed_count == len(res.malformed)
    assert r.partial == len(data) - (data.rfind(b"\n") + 1)
    _check_model(run)


@SETTINGS
@given(st.lists(st.one_of(event_objs(well_typed=True).map(lambda o: ("ok", o)),
                          GARBAGE.map(lambda g: ("bad", g))), max_size=25))
def test_valid_lines_are_never_lost_among_garbage(items):
    data = b""
    expected = []
    bad_lines = []
    for n, (kind, x) in enumerate(items, start=1):
        if kind == "ok":
            line = json.dumps(x, ensure_ascii=False).encode()
            expected.append((n, x["name"], x["index"]))
        else:
            line = x
            try:  # a garbage line may happen to be a valid event
                if _is_valid(json.loads(line)):
                    expected.append((n, json.loads(line)["name"], json.loads(line).get("index", -1)))
                    line = None
            except (ValueError, RecursionError):
                pass
            if line is None:
                line = x
            elif line.strip():
                bad_lines.append(n)
        data += line + b"\n"
    run = _fresh_dir()
    _write(run, data)
    res = TimelineReader(run / "timeline_events" / "timeline.jsonl").read()
    assert [(e.line_no, e.name, e.index) for e in res.events] == expected
    assert [m.line_no for m in res.malformed] == bad_lines
    _check_model(run)


@SETTINGS
@given(st.lists(event_objs(well_typed=False), min_size=1, max_size=15))
def test_wrong_json_types_are_malformed_never_fatal(objs):
    data = b"".join(json.dumps(o).encode() + b"\n" for o in objs)
    run = _fresh_dir()
    _write(run, data)
    res = TimelineReader(run / "timeline_events" / "timeline.jsonl").read()
    assert [e.line_no for e in res.events] == [i + 1 for i, o in enumerate(objs) if _is_valid(o)]
    assert [m.line_no for m in res.malformed] == [i + 1 for i, o in enumerate(objs) if not _is_valid(o)]
    _check_model(run)


def _valid_file(n_events: int) -> bytes:
    lines = [lc(0, "before", "magi_backend_call"), lc(1, "before", "compiler_compile", graph_index=0),
             lc(2, "failed", "compiler_compile", graph_index=0, exception_type="TensorifyScalarRestartAnalysis"),
             lc(3, "failed", "magi_backend_call"), lc(4, "before", "magi_backend_call"),
             ev_line(5, "fullgraph_after_inductor_schedule", scheduler_node_count=2),
             lc(6, "after", "magi_backend_call"), ev_line(0, "fullgraph_after_inductor_schedule", note="é✓")]
    return "".join(lines[:n_events]).encode()


def test_truncation_at_every_byte():
    data = _valid_file(8)
    whole = None
    for cut in range(len(data) + 1):
        run = _fresh_dir()
        _write(run, data[:cut])
        r = TimelineReader(run / "timeline_events" / "timeline.jsonl")
        res = r.read()
        n_complete = data[:cut].count(b"\n")
        assert len(res.events) == n_complete and res.malformed == []
        assert r.partial == cut - (data[:cut].rfind(b"\n") + 1)
        m = RunModel(run).load()
        assert m.status in STATUSES
        if r.partial:
            assert m.partial_line and m.status in ("incomplete", "failed", "recovered")
        # then the writer finishes: the same reader sees the rest exactly once
        _write(run, data[cut:], "ab")
        more = r.read()
        assert more.reset is None
        seen = [_key(e) for e in res.events + more.events]
        if whole is None:
            whole = [_key(e) for e in TimelineReader(run / "timeline_events" / "timeline.jsonl").read().events]
        assert seen == whole
    assert RunModel(run).load().status == "recovered"


@SETTINGS
@given(st.data())
def test_random_split_points_give_the_same_events_as_reading_whole(data):
    content = _valid_file(8) + b"garbage line\n" + _valid_file(4)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(content)), max_size=12)))
    run = _fresh_dir()
    p = _write(run, b"")
    r = TimelineReader(p)
    m = RunModel(run)
    got, bad, prev = [], [], 0
    for cut in [*cuts, len(content)]:
        _write(run, content[prev:cut], "ab")
        prev = cut
        res = r.read(max_bytes=data.draw(st.sampled_from([None, 1, 50, 4096])))
        assert res.reset is None
        got.extend(_key(e) for e in res.events)
        bad.extend(mm.line_no for mm in res.malformed)
        m.update()
    while True:  # drain what a small budget left
        res = r.read()
        if not res:
            break
        got.extend(_key(e) for e in res.events)
        bad.extend(mm.line_no for mm in res.malformed)
    whole_reader = TimelineReader(p)
    whole = whole_reader.read()
    assert got == [_key(e) for e in whole.events]
    assert bad == [mm.line_no for mm in whole.malformed] == [9]
    whole_model = RunModel(run).load()
    assert [_key(e) for e in m.events] == [_key(e) for e in whole_model.events]
    assert m.status == whole_model.status
    assert [f.event.seq for f in m.triage.failures] == [f.event.seq for f in whole_model.triage.failures]


@SETTINGS
@given(st.lists(st.integers(0, 6), min_size=1, max_size=30))
def test_sessions_follow_index_drops(indices):
    run = _fresh_dir()
    _write(run, "".join(ev_line(i, "fullgraph_p") for i in indices).encode())
    evs = TimelineReader(run / "timeline_events" / "timeline.jsonl").read().events
    expected, s = [], 0
    for k, i in enumerate(indices):
        if k and i <= indices[k - 1]:
            s += 1
        expected.append(s)
    assert [e.session for e in evs] == expected


@SETTINGS
@given(st.lists(event_objs(well_typed=True), max_size=30))
def test_model_never_raises_on_odd_attribute_values(objs):
    run = _fresh_dir()
    _write(run, b"".join(json.dumps(o).encode() + b"\n" for o in objs))
    m = _check_model(run)
    for ev in m.events:
        m.files(ev)
        m.attributes(ev)
        m.folder_rel(ev)
        ev.kind
    # a failure is recovered only by a later event
    for f in m.triage.failures:
        if f.recovered_by is not None:
            assert f.recovered_by.seq > f.event.seq
