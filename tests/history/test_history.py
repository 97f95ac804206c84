"""``magi-tui index`` and ``magi-tui history`` on a CI-like history of 200 real-log runs: the answers a user
reads (when the break appeared and went, the compile-time trend, the regressions with their frame), the
index appended and never rewritten, damaged runs as ``error`` rows, and ``--sql`` read-only."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from tests.history.conftest import PLAN
from tests.support.cli import run_cli
from tests.support.history_runs import BREAK_ID, make_history, run_path


def _json(capsys, args: list[str]) -> object:
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    return json.loads(out)


def test_first_seen_and_gone(capsys, ci_history):
    root, index = ci_history
    first = _json(capsys, ["history", str(index), "first-seen", BREAK_ID, "--json"])
    assert first["first_seen"]["path"] == str(run_path(root, PLAN, 120).absolute())
    assert first["last_seen"]["path"] == str(run_path(root, PLAN, 169).absolute())
    assert first["runs_with_it"] == 50
    gone = _json(capsys, ["history", str(index), "gone", BREAK_ID, "--json"])
    assert gone["state"] == "gone"
    assert gone["gone_in"]["path"] == str(run_path(root, PLAN, 170).absolute())
    never = _json(capsys, ["history", str(index), "gone", "GB9999@nowhere.py:1", "--json"])
    assert never["state"] == "never seen" and never["gone_in"] is None


def test_trend_follows_the_drift(capsys, ci_history):
    root, index = ci_history
    t = _json(capsys, ["history", str(index), "trend", "--metric", "compile_time", "--last", "40", "--json"])
    runs = t["runs"]
    assert [r["path"] for r in runs] == [str(run_path(root, PLAN, i).absolute()) for i in range(160, 200)]
    values = [r["value"] for r in runs]
    assert values == sorted(values)  # drifting up, run after run
    # the log's own compile time (0.381432 s, torch's compilation_metrics) stretched as the plan says
    assert abs(values[-1] - 0.381432 * PLAN.scale_of(199)) < 1e-3
    breaks = _json(capsys, ["history", str(index), "trend", "--metric", "breaks", "--last", "200", "--json"])["runs"]
    assert [i for i, r in enumerate(breaks) if r["value"]] == list(range(120, 170))


def test_regressions_name_the_run_and_the_frame(capsys, ci_history):
    root, index = ci_history
    regs = _json(capsys, ["history", str(index), "regressions", "--last", "200", "--json"])["regressions"]
    got = {(r["path"], r["metric"]) for r in regs}
    assert got == {(str(run_path(root, PLAN, 120).absolute()), "breaks"),
                   (str(run_path(root, PLAN, 150).absolute()), "compile_time")}
    ct = next(r for r in regs if r["metric"] == "compile_time")
    assert ct["frame"] == "f (reset_same_function.py:6)" and ct["value"] > ct["band_high"]
    assert _json(capsys, ["history", str(index), "regressions", "--last", "20", "--json"])["regressions"] == []


def test_top_causes(capsys, ci_history):
    _, index = ci_history
    top = _json(capsys, ["history", str(index), "top", "causes", "--json"])["causes"]
    assert [(c["id"], c["kind"], c["runs"]) for c in top] == [(BREAK_ID, "graph_break", 50)]
    late = _json(capsys, ["history", str(index), "top", "causes", "--since", "2026-01-08", "--json"])["causes"]
    assert late[0]["runs"] < 50


def test_sql_is_read_only(capsys, ci_history, tmp_path):
    _, index = ci_history
    rows = _json(capsys, ["history", str(index), "--sql", "SELECT count(*) AS n FROM runs WHERE status = 'ok'", "--json"])
    assert rows == [{"n": 200}]
    target = index / "stolen.csv"
    for sql in ("SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM read_text('/etc/passwd')",
                f"COPY runs TO '{target}'", f"COPY runs TO '{tmp_path / 'x.csv'}'", "ATTACH '/tmp/x.duckdb'",
                "INSTALL httpfs", "LOAD httpfs", "PRAGMA version", "SET enable_external_access = true",
                "EXPORT DATABASE '/tmp/x'", "CREATE TABLE t AS SELECT 1"):
        code, out, err = run_cli(capsys, *["history", str(index), "--sql", sql])
        assert code == 2, sql
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not target.exists() and not (tmp_path / "x.csv").exists()


def test_incremental_index_appends(capsys, tmp_path):
    root, index = tmp_path / "runs", tmp_path / "index"
    make_history(root, PLAN, range(0, 10))
    assert run_cli(capsys, *["index", str(root), "-o", str(index)])[0] == 0
    before = {p: p.stat().st_mtime_ns for p in index.rglob("*.parquet")}
    make_history(root, PLAN, range(10, 13))
    # one run grows (a live run written further): read again, its older rows no longer count
    grown = run_path(root, PLAN, 3)
    shutil.copy(run_path(root, PLAN, 125 - 115), grown)  # run 10's log in place of run 3's
    # a damaged run: its timeline is not a regular file (the reader's one line is its error)
    (root / "broken" / "timeline_events" / "timeline.jsonl").mkdir(parents=True)
    res = _json(capsys, ["index", str(root), "-o", str(index), "--json"])
    assert res["indexed"] == 5 and res["unchanged"] == 9
    after = {p: p.stat().st_mtime_ns for p in index.rglob("*.parquet")}
    assert all(after[p] == m for p, m in before.items())  # nothing written before was rewritten
    rows = _json(capsys, ["history", str(index), "--sql", "SELECT status, count(*) AS n FROM runs GROUP BY status "
                  "ORDER BY status", "--json"])
    assert rows == [{"status": "error", "n": 1}, {"status": "ok", "n": 13}]
    err = _json(capsys, ["history", str(index), "--sql", "SELECT error FROM runs WHERE status = 'error'", "--json"])
    assert err == [{"error": "not a regular file"}]
    assert _json(capsys, ["index", str(root), "-o", str(index), "--json"])["indexed"] == 0


def test_refuses_what_is_not_an_index(capsys, tmp_path):
    code, _, err = run_cli(capsys, *["history", str(tmp_path), "trend"])
    assert code == 2 and "not a magi-tui index" in err
    (tmp_path / "other.txt").write_text("x")
    code, _, err = run_cli(capsys, *["index", str(tmp_path), "-o", str(tmp_path)])
    assert code == 2 and "not a magi-tui index" in err and len(err.strip().splitlines()) == 1


def test_newer_schema_refused_in_one_line(capsys, tmp_path):
    import pyarrow.parquet as pq

    root, index = tmp_path / "runs", tmp_path / "index"
    make_history(root, PLAN, range(0, 2))
    assert run_cli(capsys, *["index", str(root), "-o", str(index)])[0] == 0
    part = next((index / "_manifest").glob("part-*.parquet"))
    t = pq.read_table(part)
    pq.write_table(t.replace_schema_metadata({"magi_tui.schema_version": "99"}), part)
    code, _, err = run_cli(capsys, *["history", str(index), "trend"])
    assert code == 2 and "schema version 99" in err and len(err.strip().splitlines()) == 1


def test_check_history_gate(capsys, ci_history, tmp_path):
    root, index = ci_history
    code, out, err = run_cli(capsys, *["check", str(run_path(root, PLAN, 199)), "--history", str(index), "--json"])
    assert code == 0, out + err
    names = {b["name"].split(" ")[0]: b for b in json.loads(out)["budgets"]}
    assert names["history.compile_time"]["ok"] and names["history.new_breaks"]["actual"] == []
    # a slower run of the same program with a break the index never saw (run 0's log, twice as slow)
    from tests.support.history_runs import LogTemplate, Plan

    slow = tmp_path / "ci" / "run_slow.log.gz"
    slow.parent.mkdir()
    slow.write_bytes(gzip.compress(LogTemplate().render(PLAN.start_of(300), 3.0, True).encode()))
    code, out, err = run_cli(capsys, *["check", str(slow), "--history", str(index)])
    assert code == 0 or code == 1
    assert "compile time" in out and "above the band" in out, out
    assert Plan  # the plan type is the generator's
    code2, out2, _ = run_cli(capsys, *["check", str(slow), "--history", str(index), "--json"])
    broken = json.loads(out2)["broken"]
    assert code2 == 1 and any("above the band" in b for b in broken)


def test_index_of_real_fixtures(capsys, tmp_path, fixtures_dir):
    """Real runs of several kinds (MagiCompiler run dirs, TORCH_TRACE logs): each is a row with its status."""
    index = tmp_path / "index"
    roots = [fixtures_dir / "transformer", fixtures_dir.parent / "torch_trace"]
    res = _json(capsys, ["index", *map(str, roots), "-o", str(index), "--json"])
    assert res["indexed"] >= 4
    rows = _json(capsys, ["history", str(index), "--sql", "SELECT source, status, torch_version FROM runs ORDER BY path",
                  "--json"])
    assert {r["source"] for r in rows} == {"timeline.jsonl", "torch_trace"}
    assert {r["torch_version"] for r in rows if r["source"] == "torch_trace"} == {"2.13.0+cpu"}
    assert Path(index).is_dir()
