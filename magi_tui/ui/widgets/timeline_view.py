"""The flat timeline: every event in file order with relative time and the gap before it.

Answers the seed's first triage question — did things happen in the expected order? — at any size:
a Line-API ``ScrollView`` that renders only the visible rows from the model's event list (no widget
per row, no up-front measuring), so 100k events cost nothing until they are on screen.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from magi_format.text import fmt_ms, literal
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.labels import MARKS
from magi_tui.ui.messages import EventMessage

GAP_WARN_S = 1.0


class TimelineView(ScrollView, can_focus=True):
    """Virtual list of events; Enter posts :class:`TimelineView.Selected`."""

    BINDINGS = [
        *vim_bindings(down="cursor(1)", up="cursor(-1)", top="jump(0)", bottom="jump(-1)",
                      page_up="page(-1)", page_down="page(1)", arrows=True),
        *bindings("timeline"),
    ]

    COMPONENT_CLASSES = {"timeline--cursor", "timeline--gap", "timeline--failed", "timeline--dim"}

    DEFAULT_CSS = """
    TimelineView { background: $surface; }
    TimelineView > .timeline--cursor { background: $accent 40%; }
    TimelineView:focus > .timeline--cursor { background: $accent; color: $text; }
    TimelineView > .timeline--gap { color: $warning; }
    TimelineView > .timeline--failed { color: $error; text-style: bold; }
    TimelineView > .timeline--dim { color: $text-muted; }
    """

    cursor = reactive(0, always_update=True)

    class Selected(EventMessage):
        """Enter on a row: show this event in the tree."""

    class Highlighted(EventMessage):
        """The cursor moved onto this event."""

    def __init__(self, run: RunModel, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run
        self._recovered: set[int] = set()
        self.follow = False

    def on_mount(self) -> None:
        self.refresh_size()

    def refresh_size(self, recovered: list | None = None) -> None:
        """Follow the model's length. ``recovered``: the failures an update found recovered (added to
        what is marked, O(update)); None: marks redone from the whole triage (a load, a reset)."""
        if recovered is None:
            self._recovered = {f.event.seq for f in self.run.triage.failures if f.recovered}
        else:
            self._recovered.update(f.event.seq for f in recovered)
        self.virtual_size = Size(160, len(self.run.events))
        if self.follow and self.run.events:
            self.cursor = len(self.run.events) - 1
            self._scroll_to_cursor()
        self.refresh()

    # -- rendering -----------------------------------------------------------------------------
    def _row(self, i: int, width: int) -> Text:
        events = self.run.events
        ev = events[i]
        t0 = self.run.started
        rel = (ev.timestamp - t0) if (ev.timestamp is not None and t0 is not None) else None
        gap = None
        before = events[i - 1].timestamp if i > 0 else None
        if ev.timestamp is not None and before is not None:
            gap = ev.timestamp - before
        t = Text(no_wrap=True, end="")
        t.append(f"#{ev.index:04d} " if ev.index >= 0 else "#---- ", style="dim")
        t.append(f"{'+' + fmt_ms(rel * 1000) if rel is not None else '-':>9} ", style="dim")
        if gap is not None and gap >= GAP_WARN_S:
            t.append(f"gap {fmt_ms(gap * 1000):>7} ", style="bold yellow")
        elif gap is not None:
            t.append(f"Δ{fmt_ms(gap * 1000):>10} ", style="dim")
        else:
            t.append(" " * 12)
        if ev.session:
            t.append(f"s{ev.session} ", style="magenta")
        kind = ev.kind
        name_style = "bold red" if kind == "failed" and ev.seq not in self._recovered else ""
        t.append(literal(ev.name, 90), style=name_style)
        if kind:
            key = "recovered" if kind == "failed" and ev.seq in self._recovered else kind
            mark, style = MARKS.get(key, ("", ""))
            t.append("  " + mark, style=style)
        if ev.duration_ms is not None:
            t.append(f"  {fmt_ms(ev.duration_ms)}", style="dim")
        return t

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        i = scroll_y + y
        width = self.scrollable_content_region.width
        if i >= len(self.run.events):
            return Strip.blank(width, self.rich_style)
        text = self._row(i, width)
        if i == self.cursor:
            text.stylize(self.get_component_rich_style("timeline--cursor"))
        segments = list(text.render(self.app.console))
        strip = Strip(segments, text.cell_len).crop_extend(scroll_x, scroll_x + width, self.rich_style)
        return strip.apply_style(self.rich_style)

    # -- cursor --------------------------------------------------------------------------------
    def _scroll_to_cursor(self) -> None:
        h = self.scrollable_content_region.height or 1
        y = self.scroll_offset.y
        if self.cursor < y:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= y + h:
            self.scroll_to(y=self.cursor - h + 1, animate=False)

    def watch_cursor(self, old: int, new: int) -> None:
        n = len(self.run.events)
        if n == 0:
            return
        if not 0 <= new < n:
            self.cursor = max(0, min(n - 1, new))
            return
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self.run.events[new]))

    def action_cursor(self, delta: int) -> None:
        self.follow = False
        self.cursor = self.cursor + delta

    def action_page(self, direction: int) -> None:
        self.follow = False
        self.cursor = self.cursor + direction * max(1, self.scrollable_content_region.height - 1)

    def action_jump(self, where: int) -> None:
        self.cursor = 0 if where == 0 else len(self.run.events) - 1

    def action_select(self) -> None:
        if self.run.events:
            self.post_message(self.Selected(self.run.events[self.cursor]))

    def show_event(self, ev: Event) -> None:
        self.cursor = ev.seq
