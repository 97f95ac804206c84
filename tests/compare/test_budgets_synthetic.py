"""Budgets and comparisons that the traced pair does not break, on small timelines in the tracer's shape
(no torch): cache hit rate, compile seconds, unrecovered failures (new / fixed), the recompile limit."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from magi_tui.model.outputs.budget import check, junit_xml, parse_policy
from magi_tui.model.outputs.compare import compare_runs
from magi_tui.model.run import RunModel
from tests.support.timeline import ev_line, write_run


def _compile(i: int, cid: str, frame: str, *extra: str, ms: float = 12.0, failed: str | None = None) -> list[str]:
    end = (ev_line(i + 1 + len(extra), "fullgraph_failed_compile", lifecycle_name="compile", compile_id=cid,
                   frame=frame, exception_type="BackendCompilerFailed", exception_message=failed)
           if failed else
           ev_line(i + 1 + len(extra), "fullgraph_after_compile", lifecycle_name="compile", compile_id=cid,
                   frame=frame, duration_ms=ms, graph_op_count=5))
    return [ev_line(i, "fullgraph_before_compile", lifecycle_name="compile", compile_id=cid, frame=frame,
                    co_filename="/src/model.py", co_firstlineno=10), *extra, end]


def _run(tmp_path, name: str, lines: list[str]) -> RunModel:
    return RunModel(write_run(tmp_path / name, lines)).load()


def _clean(tmp_path) -> RunModel:
    return _run(tmp_path, "clean", _compile(0, "0/0", "forward", ev_line(
        1, "fullgraph_cache_hit", compile_id="0/0", frame="forward", cache="fx_graph", reason="hit")))


def _bad(tmp_path) -> RunModel:
    lines = _compile(0, "0/0", "forward",
                     ev_line(1, "fullgraph_cache_miss", compile_id="0/0", frame="forward", cache="fx_graph",
                             reason="no entry"), ms=9000.0)
    lines += [ev_line(3, "fullgraph_recompile", compile_id="0/1", frame="forward",
                      reason="0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6")]
    lines += _compile(4, "0/1", "forward", ms=1000.0)
    lines += [ev_line(6, "fullgraph_recompile_limit_hit", compile_id="0/2", frame="forward", recompile_limit=1,
                      reason="cache_size_limit reached")]
    lines += _compile(7, "1/0", "helper", failed="backend='boom' raised:\nRuntimeError: no")
    return _run(tmp_path, "bad", lines)


POLICY = parse_policy("""
[budget]
max_compile_seconds = 5
min_cache_hit_rate = 0.9
allow_unrecovered_failures = false
allow_recompile_limit_hit = false
max_recompiles_per_frame = 0
""")


def test_each_budget_breaks_with_one_line(tmp_path):
    ok = check([_clean(tmp_path)], POLICY)
    assert ok.exit_code == 0 and [r.name for r in ok.results if not r.ok] == []
    rep = check([_bad(tmp_path)], POLICY)
    assert rep.exit_code == 1
    lines = {r.name: r.line for r in rep.broken}
    assert set(lines) == {"max_compile_seconds", "min_cache_hit_rate", "allow_unrecovered_failures",
                          "allow_recompile_limit_hit", "max_recompiles_per_frame"}
    assert "took 10.00s, budget 5s" in lines["max_compile_seconds"] and "forward (model.py:10)" in lines["max_compile_seconds"]
    assert lines["min_cache_hit_rate"].startswith("min_cache_hit_rate: 0% of 1 cache lookup(s) hit")
    assert "no entry" in lines["min_cache_hit_rate"]
    assert "in frame helper" in lines["allow_unrecovered_failures"] and "1/0" in lines["allow_unrecovered_failures"]
    assert "frame forward (model.py:10) hit the recompile limit (1)" in lines["allow_recompile_limit_hit"]
    assert all("\n" not in ln for ln in lines.values())
    root = ET.fromstring(junit_xml(rep))
    assert root.get("tests") == "5" and root.get("failures") == "5"


def test_compare_failures_new_and_fixed_and_limit_hit(tmp_path):
    clean, bad = _clean(tmp_path), _bad(tmp_path)
    j = compare_runs(clean, bad).as_json()
    assert [f["exception_type"] for f in j["failures"]["new"]] == ["BackendCompilerFailed"]
    assert j["failures"]["fixed"] == [] and j["failures"]["b_unrecovered"] == 1
    assert j["recompile_limit_hit"]["added"] == ["forward (model.py:10)"]
    assert j["cache"]["delta"] == {"hits": -1, "misses": 1, "bypasses": 0}
    frames = {f["name"]: f for f in j["frames"]}
    assert frames["forward"]["limit_hit"] == {"a": False, "b": True} and frames["helper"]["status"] == "only_b"
    back = compare_runs(bad, clean).as_json()
    assert [f["exception_type"] for f in back["failures"]["fixed"]] == ["BackendCompilerFailed"]
    assert back["recompile_limit_hit"]["removed"] == ["forward (model.py:10)"]
    # and as a baseline regression
    rep = check([bad], parse_policy("[budget]\nmax_compile_time_increase = 0.25\n"), [clean])
    lines = {r.name: r.line for r in rep.broken}
    assert lines["baseline.no_new_failures"] == ("baseline.no_new_failures: new failure #8 compile in frame helper "
                                                 "(1/0): BackendCompilerFailed: backend='boom' raised: RuntimeError: no")
    assert lines["baseline.max_compile_time_increase"].startswith("baseline.max_compile_time_increase: compile time 0.01s→10.00s")


def test_a_killed_compile_and_a_run_with_nothing_recorded_break_the_default_budgets(tmp_path):
    from magi_tui.model.outputs.budget import load_policy
    from tests.support.paths import FIXTURES

    default = load_policy(None)
    killed = _run(tmp_path, "killed", [ev_line(0, "fullgraph_before_compile", lifecycle_name="compile",
                                               compile_id="0/0", frame="forward")])
    rep = check([killed], default)
    assert rep.exit_code == 1 and [r.name for r in rep.broken] == ["allow_incomplete"]
    assert "never closed" in rep.broken[0].line
    # Dynamo failed before the backend: no event, no compiled_functions/
    (nothing,) = [p.parent for p in (FIXTURES / "dynamo_failure").rglob("timeline_events")]
    rep = check([RunModel(nothing).load()], default)
    assert [r.name for r in rep.broken] == ["allow_nothing_recorded"]
    # a warm cache records no event either, but it compiled: not broken
    warm = sorted((FIXTURES / "toy_explain_warm_cache").rglob("compiled_functions"))
    rep = check([RunModel(warm[0].parent).load()], default)
    assert rep.exit_code == 0 and RunModel(warm[0].parent).load().status == "empty"
