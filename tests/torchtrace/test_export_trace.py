"""``magi-tui export-trace`` on TORCH_TRACE logs (issue #19 item 10): Chrome trace-event JSON from torch's
``chromium_event`` records, merged across the ranks of a job with one process per rank, checked with a
Trace Event Format checker (:mod:`tests.support.trace_events`) and against the combined
``chromium_events.json`` tlparse's ``--all-ranks-html`` writes for the same logs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from magi_tui.cli import main
from tests.support import slow
from tests.support.trace_events import check_trace
from tests.torchtrace.jobkit import BRANCH2, SHAPE3
from tests.torchtrace.jobkit import rank_logs as _logs
from tests.torchtrace.oracle import tlparse_bin


def _export(path: Path, out: Path, *extra: str) -> dict:
    assert main(["export-trace", str(path), "-o", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_a_job_is_one_process_per_rank(tmp_path, capsys):
    doc = _export(SHAPE3, tmp_path / "trace.json")
    counts = check_trace(doc)
    assert {pid for pid, _ in counts} == {0, 1, 2}
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert names[2].startswith("rank 2 · shape3/dedicated_log_torch_trace_rank_2_")
    procs = doc["otherData"]["magi_tui"]["processes"]
    assert [(p["pid"], p["rank"], p["source"]) for p in procs] == [(r, r, "chromium_event") for r in (0, 1, 2)]
    assert all(p["unfinished"] == 0 and p["dropped_ends"] == 0 for p in procs)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    # torch's own spans, with their compile id; the whole frame compile inside each rank's dynamo span
    top = {e["pid"]: e for e in xs if e["name"] == "dynamo"}
    inner = {e["pid"]: e for e in xs if e["name"] == "entire_frame_compile"}
    for r in (0, 1, 2):
        assert top[r]["args"]["compile_id"] == "0/0"
        assert top[r]["ts"] <= inner[r]["ts"] and inner[r]["ts"] + inner[r]["dur"] <= top[r]["ts"] + top[r]["dur"]
    out = capsys.readouterr().out
    assert "wrote " in out and "3 process(es)" in out


@pytest.mark.slow
@pytest.mark.parametrize("folder", [BRANCH2, SHAPE3], ids=lambda p: p.name)
def test_same_spans_as_tlparse_all_ranks(folder, tmp_path):
    doc = _export(folder, tmp_path / "trace.json")
    check_trace(doc)
    proc = slow.run([tlparse_bin(), str(folder), "--all-ranks-html", "-o", str(tmp_path / "tl"), "--overwrite",
                     "--no-browser"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    theirs = json.loads((tmp_path / "tl" / "chromium_events.json").read_text())
    for pid in sorted({e["pid"] for e in theirs}):
        b = Counter(e["name"] for e in theirs if e["pid"] == pid and e["ph"] == "B")
        i = Counter(e["name"] for e in theirs if e["pid"] == pid and e["ph"] == "i")
        assert Counter(e["name"] for e in doc["traceEvents"] if e["pid"] == pid and e["ph"] == "X") == b
        assert Counter(e["name"] for e in doc["traceEvents"] if e["pid"] == pid and e["ph"] == "i") == i
        # each span lasts from its B to its E: the total time per name agrees with tlparse's events
        ends = sorted(e["ts"] for e in theirs if e["pid"] == pid and e["ph"] == "E")
        last = max(e["ts"] + e.get("dur", 0) for e in doc["traceEvents"] if e["pid"] == pid and e["ph"] != "M")
        assert last == pytest.approx(ends[-1], abs=0.01)


def test_overlapping_compile_threads_get_a_lane(tmp_path):
    """Rank 0 of branch2: Inductor's compile threads log ``compile_file`` spans with tid 0 while the main
    thread waits in ``async_compile.wait``: that wait overlaps a ``compile_file`` without nesting and is moved
    to a lane of its own (Perfetto would drop it)."""
    doc = _export(_logs(BRANCH2)[0], tmp_path / "t.json")
    check_trace(doc)
    moved = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["tid"] != 0]
    assert [e["name"] for e in moved] == ["async_compile.wait"]  # it began inside a compile_file, ended after it
    lanes = [e for e in doc["traceEvents"] if e["name"] == "thread_name" and e["tid"] == moved[0]["tid"]]
    assert "overlapping 1" in lanes[0]["args"]["name"]


def test_a_log_cut_short_ends_its_open_spans(tmp_path):
    log = _logs(SHAPE3)[1]
    lines = log.read_text().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if '"inductor_output_code"' in ln)  # mid-compile
    short = tmp_path / "dedicated_log_torch_trace_rank_1_cut.log"
    short.write_text("".join(lines[:cut]))
    doc = _export(short, tmp_path / "t.json")
    check_trace(doc)
    unfinished = {e["name"] for e in doc["traceEvents"] if e.get("args", {}).get("unfinished")}
    assert {"dynamo", "entire_frame_compile"} <= unfinished
    assert doc["otherData"]["magi_tui"]["processes"][0]["unfinished"] == len(
        [e for e in doc["traceEvents"] if e.get("args", {}).get("unfinished")])


def test_stdout_spans_source_and_exit_codes(tmp_path, capsys):
    log = _logs(SHAPE3)[0]
    assert main(["export-trace", str(log), "-o", "-"]) == 0
    cap = capsys.readouterr()
    check_trace(json.loads(cap.out))
    assert "wrote" in cap.err  # the summary goes to stderr when the trace is on stdout
    # the log's lifecycle spans instead of torch's events
    doc = _export(log, tmp_path / "s.json", "--source", "spans")
    check_trace(doc)
    assert doc["otherData"]["magi_tui"]["processes"][0]["source"] == "lifecycle_spans"
    assert any(e["ph"] == "X" and e["name"] == "compile" for e in doc["traceEvents"])
    # unusable input, an output that cannot be written
    assert main(["export-trace", str(tmp_path / "nope"), "-o", str(tmp_path / "x.json")]) == 2
    assert main(["export-trace", str(log), "-o", str(tmp_path / "no" / "dir" / "x.json")]) == 2
    assert "cannot write" in capsys.readouterr().err
    # a log with nothing timed: written, exit 1
    empty = tmp_path / "dedicated_log_torch_trace_rank_0_e.log"
    empty.write_text(log.read_text().splitlines(keepends=True)[0].replace("chromium_event", "str", 1)
                     .split(", \"has_payload\"")[0] + "}\n")
    assert main(["export-trace", str(empty), "-o", str(tmp_path / "e.json")]) == 1
    assert "nothing timed" in capsys.readouterr().out
    check_trace(json.loads((tmp_path / "e.json").read_text()))


def test_several_jobs_number_their_processes(tmp_path):
    """Three jobs under one root: ranks repeat, so runs are numbered in path order; names keep the rank
    (``late2``'s logs are named without one: their records say it)."""
    doc = _export(BRANCH2.parent, tmp_path / "t.json")
    check_trace(doc)
    procs = doc["otherData"]["magi_tui"]["processes"]
    assert [p["pid"] for p in procs] == [0, 1, 2, 3, 4, 5, 6]
    assert [(p["rank"], p["program"]) for p in procs] == [(0, 1), (1, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)]
    names = [e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"]
    assert names[0].startswith("rank 0 · branch2/dedicated_log_torch_trace_rank_0_")
    assert names[3] == "rank 0 · late2/dedicated_log_torch_trace_vwqw38x1.log"
    assert names[4].startswith("rank 0 · shape3/dedicated_log_torch_trace_rank_0_")
