"""Python's cycle collector: the one place that decides when it is held off and when what a run read is
taken out of its passes.

Why: a run's events, spans and rows are many small objects that live as long as the run is shown or the
command runs, and hold no garbage cycles. Each full pass of the collector walks every one of them again,
so a headless report holds it off for its whole command, the app's load holds it off while it reads, and a
loaded run is frozen out of later passes while a screen shows it. Each stays only while removing it costs
a row of the speed table 5 % or more (``benchmarks/bench_goals.py``, benchmarks/RESULTS_36.md). A caller
names what it wants (:func:`held`, :func:`keep_out_of_passes`, ...), never ``gc`` itself
(``tests/test_layers.py``)."""

from __future__ import annotations

import _thread  # threading.Lock itself; importing threading costs every headless start
import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collect_less_often", "held", "keep_out_of_passes", "let_go"]

#: the collector's thresholds while a live run is followed (Python's default: 700, 10, 10)
LIVE_THRESHOLDS = (10_000, 50, 100)

_held = [0, False]  # bulk loads holding the collector off now; whether it was on before the first
_held_lock = _thread.allocate_lock()


@contextmanager
def held(freeze: bool = False) -> Iterator[None]:
    """The collector off for a bulk load; loads in several threads overlap (a headless load, the app's
    reading thread, the triage panel's analysis), and the last one to end turns it back on (if it was on).
    ``freeze``: what the load made lives until the process ends (a headless command): out of later passes."""
    with _held_lock:
        if not _held[0]:
            _held[1] = gc.isenabled()
            gc.disable()
        _held[0] += 1
    try:
        yield
    finally:
        with _held_lock:
            _held[0] -= 1
            if freeze:
                gc.freeze()
            if not _held[0] and _held[1]:
                gc.enable()


def keep_out_of_passes() -> None:
    """Everything alive now lives as long as the screen that shows it: the collector's full passes skip it
    (the young generations still collect new garbage). :func:`let_go` gives it back."""
    gc.freeze()


def let_go(collect: bool = False) -> None:
    """What :func:`keep_out_of_passes` kept may be collected again (a screen closed, a file re-read from the
    start); ``collect``: now, before the next load freezes again."""
    gc.unfreeze()
    if collect:
        gc.collect()


def collect_less_often() -> None:
    """While a live run is followed: a collection is a pause the next shown event waits for; what was read is
    already out of the passes (:func:`keep_out_of_passes`), so young garbage can wait for bigger batches."""
    gc.set_threshold(*LIVE_THRESHOLDS)
