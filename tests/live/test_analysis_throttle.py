"""When a live view redoes the run's analysis (magi_tui/live/analysis_throttle.py), without Textual."""

from __future__ import annotations

from magi_tui.live.analysis_throttle import MAX_RACES, REANALYSE_S, AnalysisThrottle


def test_the_first_analysis_is_made_and_a_fresh_one_kept():
    th = AnalysisThrottle()
    assert th.plan(("a",), 10, 0.0, can_thread=True, can_wait=True) == ("now", 0.0)
    th.made("A", ("a",), 0.0, 10, 0.001)
    assert th.plan(("a",), 10, 5.0, can_thread=True, can_wait=True) == ("keep", 0.0)


def test_a_cheap_analysis_is_redone_whenever_the_findings_change():
    th = AnalysisThrottle()
    th.made("A", ("a",), 0.0, 10, 0.001)
    assert th.plan(("b",), 11, 0.01, can_thread=True, can_wait=True)[0] == "now"


def test_a_costly_one_waits_four_times_its_cost_then_goes_to_a_thread():
    th = AnalysisThrottle()
    th.made("A", ("a",), 0.0, 100_000, 0.5)
    plan, delay = th.plan(("b",), 100_001, 1.0, can_thread=True, can_wait=True)
    assert plan == "later" and abs(delay - 1.0) < 1e-9  # 4 x 0.5 s after the last one
    assert th.plan(("b",), 100_001, 1.5, can_thread=True, can_wait=True)[0] == "wait"  # a catch-up is due
    th.caught_up()
    assert th.plan(("b",), 100_001, 2.0, can_thread=True, can_wait=True)[0] == "thread"
    assert th.plan(("b",), 100_001, 2.1, can_thread=True, can_wait=True)[0] == "wait"  # one thread at a time


def test_unchanged_findings_are_refreshed_at_most_every_reanalyse_s():
    th = AnalysisThrottle()
    th.made("A", ("a",), 0.0, 10, 0.001)
    assert th.plan(("a",), 12, REANALYSE_S / 2, can_thread=False, can_wait=True)[0] == "later"
    th.caught_up()
    assert th.plan(("a",), 12, REANALYSE_S, can_thread=False, can_wait=True)[0] == "now"


def test_overtaken_threads_fall_back_to_the_callers_loop():
    th = AnalysisThrottle()
    th.made("A", ("a",), 0.0, 100_000, 0.5)
    now = 10.0
    for _ in range(MAX_RACES):
        assert th.plan(("b",), 100_001, now, can_thread=True, can_wait=True)[0] == "thread"
        th.thread_done("B", True, ("b",), now, 100_001, 0.5)  # an update came in while it ran
        now += 10
    assert th.plan(("b",), 100_001, now, can_thread=True, can_wait=True)[0] == "now"
    assert th.races == 0
