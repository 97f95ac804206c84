"""Pure-Python reading of run directories: files -> events -> spans / tree / triage.

Imports no Textual, so the headless commands and tests run anywhere.
"""

import magi_tui.model.msgspec_import  # noqa: F401  # first: msgspec without typing_extensions (see there)
from magi_tui.model.analysis.compiled_functions import index_compiled_functions
from magi_tui.model.events import Event, Span
from magi_tui.model.run import RunModel, RunUpdate
from magi_tui.model.sources.discovery import FoundRun, find_runs
from magi_tui.model.sources.reader import Malformed, TimelineReader
from magi_tui.model.triage import Failure, Triage

__all__ = [
    "Event", "Failure", "FoundRun", "Malformed", "RunModel", "RunUpdate", "Span", "TimelineReader",
    "Triage", "find_runs", "index_compiled_functions",
]
