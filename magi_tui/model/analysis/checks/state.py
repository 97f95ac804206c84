"""What the analysis gathers of one run before it explains it (:class:`AnalyserState`): the run, its
triage, the frames of ``compiled_functions/``, the one pass over its events, the frame rows being filled and
the budget of file reads. The walks over it (``breaks``, ``recompiles``, ``tallies``) are functions that
take it; the analyser (``analyser._Analyser``) is this state and the steps that make an ``Analysis``."""

from __future__ import annotations

import os
import weakref

from magi_tui.model.analysis.checks import evidence
from magi_tui.model.analysis.checks.fold import TimelineFold, timeline_fold
from magi_tui.model.analysis.checks.results import FrameRow, RecompileInfo
from magi_tui.model.analysis.frames import CfIndex, analyse_compiled_functions
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel
from magi_tui.model.triage import Triage

_CF_MEMO: "weakref.WeakKeyDictionary[RunModel, tuple[tuple, CfIndex]]" = weakref.WeakKeyDictionary()


def cf_stamp(run: RunModel) -> tuple:
    """When ``compiled_functions/`` last changed (the analysis is memoised on it)."""
    try:
        st = os.stat(run.path / "compiled_functions")
        return (st.st_mtime_ns, st.st_ino)
    except OSError:
        return (None,)


def compiled_index(run: RunModel) -> CfIndex:
    stamp = cf_stamp(run)
    got = _CF_MEMO.get(run)
    if got is not None and got[0] == stamp:
        return got[1]
    idx = analyse_compiled_functions(run.path) if stamp != (None,) else CfIndex()
    _CF_MEMO[run] = (stamp, idx)
    return idx


class AnalyserState:
    """One run's gathered state, which the walks (``breaks``, ``recompiles``, ``tallies``) read and fill."""

    def __init__(self, run: RunModel) -> None:
        self.run = run
        self.t: Triage = run.triage
        self.cf: CfIndex = compiled_index(run)
        #: reads of event files left (one counter shared by the walks, on a budget)
        self.budget = [evidence.MAX_FILE_READS]  # (read now: a test lowers it)
        #: (compile end event, its metrics.json) of the compiles that left no guarded code
        self.unguarded: list[tuple[Event, dict]] = []
        #: (compile end event, its metrics.json) of the compiles whose metrics carry a cudagraph skip reason
        self.cudagraph_skips: list[tuple[Event, dict]] = []
        self.frames: dict[str, FrameRow] = {}
        self.cid_frame: dict[str, str] = {}
        self.fold: TimelineFold = timeline_fold(run)
        #: the recompiles explained (``recompiles.recompiles``), kept for the recompile limits
        self._recompile_list: list[RecompileInfo] = []
