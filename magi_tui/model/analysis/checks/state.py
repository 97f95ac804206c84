"""The state :class:`~.analyser._Analyser` holds, declared once for the mixins that read it (breaks,
recompiles, tallies), so the type checker knows each attribute's type there. Annotations only: no values,
no methods; the analyser's ``__init__`` and ``build`` set them."""

from __future__ import annotations

from magi_tui.model.analysis.checks.fold import TimelineFold
from magi_tui.model.analysis.checks.results import FrameRow, RecompileInfo
from magi_tui.model.analysis.frames import CfIndex
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel
from magi_tui.model.triage import Triage


class AnalyserState:
    run: RunModel
    t: Triage
    cf: CfIndex
    #: reads of event files left (one counter shared by the walks, on a budget)
    budget: list[int]
    #: (compile end event, its metrics.json) of the compiles that left no guarded code
    unguarded: list[tuple[Event, dict]]
    #: (compile end event, its metrics.json) of the compiles whose metrics carry a cudagraph skip reason
    cudagraph_skips: list[tuple[Event, dict]]
    frames: dict[str, FrameRow]
    cid_frame: dict[str, str]
    fold: TimelineFold
    #: the recompiles explained, kept by ``build`` for the recompile limits
    _recompile_list: list[RecompileInfo]
