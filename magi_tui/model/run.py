"""``RunModel``: one run directory read into events, spans, tree and triage, kept up to date.

This is the single object both the headless commands and the app use. ``update()`` reads whatever
was appended since last time and returns a :class:`RunUpdate` describing the change, so a live view
can apply it incrementally; after a reset (file truncated / replaced) the caller rebuilds; a deleted file keeps what was read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field

from magi_format.layout import TIMELINE_DIR, TIMELINE_FILE
from magi_format.runname import parse_run_name
from magi_tui.model.events import Event, KeptAttrs, Span
from magi_tui.model.pairing import Pairer
from magi_tui.model.sources.debugdir import debug_run_name, debug_run_root
from magi_tui.model.sources.files import read_head
from magi_tui.model.sources.layout import event_files, event_folder_rel
from magi_tui.model.sources.reader import Malformed, Reader, ReadResult, TimelineReader
from magi_tui.model.sources.torchtrace import is_trace_log, log_run_name
from magi_tui.model.tree import Group, RunTree
from magi_tui.model.triage import Failure, Triage, TriageBuilder, raised_into_program

if TYPE_CHECKING:
    from magi_tui.model.sources.session import Outcome, TracerInfo

TIMELINE = (TIMELINE_DIR, TIMELINE_FILE)
#: a streamed load's read: small enough that its events are still in the CPU's caches when they are folded
#: in and dropped (4 MB cost 0.7 s more CPU on a 100k-frame log's 400k events than 256 KB)
STREAM_READ_BYTES = 256 << 10


class RunUpdate(Struct):
    events: list[Event] = field(default_factory=list)
    #: the tree groups that got new items, by ``id``, in the order first touched (a view brings each up to
    #: its ``len(items)``); none while the model has no tree (a headless :meth:`RunModel.load` builds none
    #: until ``tree`` is asked for). Groups, not one entry per item: a load shown in a few big updates
    #: held a tuple per event until shown (memory the allocator kept after)
    groups: dict[int, Group] = field(default_factory=dict)
    #: spans that were open and got their end in this update
    closed: list[Span] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    recovered: list[Failure] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    reset: str | None = None
    #: the timeline file (or the whole run dir) disappeared; what was read is kept
    deleted: bool = False

    def __bool__(self) -> bool:
        return bool(self.events or self.malformed or self.reset or self.deleted)

    def merge(self, later: "RunUpdate") -> "RunUpdate":
        """Fold a later update (not a reset) into this one, so a view can show both at once."""
        self.events.extend(later.events)
        self.groups.update(later.groups)
        self.closed.extend(later.closed)
        self.failures.extend(later.failures)
        self.recovered.extend(later.recovered)
        self.malformed.extend(later.malformed)
        self.deleted = self.deleted or later.deleted
        return self


class RunModel:
    """A run directory (``timeline_events/`` and/or ``compiled_functions/``)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        if p.name == TIMELINE_DIR:
            p = p.parent
        elif p.name == TIMELINE_FILE and p.parent.name == TIMELINE_DIR:
            p = p.parent.parent
        self.path = p
        if is_trace_log(p):  # a TORCH_TRACE log: same events, read by magi_tui/model/torchtrace
            from magi_tui.model.sources.torchtrace.reader import TraceLogReader

            self.name_info = log_run_name(p)
            self.reader: Reader = TraceLogReader(p)
        elif (root := debug_run_root(p)) is not None:  # TORCH_COMPILE_DEBUG output: read by model/debugdir
            from magi_tui.model.sources.debugdir.reader import DebugDirReader

            self.path = p = root
            self.name_info = debug_run_name(p)
            self.reader = DebugDirReader(p)
        else:
            self.name_info = parse_run_name(p)
            self.reader = TimelineReader(p.joinpath(*TIMELINE), root=p)
        self._clear()

    def _clear(self) -> None:
        self.events: list[Event] = []
        #: a streamed headless load (``load(fold=...)``): each event is folded in, then dropped unless
        #: triage keeps it; ``events`` stays empty, ``event_count`` counts them
        self.fold: Any = type(self.fold)() if getattr(self, "fold", None) is not None else None
        if self.fold is not None and hasattr(self.fold, "bind"):  # read afresh (a replaced file): bound again
            self.fold.bind(self)
        self._count = 0
        self._first_ts: float | None = None
        self._last_ts: float | None = None
        self.malformed: list[Malformed] = []
        self.pairer = Pairer()
        #: built as events come (a view's ``groups``), or, after :meth:`load`, only when asked for
        self._tree: RunTree | None = RunTree() if getattr(self, "_tree", True) is not None else None
        self.triage_builder = TriageBuilder(self.pairer)

    @property
    def tree(self) -> RunTree:
        """The grouping a tree view shows. A headless :meth:`load` does not build it; it is then built
        here, from the events and spans read, on first use, and kept up to date from then on."""
        if self._tree is None:
            tree = RunTree()
            for ev in self.events:
                span = ev.span
                if span is None:
                    tree.add(ev)
                elif span.first is ev:
                    tree.add(span)
                elif ev.phase == "failed" and span.group is not None:
                    tree.mark_failed(span.group)
            self._tree = tree
        return self._tree

    # -- reading -------------------------------------------------------------------------------
    def update(self, max_bytes: int | None = None) -> RunUpdate:
        return self.ingest(self.reader.read(max_bytes))

    def ingest(self, res: ReadResult) -> RunUpdate:
        """Fold what one ``self.reader.read()`` returned into the model. The read (the parsing) may run in
        another thread; the ingest runs where the model is used (the app's loop), in read order."""
        up = RunUpdate(malformed=res.malformed, reset=res.reset, deleted=res.deleted)
        if res.reset:
            self._clear()
        self.malformed.extend(res.malformed)
        tri = self.triage_builder
        n_fail = len(tri.triage.failures)
        if self.fold is None:
            self.events.extend(res.events)
        before_pairing = tri.before_pairing
        pair = self.pairer.add
        tri_add = tri.add
        closed = up.closed.append
        recovered = up.recovered
        if self._tree is None:  # headless: pairing and triage only (the tree is built if asked)
            fold = self.fold.add if self.fold is not None else None
            for ev in res.events:
                outer = before_pairing(ev) if ev.phase == "failed" else None
                span, created = pair(ev)
                if span is not None and not created:
                    closed(span)
                rec = tri_add(ev, span, outer)
                if rec:
                    recovered.extend(rec)
                if fold is not None:
                    fold(ev)
                    if span is not None and span.end is ev:
                        # streamed: a closed span's events stop pointing at it, so the span and the
                        # events no one keeps go by reference counting (no cycle left to collect)
                        ev.span = None
                        if span.before is not None:
                            span.before.span = None
            if fold is not None:
                self._count += len(res.events)
                if self._first_ts is None:
                    self._first_ts = next((e.timestamp for e in res.events if e.timestamp is not None), None)
                last = next((e.timestamp for e in reversed(res.events) if e.timestamp is not None), None)
                if last is not None:
                    self._last_ts = last
            up.events = res.events
            up.failures = tri.triage.failures[n_fail:]
            return up
        tree = self._tree
        tree_add = tree.add
        touched = up.groups
        last_group = None  # a run's events come a group at a time: written when the group changes
        for ev in res.events:
            outer = before_pairing(ev) if ev.phase == "failed" else None
            span, created = pair(ev)
            if span is None or created:
                group, _ = tree_add(ev if span is None else span)
                if group is not last_group:
                    touched[id(group)] = last_group = group
            else:
                closed(span)
                if ev.phase == "failed" and span.group is not None:
                    tree.mark_failed(span.group)
            rec = tri_add(ev, span, outer)
            if rec:
                recovered.extend(rec)
        up.events = res.events
        up.failures = tri.triage.failures[n_fail:]
        return up

    def load(self, *, fold: Any = None) -> "RunModel":
        """Read everything there is now (the headless commands' entry point).

        No tree is built (``tree`` builds it if a caller asks).

        ``fold`` (``checks.TimelineFold()``; a run dir's timeline only): stream. The file is read a block
        at a time, each event folded into pairing, triage and ``fold`` (what the analysis reads from
        every event) and dropped unless triage keeps it, so memory grows with what the answer holds,
        not with the run: ``events`` stays empty (``event_count`` counts), there is no tree, and only
        the analysis (``checks.analyse``) and the reports read such a model. A closed span's events no
        longer point at it (``ev.span`` None: the fold has read it), so what is dropped goes by
        reference counting."""
        if not self.events and self._tree is not None and not self._tree.sessions:
            self._tree = None
        if fold is not None and self._streams() and not self.events and not self._count:
            self.fold = fold
            bind = getattr(fold, "bind", None)
            if bind is not None:  # the fold reads what the analysis will of each frame as it comes
                bind(self)
            reader = self.reader
            reader.lean = True  # it keeps nothing for the events dropped (a log's: only what is still held)
            while True:
                before = reader.offset
                res = self.update(STREAM_READ_BYTES)
                reset = res.reset
                del res  # the read's events: what the fold and the triage keep is all that holds them
                if reader.streams_lean:
                    reader.settle()
                if reader.offset == before and not reset:
                    break
            return self
        self.update()
        return self

    def _streams(self) -> bool:
        """Whether this run's reader can be read a block at a time and its events dropped: a run dir's
        timeline, a TORCH_TRACE log (its own lines and files stay in the reader; not a TORCH_COMPILE_DEBUG
        folder, read whole)."""
        return type(self.reader) is TimelineReader or self.is_torch_trace

    # -- state ---------------------------------------------------------------------------------
    @property
    def triage(self) -> Triage:
        return self.triage_builder.triage

    @property
    def has_timeline(self) -> bool:
        return self.reader.exists

    @property
    def has_compiled_functions(self) -> bool:
        return (self.path / "compiled_functions").is_dir()

    @property
    def open_spans(self) -> list[Span]:
        """Lifecycles whose ``before`` was never closed (earlier sessions' included)."""
        return self.pairer.all_open

    @property
    def error(self) -> str | None:
        """Why ``timeline.jsonl`` (or the log) cannot be read (a directory, a FIFO, no permission), else None."""
        return self.reader.error

    @property
    def is_torch_trace(self) -> bool:
        """A TORCH_TRACE log (where records without a compile id are AOT / export work of their own)."""
        return type(self.reader).__name__ == "TraceLogReader"

    @property
    def source_name(self) -> str:
        """What the events are read from, as messages name it: ``timeline.jsonl``, else the TORCH_TRACE
        log's (or TORCH_COMPILE_DEBUG folder's) own name."""
        return TIMELINE_FILE if type(self.reader) is TimelineReader else self.path.name

    @property
    def partial_line(self) -> bool:
        return self.reader.partial > 0

    @property
    def status(self) -> str:
        """``ok`` / ``failed`` / ``recovered`` / ``incomplete`` / ``empty``: see :meth:`status_why`."""
        return self.status_why()[0]

    def status_why(self) -> tuple[str, list[str]]:
        """``(status, why incomplete)`` — the one rule, used by the CLI, the runs list and the header.

        ``interrupted``: the program was stopped by Ctrl-C (its session record says so); ``failed``: a
        failure not recovered (a restart whose retry never finished too), an exception of torch.compile's or
        of a compiled entry that reached the program, a recompile-limit hit that raised
        (``FailOnRecompileLimitHit``); ``incomplete``: a compile was cut short (lifecycles left open, the
        tracer stopped, a partial last line, a program killed);
        ``degraded``: it finished, but frame(s) ran eagerly (Dynamo skipped them after a graph break it
        could not resume from, or they reached the recompile limit), or no compile captured a graph with an
        op (the model compiled nothing: it all ran as Python); ``recovered``: restarts or failures,
        all recovered; ``ok``; ``empty``: nothing recorded.
        """
        t = self.triage
        why: list[str] = []
        if t.tracer_stopped:
            reason = next((ln.strip() for ln in str(t.tracer_stopped[0].reason).splitlines() if ln.strip()), "")
            why.append(f"the tracer stopped recording: {reason or 'no reason given'}")
        cut = self.session_cut_short()
        if cut:
            why.append(cut)
        open_spans = self.open_spans
        if open_spans:
            why.append(f"{len(open_spans)} lifecycle(s) never closed (first: #{open_spans[0].first.index} "
                       f"{open_spans[0].first.name})")
        if self.partial_line:
            why.append(f"the last record of {self.source_name} is incomplete")
        outcome = self.outcome
        if outcome is not None and outcome.interrupted:
            return "interrupted", why  # Ctrl-C: whatever was recorded, the run did not finish
        if outcome is not None and outcome.torch_failed:
            return "failed", why  # torch.compile, or a compiled entry, raised into the program
        if not self.event_count:
            return ("incomplete" if self.partial_line else "empty"), why
        if any(not c.recovered for c in t.problems) or any(raised_into_program(i) for i in t.recompile_limit_hits):
            return "failed", why
        if why:
            return "incomplete", why
        if any(not r.recovered for r in t.restarts) or t.unrecovered_cascades:
            return "failed", why
        if t.fallbacks or t.recompile_limit_hits or t.compiled_nothing:
            return "degraded", why  # it finished, with frame(s) that ran eagerly (or nothing compiled at all)
        if t.restarts or t.cascades:
            return "recovered", why
        return "ok", why

    def findings_signature(self, open_spans: int = 100) -> tuple:
        """What changes when a finding of the run does (a view redoes its analysis then): the triage's own
        :meth:`~magi_tui.model.triage.Triage.signature`, the unreadable lines, a cut last line, whether there are
        events, and the first ``open_spans`` lifecycles still open."""
        return (self.triage.signature(), len(self.malformed), self.partial_line, bool(self.events),
                tuple(s.first.seq for s in self.open_spans[:open_spans]))

    def session_cut_short(self) -> str | None:
        """Why the tracer's session record (:mod:`magi_tui.model.sources.session`) marks this run cut short, or None.
        Read until it says the session ended (then it never changes); only runs of ours have one."""
        if not isinstance(self.reader, TimelineReader):
            return None
        rec = getattr(self, "_session", None)
        if rec is None or rec.ended is None:
            from magi_tui.model.sources.session import read_session

            rec = self._session = read_session(self.path)
        return rec.cut_short() if rec is not None else None

    @property
    def outcome(self) -> "Outcome | None":
        """How the traced program ended (its session record's ``outcome``), or None when not recorded here (a
        TORCH_TRACE log, an upstream run, a run of an older tracer, a program still running or killed)."""
        self.session_cut_short()
        rec = getattr(self, "_session", None)
        return rec.outcome if rec is not None else None

    @property
    def tracer_info(self) -> "TracerInfo | None":
        """What the tracer said of its own recording (dropped records, hooks its torch lacked), or None (not a
        run of our tracer, or one of an older tracer)."""
        self.session_cut_short()
        rec = getattr(self, "_session", None)
        return rec.tracer if rec is not None else None

    def outcome_unknown(self) -> str | None:
        """Why :attr:`outcome` is not known here (a sentence), or None when it is, or when the program still
        runs (it will be written at its end)."""
        if self.outcome is not None:
            return None
        if not isinstance(self.reader, TimelineReader):
            return "a debug folder" if self.path.is_dir() else "a TORCH_TRACE log"
        rec = getattr(self, "_session", None)
        if rec is None:
            return "an upstream run"
        if rec.ended is None:
            return None if rec.writer_alive() else "killed before the tracer wrote its end"
        return "an older tracer's run"

    @property
    def session_ended(self) -> bool:
        """The tracer closed this run (its program finished): nothing more will be written."""
        self.session_cut_short()
        rec = getattr(self, "_session", None)
        return rec is not None and rec.ended is not None

    @property
    def event_count(self) -> int:
        """Events read (a streamed load keeps no list of them)."""
        return self._count if self.fold is not None else len(self.events)

    @property
    def started(self) -> float | None:
        if self.fold is not None:
            return self._first_ts
        for ev in self.events:
            if ev.timestamp is not None:
                return ev.timestamp
        return None

    @property
    def duration_s(self) -> float | None:
        start = self.started
        if start is None:
            return None
        if self.fold is not None:
            return max(0.0, self._last_ts - start) if self._last_ts is not None else None
        for ev in reversed(self.events):
            if ev.timestamp is not None:
                return max(0.0, ev.timestamp - start)
        return None

    def event(self, seq: int) -> Event:
        return self.events[seq]

    def span_of(self, ev: Event) -> Span | None:
        return ev.span

    def line(self, ev: Event) -> dict[str, Any]:
        """The event's whole JSON object, re-read from its line (``{}`` if the file changed under us).

        Only what the tree and triage need is kept in memory; display-only fields (``datetime``,
        ``relative_time``, most attribute maps) are read back here when an event is shown."""
        raw = self.reader.event_line_bytes(ev)
        if raw is None:
            return {}
        import json  # here: a headless start reads no event back (json's import is paid only then)

        try:
            obj = json.loads(raw)
        except ValueError:
            return {}
        if not isinstance(obj, dict) or obj.get("name") != ev.name:
            return {}
        return obj

    def attributes(self, ev: Event) -> dict[str, Any]:
        """The event's full attribute map (read back from its line unless it was kept whole; what was
        kept of it if the line cannot be read back)."""
        kept = ev.attrs
        if kept is not None and type(kept) is not KeptAttrs:
            return kept
        attrs = self.line(ev).get("attributes")
        return attrs if isinstance(attrs, dict) else (kept or {})

    def files(self, ev: Event) -> list[tuple[str, Path | None, str | None]]:
        if self.reader.holds_event_files:  # a log-backed run holds its events' files
            return self.reader.event_files(ev)
        return event_files(self.path, ev)

    def file_text(self, ev: Event, name: str, limit: int) -> str | None:
        """The first ``limit`` bytes of the event's file ``name``, decoded; None when it has none or it
        cannot be read. A log-backed run reads it from what its reader holds, writing no copy (the
        analysis reads metrics of every compile: 100k of them in a long log)."""
        if self.reader.reads_file_text:
            return self.reader.file_text(ev, name, limit)
        root = None
        if self.has_event_folders:
            root = self.path
            try:  # not there (a run copied without files/): said by one lstat, before the safe path walk
                os.lstat(os.path.join(self.path, event_folder_rel(ev), name))
            except (OSError, ValueError):
                return None
        for fname, path, _problem in self.files(ev):
            if fname == name and path is not None:
                return read_head(path, limit, root)[0]
        return None

    @property
    def has_event_folders(self) -> bool:
        """Whether events' files live in ``timeline_events/files/`` folders (a run dir), rather than in a
        log the reader holds them from (a TORCH_TRACE log, a TORCH_COMPILE_DEBUG folder)."""
        return not self.reader.holds_event_files

    def where(self, ev: Event, folder: str | None) -> str | None:
        """Where a user looks for an event: its folder in a run dir, ``LOG:line`` for a log-backed run."""
        if not self.has_event_folders:
            return f"{self.path}:{ev.line_no}"
        return str(self.path / folder) if folder else None

    @property
    def files_root(self) -> Path:
        """The directory every file of this run's events lies inside (the run dir; for a log, the
        folder its reader keeps the payloads in): file views and diffs read nothing outside it."""
        root = self.reader.files_root
        return root if root is not None else self.path

    def folder_rel(self, ev: Event) -> str:
        return event_folder_rel(ev)

    def __repr__(self) -> str:  # pragma: no cover
        return f"RunModel({str(self.path)!r}, {self.event_count} events, {self.status})"
