"""Conveniences tlparse lacks (issue 19.9): a ``.log.gz`` opens directly, and a log's dates come from the
log itself, not from when the file was last touched."""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
import time

from magi_tui.model import RunModel, find_runs
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.logkit import RECORDED, records, settle, write_log

JIT = RECORDED / "jit_reset.log"
START = float(re.search(rb'"start_time": ([0-9.]+)', JIT.read_bytes()).group(1))  # torch's epoch time


def _facts(run: RunModel) -> tuple:
    return (run.status, [e.name for e in run.events], [run.attributes(e) for e in run.events],
            [e.timestamp for e in run.events])


def test_log_gz_opens_directly(tmp_path):
    gz = tmp_path / "dedicated_log_torch_trace_abc.log.gz"
    gz.write_bytes(gzip.compress(JIT.read_bytes()))
    settle(gz)
    assert [r.path for r in find_runs(tmp_path)] == [gz]
    run = RunModel(gz).load()
    assert _facts(run) == _facts(RunModel(JIT).load())
    ev = next(e for e in run.events if "captured_graph.py" in e.files)
    path = next(p for n, p, _ in run.files(ev) if n == "captured_graph.py")
    assert "class GraphModule" in path.read_text()
    out = slow.run([sys.executable, "-m", "magi_tui", "triage", str(gz), "--json"], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and json.loads(out.stdout)["status"] == "recovered"
    assert not list(tmp_path.glob("*.log"))  # nothing unpacked beside it


def test_cut_or_false_gz_says_so_without_a_traceback(tmp_path):
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gzip.compress(JIT.read_bytes())[:20000])
    settle(cut)
    false = tmp_path / "dedicated_log_torch_trace_false.log.gz"
    false.write_bytes(b"not gzip at all\n")
    for path in (cut, false):
        for cmd in ("runs", "triage"):
            out = slow.run([sys.executable, "-m", "magi_tui", cmd, str(path)], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
            assert "Traceback" not in out.stderr + out.stdout, out.stderr
    run = RunModel(false).load()
    assert run.error and "cannot unpack" in run.error
    run = RunModel(cut).load()
    assert run.events and run.status in ("incomplete", "failed")  # what unpacked is read


def test_dates_come_from_the_log_not_the_files_mtime(tmp_path):
    log = write_log(tmp_path / "copied.log", [JIT.read_bytes()])
    later = time.mktime((2031, 3, 1, 12, 0, 0, 0, 0, -1))
    os.utime(log, (later, later))  # copied years later
    run = RunModel(log).load()
    assert abs(run.started - START) < 5, (time.ctime(run.started), time.ctime(START))


def test_a_log_across_new_year_keeps_its_order(tmp_path):
    recs = records(JIT)
    half = len(recs) // 2
    new = [re.sub(rb"^V\d{4}", b"V1231", r) for r in recs[:half]] + [re.sub(rb"^V\d{4}", b"V0101", r) for r in recs[half:]]
    run = RunModel(write_log(tmp_path / "newyear.log", new)).load()
    stamps = [e.timestamp for e in run.events if e.timestamp is not None]
    years = {time.localtime(s).tm_year for s in stamps}
    assert len(years) == 2 and min(years) == time.localtime(START).tm_year
    assert stamps[-1] > stamps[0]
