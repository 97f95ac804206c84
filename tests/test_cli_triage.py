"""The headless contract of ``magi-tui triage`` (docs/HEADLESS.md): JSON keys, statuses, exit codes,
``--fail-on``, ``--all``; the checks are the ones the triage panel shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magi_tui.model import RunModel  # noqa: E402
from magi_tui.model.analysis.checks import analyse  # noqa: E402
from tests.support.cli import run_cli
from tests.support.paths import COLD, FIXTURES
from tests.support.timeline import ev_line, write_run

needs_fixtures = pytest.mark.usefixtures("fixtures_dir")

RUN_KEYS = {"run", "status", "events", "summary", "checks", "first_failure", "failures", "restarts",
            "graph_breaks", "recompiles", "frames", "cache", "compile_time", "open", "empty", "error",
            "malformed_lines", "incomplete_reasons", "tracer_stopped", "recompile_limit_hits"}
GB_KEYS = {"gb_id", "reason", "explanation", "hints", "user_frame", "source_line", "count", "compile_ids"}
RC_KEYS = {"frame", "compile_id", "reasons", "guard", "expected", "actual", "suggestion", "guard_diff"}
FRAME_KEYS = {"frame", "compiles", "recompiles", "graph_breaks", "compile_s", "recompile_limit", "limit_hit"}


def recompile_storm(path: Path, n: int = 12) -> Path:
    lines, i = [], 0
    for k in range(n):
        cid = f"0/{k}"
        if k:
            lines.append(ev_line(i, "fullgraph_recompile", compile_id=cid, frame="f",
                                 reason=f"0/{k - 1}: tensor 'x' size mismatch at index 0. expected {k + 1}, actual {k + 2}",
                                 reasons=[f"0/{j}: tensor 'x' size mismatch at index 0. expected {j + 2}, actual {k + 2}"
                                          for j in range(k - 1, -1, -1)]))
            i += 1
        lines.append(ev_line(i, "fullgraph_before_compile", lifecycle_name="compile", compile_id=cid, frame="f"))
        lines.append(ev_line(i + 1, "fullgraph_after_compile", lifecycle_name="compile", compile_id=cid, frame="f",
                             duration_ms=10.0))
        i += 2
    return write_run(path, lines)


@needs_fixtures
def test_json_contract_on_the_cold_transformer(capsys):
    code, out, _ = run_cli(capsys, "triage", str(FIXTURES / COLD), "--json")
    assert code == 0
    obj = json.loads(out)
    assert RUN_KEYS <= set(obj)
    assert obj["status"] == "recovered" and obj["failures"] == []
    assert obj["first_failure"]["index"] == 13 and obj["first_failure"]["recovered"] is True
    assert len(obj["restarts"]) == 1 and len(obj["restarts"][0]["cascade"]) == 4
    assert {"hits", "misses", "bypasses", "reasons", "counts"} <= set(obj["cache"])
    assert all(FRAME_KEYS <= set(f) for f in obj["frames"])
    assert obj["compile_time"]["phases"][0]["phase"] == "magi_backend_call"
    # the panel's checks, word for word
    run = RunModel(FIXTURES / COLD).load()
    assert obj["checks"] == [c.as_json() for c in analyse(run).checks]
    assert {c["level"] for c in obj["checks"]} <= {"ok", "warn", "fail", "unknown"}
    # an upstream run cannot tell how its program ended: said, never guessed green
    unknown = [c for c in obj["checks"] if c["level"] == "unknown"]
    assert [c["rule"] for c in unknown] == ["not-recorded"] and "how the program ended" in unknown[0]["message"]
    assert obj["outcome"] == {"recorded": False, "why": "an upstream run"}


@needs_fixtures
def test_json_contract_on_recompile_explain(capsys):
    code, out, _ = run_cli(capsys, "triage", str(FIXTURES / "recompile_explain"), "--json")
    assert code == 0
    obj = json.loads(out)
    assert obj["status"] == "ok"
    assert obj["graph_breaks"] and all(GB_KEYS <= set(b) for b in obj["graph_breaks"])
    assert len(obj["recompiles"]) == 6 and all(RC_KEYS <= set(r) for r in obj["recompiles"])
    dtype = [r for r in obj["recompiles"] if r["kind"] == "dtype"]
    assert {(r["expected"], r["actual"]) for r in dtype} == {("torch.float32", "torch.float64")}
    assert dtype[0]["guard_diff"]["changes"] == [{"older": "torch.float32", "newer": "torch.float64"}]


@needs_fixtures
@pytest.mark.parametrize("name,code,status", [
    (COLD, 0, "recovered"), ("aot", 1, "failed"), ("dynamo_failure", 0, "empty"),
    ("toy_explain_warm_cache", 0, "empty"), ("recompile_explain", 0, "ok"), ("toy_explain", 0, "ok"),
])
def test_statuses_and_exit_codes(capsys, name, code, status):
    got, out, _ = run_cli(capsys, "triage", str(FIXTURES / name), "--json")
    assert (got, json.loads(out)["status"]) == (code, status)


@needs_fixtures
@pytest.mark.parametrize("name,fail_on,code", [
    (COLD, "recovered", 1), (COLD, "recompile,graph-break", 0),
    ("recompile_explain", "recompile", 1), ("toy_explain", "graph-break", 1), ("toy_explain", "recompile", 0),
])
def test_fail_on_widens_exit_1(capsys, name, fail_on, code):
    got, _, _ = run_cli(capsys, "triage", str(FIXTURES / name), "--fail-on", fail_on)
    assert got == code


def test_unknown_fail_on_is_2(capsys, tmp_path):
    run = write_run(tmp_path / "r", [ev_line(0, "fullgraph_x")])
    code, _, err = run_cli(capsys, "triage", str(run), "--fail-on", "everything")
    assert code == 2 and "--fail-on" in err


def test_incomplete_run_exits_1(capsys, tmp_path):
    run = write_run(tmp_path / "r", [ev_line(0, "fullgraph_before_compile", lifecycle_name="compile",
                                             compile_id="0/0", frame="f")])
    code, out, _ = run_cli(capsys, "triage", str(run), "--json")
    obj = json.loads(out)
    assert code == 1 and obj["status"] == "incomplete" and obj["incomplete_reasons"]


def test_text_caps_lists_json_never(capsys, tmp_path):
    run = recompile_storm(tmp_path / "storm", 12)
    code, out, _ = run_cli(capsys, "triage", str(run))
    assert code == 0 and "recompiles: 11" in out
    assert "... 5 more (--all)" in out
    assert "f 0/11:" not in out
    code, out_all, _ = run_cli(capsys, "triage", str(run), "--all")
    assert "f 0/11:" in out_all and "more (--all)" not in out_all
    assert "0/0: tensor 'x' size mismatch" in out_all        # every reason of the last recompile
    code, out_json, _ = run_cli(capsys, "triage", str(run), "--json")
    obj = json.loads(out_json)
    last = obj["recompiles"][-1]
    assert len(obj["recompiles"]) == 11 and len(last["reasons"]) == 11      # one per cache entry
    assert last["reasons"][-1] == "0/0: tensor 'x' size mismatch at index 0. expected 2, actual 13"
    assert obj["frames"][0]["compiles"] == 12 and obj["frames"][0]["recompile_limit"] == 8
    assert any(c["level"] == "warn" and "at the recompile limit (8)" in c["message"] for c in obj["checks"])


def test_run_strings_shown_literally(capsys, tmp_path):
    run = write_run(tmp_path / "r", [
        ev_line(0, "fullgraph_before_compile", lifecycle_name="compile", compile_id="0/0", frame="f"),
        ev_line(1, "fullgraph_graph_break", compile_id="0/0", frame="f", reason="evil \x1b]52;c;aGk=\x07 text",
                user_frame="/x.py:3"),
        ev_line(2, "fullgraph_after_compile", lifecycle_name="compile", compile_id="0/0", frame="f", duration_ms=1.0),
    ])
    code, out, _ = run_cli(capsys, "triage", str(run))
    assert "\x1b" not in out and "\x07" not in out and "\\x1b]52" in out
    code, out, _ = run_cli(capsys, "triage", str(run), "--json")
    assert "\x1b" not in out and json.loads(out)["graph_breaks"][0]["reason"].startswith("evil \x1b")


@needs_fixtures
def test_fail_checks_match_exit_1_on_every_fixture(capsys):
    from magi_tui.model.sources.discovery import find_runs

    for found in find_runs(FIXTURES):
        code, out, _ = run_cli(capsys, "triage", str(found.path), "--json")
        obj = json.loads(out)
        assert (code == 1) == any(c["level"] == "fail" for c in obj["checks"]), found.path
        assert (code == 1) == (obj["status"] in ("failed", "incomplete")), found.path
        if obj["status"] == "empty":
            assert all(c["level"] != "ok" for c in obj["checks"]), found.path


def test_triage_of_a_log_points_at_the_log_line_not_a_folder(capsys):
    from tests.support.paths import TORCH_TRACE, require

    log = require(TORCH_TRACE / "graph_breaks_recompiles_failure.log")
    code, out, _ = run_cli(capsys, "triage", str(log))
    assert code == 1 and "timeline_events/files" not in out
    assert f"open:      {log}:" in out
    code, out, _ = run_cli(capsys, "triage", str(log), "--json")
    first = json.loads(out)["first_failure"]
    assert first["folder"] is None and first["line"] > 0


def test_metrics_says_why_an_upstream_run_has_none(capsys):
    code, out, _ = run_cli(capsys, "metrics", str(COLD))
    assert code == 0 and "no per-compile metrics recorded" in out
