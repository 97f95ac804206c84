"""What the analysis reads about single events: their attributes, their files (on a budget), where a
failure was raised, why a frame fell back to eager, torch.export's issues, and the facts a source
cannot know. Small helpers shared by the analyser and the rules."""

from __future__ import annotations

import sys
import weakref
from typing import Any

from magi_tui.model.analysis.checks.results import Analysis, FrameRow
from magi_tui.model.analysis.frames import parse_compile_id
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel
from magi_tui.model.sources.safejson import metrics_or_none

MAX_FILE_READS = 1000        # graph_break.txt / metrics.json read per analysis, at most

MAX_TEXT = 64 * 1024


_ANOTHER_BREAK = "*** While handling this graph break, another graph break occurred: ***"


def fallback_reason(message: str) -> str:
    """Why Dynamo gave up on a frame: the last graph break of an ``Unsupported`` message (torch chains
    "While handling this graph break, another graph break occurred"), its type line."""
    tail = message.rsplit(_ANOTHER_BREAK, 1)[-1]
    return _first_line(tail) or _first_line(message) or "unsupported"


def failure_source(run: RunModel, ev: Event) -> tuple[str | None, int | None, str | None]:
    """Where a failure happened in the user's code, as tlparse's "Failure Source" says it: torch's
    ``fail_user_frame_filename`` / ``_lineno`` (``raised``: the line Dynamo was tracing), from the event's
    ``fail_user_frame`` or its metrics.json; when torch recorded none (a backend crash), the frame being
    compiled (``frame``: its ``co_filename`` / ``co_firstlineno``)."""
    a = event_attrs(run, ev)
    uf = _s(a.get("fail_user_frame"))
    if uf and ":" in uf:
        f, _, ln = uf.rpartition(":")
        if _int(ln) is not None:
            return f, _int(ln), "raised"
    m = None
    if "metrics.json" in (ev.files or ()):
        m = metrics_or_none(_read_event_file(run, ev, "metrics.json", [1]))  # typed and bounded, or None
    if isinstance(m, dict):
        if _s(m.get("fail_user_frame_filename")):
            return str(m["fail_user_frame_filename"]), _int(m.get("fail_user_frame_lineno")), "raised"
        if _s(m.get("co_filename")):
            return str(m["co_filename"]), _int(m.get("co_firstlineno")), "frame"
    if _s(a.get("co_filename")):
        return str(a["co_filename"]), _int(a.get("co_firstlineno")), "frame"
    return None, None, None




# -- helpers ----------------------------------------------------------------------------------------
def event_attrs(run: RunModel, ev: Event) -> dict[str, Any]:
    """An event's attributes, ``{}`` when they cannot be read back or are not a map."""
    try:
        a = run.attributes(ev)
    except Exception:
        a = {}
    return a if isinstance(a, dict) else {}


def _read_event_file(run: RunModel, ev: Event, name: str, budget: list[int]) -> str | None:
    """The text of one of the event's files; each try spends one of ``budget`` (found or not: looking
    costs as much as reading, and a run can list 100k files that are not there)."""
    if budget[0] <= 0 or name not in (ev.files or ()):
        return None
    budget[0] -= 1
    return run.file_text(ev, name, MAX_TEXT)


#: what each of torch.export's issues means, in a sentence's words
EXPORT_ISSUE_WORDS = {"data_dependent": "data-dependent expression assumed from real tensors",
                      "data_dependent_error": "data-dependent guard export could not decide",
                      "guard_added": "guard export added on an input's shape",
                      "missing_fake_kernel": "custom op without a fake kernel",
                      "mismatched_fake_kernel": "custom op whose fake kernel disagrees with the real one"}


def export_issue_json(run: RunModel, ev: Event) -> dict[str, Any]:
    a = event_attrs(run, ev)
    return {"index": ev.index, "issue": a.get("issue"), "expr": a.get("expr"), "result": a.get("result"),
            "op": a.get("op"), "reason": a.get("reason"), "locals": a.get("locals"),
            "user_frame": a.get("user_frame"), "user_function": a.get("user_function"),
            "source_line": a.get("source_line")}



def _first_line(text: str | None) -> str:
    for ln in str(text or "").splitlines():
        if ln.strip():
            return ln.strip()
    return ""


def _s(v: Any) -> str | None:
    return None if v is None or v == "" else str(v)


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v)
    return None


def _see(a: "Analysis") -> str:
    """Where the facts a source cannot know are: its companion TORCH_TRACE log, when there is one."""
    if a.companion_log:
        return f" (a TORCH_COMPILE_DEBUG folder does not; the TORCH_TRACE log of the same run does: {a.companion_log})"
    return " (a TORCH_COMPILE_DEBUG folder does not; run with TORCH_TRACE or the tracer to see them)"


def _hints(v: Any) -> list[str]:
    if isinstance(v, list):
        return [str(x) for x in v if x not in (None, "")][:20]
    if isinstance(v, str) and v:
        return [v]
    return []


def not_recorded(run: RunModel) -> frozenset[str]:
    """The facts this run's source cannot know (``graph_breaks``, ``recompiles``, ``restarts``, ``cache``):
    a TORCH_COMPILE_DEBUG folder holds Inductor's files, not Dynamo's decisions. Shown as "not recorded
    here", never as a green zero."""
    debug = sys.modules.get("magi_tui.model.sources.debugdir.reader")  # not loaded: no reader is one of its
    if debug is not None and isinstance(run.reader, debug.DebugDirReader):
        from magi_tui.model.sources.debugdir import NOT_RECORDED
        return NOT_RECORDED
    return frozenset()


def run_status(run: RunModel) -> tuple[str, list[str]]:
    """``(status, why incomplete)``: the run's own rule (:meth:`RunModel.status_why`)."""
    return run.status_why()


#: run -> (its event count and first event when indexed, frame key -> its events in file order)
_FRAME_EVENTS: weakref.WeakKeyDictionary[RunModel, tuple[tuple[int, Event | None], dict[str, list[Event]]]] = \
    weakref.WeakKeyDictionary()
_NO_PARSE = object()


def _events_by_frame(run: RunModel) -> dict[str, list[Event]]:
    """The run's events by the frame their compile id names, made once per read of the run (the frames
    screen asks at each move of its cursor; each distinct compile id is parsed once)."""
    events = run.events
    stamp = (len(events), events[0] if events else None)
    got = _FRAME_EVENTS.get(run)
    if got is not None and got[0][0] == stamp[0] and got[0][1] is stamp[1]:
        return got[1]
    index: dict[str, list[Event]] = {}
    parsed: dict[str | None, Any] = {}
    for e in events:
        cid = e.compile_id
        p = parsed.get(cid, _NO_PARSE)
        if p is _NO_PARSE:
            p = parsed[cid] = parse_compile_id(cid)
        if p is not None:
            index.setdefault(p[0], []).append(e)
    _FRAME_EVENTS[run] = (stamp, index)
    return index


def frame_events(run: RunModel, frame: FrameRow, n_frames: int, limit: int = 500) -> list[Event]:
    """A frame's events: those whose compile id names its frame; in a run recorded without compile ids
    (upstream), every event when it is the only frame; else its first event, if known."""
    out = _events_by_frame(run).get(frame.key, [])[:limit]
    if out:
        return out
    if n_frames == 1 and not any(e.compile_id for e in run.events[:1000]):
        return list(run.events[:limit])
    return [frame.first_event] if frame.first_event is not None else []

