"""The failure to look at first is one rule (``Triage.first_failure``): ``f`` jumps to it, the panel's "Look
first" names it, ``triage --json``'s ``first_failure`` is it. On a run whose recovered failures come before
the one that was never recovered, it is the unrecovered one (``f`` went to the first recovered failure while
the panel named the unrecovered one at the end)."""

from __future__ import annotations

import sys
from pathlib import Path

from magi_tui.model.analysis.checks import analyse
from magi_tui.model.outputs.triage_sections import first_failure
from magi_tui.model.outputs.triage_sections.summary import triage_summary
from magi_tui.model.run import RunModel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synth import write_synthetic_run  # noqa: E402


def test_f_and_look_first_name_the_same_unrecovered_failure(tmp_path):
    run = RunModel(write_synthetic_run(tmp_path / "model_1_S_rank_0", 2000, fail_last=True, with_files=0)).load()
    t = run.triage
    unrecovered = [c for c in t.problems if not c.recovered]
    # the case: recovered failed events (restarts' cascades) long before the one failure nothing recovered
    assert t.failures[0].recovered and unrecovered and t.failures[0].event.seq < unrecovered[0].head.event.seq
    ff = t.first_failure
    assert ff is unrecovered[0].head
    a = analyse(run)
    assert first_failure(a).head is ff
    look = "".join(sp.text for sp in triage_summary(run, a))
    assert f"#{ff.event.index:04d}" in look and "(f jumps there)" in look
