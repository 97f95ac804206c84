"""The analysis's results: a run's checks, graph-break sites, recompiles explained, frames that ran
eagerly, frame rows and the :class:`Analysis` that holds them. Data only; built by
:mod:`magi_tui.model.analysis.checks.analyser`, rendered by the reports and the triage panel."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from msgspec import Struct, field

from magi_tui.model.events import Event
from magi_tui.model.triage import Cascade, Restart

if TYPE_CHECKING:  # the guard grammar is imported where guards are read (a start with no recompile: none)
    from magi_tui.model.analysis.guards import GuardDiff, Reason

#: torch's default ``torch._dynamo.config.recompile_limit`` (``cache_size_limit`` before 2.6)
DEFAULT_RECOMPILE_LIMIT = 8

STATUSES = ("ok", "recovered", "degraded", "failed", "incomplete", "interrupted", "empty")
#: the guard kinds torch's automatic dynamic shapes answer by making the value dynamic
AUTO_DYNAMIC_KINDS = ("size", "stride", "scalar", "float", "shape_range")


# -- result types -----------------------------------------------------------------------------------
class Check(Struct):
    level: str      # ok | warn | fail
    message: str
    event: Event | None = None   # where to jump, when there is one place
    rule: str = ""               # the id of the rule that made it (checks/rules.py: RULES)

    def __post_init__(self) -> None:
        self.message = " ".join(str(self.message).split())  # one line, whatever the run's text held

    def as_json(self) -> dict[str, Any]:
        return {"level": self.level, "message": self.message, "rule": self.rule}


class BreakEntry(Struct):
    """One graph-break site of the worklist (deduplicated by gb id / reason and user file:line)."""

    gb_id: str | None
    gb_type: str | None
    reason: str
    explanation: str | None
    hints: list[str]
    file: str | None
    line: int | None
    function: str | None
    source_line: str | None
    count: int = 0
    compile_ids: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    resume_fns: list[str] = field(default_factory=list)   # upstream evidence (compiled_functions/)
    #: the break is in the user's own code (not in an installed library such as transformers); None: unknown
    in_user_code: bool | None = None
    #: (file, line, function, source line) of the user's own innermost frame: where to act when the break
    #: is inside a library (the break frame itself when it is the user's)
    call_site: tuple | None = None

    @property
    def where(self) -> str:
        if not self.file:
            return "?"
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def as_json(self) -> dict[str, Any]:
        return {"gb_id": self.gb_id, "gb_type": self.gb_type, "reason": self.reason,
                "explanation": self.explanation, "hints": self.hints,
                "user_frame": {"file": self.file, "line": self.line, "function": self.function},
                "in_user_code": self.in_user_code,
                "call_site": None if self.call_site is None else dict(
                    zip(("file", "line", "function", "source_line"), self.call_site)),
                "source_line": self.source_line, "count": self.count, "compile_ids": self.compile_ids,
                "frames": self.frames, "index": self.events[0].index if self.events else None,
                "event_indices": [e.index for e in self.events[:100]],
                "resume_fns": self.resume_fns, "source": "timeline" if self.events else "compiled_functions"}


def made_dynamic_for(p: Reason, made: list[str]) -> bool:
    """This compile made the value ``p`` is about dynamic: a symbol's source is its source or under it
    (``L['x'].size()[0]``, ``L['x']._base.stride()[1]`` for ``x``); any symbol, when the reason names no
    frame input (a computed value)."""
    if not made:
        return False
    from magi_tui.model.analysis.guards import dynamic_source_entry

    entry = dynamic_source_entry(p.subject)
    if entry is None:
        return True
    return any(m == entry or m.startswith((entry + ".", entry + "[")) for m in made)


class RecompileInfo(Struct):
    frame: str
    frame_key: str | None
    compile_id: str | None
    reasons: list[Reason]
    guard_diff: GuardDiff | None = None
    event: Event | None = None
    entries: tuple[str, str] | None = None    # (older, newer) cache entry folders compared
    #: torch refused this recompile: the frame had reached its recompile limit (it runs eagerly)
    refused: bool = False
    #: ``TORCH_COMPILE_DYNAMIC_SOURCES`` entries of what this compile made dynamic (its shape symbols'
    #: sources, ``L['kwargs']['input_ids']:1``): torch's automatic dynamic shapes at work when non-empty
    dynamic_sources: list[str] = field(default_factory=list)
    #: (source, older function, newer function) for each function the frame calls that is another one
    #: in this entry (from the guard diff): the frame is a wrapper several functions come through
    functions_changed: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    #: every source this compile made dynamic (``L['f']``, ``L['x'].stride()[1]`` too, which
    #: ``TORCH_COMPILE_DYNAMIC_SOURCES`` cannot name): torch's automatic dynamic shapes at work when non-empty
    made_dynamic: list[str] = field(default_factory=list)

    @property
    def primary(self) -> Reason | None:
        return self.reasons[0] if self.reasons else None

    @property
    def kinds(self) -> list[str]:
        """Every kind of guard that failed, one per cache entry torch tried, in torch's order, once each."""
        return list(dict.fromkeys(r.kind for r in self.reasons))

    @property
    def automatic_dynamic(self) -> bool:
        """Torch's normal first step to dynamic shapes: a size, int, float or stride changed and this compile
        made it dynamic, so the next new value runs without compiling. Not something to fix. Judged from the
        cache entry the call matched: torch lists one reason per cache entry, the most recent first, and this
        compile generalises that entry, so the first reason decides, with what this compile made dynamic (its
        shape symbols); a reason of an older entry that reads ``other`` never turns the normal path into a
        warning."""
        p = self.primary
        return (p is not None and p.kind in AUTO_DYNAMIC_KINDS and not self.refused
                and made_dynamic_for(p, self.made_dynamic))

    def as_json(self) -> dict[str, Any]:
        p = self.primary
        return {"frame": self.frame, "frame_key": self.frame_key, "compile_id": self.compile_id,
                "index": self.event.index if self.event else None,
                # torch's own words, one per cache entry that failed; none for an upstream run (the
                # guard diff's reading of the change is in reasons_parsed)
                "reasons": [] if self.event is None else
                [f"{r.entry_compile_id}: {r.text}" if r.entry_compile_id else r.text for r in self.reasons],
                "reasons_parsed": [r.as_json() for r in self.reasons],
                "guard": p.guard if p else None, "kind": p.kind if p else None, "kinds": self.kinds,
                "automatic_dynamic": self.automatic_dynamic, "dynamic_sources": self.dynamic_sources,
                "expected": p.expected if p else None, "actual": p.actual if p else None,
                "suggestion": p.suggestion if p else None,
                "guard_diff": self.guard_diff.as_json() if self.guard_diff else None,
                "functions_changed": [{"source": src, "older": a, "newer": b}
                                      for src, a, b in self.functions_changed],
                "refused_by_limit": self.refused,
                "source": "timeline" if self.event is not None else "compiled_functions"}


class EagerFrame(Struct):
    """A frame that ran eagerly (uncompiled) while the program went on: Dynamo skipped it after a graph
    break it could not resume from (``cause: unsupported``), or it reached the recompile limit
    (``cause: recompile_limit``). One finding, whatever the cause: the results are the same, the frame is
    just not compiled."""

    frame: str
    frame_key: str | None
    compile_id: str | None
    cause: str
    reason: str
    file: str | None = None
    line: int | None = None
    event: Event | None = None

    @property
    def where(self) -> str | None:
        return None if not self.file else (f"{self.file}:{self.line}" if self.line is not None else self.file)

    def as_json(self) -> dict[str, Any]:
        return {"frame": self.frame, "frame_key": self.frame_key, "compile_id": self.compile_id,
                "cause": self.cause, "reason": self.reason, "file": self.file, "line": self.line,
                "index": self.event.index if self.event else None}


class CompiledNothing(Struct):
    """The run compiled nothing: every compile closed without a graph that had an op, so the model ran as
    plain Python. ``frames``: the frames Dynamo compiled (labels); ``gave_up``: what made Dynamo give up
    (the graph breaks and restarts, torch's words, with where); ``advice``: a proven change, when one is
    known for what it gave up on (:data:`COMPILED_NOTHING_ADVICE`)."""

    frames: list[str]
    gave_up: list[str]
    advice: str | None = None
    event: Event | None = None
    #: the user's own line to start from (file, line): the first graph break in a file of theirs
    place: tuple[str | None, int | None] | None = None

    def as_json(self) -> dict[str, Any]:
        return {"frames": self.frames, "gave_up": self.gave_up, "advice": self.advice,
                "file": self.place[0] if self.place else None, "line": self.place[1] if self.place else None,
                "index": self.event.index if self.event is not None else None}


class FrameMore(Struct, gc=False):
    """The fields of a :class:`FrameRow` that most rows leave at their defaults (a log of 100k frames makes
    100k rows, and most compiled once, with no break, cache lookup, limit or runtime count): held by the
    rows that set one of them; read and written through the row (:class:`_More`)."""

    graph_breaks: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    cache_bypasses: int = 0
    bypass_reasons: Counter | None = None
    recompile_limit: int = DEFAULT_RECOMPILE_LIMIT
    limit_recorded: bool = False
    limit_hit: bool = False
    limit_raised: bool = False
    limit_event: Event | None = None
    cf_rel: str | None = None
    entries: Sequence[Any] = ()
    eager_calls: int | None = None
    compiled_autograd: bool = False


#: a row's :class:`FrameMore` while it has none (read only: a write makes the row one of its own)
_NO_MORE = FrameMore()
_T = TypeVar("_T")


class _More(Generic[_T]):
    """A :class:`FrameMore` field as an attribute of the row: its default while the row has none, and a
    write of anything but the default gives the row its own."""

    def __init__(self, default: _T) -> None:
        self.default = default
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, row: None, owner: type | None = None) -> _More[_T]: ...
    @overload
    def __get__(self, row: FrameRow, owner: type | None = None) -> _T: ...

    def __get__(self, row: FrameRow | None, owner: type | None = None) -> _T | _More[_T]:
        if row is None:
            return self
        more = row.more
        return self.default if more is None else getattr(more, self.name)

    def __set__(self, row: FrameRow, value: _T) -> None:
        more = row.more
        if more is None:
            d = self.default
            if value is d or (type(value) is type(d) and value == d):
                return
            more = row.more = FrameMore()
        setattr(more, self.name, value)


class FrameRow(Struct, gc=False):
    """One frame's row. Its own fields are what every row sets; the rest (:class:`FrameMore`) are its
    attributes too, held only by a row that sets one. Not tracked by the cycle collector: it refers to
    events and counts, nothing refers back to it."""

    frame: str
    key: str
    name: str
    file: str | None = None
    line: int | None = None
    compiles: int = 0
    compile_s: float | None = None
    first_event: Event | None = None
    more: FrameMore | None = None

    graph_breaks = _More(0)
    cache_hits = _More(0)
    cache_misses = _More(0)
    cache_bypasses = _More(0)
    recompile_limit = _More(DEFAULT_RECOMPILE_LIMIT)
    limit_recorded = _More(False)
    limit_hit = _More(False)
    #: the limit hit raised into the program (``FailOnRecompileLimitHit``): a failure, not an eager fallback
    limit_raised = _More(False)
    limit_event = _More[Event | None](None)
    cf_rel = _More[str | None](None)
    entries = _More[Sequence[Any]](())    # runtime: [EntryCalls] (model/analysis/runtime.py)
    eager_calls = _More[int | None](None)  # runtime: None when nothing counted them
    #: a compiled-autograd graph (compile id ``!<n>/<frame>/…``): Dynamo compiling the backward compiled
    #: autograd captured, not a frame of the user's (torch's ``compiled_autograd.captures``)
    compiled_autograd = _More(False)

    @property
    def bypass_reasons(self) -> Counter:
        """Why its cache lookups bypassed the cache (the first line of each reason), counted; read only
        (an empty one made for a row that counted none)."""
        got = (self.more or _NO_MORE).bypass_reasons
        return Counter() if got is None else got

    def add_bypass_reason(self, reason: str, n: int = 1) -> None:
        more = self.more
        if more is None:
            more = self.more = FrameMore()
        if more.bypass_reasons is None:
            more.bypass_reasons = Counter()
        more.bypass_reasons[reason] += n

    @property
    def recompiles(self) -> int:
        return max(0, self.compiles - 1)

    @property
    def calls(self) -> int | None:
        """Calls its compiled entries served (model/analysis/runtime.py), None when nothing counted them."""
        counted = [e.calls for e in self.entries if e.calls is not None]
        return sum(counted) if counted else None

    @property
    def first_call_s(self) -> float | None:
        """Seconds the first call of each compiled entry took, summed: where a backend's lazy work lands (a
        compile deferred to the first call, a warm-up, CUDA graph recording); None when nothing timed them."""
        timed = [e.first_call_seconds for e in self.entries if e.first_call_seconds is not None]
        return sum(timed) if timed else None

    @property
    def never_hits_cache(self) -> bool:
        m = self.more
        return m is not None and m.cache_bypasses > 0 and m.cache_hits == 0 and m.cache_misses == 0

    def as_json(self) -> dict[str, Any]:
        m = self.more or _NO_MORE
        timed = [e.first_call_seconds for e in m.entries if e.first_call_seconds is not None]
        return {"frame": self.frame, "key": self.key, "name": self.name, "file": self.file, "line": self.line,
                "compiles": self.compiles, "recompiles": max(0, self.compiles - 1), "graph_breaks": m.graph_breaks,
                "cache": {"hits": m.cache_hits, "misses": m.cache_misses, "bypasses": m.cache_bypasses,
                          "bypass_reasons": dict(m.bypass_reasons or ())},
                "never_hits_cache": m.cache_bypasses > 0 and m.cache_hits == 0 and m.cache_misses == 0,
                "compile_s": None if self.compile_s is None else round(self.compile_s, 6),
                "recompile_limit": m.recompile_limit, "recompile_limit_recorded": m.limit_recorded,
                "limit_hit": m.limit_hit, "limit_raised": m.limit_raised, "compiled_functions": m.cf_rel,
                "entries": [e.as_json() for e in m.entries], "eager_calls": m.eager_calls,
                "first_call_s": None if not timed else round(sum(timed), 6),
                "compiled_autograd": m.compiled_autograd}


class Analysis(Struct):
    status: str
    restarts: list[Restart]
    problems: list[Cascade]
    worklist: list[BreakEntry]
    recompiles: list[RecompileInfo]
    #: most compiles first (ties in the order found)
    frames: list[FrameRow]
    cache: dict[str, Any]
    #: total, phases, unattributed and per piece; per frame: :func:`~.tallies.frame_seconds` of
    #: ``frames_found``, made when asked (:func:`~.tallies.compile_time_json` is the JSON's)
    compile_time: dict[str, Any]
    checks: list[Check]
    empty_note: str | None = None
    log_tail: list[str] | None = None
    log_path: str | None = None
    incomplete_reasons: list[str] = field(default_factory=list)
    graph_break_total: int = 0
    recompile_total: int = 0
    #: frames that ran eagerly (status ``degraded``)
    ran_eagerly: list[EagerFrame] = field(default_factory=list)
    #: id(cascade) -> (file, line) where each failure was raised in the user's code
    failure_sources: dict[int, tuple] = field(default_factory=dict)
    #: facts the run's source cannot know (see :func:`not_recorded`)
    not_recorded: frozenset = frozenset()
    #: a TORCH_TRACE log of the same process that records them (a debug dir's ``tlparse/`` log)
    companion_log: str | None = None
    runtime: Any = None          # model/runtime.RuntimeInfo: calls per compiled entry, eager calls
    fallbacks: list = field(default_factory=list)   # model/fallbacks.Fallback: every silent fallback
    #: how the program ended (model/session.Outcome), None when the source does not record it
    outcome: Any = None
    #: why ``outcome`` is None (a TORCH_TRACE log, an upstream run, ...), or None when it is known / still running
    outcome_unknown: str | None = None
    #: the run compiled nothing (status ``degraded``), or None
    compiled_nothing: CompiledNothing | None = None
    #: what ``magi-tui fix`` proved for this run's program (model/fix_proofs.FixProof), best first
    fix_proofs: list = field(default_factory=list)
    #: ``frames`` in the order the frames were found (the per-frame compile-time maps' order)
    frames_found: list[FrameRow] = field(default_factory=list)
    #: each check's own evidence (:mod:`~magi_tui.model.analysis.checks.gather`), by its gatherer's class name
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_failed(self) -> bool:
        return self.status in ("failed", "incomplete", "interrupted")

