"""Where things are inside a run directory (FORMAT.md §2, §4, §10), named once.

``<run>/timeline_events/timeline.jsonl`` is the event log; an event with files has the folder
``<run>/timeline_events/files/{index:04d}_{name}[/{subgraph}]/``; ``<run>/compiled_functions/`` holds
Dynamo's cache entries. The tracer announces a new run directory on stderr as ``MAGI_RUN_DIR=<path>``.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

from magi_format.text import relative_time

TIMELINE_DIR = "timeline_events"
TIMELINE_FILE = "timeline.jsonl"
FILES_DIR = "files"
COMPILED_FUNCTIONS_DIR = "compiled_functions"
#: a run directory holds at least one of these (FORMAT.md §10.1)
RUN_MARKERS = (TIMELINE_DIR, COMPILED_FUNCTIONS_DIR)
#: the root folder the tracer creates run directories under
RUNS_ROOT_DIR = "magi_depyf"
#: what the compiled code cost at run time: calls and seconds per compiled entry, eager calls per frame
#: (written by the tracer when the traced block ends; FORMAT.md part B)
RUNTIME_FILE = "runtime.json"
#: a copy of torch's own structured trace, kept beside the timeline when asked for
TORCH_TRACE_FILE = "torch_trace.log"
#: the line (on stderr) by which the tracer names the run directory it writes
RUN_DIR_ANNOUNCE = "MAGI_RUN_DIR="
#: ``timeline_events/session.json`` (ours; upstream runs have none): written when the tracer opens the run
#: (``ended`` null) and again when it closes it (``ended``: the time). A run whose file still says null once
#: its program is gone was cut short -- the program was killed -- though every compile in it closed.
SESSION_FILE = "session.json"


def session_record(pid: int, host: str, started: float, ended: float | None,
                   outcome: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``session.json`` object: the writing process (``pid`` on ``host``), its open / close times and, once
    closed, how the program ended (``outcome``: ``tracer/outcome.py``; absent while it runs)."""
    rec = {"writer": "magi-tui tracer", "pid": pid, "host": host, "started": started, "ended": ended}
    if outcome is not None:
        rec["outcome"] = outcome
    return rec

FOLDER_RE = re.compile(r"^(\d{4,})_(.+)$")


_LAST_SECOND: list[tuple] = [(None, "")]  # (the last second formatted, its text): strftime is the slow part


def _datetime_text(ts: float) -> str:
    """``datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]``, the second's part formatted
    once per second (events come thousands a second). The microseconds are rounded as ``fromtimestamp``
    rounds them (half to even, a carry into the next second), so the second is known without making a
    datetime for each event."""
    frac, whole = math.modf(ts)
    us = round(frac * 1e6)
    if us >= 1_000_000:
        us -= 1_000_000
        whole += 1.0
    elif us < 0:
        us += 1_000_000
        whole -= 1.0
    last = _LAST_SECOND[0]  # one tuple, swapped whole: the tracer's threads may share it
    if last[0] != whole:
        last = _LAST_SECOND[0] = (whole, datetime.fromtimestamp(whole).strftime("%Y-%m-%d %H:%M:%S"))
    return f"{last[1]}.{us // 1000:03d}"


def timeline_times(ts: float | None, t0: float | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The time fields of a ``timeline.jsonl`` line (:func:`timeline_record`): ``relative_time`` (before
    ``files``) and ``datetime`` / ``timestamp`` (after ``attributes``); both empty without a timestamp. A
    reader whose events share a record's time makes them once per record."""
    if ts is None:
        return {}, {}
    tail: dict[str, Any] = {}
    try:
        tail["datetime"] = _datetime_text(ts)
    except (OverflowError, OSError, ValueError):  # a time no calendar holds (a hostile log)
        pass
    tail["timestamp"] = ts
    return {"relative_time": relative_time(max(0.0, ts - (ts if t0 is None else t0)))}, tail


def timeline_times_json(ts: float | None, t0: float | None, encode: Any) -> tuple[bytes, bytes]:
    """:func:`timeline_times` as the JSON members of a compact line (``"relative_time":"1.2ms"``, and
    ``"datetime":"...","timestamp":...``; empty without a timestamp), made without a map: the texts are
    plain ASCII, the timestamp is written by ``encode`` (the line's encoder, as it writes a float)."""
    if ts is None:
        return b"", b""
    head = b'"relative_time":"%s"' % relative_time(max(0.0, ts - (ts if t0 is None else t0))).encode()
    try:
        return head, b'"datetime":"%s","timestamp":%s' % (_datetime_text(ts).encode(), encode(ts))
    except (OverflowError, OSError, ValueError):  # a time no calendar holds (a hostile log)
        return head, b'"timestamp":' + encode(ts)


def timeline_record(index: int, name: str, files: list[str], attrs: Any, ts: float | None,
                    t0: float | None) -> dict[str, Any]:
    """One ``timeline.jsonl`` line as a JSON object, in the writer's key order (FORMAT.md §4): the tracer
    writes these, and the readers of TORCH_TRACE logs and debug folders make the same ones. Without a
    timestamp the time fields are left out; ``t0`` is the run's first timestamp."""
    head, tail = timeline_times(ts, t0)
    return {"index": index, "name": name, **head, "files": files, "attributes": attrs, **tail}


def event_folder_name(index: int, name: str) -> str:
    """``0013_fullgraph_after_removeitempass``: the width grows past 9999."""
    return f"{index:04d}_{name}"


def event_folder_rel(index: int, name: str, subgraph: str | None = None) -> str:
    """The event's folder relative to the run dir, with ``/`` separators (for reports)."""
    rel = f"{TIMELINE_DIR}/{FILES_DIR}/{event_folder_name(index, name)}"
    return f"{rel}/{subgraph}" if subgraph else rel


def parse_event_folder(folder: str) -> tuple[int, str] | None:
    """``"0013_x"`` -> ``(13, "x")``; anything else -> None."""
    m = FOLDER_RE.match(folder)
    return (int(m.group(1)), m.group(2)) if m else None
