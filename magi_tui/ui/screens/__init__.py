"""The app's screens: runs list, run (tree + detail + triage + timeline), diff, compiled functions, help.

Screens a session may never open (the runs list, waiting, diff, compiled functions, frames, compile
info, compare, ranks) are imported when first pushed, through :func:`lazy`: they pull in Markdown,
DataTable and the diff model, a good part of what the app imports before it can show a run.
"""

from __future__ import annotations

import importlib
from typing import Any

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
}


def lazy(name: str) -> Any:
    """The screen class ``name`` (a key of ``_LAZY``), its module imported on first use."""
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
