"""Triage: what went wrong first, what recovered, what to look at.

Fed event by event (so a live run updates cheaply). The seed's triage order is timeline order ->
``*_failed_*`` and cache events -> graph files -> ``compiled_functions/``.

A failure is *recovered* when, later in the same session,

* an ``after`` of the same lifecycle key succeeds (a retry of the same step), or
* the outermost lifecycle that was open when it failed (the top of its failure cascade) completes
  with ``after``: a RestartAnalysis makes ``compiler_compile`` and every enclosing lifecycle fail,
  then the retry may succeed through a cache load that never runs ``compiler_compile`` again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from magi_tui.model.events import Event
from magi_tui.model.layout import event_folder_rel
from magi_tui.model.pairing import Pairer, Span


@dataclass
class Failure:
    event: Event
    cascade_head: Event          # the first failed event of its cascade (where it really failed)
    waits_on: tuple[tuple, ...]  # session-qualified lifecycle keys whose later ``after`` recovers it
    folder: str | None
    recovered_by: Event | None = None

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


@dataclass
class Item:
    """One row of a triage list (restarts, recompiles, graph breaks, cache events)."""

    event: Event
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"index": self.event.index, "name": self.event.name, "reason": self.reason}


@dataclass
class Triage:
    failures: list[Failure] = field(default_factory=list)
    restarts: list[Item] = field(default_factory=list)
    recompiles: list[Item] = field(default_factory=list)
    graph_breaks: list[Item] = field(default_factory=list)
    cache_hits: list[Item] = field(default_factory=list)
    cache_misses: list[Item] = field(default_factory=list)
    cache_stores: list[Item] = field(default_factory=list)
    cache_skipped_stores: list[Item] = field(default_factory=list)

    @property
    def first_failure(self) -> Failure | None:
        return self.failures[0] if self.failures else None

    @property
    def unrecovered(self) -> list[Failure]:
        return [f for f in self.failures if not f.recovered]


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


def _loose(session: int, key: tuple) -> tuple:
    """A pair key without ``graph_index`` (matched separately, tolerating a missing one)."""
    lifecycle, subgraph_index, _graph_index, compile_id = key
    return (session, lifecycle, subgraph_index, compile_id)


def _graph_ok(a: int | None, b: int | None) -> bool:
    return a is None or b is None or a == b


class TriageBuilder:
    """Incremental triage over a :class:`Pairer`'s view of the events."""

    def __init__(self, pairer: Pairer) -> None:
        self.pairer = pairer
        self.triage = Triage()
        #: loose key -> [(graph_index, failure)] waiting for an ``after`` of that lifecycle
        self._waiting: dict[tuple, list[tuple[int | None, Failure]]] = {}
        self._prev: Event | None = None
        self._head: Event | None = None

    def before_pairing(self, ev: Event) -> tuple | None:
        """Call before the pairer sees ``ev``: captures the outermost open lifecycle for a failure."""
        if ev.phase != "failed":
            return None
        outer = self.pairer.outermost_open(ev.session)
        return outer.before.pair_key if outer is not None and outer.before is not None else None

    def add(self, ev: Event, span: Span | None, outer_key: tuple | None) -> list[Failure]:
        """Account for one event; returns failures that this event recovered."""
        t = self.triage
        recovered: list[Failure] = []
        kind = ev.kind
        if ev.phase == "failed":
            prev = self._prev
            if prev is None or prev.phase != "failed" or prev.session != ev.session:
                self._head = ev
            head = self._head or ev
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
            et = f.exception_type
            if head is ev and (et.endswith("RestartAnalysis") or _attr(ev, "restart_reason")):
                t.restarts.append(Item(ev, _attr(ev, "restart_reason") or f"{et}: {f.message}".rstrip(": ")))
        elif ev.phase == "after":
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
                        recovered.append(f)
                    else:
                        keep.append((gi, f))
                if keep:
                    self._waiting[loose] = keep
                else:
                    del self._waiting[loose]
        if kind == "restart":
            t.restarts.append(Item(ev, _attr(ev, "reason", "restart_reason")))
        elif kind == "recompile":
            t.recompiles.append(Item(ev, _attr(ev, "reason")))
        elif kind == "graph_break":
            t.graph_breaks.append(Item(ev, _attr(ev, "reason")))
        elif kind == "cache_hit":
            t.cache_hits.append(Item(ev, _attr(ev, "reason", "cache_key", "key")))
        elif kind == "cache_miss":
            reason = _attr(ev, "reason")
            if ev.frag.startswith("cache_bypass"):
                reason = f"bypass: {reason}" if reason else "bypass"
            t.cache_misses.append(Item(ev, reason))
        elif kind == "cache_store":
            t.cache_stores.append(Item(ev, _attr(ev, "reason", "key")))
        elif kind == "cache_skip":
            t.cache_skipped_stores.append(Item(ev, _attr(ev, "reason")))
        self._prev = ev
        return recovered
