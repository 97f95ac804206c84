"""The detail pane: the selected event's attributes and its files.

Attributes are a two-column table of literal text; files are tabs over one shared file viewer (one
widget re-pointed at another file is far cheaper than a widget per tab). For a lifecycle span, the
files of its ``before`` and of its ``after``/``failed`` are both offered, so a pass's input and
output graph are one key apart. A file the writer has not written yet says so and appears when it does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static, Tab, Tabs

from magi_format.text import fmt_ms, literal
from magi_tui.model.events import Event, Span
from magi_tui.model.run import RunModel
from magi_tui.model.tree import CompileNode, Group
from magi_tui.ui.actions import bindings
from magi_tui.ui.labels import MARKS, attr_duration, failed_mark
from magi_tui.ui.widgets.file_view import FileView

MAX_ATTR_VALUE = 400
#: files of an event that are never the graph ``d`` compares (a stack against a traceback says nothing)
NOT_GRAPHS = frozenset({"traceback.txt", "user_stack.txt", "graph_break.txt", "recompile_reasons.txt"})
FAILURE_KEYS = ("exception_type", "exception_message", "error_type", "error_message", "fail_type", "fail_reason")
#: attributes shown before the rest: what failed, then why an event happened
WHY_FIRST = (*FAILURE_KEYS, "gb_id", "gb_type", "reason", "reasons", "restart_reason", "user_frame",
             "source_line")


@dataclass
class FileRef:
    """One file tab: which event it belongs to and where it is (None when missing / refused)."""

    event: Event
    name: str
    path: Path | None
    problem: str | None
    phase_label: str
    root: Path | None = None  # what the file is read inside (the run's files root)

    @property
    def title(self) -> str:
        return f"{self.event.index:04d} {self.event.name} · {self.name}"


def graph_file(refs: list[FileRef], ev: Event, *, graphs_only: bool = False) -> FileRef | None:
    """The graph dump of one event: ``before_<lc>_graph*``, ``after_lifecycle_graph*``, ... else any
    file with ``graph`` in its name, else (unless ``graphs_only``: what ``d`` compares) the first file."""
    own = [r for r in refs if r.event is ev and r.name != "attributes.json"]
    if not own:
        return None
    preds = [lambda n: n.startswith(f"{ev.phase}_") and "graph" in n, lambda n: "graph" in n,
             lambda n: not graphs_only or (n not in NOT_GRAPHS and not n.endswith(".json"))]
    for pred in preds:
        for r in own:
            if pred(r.name):
                return r
    return None


class EventDetail(Vertical):
    """Shows one tree selection (event, span, group or compile)."""

    BINDINGS = [
        *bindings("detail"),
    ]

    def __init__(self, run: RunModel, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run
        self.refs: list[FileRef] = []
        self.current_event: Event | None = None
        self.current_span: Span | None = None
        self._shown: tuple | None = None
        self._opened: FileRef | None = None
        self._gen = 0  # tab ids must be unique while old tabs are still being removed
        #: the attributes table shows a duration rounded: the raw map's tab (attributes.json) is offered
        self.rounded = False

    def compose(self) -> ComposeResult:
        yield Static(id="detail-header")
        with VerticalScroll(id="detail-attrs"):
            yield Static(id="detail-attrs-table")
        yield Tabs(id="detail-tabs")
        yield FileView(id="detail-file")

    # -- public --------------------------------------------------------------------------------
    def show(self, kind: str, obj: Any, *, force: bool = False) -> None:
        key = (kind, id(obj), getattr(obj, "end", None) is not None if kind == "span" else None)
        if key == self._shown and not force:
            return
        self._shown = key
        if kind in ("event", "phase"):
            self._show_event(obj, self.run.span_of(obj))
        elif kind == "span":
            ev = obj.end or obj.before
            self._show_event(ev, obj)
        elif kind in ("group", "bucket"):
            self._show_group(obj)
        elif kind == "compile":
            self._show_compile(obj)
        else:
            self._show_text(Text(""))

    def refresh_files(self) -> None:
        """Re-list files (a live run writes an event's folder after its line)."""
        if self.current_event is not None and any(r.path is None and r.problem and "not written" in r.problem
                                                  for r in self.refs):
            self._shown = None
            self.show("span" if self.current_span else "event", self.current_span or self.current_event)

    @property
    def current_file(self) -> FileRef | None:
        tabs = self.query_one("#detail-tabs", Tabs)
        active = tabs.active
        parts = active.split("-") if active else []
        if len(parts) != 3 or parts[1] != str(self._gen):
            # no tab active (Tabs can be left so after quick re-shows) or one of a previous selection:
            # the file on view is the answer, when it belongs to this event
            return self._opened if any(r is self._opened for r in self.refs) else None
        try:
            return self.refs[int(parts[2])]
        except (ValueError, IndexError):
            return None

    # -- rendering -----------------------------------------------------------------------------
    def _header(self, ev: Event, span: Span | None) -> Text:
        t = Text(end="")
        t.append(f"#{ev.index:04d} ", style="dim")
        t.append(literal(ev.name), style="bold")
        if span is not None:
            status = span.status
            failure = next((f for f in self.run.triage.failures if f.event is span.end), None) \
                if status == "failed" else None
            eager = failure is not None and failure.cascade is not None and failure.cascade.fallback
            mk = {"failed": failed_mark(failure is not None and failure.recovered, eager), "open": "open",
                  "skip": "skip"}.get(status, "ok")
            mark, style = MARKS[mk]
            t.append(f"  {mark}", style=style)
            exc = (span.end.summary or {}).get("exception_type") if status == "failed" and span.end else None
            if exc:
                t.append(f" {literal(exc, 60)}", style=style)
            if span.duration_ms is not None:
                t.append(f"  {fmt_ms(span.duration_ms)}", style="dim")
            if span.before is not None and span.end is not None:
                t.append(f"  (#{span.before.index} → #{span.end.index})", style="dim")
        elif ev.kind:
            mark, style = MARKS.get(ev.kind, ("", ""))
            t.append(f"  {mark}", style=style)
        t.append("\n")
        obj = self.run.line(ev)
        dt, rt = obj.get("datetime"), obj.get("relative_time")
        meta = [literal(dt) if isinstance(dt, str) else "", f"+{literal(rt)}" if isinstance(rt, str) and rt else "",
                f"scope {literal(ev.scope)}", f"compile {literal(ev.compile_id)}" if ev.compile_id else "",
                f"session {ev.session}" if ev.session else "", f"line {ev.line_no}"]
        t.append("  ".join(m for m in meta if m), style="dim")
        return t

    def _attrs_table(self, attrs: dict[str, Any]) -> Table:
        """The attributes, what failed and why first; a duration reads as one (``duration_ms 9.0ms``: its
        raw number is in the ``attributes.json`` tab, which ``rounded`` then says to offer)."""
        table = Table.grid(padding=(0, 1))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column(overflow="fold")
        self.rounded = False
        # what failed and why first, at every size: the rest of the map may be cut at 80x24
        ordered = [k for k in WHY_FIRST if k in attrs] + [k for k in attrs if k not in WHY_FIRST]
        for k in ordered:
            v = attrs[k]
            shown = attr_duration(k, v) if isinstance(k, str) else None
            if shown is not None:
                self.rounded = True
                val = shown
            elif isinstance(v, str):
                val = literal(v, MAX_ATTR_VALUE, multiline=True)  # a traceback keeps its lines
            else:
                val = literal(json.dumps(v, ensure_ascii=False, default=str), MAX_ATTR_VALUE)
            style = "red" if k in FAILURE_KEYS else ""
            table.add_row(Text(literal(k)), Text(val, style=style))
        if not attrs:
            table.add_row(Text("(no attributes)", style="dim"), Text(""))
        return table

    def _show_event(self, ev: Event, span: Span | None) -> None:
        self.current_event = ev
        self.current_span = span
        self.query_one("#detail-header", Static).update(self._header(ev, span))
        self.query_one("#detail-attrs", VerticalScroll).display = True
        self.query_one("#detail-attrs-table", Static).update(self._attrs_table(self.run.attributes(ev)))
        # the selected event's own files first (its graph before the rest), then its partner's;
        # attributes.json is left out (the table above shows the same map) unless the table rounded a
        # duration: then the selected event's file comes last, with the raw numbers
        events = [ev] + [e for e in (span.events if span is not None else []) if e is not ev]
        refs: list[FileRef] = []
        raw: FileRef | None = None
        for e in events:
            own = []
            for name, path, problem in self.run.files(e):
                ref = FileRef(e, name, path, problem, e.phase or "", self.run.files_root)
                if name != "attributes.json":
                    own.append(ref)
                elif e is ev and self.rounded and path is not None:
                    raw = ref
            g = graph_file(own, e)
            if g is not None:
                own.remove(g)
                own.insert(0, g)
            refs.extend(own)
        if raw is not None:
            refs.append(raw)
        self._set_refs(refs, prefer=ev)

    def _set_refs(self, refs: list[FileRef], prefer: Event | None) -> None:
        self.refs = refs
        tabs = self.query_one("#detail-tabs", Tabs)
        tabs.clear()
        fv = self.query_one("#detail-file", FileView)
        if not refs:
            tabs.display = False
            fv.show_message("This event has no files.")
            return
        tabs.display = True
        self._gen += 1
        multi_phase = len({r.event.seq for r in refs}) > 1
        for i, r in enumerate(refs):
            label = Text(end="")
            if multi_phase:
                label.append(f"{literal(r.phase_label)}:", style="dim")
            label.append(literal(r.name, 40))
            if r.path is None:
                label.append(" ∅", style="red")
            tabs.add_tab(Tab(label, id=f"file-{self._gen}-{i}"))
        self._open(refs[0])  # the first tab is the one Tabs activates

    def _open(self, ref: FileRef) -> None:
        self._opened = ref
        fv = self.query_one("#detail-file", FileView)
        if ref.path is None:
            fv.show_message(f"{ref.name}: {ref.problem or 'missing'}")
        else:
            fv.open_path(ref.path, root=ref.root or self.run.files_root)

    @on(Tabs.TabActivated)
    def handle_tabs_tab_activated(self, message: Tabs.TabActivated) -> None:
        message.stop()
        tab_id = message.tab.id or "" if message.tab is not None else ""
        parts = tab_id.split("-")
        if len(parts) != 3 or parts[1] != str(self._gen) or int(parts[2]) >= len(self.refs):
            return  # a tab of a previous selection, activated on its way out
        ref = self.refs[int(parts[2])]
        if ref is not self._opened:
            self._open(ref)

    def _show_text(self, text: Text) -> None:
        self.current_event = None
        self.current_span = None
        self.refs = []
        self.query_one("#detail-header", Static).update(text)
        self.query_one("#detail-attrs", VerticalScroll).display = False
        tabs = self.query_one("#detail-tabs", Tabs)
        tabs.clear()
        tabs.display = False
        self.query_one("#detail-file", FileView).show_message("Select an event to see its attributes and files.")

    def _show_group(self, g: Group) -> None:
        t = Text(literal(g.scope), style="bold", end="")
        if g.compile_id:
            t.append(f"  compile {literal(g.compile_id)}", style="cyan")
        t.append(f"\n{len(g.items)} items", style="dim")
        if g.failed:
            t.append(f", {g.failed} failed", style="red")
        self._show_text(t)

    def _show_compile(self, c: CompileNode) -> None:
        t = Text(f"compile {literal(c.compile_id or '-')}", style="bold", end="")
        if c.frame:
            t.append(f"  frame {literal(c.frame)}")
        t.append(f"\n{len(c.groups)} scope group(s), {c.events_count()} items", style="dim")
        self._show_text(t)

    def action_next_file(self) -> None:
        self.query_one("#detail-tabs", Tabs).action_next_tab()

    def action_prev_file(self) -> None:
        self.query_one("#detail-tabs", Tabs).action_previous_tab()
