"""Where compile time went: seconds per phase (lifecycle spans; torch's own metrics for our tracer),
per frame and per piece of a split graph."""

from __future__ import annotations

import json

from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from magi_tui.model.outputs.report import triage_text
from tests.support.paths import COLD


def test_cold_transformer_phases_and_pieces(fx):
    run = RunModel(fx / COLD).load()
    ct = analyse(run).compile_time
    phases = {p["phase"]: p for p in ct["phases"]}
    # the writer's own durations, summed per lifecycle (the restart's failed attempt included)
    lines = [json.loads(x) for x in (fx / COLD / "timeline_events" / "timeline.jsonl").read_text().splitlines()]
    want = sum(o["attributes"]["duration_ms"] for o in lines
               if o["name"] == "fullgraph_after_compiler_compile") / 1000
    assert abs(phases["compiler_compile"]["seconds"] - want) < 0.5  # + the failed attempt's span
    assert phases["compiler_compile"]["count"] == 4
    assert ct["total_s"] == phases["magi_backend_call"]["seconds"]
    pieces = [(p["piece"], p["seconds"]) for p in ct["per_piece"]]
    assert [k for k, _ in pieces] == [0, 1, 2]
    assert pieces[0][1] > pieces[1][1] > pieces[2][1] > 1.0
    assert "per piece: 0: 16.95s" in triage_text(run)  # the one duration format (magi_format.text)


def test_single_frame_upstream_run_gets_the_runs_time_and_cache(fx):
    a = analyse(RunModel(fx / COLD).load())
    (frame,) = a.frames
    assert frame.name == "forward" and frame.compile_s == a.compile_time["total_s"] > 20
    assert (frame.cache_hits, frame.cache_misses, frame.cache_bypasses) == (0, 4, 0)
