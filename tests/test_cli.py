"""``magi-tui runs`` / ``magi-tui triage`` as a user runs them: output, --json shape, exit codes,
and one clear line (never a traceback) on a bad path or a broken file."""

from __future__ import annotations

import json
import os

import pytest

from magi_tui import cli  # noqa: E402
from tests.support.cli import run_cli
from tests.support.paths import COLD, FIXTURES, WARM
from tests.support.timeline import ev_line, lc, write_run

needs_fixtures = pytest.mark.usefixtures("fixtures_dir")

# the keys issue 2 lists for `triage --json`
TRIAGE_KEYS = {"run", "status", "events", "malformed_lines", "first_failure", "failures", "restarts",
               "recompiles", "graph_breaks", "cache", "open"}
FAILURE_KEYS = {"index", "name", "scope", "subgraph_index", "lifecycle", "exception_type", "message",
                "recovered", "folder"}
ITEM_KEYS = {"index", "name", "reason"}
# `runs`: path, run id, label, rank, events, failures, status, started, duration
RUNS_KEYS = {"path", "run_id", "label", "rank", "events", "failures", "status", "started", "duration_s"}


# -- on the real fixtures --------------------------------------------------------------------------
@needs_fixtures
def test_runs_lists_every_fixture(capsys):
    code, out, err = run_cli(capsys, "runs", str(FIXTURES))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["STARTED", "LABEL", "RANK"]
    assert len(lines) == 1 + 14
    assert any("TwoLayerTransformer" in ln and "recovered" in ln for ln in lines)


@needs_fixtures
def test_runs_json(capsys):
    code, out, _ = run_cli(capsys, "runs", str(FIXTURES / "two_models"), "--json")
    assert code == 0
    rows = json.loads(out)
    assert isinstance(rows, list) and len(rows) == 2
    for row in rows:
        assert RUNS_KEYS <= set(row)
    assert sorted(r["tag"] for r in rows) == ["Tiny", "second_tag"]
    assert {r["status"] for r in rows} == {"ok"}


@needs_fixtures
def test_triage_cold_transformer_text(capsys):
    code, out, _ = run_cli(capsys, "triage", str(FIXTURES / COLD))
    assert code == 0  # one Dynamo restart, recovered: control flow, not a failure (issue #10)
    assert "status: recovered" in out
    assert "#13 fullgraph_failed_compiler_compile" in out
    assert "TensorifyScalarRestartAnalysis" in out
    assert "compiler_compile" in out
    assert "0013_fullgraph_failed_compiler_compile" in out


@needs_fixtures
def test_triage_json_shape_single_run(capsys):
    code, out, _ = run_cli(capsys, "triage", str(FIXTURES / COLD), "--json")
    assert code == 0
    obj = json.loads(out)
    assert isinstance(obj, dict)  # one run: one object
    assert TRIAGE_KEYS <= set(obj)
    assert obj["status"] == "recovered" and obj["events"] == 72 and obj["malformed_lines"] == 0
    ff = obj["first_failure"]
    assert FAILURE_KEYS <= set(ff)
    assert (ff["index"], ff["name"], ff["scope"], ff["subgraph_index"], ff["lifecycle"], ff["exception_type"],
            ff["message"], ff["recovered"], ff["folder"]) == (
        13, "fullgraph_failed_compiler_compile", "fullgraph", None, "compiler_compile",
        "TensorifyScalarRestartAnalysis", "", True, "timeline_events/files/0013_fullgraph_failed_compiler_compile")
    # issue #10: the restart is one restart with its cascade folded under it, not five failures
    assert obj["failures"] == []
    (restart,) = obj["restarts"]
    assert (restart["index"], restart["name"], restart["reason"], restart["recovered"]) == (
        13, "fullgraph_failed_compiler_compile", "TensorifyScalarRestartAnalysis", True)
    assert [c["index"] for c in restart["cascade"]] == [14, 15, 16, 17]
    assert {"hits", "misses", "stores", "skipped_stores", "bypasses"} <= set(obj["cache"])
    assert all(ITEM_KEYS <= set(i) for i in obj["cache"]["misses"])
    assert obj["open"] == []


@needs_fixtures
def test_triage_json_is_a_list_for_several_runs(capsys):
    code, out, _ = run_cli(capsys, "triage", str(FIXTURES / "transformer"), "--json")
    assert code == 0  # both runs recovered from their restart
    objs = json.loads(out)
    assert isinstance(objs, list) and len(objs) == 2
    warm = next(o for o in objs if "112002" in o["run"])
    assert warm["status"] == "recovered" and len(warm["cache"]["hits"]) == 3
    assert str(FIXTURES / WARM) == warm["run"]


@needs_fixtures
@pytest.mark.parametrize("name,code,status", [
    ("aot", 1, "failed"), ("toy_explain", 0, "ok"), ("toy_explain_warm_cache", 0, "empty"),
    ("dynamo_failure", 0, "empty"), ("eager_nocache", 0, "ok"), ("append_same_dir", 0, "ok"),
])
def test_triage_exit_codes_on_fixtures(capsys, name, code, status):
    got, out, _ = run_cli(capsys, "triage", str(FIXTURES / name), "--json")
    assert got == code
    assert json.loads(out)["status"] == status


@needs_fixtures
def test_triage_every_fixture_never_2(capsys):
    for d in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        code, _, _ = run_cli(capsys, "triage", str(d))
        assert code in (0, 1), d


@needs_fixtures
def test_eager_nocache_skipped_stores_in_json(capsys):
    _, out, _ = run_cli(capsys, "triage", str(FIXTURES / "eager_nocache"), "--json")
    skipped = json.loads(out)["cache"]["skipped_stores"]
    assert skipped and {s["reason"] for s in skipped} == {"cache_disabled"}


# -- exit codes and errors -------------------------------------------------------------------------
@pytest.mark.parametrize("cmd", ["runs", "triage"])
def test_no_such_path_is_2(capsys, tmp_path, cmd):
    code, out, err = run_cli(capsys, cmd, str(tmp_path / "nope"))
    assert code == 2 and out == ""
    assert err.startswith("magi-tui: no such file or directory") and err.count("\n") == 1


@pytest.mark.parametrize("cmd", ["runs", "triage"])
def test_no_run_under_path_is_2(capsys, tmp_path, cmd):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.txt").write_text("hello")
    for p in (tmp_path / "empty", tmp_path / "file.txt"):
        code, out, err = run_cli(capsys, cmd, str(p))
        assert code == 2 and "no runs under" in err and err.count("\n") == 1


def test_triage_ok_run_is_0(capsys, tmp_path):
    run = write_run(tmp_path / "r", [lc(0, "before", "x"), lc(1, "after", "x")])
    code, out, _ = run_cli(capsys, "triage", str(run))
    assert code == 0 and "✓ no failures" in out
    code, out, _ = run_cli(capsys, "runs", str(run), "--json")
    assert code == 0 and json.loads(out)[0]["status"] == "ok"


def test_garbage_timeline(capsys, tmp_path):
    run = write_run(tmp_path / "r", b"\x00\xff garbage\n{not json}\n" + lc(0, "before", "x").encode()
                    + lc(1, "failed", "x").encode() + b'{"index": 2, "na')
    code, out, err = run_cli(capsys, "triage", str(run), "--json")
    assert code == 1
    obj = json.loads(out)
    assert obj["malformed_lines"] == 2 and obj["events"] == 2 and obj["status"] == "failed"
    assert [m["line"] for m in obj["malformed"]] == [1, 2]
    code, out, err = run_cli(capsys, "triage", str(run))
    assert "malformed line 1" in out and "last line incomplete" in out
    code, out, err = run_cli(capsys, "runs", str(run))
    assert code == 0 and "failed" in out


def test_directory_instead_of_timeline(capsys, tmp_path):
    run = tmp_path / "r"
    (run / "timeline_events" / "timeline.jsonl").mkdir(parents=True)
    code, out, err = run_cli(capsys, "triage", str(run))
    assert code == 2  # the only run cannot be read
    assert "timeline.jsonl: not a regular file" in err and err.count("\n") == 1
    code, out, err = run_cli(capsys, "runs", str(run), "--json")
    assert code == 0 and json.loads(out)[0]["error"] == "not a regular file"


def test_unreadable_timeline(capsys, tmp_path, monkeypatch):
    run = write_run(tmp_path / "r", [lc(0, "before", "x")])
    write_run(tmp_path / "good", [lc(0, "before", "x"), lc(1, "after", "x")])  # readable, complete
    real_open = os.open

    def deny(path, *a, **k):
        if str(path) == str(run / "timeline_events" / "timeline.jsonl"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", deny)
    code, out, err = run_cli(capsys, "triage", str(run))
    assert code == 2 and "cannot open: Permission denied" in err
    # next to a readable run: reported, and the readable one decides the exit code
    code, out, err = run_cli(capsys, "triage", str(tmp_path), "--json")
    assert code == 0 and len(json.loads(out)) == 2 and err.count("\n") == 1


def test_unexpected_error_is_one_line(capsys, tmp_path, monkeypatch):
    write_run(tmp_path / "r", [lc(0, "before", "x")])

    def boom(*a, **k):
        raise RuntimeError("something odd")

    monkeypatch.setattr("magi_tui.model.outputs.report.triage_text", boom)
    monkeypatch.delenv("MAGI_TUI_DEBUG", raising=False)
    code, out, err = run_cli(capsys, "triage", str(tmp_path / "r"))
    assert code == 2 and err == "magi-tui: RuntimeError: something odd\n"


def test_default_path_is_runs_dir(capsys, tmp_path, monkeypatch):
    write_run(tmp_path / "runs" / "magi_depyf" / "run_20261122_111900" / "model_1_T_rank_0",
              [ev_line(0, "fullgraph_after_inductor_schedule")])
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "runs", "--json")
    assert code == 0
    (row,) = json.loads(out)
    assert (row["run_id"], row["model_index"], row["tag"], row["rank"]) == ("run_20261122_111900", 1, "T", 0)


def test_literal_is_exported():
    assert cli.literal("\x1b[1m") == "\\x1b[1m"
