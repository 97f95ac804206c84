"""Triage: what went wrong first, what recovered, what to look at.

Fed event by event (so a live run updates cheaply). The seed's triage order is timeline order ->
``*_failed_*`` and cache events -> graph files -> ``compiled_functions/``.

A failure is *recovered* when, later in the same session,

* an ``after`` of the same lifecycle key succeeds (a retry of the same step), or
* the outermost lifecycle that was open when it failed (the top of its failure cascade) completes
  with ``after``: a RestartAnalysis makes ``compiler_compile`` and every enclosing lifecycle fail,
  then the retry may succeed through a cache load that never runs ``compiler_compile`` again.

Consecutive failed events of one session are one *cascade* (the innermost failure first, then every
enclosing lifecycle that failed because of it). ``Triage.failures`` keeps every failed event (the views
mark each one); ``Triage.cascades`` holds one entry per cascade, which is what a report counts. A cascade
whose head is a Dynamo restart (``*RestartAnalysis``, or a ``restart_reason``) is not a failure but
Dynamo's control flow: it is listed once under ``restarts``, its cascade folded under it. Our tracer's
``restart_analysis`` point events are restarts too (recovered when their compile ends with ``after``).
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from magi_format.names import COMPILE_WORKER_DIED, EXPORT_ISSUE, RECOMPILE_LIMIT_HIT, TRACER_STOPPED
from magi_tui.model.events import Event, Span
from magi_tui.model.pairing import Pairer
from magi_tui.model.sources.layout import event_folder_rel

#: exceptions with which Dynamo gives up tracing a frame it then runs eagerly (torch._dynamo.exc); a
#: backend / Inductor exception (BackendCompilerFailed, InductorError, …) is a compiler crash instead
FALLBACK_TYPES = frozenset({"Unsupported", "UncapturedHigherOrderOpError"})


class Failure(Struct):
    event: Event
    cascade_head: Event          # the first failed event of its cascade (where it really failed)
    waits_on: tuple[tuple, ...]  # session-qualified lifecycle keys whose later ``after`` recovers it
    folder: str | None
    recovered_by: Event | None = None
    cascade: "Cascade | None" = None

    @property
    def recovered(self) -> bool:
        return self.recovered_by is not None

    @property
    def exception_type(self) -> str:
        a = self.event.attrs or {}
        return str(a.get("exception_type") or a.get("error_type") or a.get("fail_type") or "")

    @property
    def message(self) -> str:
        a = self.event.attrs or {}
        return str(a.get("exception_message") or a.get("error_message") or a.get("fail_reason") or "")


class Cascade(Struct):
    """One failure and the enclosing lifecycles that failed because of it (consecutive failed events)."""

    members: list[Failure]
    restart: bool = False
    reason: str = ""
    #: Dynamo gave up on the frame after a graph break it could not resume from (``Unsupported`` in a
    #: compile that had already reported a graph break): the frame ran eagerly, the program went on
    fallback: bool = False

    @property
    def head(self) -> Failure:
        return self.members[0]

    @property
    def recovered(self) -> bool:
        return all(m.recovered for m in self.members)

    @property
    def recovered_by(self) -> Event | None:
        last = [m.recovered_by for m in self.members if m.recovered_by is not None]
        return max(last, key=lambda e: e.seq) if last and self.recovered else None


class Restart(Struct):
    """One Dynamo restart: a failed cascade headed by a RestartAnalysis, or a ``restart_analysis`` event."""

    event: Event
    reason: str
    cascade: Cascade | None = None
    #: a point restart's own verdict (its compile ended with ``after``); a cascade decides for itself
    closed_ok: bool = False

    @property
    def recovered(self) -> bool:
        return self.cascade.recovered if self.cascade is not None else self.closed_ok


class Item(Struct):
    """One row of a triage list (restarts, recompiles, graph breaks, cache events); slotted: a big run
    has one per cache event."""

    event: Event
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"index": self.event.index, "name": self.event.name, "reason": self.reason}


class Triage(Struct):
    #: every failed event (a view marks each one)
    failures: list[Failure] = field(default_factory=list)
    #: one per run of consecutive failed events; restarts included (see ``restarts``)
    cascades: list[Cascade] = field(default_factory=list)
    restarts: list[Restart] = field(default_factory=list)
    recompiles: list[Item] = field(default_factory=list)
    graph_breaks: list[Item] = field(default_factory=list)
    cache_hits: list[Item] = field(default_factory=list)
    cache_misses: list[Item] = field(default_factory=list)
    cache_stores: list[Item] = field(default_factory=list)
    cache_skipped_stores: list[Item] = field(default_factory=list)
    #: the cache was not consulted (neither hit nor miss): ``No shape env``, unpicklable graph, ...
    cache_bypasses: list[Item] = field(default_factory=list)
    recompile_limit_hits: list[Item] = field(default_factory=list)
    tracer_stopped: list[Item] = field(default_factory=list)
    #: Inductor's compile-worker sidecar died (torch 2.14+'s compile_worker_sidecar_death)
    workers_died: list[Item] = field(default_factory=list)
    #: torch.export's issues (data-dependent expressions, guards it added, fake kernels)
    export_issues: list[Item] = field(default_factory=list)
    #: compiles that closed (``after`` of a ``compile`` lifecycle) and graphs Dynamo captured (``after`` of a
    #: ``dynamo_capture``: a graph with ops that went to the backend): the evidence of :attr:`compiled_nothing`
    compiles_closed: int = 0
    captures_started: int = 0
    graphs_captured: int = 0

    def signature(self) -> tuple:
        """What changes when a finding does: every field's size (a list's length, a count's value), derived
        from the fields themselves so a new kind of finding is in it without a second list to keep, and how
        many failures and restarts recovered (a recovery changes no length)."""
        out: list[Any] = []
        for name in self.__struct_fields__:
            v = getattr(self, name)
            out.append(len(v) if type(v) is list else v)
        out.append(sum(1 for f in self.failures if f.recovered))
        out.append(sum(1 for r in self.restarts if r.recovered))
        return tuple(out)

    @property
    def compiled_nothing(self) -> bool:
        """Compiles closed and not one captured a graph: every graph Dynamo made had no op, so the code runs
        as plain Python (``torch.compile(DDP(model))``). Only sources that record both can say it (our tracer,
        TORCH_TRACE logs); upstream runs have neither lifecycle."""
        return self.compiles_closed > 0 and self.captures_started > 0 and self.graphs_captured == 0

    @property
    def first_failure(self) -> Failure | None:
        """The failure to look at first (``f``, the panel's "Look first", the report's first failure): the head
        of the first failure cascade nothing recovered, else of the first failure cascade, else the first
        failed event (a restart's). One rule: ``f`` went to the first failed event, a recovered one, while
        the panel named an unrecovered failure further on."""
        problems = self.problems
        c = next((c for c in problems if not c.recovered), problems[0] if problems else None)
        if c is not None:
            return c.head
        return self.failures[0] if self.failures else None

    @property
    def unrecovered(self) -> list[Failure]:
        return [f for f in self.failures if not f.recovered]

    @property
    def problems(self) -> list[Cascade]:
        """Cascades that are failures (not restarts, not frames that fell back to eager), one per failure
        whatever it cascaded into."""
        return [c for c in self.cascades if not c.restart and not c.fallback]

    @property
    def fallbacks(self) -> list[Cascade]:
        """Frames Dynamo skipped after a graph break it could not resume from: they ran eagerly."""
        return [c for c in self.cascades if c.fallback]

    @property
    def stops(self) -> list[tuple[Event, str, bool]]:
        """Where ``n`` / ``p`` stop, in file order: each failure cascade (at its head) and each Dynamo
        restart (a cascade headed by a RestartAnalysis, or a ``restart_analysis`` point event, as a
        TORCH_TRACE log records them): ``(event, "failure" | "restart", recovered)``."""
        out = [(c.head.event, "restart" if c.restart else "failure", c.recovered) for c in self.cascades]
        out += [(r.event, "restart", r.recovered) for r in self.restarts if r.cascade is None]
        out.sort(key=lambda s: s[0].seq)
        return out

    @property
    def unrecovered_cascades(self) -> list[Cascade]:
        """Cascades (restarts included: a restart whose retry never finished) not recovered; a frame that
        fell back to eager is not one (it ran, uncompiled)."""
        return [c for c in self.cascades if not c.recovered and not c.fallback]


def _attr(ev: Event, *keys: str) -> str:
    a = ev.attrs or {}
    for k in keys:
        v = a.get(k)
        if v not in (None, ""):
            return str(v)
    s = ev.summary or {}
    for k in keys:
        if s.get(k):
            return s[k]
    return ""


def raised_into_program(item: Item) -> bool:
    """A recompile-limit hit that raised into the program (``fail_on_recompile_limit_hit`` or
    ``fullgraph=True``: torch's ``FailOnRecompileLimitHit``), not a frame that went on eagerly."""
    ev = item.event
    return _attr(ev, "fallback") == "error" or "FailOnRecompileLimitHit" in _attr(ev, "fail_type")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _loose(session: int, key: tuple) -> tuple:
    """A pair key without ``graph_index`` (matched separately, tolerating a missing one)."""
    lifecycle, subgraph_index, _graph_index, compile_id = key
    return (session, lifecycle, subgraph_index, compile_id)


def _graph_ok(a: int | None, b: int | None) -> bool:
    return a is None or b is None or a == b


#: what :meth:`TriageBuilder.add` returns when the event recovered nothing (shared, never appended to)
_NONE_RECOVERED: list = []


class TriageBuilder:
    """Incremental triage over a :class:`Pairer`'s view of the events."""

    def __init__(self, pairer: Pairer) -> None:
        self.pairer = pairer
        self.triage = Triage()
        #: loose key -> [(graph_index, failure)] waiting for an ``after`` of that lifecycle
        self._waiting: dict[tuple, list[tuple[int | None, Failure]]] = {}
        self._prev: Event | None = None
        self._cascade: Cascade | None = None
        #: (session, compile id) -> point restarts waiting for their compile's end
        self._open_restarts: dict[tuple, list[Restart]] = {}
        #: (session, compile id) of compiles that reported a graph break (bounded: recent ones matter)
        self._broke: dict[tuple, None] = {}

    def before_pairing(self, ev: Event) -> tuple | None:
        """Call before the pairer sees ``ev``: captures the outermost open lifecycle for a failure."""
        if ev.phase != "failed":
            return None
        outer = self.pairer.outermost_open(ev.session)
        return outer.before.pair_key if outer is not None and outer.before is not None else None

    def add(self, ev: Event, span: Span | None, outer_key: tuple | None) -> list[Failure]:
        """Account for one event; returns failures that this event recovered."""
        t = self.triage
        recovered: list[Failure] = _NONE_RECOVERED  # most events: no list made (never appended to)
        kind = ev.kind
        phase = ev.phase
        if phase is None:
            pass
        elif phase == "before":
            if ev.lifecycle == "dynamo_capture":
                t.captures_started += 1
        elif phase == "failed":
            prev = self._prev
            cascade = self._cascade
            new_cascade = prev is None or prev.phase != "failed" or prev.session != ev.session \
                or cascade is None
            if cascade is not None and not new_cascade and cascade.restart:
                # a restart propagates its own exception up the enclosing lifecycles; a failed event with
                # another, non-restart exception right after it is a failure of its own, never folded
                et = _attr(ev, "exception_type", "error_type", "fail_type")
                if et and not et.endswith("RestartAnalysis") and et != cascade.head.exception_type:
                    new_cascade = True
            head = ev if new_cascade or cascade is None else cascade.head.event
            # the failed lifecycle's own key: from its ``before`` when it has one (the failed event may
            # lack an attribute such as graph_index that the before carried)
            own = span.before.pair_key if span is not None and span.before is not None else ev.pair_key
            keys = {(ev.session, own)}
            if outer_key is not None:
                keys.add((ev.session, outer_key))
            folder_ev = ev if ev.files else (span.before if span and span.before and span.before.files else None)
            f = Failure(ev, head, tuple(keys), event_folder_rel(folder_ev) if folder_ev else None)
            t.failures.append(f)
            for session, key in keys:
                self._waiting.setdefault(_loose(session, key), []).append((key[2], f))
            if new_cascade:
                et = f.exception_type
                restart = et.endswith("RestartAnalysis") or bool(_attr(ev, "restart_reason"))
                reason = _attr(ev, "restart_reason") or f"{et}: {f.message}".rstrip(": ")
                self._cascade = Cascade([f], restart, reason if restart else f"{et}: {f.message}".rstrip(": "))
                if not restart and et.rsplit(".", 1)[-1] in FALLBACK_TYPES and ev.compile_id is not None \
                        and (ev.session, ev.compile_id) in self._broke:
                    # torch logged the graph break (so it was not fullgraph=True, where it raises instead)
                    # and then skipped the frame: it runs eagerly; not a compiler crash
                    self._cascade.fallback = True
                t.cascades.append(self._cascade)
                if restart:
                    t.restarts.append(Restart(ev, reason, self._cascade))
            elif cascade is not None:  # always, when not new
                cascade.members.append(f)
            f.cascade = self._cascade
        elif phase == "after":
            lc = ev.lifecycle
            if lc == "compile":
                t.compiles_closed += 1
            elif lc == "dynamo_capture":
                t.graphs_captured += 1
            waiting = None
            if self._waiting:  # a failure waits for its recovery (most runs: none at all)
                key = span.before.pair_key if span is not None and span.before is not None else ev.pair_key
                loose = _loose(ev.session, key)
                waiting = self._waiting.get(loose)
            if waiting:
                keep = []
                for gi, f in waiting:
                    if f.recovered_by is not None:
                        continue
                    if _graph_ok(gi, key[2]) and _graph_ok(gi, ev.graph_index):
                        f.recovered_by = ev
                        if recovered is _NONE_RECOVERED:
                            recovered = []
                        recovered.append(f)
                    else:
                        keep.append((gi, f))
                if keep:
                    self._waiting[loose] = keep
                else:
                    del self._waiting[loose]
            if ev.lifecycle == "compile" and ev.compile_id is not None:
                for r in self._open_restarts.pop((ev.session, ev.compile_id), ()):
                    r.closed_ok = True
        if not kind:  # most events
            if phase is None:
                if ev.frag == RECOMPILE_LIMIT_HIT:
                    t.recompile_limit_hits.append(Item(ev, _attr(ev, "reason")))
                elif ev.frag == TRACER_STOPPED:
                    t.tracer_stopped.append(Item(ev, _attr(ev, "reason", "error")))
                elif ev.frag == EXPORT_ISSUE:
                    t.export_issues.append(Item(ev, _attr(ev, "issue")))
                elif ev.frag == COMPILE_WORKER_DIED:
                    t.workers_died.append(Item(ev, _attr(ev, "reason")))
        elif kind == "restart" and phase is None:
            reason = _first_line(_attr(ev, "restart_reason", "reason"))
            cid = ev.compile_id
            dup = cid is not None and any(r.cascade is not None and r.event.compile_id == cid
                                          and r.event.session == ev.session for r in t.restarts[-8:])
            if not dup:
                r = Restart(ev, reason, closed_ok=cid is None)  # no compile id: nothing says it failed
                t.restarts.append(r)
                if cid is not None:
                    self._open_restarts.setdefault((ev.session, cid), []).append(r)
        elif kind == "recompile":
            t.recompiles.append(Item(ev, _attr(ev, "reason")))
        elif kind == "graph_break":
            t.graph_breaks.append(Item(ev, _attr(ev, "reason")))
            if ev.compile_id is not None:
                self._broke[(ev.session, ev.compile_id)] = None
                if len(self._broke) > 4096:
                    del self._broke[next(iter(self._broke))]
        elif kind == "cache_hit":
            t.cache_hits.append(Item(ev, _attr(ev, "reason", "cache_key", "key")))
        elif kind == "cache_miss":
            t.cache_misses.append(Item(ev, _attr(ev, "reason")))
        elif kind == "cache_bypass":
            t.cache_bypasses.append(Item(ev, _attr(ev, "reason")))
        elif kind == "cache_store":
            t.cache_stores.append(Item(ev, _attr(ev, "reason", "key")))
        elif kind == "cache_skip":
            t.cache_skipped_stores.append(Item(ev, _attr(ev, "reason")))
        self._prev = ev
        return recovered
