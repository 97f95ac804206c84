"""Issue #10 item 5: hit, miss and bypass are three cache states, each with its reasons; a bypass is not a
miss (a run full of bypasses is not "cold"), and a frame whose compiles can never hit the cache is a
finding. The kind rules live in one place (``events.kind_of``)."""

from __future__ import annotations

from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.events import KINDS, kind_of, name_kind
from magi_tui.model.outputs.report import triage_json, triage_text
from tests.support.paths import COLD, WARM
from tests.support.timeline import ev_line, lc, write_run


def _compile(i: int, cid: str, frame: str, *extra: str) -> list[str]:
    return [ev_line(i, "fullgraph_before_compile", lifecycle_name="compile", compile_id=cid, frame=frame),
            *extra,
            ev_line(i + 1 + len(extra), "fullgraph_after_compile", lifecycle_name="compile", compile_id=cid,
                    frame=frame, duration_ms=12.0)]


def test_bypass_is_not_a_miss_and_never_hitting_frame_is_a_finding(tmp_path):
    # the tracer's shape (FORMAT.md B3): fullgraph_cache_{hit,miss,bypass} with cache, key, reason
    lines = _compile(0, "0/0", "forward",
                     ev_line(1, "fullgraph_cache_bypass", compile_id="0/0", frame="forward", cache="fx_graph",
                             reason="No shape env"))
    lines += _compile(3, "1/0", "helper",
                      ev_line(4, "fullgraph_cache_miss", compile_id="1/0", frame="helper", cache="fx_graph",
                              key="abc", reason="no entry"))
    run = RunModel(write_run(tmp_path / "r", lines)).load()
    t = run.triage
    assert [i.reason for i in t.cache_bypasses] == ["No shape env"]
    assert [i.reason for i in t.cache_misses] == ["no entry"]      # the bypass is not counted as a miss
    a = analyse(run)
    assert a.cache["counts"] == {"hits": 0, "misses": 1, "bypasses": 1, "stores": 0, "skipped_stores": 0}
    assert a.cache["reasons"]["bypass"] == {"No shape env": 1}
    assert a.cache["by_cache"]["fx_graph"] == {"bypass": 1, "miss": 1}
    msgs = [c.message for c in a.checks]
    assert any("cache bypassed 1×" in m and "No shape env" in m for m in msgs)
    never = [m for m in msgs if "can never hit the cache" in m]
    assert len(never) == 1 and never[0].startswith("frame forward")
    fwd = next(f for f in a.frames if f.name == "forward")
    assert (fwd.cache_hits, fwd.cache_misses, fwd.cache_bypasses, fwd.never_hits_cache) == (0, 0, 1, True)
    j = triage_json(run)
    assert j["cache"]["bypasses"][0]["reason"] == "No shape env"
    assert "bypass reasons: No shape env ×1" in triage_text(run)


def test_only_bypasses_is_not_cold(tmp_path):
    lines = _compile(0, "0/0", "f", ev_line(1, "fullgraph_cache_bypass", compile_id="0/0", frame="f",
                                            cache="aotautograd", reason="Cannot pickle"))
    a = analyse(RunModel(write_run(tmp_path / "r", lines)).load())
    assert a.cache["state"] == "bypassed"
    assert not any("cold" in c.message for c in a.checks)


def test_magi_load_results_and_stores(fx):
    cold = analyse(RunModel(fx / COLD).load())
    assert cold.cache["state"] == "cold" and cold.cache["counts"]["misses"] == 4
    assert cold.cache["reasons"]["miss"] == {"entry_not_found": 4}
    warm = analyse(RunModel(fx / WARM).load())
    assert warm.cache["counts"]["hits"] == 3 and warm.cache["state"] == "mixed"


def test_eager_nocache_skipped_store_reasons(fx):
    from magi_tui.model.sources.discovery import find_runs

    (found,) = find_runs(fx / "eager_nocache")
    a = analyse(RunModel(found.path).load())
    assert set(a.cache["reasons"]["skipped_store"]) == {"cache_disabled"}
    assert any("store(s) skipped: cache_disabled" in c.message for c in a.checks)


def test_one_source_for_kind_rules(tmp_path):
    """Whatever ``kind`` says about an event name, the event keeps the attributes triage reads."""
    names = ["fullgraph_cache_bypass", "fullgraph_cache_miss", "fullgraph_cache_hit", "fullgraph_recompile",
             "fullgraph_graph_break", "fullgraph_restart_analysis", "subgraph_1_cache_bypass_x"]
    lines = [ev_line(i, n, reason=f"r{i}") for i, n in enumerate(names)]
    lines.append(lc(len(names), "before", "compiler_manager_load"))
    lines.append(lc(len(names) + 1, "after", "compiler_manager_load", load_result="bypass", reason="off"))
    run = RunModel(write_run(tmp_path / "r", lines)).load()
    got = [ev.kind for ev in run.events]
    assert got == ["cache_bypass", "cache_miss", "cache_hit", "recompile", "graph_break", "restart",
                   "cache_bypass", "", "cache_bypass"]
    for ev in run.events[:len(names)]:
        assert ev.kind == name_kind(ev.frag) == kind_of(ev.phase, ev.frag, ev.summary)
        assert ev.attrs is not None and ev.attrs["reason"] == f"r{ev.index}"
    assert set(got) - {""} <= set(KINDS)
    assert len(run.triage.cache_bypasses) == 3 and run.triage.cache_misses[0].reason == "r1"
