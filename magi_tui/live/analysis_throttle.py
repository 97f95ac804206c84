"""When a view of a growing run redoes the run's analysis: at once while it is cheap, at most a fraction of
the time when it is costly (a recompile storm on a big run must not stall the app), in a thread when one
analysis takes long enough to be felt, and a catch-up later for whatever was deferred. No Textual here: the
triage panel asks :meth:`AnalysisThrottle.plan` and does what it says (a worker, a timer)."""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["AnalysisThrottle", "EVENT_COST_S", "MAX_RACES", "Plan", "REANALYSE_S", "THREAD_MIN_S"]

#: in a live run the analysis (frames, compile time) is refreshed at most this often unless findings change
REANALYSE_S = 1.0
#: an analysis expected to take longer than this is done in a thread (the UI loop must not stall on it)
THREAD_MIN_S = 0.03
#: threaded analyses overtaken by updates in a row before the next one is done on the loop
MAX_RACES = 3
#: what analysing one event costs before an analysis of this run was timed (measured on a big run)
EVENT_COST_S = 0.5e-6
#: an analysis cheaper than this is redone whenever the findings change; a costlier one waits 4x its cost
CHEAP_S = 0.02

#: ``keep``: the analysis is fresh; ``now``: redo it here; ``thread``: redo it in a thread, show the old one
#: meanwhile; ``wait``: show the old one (a thread or a catch-up is already due); ``later``: show the old one
#: and ask again after the delay
Plan = Literal["keep", "now", "thread", "wait", "later"]


class AnalysisThrottle:
    """The last analysis of one run and when, for what and at what cost it was made."""

    def __init__(self) -> None:
        self.result: Any = None
        self.sig: tuple | None = None   # the run's findings signature it was made from
        self.at = 0.0                   # when (monotonic seconds)
        self.n = -1                     # of how many events
        self.cost = 0.0                 # how long it took
        self.thread_running = False
        self.catch_up_pending = False
        self.races = 0                  # threaded analyses in a row that an update overtook

    def fresh(self, sig: tuple, n: int) -> bool:
        return self.result is not None and self.n == n and sig == self.sig

    def expected_cost(self, n: int) -> float:
        """What analysing ``n`` events should cost: the last analysis's cost per event (once it saw enough
        events to tell), else :data:`EVENT_COST_S` per event."""
        if self.n >= 1000:
            return self.cost * n / self.n
        return n * EVENT_COST_S

    def plan(self, sig: tuple, n: int, now: float, *, can_thread: bool, can_wait: bool) -> tuple[Plan, float]:
        """What to do about the analysis of a run whose findings signature is ``sig`` and that has ``n`` events
        now: ``(plan, delay)``; ``delay`` only for ``later``. ``can_thread``: the caller may run it in a thread;
        ``can_wait``: the caller can set a timer (else a deferred analysis is just not done yet)."""
        if self.fresh(sig, n):
            return "keep", 0.0
        gap = 0.0 if self.cost < CHEAP_S else 4 * self.cost
        waited = now - self.at
        if self.result is None or (sig != self.sig and waited >= gap) or waited >= max(REANALYSE_S, gap):
            if can_thread and self.races < MAX_RACES and self.expected_cost(n) >= THREAD_MIN_S:
                if self.thread_running:
                    return "wait", 0.0
                self.thread_running = True
                return "thread", 0.0
            self.races = 0
            return "now", 0.0
        if self.catch_up_pending or not can_wait:
            return "wait", 0.0
        self.catch_up_pending = True
        delay = (gap if sig != self.sig else max(REANALYSE_S, gap)) - waited
        return "later", max(0.05, delay)

    def made(self, result: Any, sig: tuple, at: float, n: int, cost: float) -> None:
        """An analysis was made of the run as it was at ``at`` (``n`` events, findings ``sig``)."""
        self.result, self.sig, self.at, self.n, self.cost = result, sig, at, n, cost

    def thread_done(self, result: Any, overtaken: bool, sig: tuple, at: float, n: int, cost: float) -> None:
        """A threaded analysis ended: kept unless an update reached the run while it ran (``overtaken``) or it
        failed (``result`` None); then it is tried again, and after :data:`MAX_RACES` such races in a row done
        where the caller is, so a fast live run never leaves the view behind for good."""
        self.thread_running = False
        if result is None or overtaken:
            self.races += 1
            self.at = at
        else:
            self.races = 0
            self.made(result, sig, at, n, cost)

    def caught_up(self) -> None:
        self.catch_up_pending = False
