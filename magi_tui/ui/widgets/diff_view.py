"""Side-by-side (or unified) diff view that stays fast on 20k-line graphs.

Line API: each visible row is built on demand from a precomputed :class:`~magi_tui.model.analysis.diff.Diff`;
syntax highlighting and the within-line change marks are computed per visible row and cached. Each
side carries a marker column (``-`` removed, ``+`` added) and the changed tokens of a changed line are
underlined (bold, on a stronger background), so the diff reads the same with no colour (``NO_COLOR``
keeps underline). ``]`` / ``[`` jump between hunks, left/right scroll both sides, Home / End (g / G)
also scroll back to the first column.

Layout: side by side when each side has at least :data:`READABLE_SIDE` columns of text, else unified;
decided again on every resize until the user presses ``u`` (then their choice sticks). Two identical
sides are shown once, as one column.

Cost: the vertical scrollbar is always there (mounted with the view, before the diff arrives, so the
diff's arrival is one layout and one paint rather than a second pass for a new scrollbar, and the width
that chooses the layout never changes under it); there is no horizontal scrollbar (``x`` scrolls both
sides); the widget's styles are looked up once per style change, and plain (not syntax-highlighted)
lines go to segments directly, not through a ``Text`` per line. ``rich.syntax`` (and pygments under
it) is imported by the first highlighted line: a graph diff (``.txt``) never needs it, and ``d`` would
import it between the key and the paint.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from magi_format.text import literal
from magi_tui.model.analysis.diff import Diff, Row, intraline
from magi_tui.ui.actions import bindings, vim_bindings

MARK = {"equal": " ", "replace": "~", "delete": "-", "insert": "+", "fold": " "}
#: columns of text each side needs for side by side (else the unified layout is chosen): 120 columns and up
#: are side by side (a graph's long lines scroll sideways, both sides at once), 80 is unified
READABLE_SIDE = 40


def _display(line: str) -> str:
    """A diff line as shown: tabs expanded, control / bidi / surrogate characters as escapes."""
    return literal(line.expandtabs(4))


def _plain_segments(text: str, spans: list[tuple[int, int]], style: Style, word_style: Style) -> list[Segment]:
    """One shown line as segments: ``style``, the changed tokens (``spans``) in ``word_style``."""
    if not spans:
        return [Segment(text, style)]
    out, at = [], 0
    for a, b in sorted(spans):
        if a > at:
            out.append(Segment(text[at:a], style))
        if b > max(a, at):
            out.append(Segment(text[max(a, at):b], word_style))
        at = max(at, b)
    if at < len(text):
        out.append(Segment(text[at:], style))
    return out


@lru_cache(maxsize=4096)
def _highlight(line: str, language: str | None) -> Text:
    text = _display(line)
    if not language:
        return Text(text)
    from rich.syntax import Syntax  # only a highlighted diff pays for it (see the module doc)

    try:
        out = Syntax(text, language, theme="ansi_dark").highlight(text)
        out.rstrip()
        return out
    except Exception:
        return Text(text)


class DiffView(ScrollView, can_focus=True):
    BINDINGS = [
        *bindings("diff"),
        *vim_bindings(down="scroll_down", up="scroll_up", top="to_top", bottom="to_bottom",
                      left="shift(-8)", right="shift(8)", page_up="page_up", page_down="page_down",
                      arrows=True),
    ]
    COMPONENT_CLASSES = {"diff--removed", "diff--added", "diff--removed-word", "diff--added-word",
                         "diff--gutter", "diff--fold", "diff--current"}
    DEFAULT_CSS = """
    DiffView { background: $surface; overflow-x: hidden; overflow-y: scroll; }
    DiffView > .diff--removed { background: $error 20%; }
    DiffView > .diff--added { background: $success 20%; }
    DiffView > .diff--removed-word { background: $error 60%; text-style: bold underline; }
    DiffView > .diff--added-word { background: $success 60%; text-style: bold underline; }
    DiffView > .diff--gutter { color: $text-muted; }
    DiffView > .diff--fold { color: $text-muted; text-style: italic; }
    DiffView > .diff--current { text-style: underline; }
    """

    unified = reactive(False)

    class NormaliseToggled(Message):
        """The user asked for the noise toggle (the screen recomputes the diff)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.diff: Diff | None = None
        self.language: str | None = None
        self.x = 0
        self.hunk_index = -1
        #: the user chose the layout with ``u``: no longer decided by the width
        self.layout_chosen = False
        self._gw = 3
        self._styles: dict[str, Style] | None = None
        #: what a fold row hides, one and many (a screen of other things than lines names them)
        self.fold_words = ("unchanged line", "unchanged lines")

    def set_diff(self, diff: Diff, left_title: str = "", right_title: str = "", *,
                 language: str | None = None) -> None:
        """Show ``diff``; a diff replacing another (the noise toggle) keeps the line on top."""
        old = self.diff
        key = self._line_key(self.rows, self.scroll_offset.y) if old is not None else None
        self.diff = diff
        self.language = language
        self.left_title = left_title
        self.right_title = right_title
        self.hunk_index = -1
        self._gw = max(3, len(str(max(len(diff.a), len(diff.b), 1))))
        self._auto_layout()
        self._resize()
        if key is not None:
            self.scroll_to(y=self._index_of(self.rows, key), animate=False)
        self.refresh()

    @property
    def single(self) -> bool:
        """One column: unified, or two identical sides (shown once)."""
        return self.unified or (self.diff is not None and self.diff.identical)

    @property
    def rows(self) -> list[Row]:
        if self.diff is None:
            return []
        return self.diff.unified if self.single else self.diff.rows

    @property
    def hunks(self) -> list[int]:
        if self.diff is None:
            return []
        return self.diff.unified_hunks if self.single else self.diff.hunks

    def side_width(self, width: int | None = None) -> int:
        """Columns of text each side gets side by side at ``width`` (default: now)."""
        width = self.scrollable_content_region.width if width is None else width
        return (width - 1) // 2 - self._gw - 3

    def _auto_layout(self) -> None:
        if self.layout_chosen or not self.size.width:
            return
        unified = self.side_width() < READABLE_SIDE
        if unified != self.unified:
            self.unified = unified

    def _resize(self) -> None:
        # the rows only: the view scrolls sideways itself (``x``, both sides at once), so no width,
        # and a resize before the diff is in changes nothing (no layout pass for it)
        self.virtual_size = Size(0, len(self.rows))

    @staticmethod
    def _line_key(rows: list[Row], i: int) -> tuple[str, int] | None:
        """The first line number at or after row ``i`` (``("l", n)`` / ``("r", n)``)."""
        for r in rows[max(0, i):i + 500]:
            if r.left_no is not None:
                return ("l", r.left_no)
            if r.right_no is not None:
                return ("r", r.right_no)
        return None

    @staticmethod
    def _index_of(rows: list[Row], key: tuple[str, int] | None) -> int:
        if key is None:
            return 0
        side, n = key
        for k, r in enumerate(rows):
            no = r.left_no if side == "l" else r.right_no
            if no is not None and no >= n:
                return k
        return max(0, len(rows) - 1)

    def watch_unified(self, old: bool, new: bool) -> None:
        if self.diff is None:
            return
        was = self.diff.unified if (old or self.diff.identical) else self.diff.rows
        key = self._line_key(was, self.scroll_offset.y)
        self._resize()
        self.scroll_to(y=self._index_of(self.rows, key), animate=False)
        self.refresh()

    # -- rendering -----------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    def _style(self, name: str) -> Style:
        """The widget's style (``base``) and its components', looked up once per style change
        (``rich_style`` walks the DOM each time it is read; a page of rows reads them hundreds of times)."""
        if self._styles is None:
            get = self.get_component_rich_style
            s = {"base": self.rich_style, "plain": Style()}
            for c in ("gutter", "fold", "removed", "added", "removed-word", "added-word"):
                s[c] = get(f"diff--{c}")
            s["removed-word"] = s["removed"] + s["removed-word"]  # a changed token inside its line
            s["added-word"] = s["added"] + s["added-word"]
            self._styles = s
        return self._styles[name]

    def _side(self, no: int | None, text: str, kind: str, spans: list[tuple[int, int]], width: int,
              gw: int, side: str) -> list[Segment]:
        """One side of a row as segments ``width`` cells wide: line number, marker, text."""
        if kind in ("delete", "replace") and side == "left":
            line, word = "removed", "removed-word"
        elif kind in ("insert", "replace") and side == "right":
            line, word = "added", "added-word"
        else:
            line, word = "plain", "plain"
        line_style = self._style(line)
        mark = MARK[kind] if no is not None else " "
        if kind == "replace":
            mark = "-" if side == "left" else "+"
        if kind == "delete" and side == "right" or kind == "insert" and side == "left":
            mark = " "
        segs = [Segment(f"{no if no is not None else '':>{gw}} ", self._style("gutter")),
                Segment(mark + " ", line_style)]
        avail = max(1, width - gw - 3)
        if no is None:
            segs.append(Segment(" " * avail, line_style))
        elif self.language:
            body = _highlight(text, self.language).copy()
            body.stylize(line_style)
            for a, b in spans:  # after the line's style, so the changed tokens' own style wins
                body.stylize(self._style(word), a, b)
            segs += Strip(list(body.render(self.app.console))).crop_extend(self.x, self.x + avail, line_style)
        else:  # plain text: the segments directly (no Text to build and render per line)
            segs += Strip(_plain_segments(_display(text), spans, line_style, self._style(word))) \
                .crop_extend(self.x, self.x + avail, line_style)
        return segs

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self._style("base")
        rows = self.rows
        i = self.scroll_offset.y + y
        if self.diff is None or i >= len(rows):
            return Strip.blank(width, base)
        row = rows[i]
        gw = self._gw
        if row.kind == "fold":
            t = f"{'':>{gw}}   ⋯ {row.folded} {self.fold_words[row.folded != 1]}"
            return Strip([Segment(t, self._style("fold"))]).crop_extend(0, width, base).apply_style(base)
        if self.single:
            if row.kind == "insert":
                spans = self._spans(row.pair)[1] if row.pair is not None else []
                segs = self._side(row.right_no, row.right, "insert", spans, width, gw, "right")
            elif row.kind == "delete":
                spans = self._spans(row.pair)[0] if row.pair is not None else []
                segs = self._side(row.left_no, row.left, "delete", spans, width, gw, "left")
            else:
                segs = self._side(row.left_no, row.left, "equal", [], width, gw, "left")
            return Strip(segs).crop_extend(0, width, base).apply_style(base)
        half = (width - 1) // 2
        lspans, rspans = self._spans(row) if row.kind == "replace" else ([], [])
        left = self._side(row.left_no, row.left, row.kind, lspans, half, gw, "left")
        right = self._side(row.right_no, row.right, row.kind, rspans, width - half - 1, gw, "right")
        if half < gw + 4:  # too narrow for a line number and a marker: cut each side to its half
            left = list(Strip(left).crop_extend(0, half, base))
            right = list(Strip(right).crop_extend(0, width - half - 1, base))
        return Strip([*left, Segment("│", self._style("gutter")), *right]).crop_extend(0, width, base).apply_style(base)

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
        self.x = self._x_for(hunks[nxt])
        self.refresh()

    def _x_for(self, start: int) -> int:
        """The horizontal scroll that shows the first changed token of the hunk at row ``start``
        (0 when it fits the width)."""
        width = self.scrollable_content_region.width
        avail = max(1, (width - self._gw - 3) if self.single else self.side_width())
        for row in self.rows[start:start + 50]:
            if row.kind == "fold" or row.kind == "equal":
                break
            pair = row.pair if self.single else row
            if pair is None or pair.kind != "replace":
                continue
            left, right = self._spans(pair)
            spans = (left if row.kind == "delete" else right) if self.single else left + right
            if not spans:
                continue
            first = min(a for a, _ in spans)
            end = max(b for a, b in spans if a == first)
            return 0 if end <= avail else max(0, first - avail // 3)
        return 0

    def action_toggle_unified(self) -> None:
        self.layout_chosen = True  # from now on the user's choice, not the width
        if self.diff is not None and self.diff.identical:
            self.app.notify("The two sides are identical: shown once.", timeout=3)
        self.unified = not self.unified

    def action_toggle_normalise(self) -> None:
        self.post_message(self.NormaliseToggled())

    def action_shift(self, delta: int) -> None:
        self.x = max(0, self.x + delta)
        self.refresh()

    def action_to_top(self) -> None:
        """Home / g: the first row, first column."""
        self.x = 0
        self.hunk_index = -1
        self.scroll_to(x=0, y=0, animate=False)
        self.refresh()

    def action_to_bottom(self) -> None:
        """End / G: the last row, first column."""
        self.x = 0
        self.hunk_index = -1
        self.scroll_to(x=0, y=self.max_scroll_y, animate=False)
        self.refresh()

    def on_resize(self) -> None:
        self._auto_layout()
        self._resize()
