"""Side-by-side (or unified) diff view that stays fast on 20k-line graphs.

Line API: each visible row is built on demand from a precomputed :class:`~magi_tui.model.diff.Diff`;
syntax highlighting and the within-line change marks are computed per visible row and cached. Each
side carries a marker column (``-`` removed, ``+`` added, ``~`` changed) so the diff reads the same with
no colour. ``]`` / ``[`` jump between hunks, ``u`` toggles unified, left/right scroll both sides.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from magi_format.text import literal
from magi_tui.model.diff import Diff, Row, intraline
from magi_tui.ui.actions import bindings, vim_bindings

MARK = {"equal": " ", "replace": "~", "delete": "-", "insert": "+", "fold": " "}


def _display(line: str) -> str:
    """A diff line as shown: tabs expanded, control / bidi / surrogate characters as escapes."""
    return literal(line.expandtabs(4))


@lru_cache(maxsize=4096)
def _highlight(line: str, language: str | None) -> Text:
    text = _display(line)
    if not language:
        return Text(text)
    try:
        out = Syntax(text, language, theme="ansi_dark").highlight(text)
        out.rstrip()
        return out
    except Exception:
        return Text(text)


class DiffView(ScrollView, can_focus=True):
    BINDINGS = [
        *bindings("diff"),
        *vim_bindings(down="scroll_down", up="scroll_up", top="scroll_home", bottom="scroll_end",
                      left="shift(-8)", right="shift(8)", page_up="page_up", page_down="page_down",
                      arrows=True),
    ]
    COMPONENT_CLASSES = {"diff--removed", "diff--added", "diff--removed-word", "diff--added-word",
                         "diff--gutter", "diff--fold", "diff--current"}
    DEFAULT_CSS = """
    DiffView { background: $surface; }
    DiffView > .diff--removed { background: $error 20%; }
    DiffView > .diff--added { background: $success 20%; }
    DiffView > .diff--removed-word { background: $error 55%; text-style: bold; }
    DiffView > .diff--added-word { background: $success 55%; text-style: bold; }
    DiffView > .diff--gutter { color: $text-muted; }
    DiffView > .diff--fold { color: $text-muted; text-style: italic; }
    DiffView > .diff--current { text-style: underline; }
    """

    unified = reactive(False)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.diff: Diff | None = None
        self.language: str | None = None
        self.x = 0
        self.hunk_index = -1

    def set_diff(self, diff: Diff, left_title: str = "", right_title: str = "", *,
                 language: str | None = None) -> None:
        self.diff = diff
        self.language = language
        self.left_title = left_title
        self.right_title = right_title
        self.hunk_index = -1
        self._resize()
        self.refresh()

    @property
    def rows(self) -> list[Row]:
        if self.diff is None:
            return []
        return self.diff.unified if self.unified else self.diff.rows

    @property
    def hunks(self) -> list[int]:
        if self.diff is None:
            return []
        return self.diff.unified_hunks if self.unified else self.diff.hunks

    def _resize(self) -> None:
        self.virtual_size = Size(self.size.width or 80, len(self.rows))

    def watch_unified(self) -> None:
        top = self.hunks[self.hunk_index] if 0 <= self.hunk_index < len(self.hunks) else 0
        self._resize()
        self.scroll_to(y=top, animate=False)
        self.refresh()

    # -- rendering -----------------------------------------------------------------------------
    def _side(self, no: int | None, text: str, kind: str, spans: list[tuple[int, int]], width: int,
              gw: int, side: str) -> list[Segment]:
        gutter_style = self.get_component_rich_style("diff--gutter")
        if kind == "fold":
            return []
        line_style = Style()
        word_style = Style()
        if kind in ("delete", "replace") and side == "left":
            line_style = self.get_component_rich_style("diff--removed")
            word_style = self.get_component_rich_style("diff--removed-word")
        elif kind in ("insert", "replace") and side == "right":
            line_style = self.get_component_rich_style("diff--added")
            word_style = self.get_component_rich_style("diff--added-word")
        mark = MARK[kind] if no is not None else " "
        if kind == "replace":
            mark = "-" if side == "left" else "+"
        if kind == "delete" and side == "right" or kind == "insert" and side == "left":
            mark = " "
        segs = [Segment(f"{no if no is not None else '':>{gw}} ", gutter_style), Segment(mark + " ", line_style)]
        body = _highlight(text, self.language).copy() if no is not None else Text("")
        for a, b in spans:
            body.stylize(word_style, a, b)
        body.stylize(line_style)
        avail = max(1, width - gw - 3)
        strip = Strip(list(body.render(self.app.console))).crop_extend(self.x, self.x + avail, line_style)
        return segs + list(strip)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        rows = self.rows
        i = self.scroll_offset.y + y
        if self.diff is None or i >= len(rows):
            return Strip.blank(width, base)
        row = rows[i]
        n = max((r.left_no or 0) for r in rows[-50:]) if rows else 0
        gw = max(3, len(str(max(n, len(rows)))))
        if row.kind == "fold":
            t = Text(f"{'':>{gw}}   ⋯ {row.folded} unchanged line{'s' if row.folded != 1 else ''}",
                     style=self.get_component_rich_style("diff--fold"))
            return Strip(list(t.render(self.app.console))).crop_extend(0, width, base).apply_style(base)
        if self.unified:
            if row.kind == "insert":
                segs = self._side(row.right_no, row.right, "insert", [], width, gw, "right")
            elif row.kind == "delete":
                segs = self._side(row.left_no, row.left, "delete", [], width, gw, "left")
            else:
                segs = self._side(row.left_no, row.left, "equal", [], width, gw, "left")
            return Strip(segs).crop_extend(0, width, base).apply_style(base)
        half = (width - 1) // 2
        lspans, rspans = self._spans(row) if row.kind == "replace" else ([], [])
        left = Strip(self._side(row.left_no, row.left, row.kind, lspans, half, gw, "left")).crop_extend(0, half, base)
        right = Strip(self._side(row.right_no, row.right, row.kind, rspans, width - half - 1, gw, "right"))
        right = right.crop_extend(0, width - half - 1, base)
        sep = Segment("│", self.get_component_rich_style("diff--gutter"))
        return Strip([*left, sep, *right], width).apply_style(base)

    @staticmethod
    def _spans(row: Row) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """The changed parts of a replace row, in the shown text (escapes and expanded tabs change
        the offsets of the raw line)."""
        if row._spans is None:
            row._spans = intraline(_display(row.left), _display(row.right))
        return row._spans

    # -- actions -------------------------------------------------------------------------------
    def action_hunk(self, direction: int) -> None:
        hunks = self.hunks
        if not hunks:
            self.app.notify("No changes: the two sides are identical." if self.diff and self.diff.identical
                            else "No hunks.", timeout=3)
            return
        if self.hunk_index < 0:
            top = self.scroll_offset.y
            nxt = next((k for k, h in enumerate(hunks) if h >= top), len(hunks) - 1)
            if direction < 0:
                nxt = max(0, nxt - 1)
        else:
            nxt = self.hunk_index + direction
        if not 0 <= nxt < len(hunks):
            self.app.notify("last hunk" if direction > 0 else "first hunk", timeout=2)
            return
        self.hunk_index = nxt
        self.scroll_to(y=max(0, hunks[nxt] - 2), animate=False)
        self.refresh()

    def action_toggle_unified(self) -> None:
        self.unified = not self.unified

    def action_shift(self, delta: int) -> None:
        self.x = max(0, self.x + delta)
        self.refresh()

    def on_resize(self) -> None:
        self._resize()
