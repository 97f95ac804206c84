"""Issue 34 item 4: a 2-rank gloo job whose rank 0 loaded its graphs from a warm cache dir and rank 1 compiled
them (tests/cache/fixtures/README.md): the cold rank, each rank's compile time and the skew are named, from the
tracer's run dirs and from the per-rank TORCH_TRACE logs."""

from __future__ import annotations

import pytest

from magi_tui.model.outputs.rank_warmup import DEFAULT_TIMEOUT_S, REMEDY, RankWarmup, Warmup
from magi_tui.model.outputs.ranks import find_jobs, ranks_json, ranks_lines


@pytest.mark.parametrize("where", ["runs", "tt"])
def test_the_cold_rank_and_the_skew_are_named(job, where):
    jobs, _ = find_jobs(job / where)
    assert len(jobs) == 1
    j = jobs[0]
    w = j.warmup
    assert (w.compiled, w.loaded, w.divergent) == ([1], [0], [1])
    assert j.divergent_ranks == [1]
    by = {r.rank: r for r in w.ranks}
    assert by[1].compile_s > by[0].compile_s and w.skew_s == pytest.approx(by[1].compile_s - by[0].compile_s,
                                                                             abs=1e-3)
    assert "another cache dir" in by[1].why and "cache_rank1" in by[1].why
    text = "\n".join(t for _s, t in ranks_lines(jobs))
    assert "✗ warmed differently: compiled: rank(s) 1 · loaded from cache: rank(s) 0" in text
    assert "torch's default (30 min): the job's own timeout is not recorded here" in text
    assert "⚠" not in text                   # 14 s of 30 min is no risk
    js = ranks_json(jobs)["jobs"][0]["warmup"]
    assert js["divergent"] == [1] and js["risky"] is False and js["timeout_s"] == DEFAULT_TIMEOUT_S


def test_a_skew_near_the_timeout_is_a_warning_naming_the_fix(job):
    jobs, _ = find_jobs(job / "runs")
    w0 = jobs[0].warmup
    # the same ranks against a 40 s timeout (as the job's, when recorded)
    w = Warmup([RankWarmup(r.rank, r.state, r.compile_s, r.hits, r.misses, r.why) for r in w0.ranks],
               list(w0.divergent), w0.skew_s, 40.0, "the job's")
    msg = w.warning()
    assert msg is not None and msg.startswith("⚠ skew ") and "rank(s) 1 to finish compiling" in msg
    assert REMEDY in msg and "compile_on_one_rank" in msg
