"""A TORCH_TRACE log's events keep only their attributes' JSON; the rest of each event's line is made again
when it is asked for (``TraceLogReader.event_line_bytes``). These tests hold that line to the one the
tracer's writer would have made (``timeline_record``: its fields, its key order, its time formatting),
byte for byte: each record's events are made into lines here, from what the mapping handed the reader,
and compared with what the reader gives back — on the real logs, a synthetic one, odd records, records
without a time, and a log replaced while it is read."""

from __future__ import annotations

import itertools
import json
import os
import sys

import msgspec
import pytest

from magi_format.layout import timeline_record
from magi_format.text import json_safe
from magi_tui.model import RunModel
from magi_tui.model.sources.torchtrace.reader import TraceLogReader
from tests.support.paths import ROOT
from tests.torchtrace.logkit import BREAKS_LOG, DYNAMIC_LOG, make_record, records, write_log

sys.path.insert(0, str(ROOT / "benchmarks"))
from synth import write_trace_log  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_trace_dir")

_careful = json.JSONEncoder(ensure_ascii=False).encode


@pytest.fixture
def expected(monkeypatch) -> dict[int, bytes]:
    """seq -> the line the writer makes of each event the mapping hands the reader (of the reading now:
    a replaced log starts over): compact JSON, or the stdlib's of ``json_safe`` attributes where msgspec
    refuses them."""
    want: dict[int, bytes] = {}
    t0: list = [None]
    add = TraceLogReader._add_events

    def spy(self, specs, ts, line_no, payload, rng, result):
        if self.seq == 0:  # a (new) reading
            want.clear()
            t0[0] = None
        for i, spec in enumerate(specs):
            name, attrs, files = spec[0], spec[1], spec[2] or {}
            ets = spec[3] if len(spec) > 3 and spec[3] is not None else ts
            if ets is not None and t0[0] is None:
                t0[0] = ets
            seq = self.seq + i
            try:
                line = msgspec.json.encode(timeline_record(seq, name, list(files), attrs, ets, t0[0]))
            except (TypeError, ValueError, OverflowError):
                line = _careful(timeline_record(seq, name, list(files), json_safe(attrs), ets, t0[0])).encode(
                    "utf-8", "replace")
            want[seq] = line
        return add(self, specs, ts, line_no, payload, rng, result)

    monkeypatch.setattr(TraceLogReader, "_add_events", spy)
    return want


def _read(reader: TraceLogReader, step: int = 1 << 16) -> list:
    evs = []
    while (got := reader.read(step).events):
        evs += got
    return evs


def _same_lines(reader: TraceLogReader, evs: list, want: dict[int, bytes]) -> None:
    assert [e.seq for e in evs] == sorted(want) and evs
    for ev in evs:
        assert reader.event_line_bytes(ev) == want[ev.seq], ev


@pytest.mark.parametrize("log", [BREAKS_LOG, DYNAMIC_LOG], ids=["breaks", "dynamic"])
def test_every_line_is_the_writers_line_on_real_logs(log, expected):
    reader = TraceLogReader(log)
    evs = _read(reader)
    assert len(evs) > 50 and not reader._whole  # every line of a real log is made again, none kept whole
    _same_lines(reader, evs, expected)
    # what RunModel shows is the same line, parsed
    run = RunModel(log).load()
    for ev in run.events[::5]:
        assert run.line(ev) == json.loads(expected[ev.seq])
        assert run.attributes(ev) == json.loads(expected[ev.seq])["attributes"]


def test_every_line_is_the_writers_line_on_a_synthetic_log(tmp_path, expected):
    log = write_trace_log(tmp_path / "dedicated_log_torch_trace_rank_0_s.log", 300)
    reader = TraceLogReader(log)
    evs = _read(reader, 1 << 20)
    assert len(evs) == 1200 and not reader._whole  # four events a frame, each line made again
    _same_lines(reader, evs, expected)


def test_odd_records_and_times_keep_their_lines(tmp_path, monkeypatch, expected):
    """A record whose attributes msgspec refuses (a lone surrogate) gets the careful line (the stdlib's
    spacing); records without a time (the first ones: their events have no time fields, ``t0`` is the
    first time after them) and a time held as an int (kept whole: the Event holds a float) keep theirs."""
    recs = records()
    hostile = [make_record({"artifact": {"name": "odd\ud800name", "encoding": "string"}, "frame_id": 0,
                            "frame_compile_id": 0, "attempt": 0}, "hello"),
               make_record({"artifact": {"name": "big", "encoding": "string"}, "frame_id": 0,
                            "frame_compile_id": 0, "attempt": 10 ** 30}, "hello")]
    log = write_log(tmp_path / "dedicated_log_torch_trace_odd.log", recs[:40] + hostile + recs[40:])
    stamp = TraceLogReader._timestamp
    count = itertools.count()

    def timestamp(self, m):
        n = next(count)
        ts = stamp(self, m)
        if n < 12 or n % 17 == 0:
            return None
        return int(ts) if n % 23 == 0 else ts

    monkeypatch.setattr(TraceLogReader, "_timestamp", timestamp)
    reader = TraceLogReader(log)
    evs = _read(reader)
    _same_lines(reader, evs, expected)
    lines = [reader.event_line_bytes(e) for e in evs]
    assert any(b'"odd?name"' in ln and b'"index": ' in ln for ln in lines)  # the careful way
    untimed = [e for e in evs if e.timestamp is None]
    assert untimed and all(b'"relative_time"' not in lines[e.seq] for e in untimed)
    whole_ints = [e for e in evs if e.seq in reader._whole and b'"index": ' not in lines[e.seq]]
    assert whole_ints and all(json.loads(lines[e.seq])["timestamp"] == int(e.timestamp) for e in whole_ints)
    # attributes.json of an event with files is its line's attributes
    for ev in [e for e in evs if e.files][:40] + [e for e in evs if e.seq in reader._whole and e.files]:
        path = dict((n, p) for n, p, _why in reader.event_files(ev))["attributes.json"]
        got = json.loads(path.read_text(encoding="utf-8"))
        assert got == json.loads(expected[ev.seq].decode("utf-8", "replace"))["attributes"]


def test_a_log_replaced_while_read_starts_its_lines_over(tmp_path, expected):
    """A log replaced by another: the new reading's lines count from 0 and time from its own first record."""
    log = tmp_path / "dedicated_log_torch_trace_r.log"
    write_log(log, records()[:150])
    reader = TraceLogReader(log)
    first = _read(reader)
    old_t0 = reader._t0
    tmp = tmp_path / "next.log"
    write_log(tmp, records(DYNAMIC_LOG))
    os.replace(tmp, log)
    res = reader.read(1 << 16)
    assert res.reset and first
    evs = res.events + _read(reader)
    assert reader._t0 != old_t0 and evs[0].seq == 0
    _same_lines(reader, evs, expected)
    assert all(reader.event_line_bytes(ev) is None for ev in first)  # the former reading's events: gone
