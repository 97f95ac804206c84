"""The app's screens: runs list, run (tree + detail + triage + timeline), diff, compiled functions, help.

Screens a session may never open (the runs list, waiting, diff, compiled functions, frames, compile
info, compare, ranks) are imported when first pushed, through :func:`lazy`: they pull in Markdown,
DataTable and the diff model, a good part of what the app imports before it can show a run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal, overload

if TYPE_CHECKING:  # for the types of lazy()'s answers only: the modules are imported when first pushed
    from magi_tui.ui.screens.bisect import BisectScreen
    from magi_tui.ui.screens.compare import CompareScreen
    from magi_tui.ui.screens.compile_info import CompileInfoScreen
    from magi_tui.ui.screens.compiled import CompiledFunctionsScreen
    from magi_tui.ui.screens.diff import DiffScreen
    from magi_tui.ui.screens.fix import FixScreen
    from magi_tui.ui.screens.frames import FramesScreen
    from magi_tui.ui.screens.history import HistoryScreen
    from magi_tui.ui.screens.lookups import CacheLookupsScreen
    from magi_tui.ui.screens.ranks import RanksScreen
    from magi_tui.ui.screens.runs import RunsScreen
    from magi_tui.ui.screens.waiting import WaitingScreen

#: screen class -> its module under this package
_LAZY = {
    "CompiledFunctionsScreen": "compiled",
    "DiffScreen": "diff",
    "FramesScreen": "frames",
    "CompileInfoScreen": "compile_info",
    "CompareScreen": "compare",
    "CacheLookupsScreen": "lookups",
    "RanksScreen": "ranks",
    "FixScreen": "fix",
    "BisectScreen": "bisect",
    "RunsScreen": "runs",
    "WaitingScreen": "waiting",
    "HistoryScreen": "history",
}


@overload
def lazy(name: Literal["CompiledFunctionsScreen"]) -> type[CompiledFunctionsScreen]: ...
@overload
def lazy(name: Literal["DiffScreen"]) -> type[DiffScreen]: ...
@overload
def lazy(name: Literal["FramesScreen"]) -> type[FramesScreen]: ...
@overload
def lazy(name: Literal["CompileInfoScreen"]) -> type[CompileInfoScreen]: ...
@overload
def lazy(name: Literal["CompareScreen"]) -> type[CompareScreen]: ...
@overload
def lazy(name: Literal["CacheLookupsScreen"]) -> type[CacheLookupsScreen]: ...
@overload
def lazy(name: Literal["RanksScreen"]) -> type[RanksScreen]: ...
@overload
def lazy(name: Literal["FixScreen"]) -> type[FixScreen]: ...
@overload
def lazy(name: Literal["BisectScreen"]) -> type[BisectScreen]: ...
@overload
def lazy(name: Literal["RunsScreen"]) -> type[RunsScreen]: ...
@overload
def lazy(name: Literal["WaitingScreen"]) -> type[WaitingScreen]: ...
@overload
def lazy(name: Literal["HistoryScreen"]) -> type[HistoryScreen]: ...


def lazy(name: str) -> Any:
    """The screen class ``name`` (a key of ``_LAZY``), its module imported on first use."""
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
