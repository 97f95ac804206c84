"""The one pass over a run's events the analysis needs (:class:`TimelineFold`): compile ids, each
frame's events and the compile time sums, fed one event at a time by the analysis or by a headless
load that keeps no event list."""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from magi_format.names import AFTER_BUILD_GUARDS, SHAPE_SYMBOL
from magi_tui.model.analysis.checks import evidence
from magi_tui.model.analysis.checks.evidence import _int, _s
from magi_tui.model.analysis.checks.gather import GATHERERS, Gatherer
from magi_tui.model.analysis.fallbacks import MAX_HINTS, PERF_HINT_NAME
from magi_tui.model.analysis.frames import parse_compile_id
from magi_tui.model.analysis.runtime import GRAPH_EXECUTION_FILE
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel

MAX_SYMBOLS = 20_000         # shape_symbol events kept for explaining recompiles, at most


# -- what the analysis reads from every event ------------------------------------------------------
class _FrameFold(Struct, gc=False):
    """One frame key's events (compile ids ``<frame>/<n>``), as :meth:`_Analyser._timeline_frames` reads
    them. Not tracked by the cycle collector: it refers to events and ids, nothing refers back to it (a
    100k-frame log holds 100k of these until the analysis turns them into rows)."""

    first_event: Event
    # a bound fold (:meth:`TimelineFold.bind`) reads the first compile ``before``'s attributes as it comes:
    # whether it did, and the co_filename / co_firstlineno they give (else the analysis reads them)
    asked: bool = False
    file: str | None = None
    line: int | None = None
    name: str = ""
    # the frame's compile indices (``<frame>/<n>``) seen, and those of a ``compile`` lifecycle: one int
    # while there is one (most frames of a big run compile once; an empty set is 216 bytes), a set after
    any_ids: int | set[int] | None = None
    compile_ids: int | set[int] | None = None
    compile_s: float | None = None
    first_before: Event | None = None   # its first compile ``before`` (co_filename / line)
    first_closer: Event | None = None   # its first compile ``after`` / ``failed`` (metrics.json)

    @property
    def place(self) -> int:
        """Where it is in ``TimelineFold.frames`` against the others (frames are added in event order): its
        first event's ``seq``, an int the event holds already."""
        return self.first_event.seq


_NO_PARSE = object()
#: the types of an attribute that read back from its JSON line as they were
_AS_READ = frozenset({str, int, type(None)})


def _with_id(ids: int | set[int] | None, i: int) -> int | set[int]:
    """``ids`` (:class:`_FrameFold`'s compact set) with ``i`` in it."""
    if ids is None or ids == i:
        return i
    if type(ids) is set:
        ids.add(i)
        return ids
    return {ids, i}  # type: ignore[arg-type]  # an int here: None and set are handled above


def n_ids(ids: int | set[int] | None) -> int:
    """How many compile indices :func:`_with_id` holds."""
    return 0 if ids is None else len(ids) if type(ids) is set else 1


class TimelineFold:
    """What the analysis needs from every event, folded in one event at a time, in file order: whether
    compile ids were recorded, each frame's events (:class:`_FrameFold`) and the compile time sums (per
    lifecycle, per piece, top level). The analysis folds ``run.events`` through it; a headless load that
    keeps no event list (``RunModel.load(fold=TimelineFold())``) feeds it as it reads, so both give the
    same answer from one implementation. Files (metrics.json, attributes read back) are read by the
    analysis, not here."""

    def __init__(self) -> None:
        self.has_cids = False
        self.frames: dict[str, _FrameFold] = {}
        self.spans: dict[str, list] = {}          # lifecycle -> [seconds, count]
        self.pieces: dict[int, list] = {}         # piece -> [depth, seconds, [lifecycles], count]
        self.top = 0.0
        self.top_n = 0
        self.metrics_events: list[Event] = []     # compile ends with a duration and a metrics.json
        #: compile id -> its ``shape_symbol`` events (the sizes / ints that compile treated as dynamic)
        self.symbols: dict[str, list[Event]] = {}
        self._n_symbols = 0
        #: compile id -> its ``after_build_guards`` event (guards.txt): recompile guard diffs from a log
        self.guards: dict[str, Event] = {}
        self.exec_events: list[Event] = []        # torch's graph_execution records (calls per compile id)
        self.hint_events: list[Event] = []        # Inductor's performance hints (the tracer's perf_hint)
        self._cids: dict[str, Any] = {}
        #: the last compile id folded: (id, its frame's fold or None, its frame compile index)
        self._last: tuple = (None, None, 0)
        #: a bound fold's reader of an event's attributes (``evidence.event_attrs``), else None
        self._attributes: Any = None
        #: a bound fold's reader's ``index_only`` (a lean log reader's: it keeps no line for an event only a
        #: frame's ``first_event`` holds), else None
        self._index_only: Any = None
        self._reads = 0            # the analysis' budget of file reads (``MAX_FILE_READS``)
        #: places (``_FrameFold.place``) of the first ``_reads`` frames known to spend one of those reads on
        #: their first compile end's metrics.json, sorted
        self._spenders: list[int] = []
        #: the checks' own evidence (:mod:`~magi_tui.model.analysis.checks.gather`), fed every lifecycle's end
        self.gatherers: list[Gatherer] = [g() for g in GATHERERS]
        self._closed = [g.closed for g in self.gatherers]

    def evidence(self) -> dict[str, Any]:
        """Each gatherer's result, by its class's name (``Analysis.evidence``)."""
        return {type(g).__name__: g.result() for g in self.gatherers}

    def bind(self, run: RunModel) -> None:
        """Read what the analysis reads of each frame's events as they come, so that a streamed load
        keeps no event only for that: the first compile ``before``'s attributes (co_filename /
        co_firstlineno) at once (a TORCH_TRACE log's reader hands over the values of the map it made, so no
        line is decoded again), and the first compile end (its metrics.json) only while the analysis may still
        read it -- it reads at most ``MAX_FILE_READS`` of them, frame by frame, so a frame after that
        many that will read theirs never gets to (a 100k-frame log kept 100k such events)."""
        from magi_tui.model.analysis.checks.evidence import event_attrs

        handed = run.reader.opening_site if run.reader.hands_opening_site else None  # a log's reader hands them

        def attributes(ev: Event) -> tuple[Any, Any]:
            """``(co_filename, co_firstlineno)`` of ``ev``'s attributes (no map made of the reader's pair)."""
            if handed is not None:
                got = handed(ev)
                # as the line reads back: a str, an int or nothing (a float, a list, ... is read from the line)
                if got is not None and type(got[0]) in _AS_READ and type(got[1]) in _AS_READ:
                    return got
            a = event_attrs(run, ev)
            return a.get("co_filename"), a.get("co_firstlineno")

        self._attributes = attributes
        self._reads = evidence.MAX_FILE_READS
        for g in self.gatherers:
            g.bind(run)
        self._index_only = run.reader.index_only if run.reader.streams_lean else None

    def add(self, ev: Event) -> None:
        if ev.files and GRAPH_EXECUTION_FILE in ev.files:
            self.exec_events.append(ev)
        elif ev.name == PERF_HINT_NAME and len(self.hint_events) < MAX_HINTS:
            self.hint_events.append(ev)
        cid = ev.compile_id
        if cid and ev.name.endswith(AFTER_BUILD_GUARDS) and len(self.guards) < MAX_SYMBOLS:
            self.guards.setdefault(cid, ev)
        if ev.frag == SHAPE_SYMBOL and cid and self._n_symbols < MAX_SYMBOLS:
            self._n_symbols += 1
            self.symbols.setdefault(cid, []).append(ev)
        if cid is not None:
            if cid:
                self.has_cids = True
            self._frame(ev, cid)
        phase = ev.phase
        if phase != "after" and phase != "failed":
            return
        lifecycle = ev.lifecycle
        if lifecycle is None:
            return
        for closed in self._closed:
            closed(ev)
        span = ev.span
        d = ev.duration_ms
        if d is None:
            d = span.duration_ms if span else None
            if d is None:
                return
        sec = d / 1000.0
        acc = self.spans.get(lifecycle)
        if acc is None:
            acc = self.spans[lifecycle] = [0.0, 0]
        acc[0] += sec
        acc[1] += 1
        piece = ev.subgraph_index
        if piece is None:
            piece = ev.graph_index
        if span is not None:
            depth = span.depth
            if piece is not None:
                cur = self.pieces.get(piece)
                if cur is None or depth < cur[0]:  # the outermost lifecycles of the piece (siblings add up)
                    self.pieces[piece] = [depth, sec, [lifecycle], 1]
                elif depth == cur[0]:
                    cur[1] += sec
                    cur[3] += 1
                    if lifecycle not in cur[2]:
                        cur[2].append(lifecycle)
            if depth == 0:
                self.top += sec
                self.top_n += 1
        if lifecycle == "compile" and "metrics.json" in (ev.files or ()):
            # each is read with one of the analysis' reads left after the frames' (and a bound fold knows
            # how many frames spend one): one past those is never read
            if self._attributes is None or len(self.metrics_events) < self._reads - len(self._spenders):
                self.metrics_events.append(ev)

    def _frame(self, ev: Event, cid: str) -> None:
        last = self._last
        if last[0] == cid:  # a compile's events come together: its frame, found once for them
            f, i = last[1], last[2]
        else:
            p = self._cids.get(cid, _NO_PARSE)
            if p is _NO_PARSE:
                p = parse_compile_id(cid)
                if len(self._cids) >= 4096:  # the recent ids are the ones asked again (100k kept were
                    self._cids.clear()       # ~180 bytes a frame of a big log)
                self._cids[cid] = p
            if p is None:
                self._last = (cid, None, 0)
                return
            f = self.frames.get(p[0])
            if f is None:
                f = self.frames[p[0]] = _FrameFold(ev)
                if self._index_only is not None:  # a frame's first event is read for its index and name
                    self._index_only(ev)          # (a check's event, a row's jump target), not its line
            i = p[1]
            self._last = (cid, f, i)
        if f is None:
            return
        if not f.name:
            summary = ev.summary
            name = summary.get("frame") if summary else None
            if name:
                f.name = name
        if f.any_ids != i:
            f.any_ids = _with_id(f.any_ids, i)
        phase = ev.phase
        closing = phase == "after" or phase == "failed"
        span = ev.span
        if closing and ((span is None and ev.lifecycle == "compile") or (span is not None and span.depth == 0)):
            # a frame's compile time is every top-level lifecycle of its compile ids: Dynamo's ``compile``
            # and the backend work done after Dynamo returned (a piecewise backend compiles its pieces at
            # the first call), so the frames' times add up to the total
            d = ev.duration_ms if ev.duration_ms is not None else (span.duration_ms if span else None)
            if d is not None:
                f.compile_s = (f.compile_s or 0.0) + d / 1000.0
        if ev.lifecycle == "compile":
            if f.compile_ids != i:
                f.compile_ids = _with_id(f.compile_ids, i)
            if closing and f.first_closer is None:
                f.first_closer = ev
                self._spends(f)
            elif phase == "before" and f.first_before is None and not f.asked:
                if self._attributes is None:
                    f.first_before = ev
                    return
                co_file, co_line = self._attributes(ev)
                f.asked = True
                f.file, f.line = _s(co_file), _int(co_line)
                self._spends(f)

    def _spends(self, f: _FrameFold) -> None:
        """A bound fold's frame whose first compile end may be read by the analysis: kept while it may;
        dropped once ``_reads`` frames before it are known to read theirs (they spend every read)."""
        if self._attributes is None or f.first_closer is None:
            return
        sp = self._spenders
        if len(sp) >= self._reads and f.place > sp[-1]:
            f.first_closer = None  # the analysis' reads are spent before it gets to this frame
            return
        if f.asked and f.file is None and "metrics.json" in (f.first_closer.files or ()):
            import bisect  # here: most starts never get this far

            bisect.insort(sp, f.place)
            if len(sp) > self._reads:
                sp.pop()
            del self.metrics_events[max(0, self._reads - len(sp)):]


def timeline_fold(run: RunModel) -> TimelineFold:
    """The run's fold: the one its headless load fed, else one over its events."""
    fold = getattr(run, "fold", None)
    if fold is not None:
        return fold
    fold = TimelineFold()
    fold.bind(run)
    add = fold.add
    for ev in run.events:
        add(ev)
    return fold


# -- the analysis -----------------------------------------------------------------------------------
