"""Pairing before / after / failed events into spans, incrementally.

FORMAT.md §10.8: lifecycles nest LIFO; a ``before`` is closed by the ``after`` or ``failed`` with the
same ``(lifecycle_name, scope, subgraph_index, graph_index)`` (plus ``compile_id`` for our tracer).
``graph_index`` is sometimes present on only one side, so a missing value matches any. Pairs are what
the tree shows as one node and what the diff view compares (before graph vs after graph).
"""

from __future__ import annotations

from magi_tui.model.events import Event, Span


def _matches(span: Span, ev: Event) -> bool:
    b = span.before
    if b is None or b.session != ev.session:
        return False
    if b.lifecycle != ev.lifecycle or b.subgraph_index != ev.subgraph_index or b.compile_id != ev.compile_id:
        return False
    return b.graph_index is None or ev.graph_index is None or b.graph_index == ev.graph_index


_POINT = (None, False)


def _key(ev: Event) -> tuple:
    """What a ``before`` and the end that closes it share exactly (:func:`_matches`; ``graph_index`` may
    be missing on one side, so it is not part of it)."""
    return (ev.session, ev.lifecycle, ev.subgraph_index, ev.compile_id)


class Pairer:
    """Feeds events in file order; keeps the stack of open spans."""

    def __init__(self) -> None:
        self.open: list[Span] = []           # the current session's stack of open spans
        #: spans left open by a finished session, or inside a span that closed (LIFO): never closed so
        #: far; a later end of the same session may still close one (interleaved lifecycles). In the
        #: order set aside, and by what an end must share with its ``before`` (:func:`_key`): a run
        #: where every compile leaves one open sets aside one per compile, and an end looked for in
        #: all of them made the read quadratic in compile ids (issue #21)
        self._abandoned: dict[int, Span] = {}
        self._by_key: dict[tuple, list[Span]] = {}
        self._session = 0

    @property
    def abandoned(self) -> list[Span]:
        """Spans set aside, never closed so far, in the order they were set aside."""
        return list(self._abandoned.values())

    @property
    def all_open(self) -> list[Span]:
        """Every ``before`` never closed, earlier sessions first."""
        return self.abandoned + self.open

    def _set_aside(self, spans: list[Span]) -> None:
        for span in spans:
            self._abandoned[id(span)] = span
            self._by_key.setdefault(_key(span.before), []).append(span)  # type: ignore[arg-type]

    def add(self, ev: Event) -> tuple[Span | None, bool]:
        """Returns ``(span, created)``: the span the event belongs to (None for a point event) and
        whether that span is new (a new tree node) rather than an existing one being closed."""
        if ev.session != self._session:
            self._session = ev.session
            self._set_aside([s for s in self.open if s.first.session != ev.session])
            self.open = [s for s in self.open if s.first.session == ev.session]
        stack = self.open
        n = len(stack)
        ev.depth = n
        phase = ev.phase
        if phase is None:
            return _POINT
        if phase == "before":
            span = Span(ev, n)
            stack.append(span)
            ev.span = span
            return span, True
        if n:  # the common case: the innermost open span closes (_matches, inlined)
            span = stack[-1]
            b = span.before
            if b is not None and b.session == ev.session and b.lifecycle == ev.lifecycle \
                    and b.subgraph_index == ev.subgraph_index and b.compile_id == ev.compile_id \
                    and (b.graph_index is None or ev.graph_index is None or b.graph_index == ev.graph_index):
                stack.pop()
                span.end = ev
                ev.span = span
                return span, False
        for i in range(len(self.open) - 1, -1, -1):
            span = self.open[i]
            if _matches(span, ev):
                span.end = ev
                # LIFO: whatever was opened inside this span and is still open can no longer close in
                # order; it is set aside (reported as never closed, and no longer deepens the nesting)
                self._set_aside(self.open[i + 1:])
                del self.open[i:]
                ev.span = span
                return span, False
        same = self._by_key.get(_key(ev)) if self._by_key else None
        if same:  # a late end for a set-aside span (interleaving): the last set aside that matches
            for i in range(len(same) - 1, -1, -1):
                span = same[i]
                if _matches(span, ev):
                    span.end = ev
                    del same[i]
                    if not same:
                        del self._by_key[_key(ev)]
                    del self._abandoned[id(span)]
                    ev.span = span
                    return span, False
        span = Span(None, len(self.open))  # an end with no before (e.g. skip, or a lost line)
        span.end = ev
        ev.span = span
        return span, True

    def outermost_open(self, session: int) -> Span | None:
        for span in self.open:
            if span.first.session == session:
                return span
        return None
