"""A file viewer that opens a 50k-line ``inductor_output.py`` instantly.

Line API (toolong style): only the rows on screen are read (``TextFile``: an offset index and
``pread``) and highlighted — Pygments runs on a window of lines around the viewport, cached, so a
multi-line string that started a little above still gets its colour without lexing the whole file.
The lexer is chosen by extension, never guessed from content. ``/`` searches, ``n``/``N`` step.
Text is shown literally: tabs expanded, control characters (ANSI escapes) made visible.

A line cursor (what provenance ``P`` / ``K`` and the search start from): ``j``/``k`` move it and the
view follows; it appears on the first move, on the top line shown (a cursor scrolled out of view
starts again there), a click puts it on a line. Lines can be marked (the FX nodes a kernel fused):
a ``▶`` in the gutter and a background, so they show without colour too.

The widget never opens, stats or parses a file itself: :mod:`magi_tui.model.sources.files` does (inside the
run, regular files only, bounded lines, pretty JSON). A small file is opened at once (one bounded
read); a bigger one is indexed in a thread worker, and searches run in a worker too, so a huge file
never blocks the event loop.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input
from textual.worker import get_current_worker

from magi_format.text import literal
from magi_tui.model.sources import files
from magi_tui.model.sources.textfile import TextFile
from magi_tui.ui.actions import bindings, vim_bindings

WINDOW = 200            # lines lexed together
MAX_WINDOWS = 24        # cached windows
#: files up to this size are opened on the spot (one bounded read); bigger ones in a worker
THREAD_INDEX_BYTES = 1 << 20
LEXERS = {".py": "python", ".json": "json", ".pyi": "python"}


def _clean(s: str) -> str:
    return literal(s.expandtabs(4))


class FileLines(ScrollView, can_focus=True):
    HELP_TITLE = "Open file"
    """The scrolling text itself."""

    BINDINGS = [
        *vim_bindings(down="cursor_down", up="cursor_up", top="cursor_top", bottom="cursor_bottom",
                      left="scroll_left", right="scroll_right", page_up="cursor_page(-1)",
                      page_down="cursor_page(1)", arrows=True),
    ]
    COMPONENT_CLASSES = {"file--gutter", "file--match", "file--current", "file--message", "file--mark"}
    DEFAULT_CSS = """
    FileLines { background: $surface; }
    FileLines > .file--gutter { color: $text-muted; }
    FileLines > .file--match { background: $warning 60%; color: $text; text-style: bold; }
    FileLines > .file--current { background: $accent 30%; }
    FileLines > .file--message { color: $text-muted; }
    FileLines > .file--mark { background: $success 25%; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.file: TextFile | None = None
        self.lexer: str | None = None
        self.message: Text | None = Text("")
        self.needle = ""
        self.current_line = -1
        self.marked: frozenset[int] = frozenset()
        self._windows: OrderedDict[int, list[Text]] = OrderedDict()
        self._width = 0

    def _drop_file(self) -> None:
        old, self.file = self.file, None
        if old is not None:
            old.close()

    def set_file(self, tf: TextFile, lexer: str | None) -> None:
        if tf is not self.file:
            self._drop_file()
        self.file = tf
        self.lexer = lexer
        self.message = None
        self.current_line = -1
        self.marked = frozenset()
        self._windows.clear()
        n = tf.line_count
        sample = tf.lines(0, min(n, 400))
        self._width = max((len(s) for s in sample), default=0) + 8
        self.virtual_size = Size(max(self._width, 10), n)
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def set_message(self, text: str | Text) -> None:
        self._drop_file()
        self.message = text if isinstance(text, Text) else Text(literal(text))
        self.virtual_size = Size(10, 1)
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def _window(self, start: int) -> list[Text]:
        cached = self._windows.get(start)
        if cached is not None:
            self._windows.move_to_end(start)
            return cached
        assert self.file is not None
        lines = [_clean(s) for s in self.file.lines(start, start + WINDOW)]
        if self.lexer:
            from rich.syntax import Syntax  # with pygments: the first screen shows no file

            code = "\n".join(lines)
            try:
                text = Syntax(code, self.lexer, theme="ansi_dark", word_wrap=False).highlight(code)
                text.rstrip()
                win = list(text.split("\n", allow_blank=True))  # rich's Lines has no +=
            except Exception:  # a lexer bug must not take the viewer down
                win = [Text(s) for s in lines]
            if len(win) < len(lines):
                win += [Text(s) for s in lines[len(win):]]
        else:
            win = [Text(s) for s in lines]
        self._windows[start] = win
        if len(self._windows) > MAX_WINDOWS:
            self._windows.popitem(last=False)
        return win

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self.file is None:
            if y == 0 and self.message is not None:
                t = self.message.copy()
                t.stylize(self.get_component_rich_style("file--message"))
                segs = list(t.render(self.app.console))
                return Strip(segs).crop_extend(0, width, base).apply_style(base)
            return Strip.blank(width, base)
        scroll_x, scroll_y = self.scroll_offset
        i = scroll_y + y
        n = self.file.line_count
        if i >= n:
            return Strip.blank(width, base)
        start = (i // WINDOW) * WINDOW
        body = self._window(start)[i - start].copy()
        if self.needle:
            body.highlight_words([self.needle], self.get_component_rich_style("file--match"),
                                 case_sensitive=False)
        gw = len(str(n)) + 1
        marked = i in self.marked
        gstyle = self.get_component_rich_style("file--gutter")
        if i == self.current_line:  # the cursor's number in reverse: seen without colour (NO_COLOR) too
            gstyle += Style(reverse=True)
        gutter = Segment(f"{i + 1:>{gw - 1}}{'▶' if marked else ' '}", gstyle)
        segs = list(body.render(self.app.console))
        strip = Strip(segs).crop_extend(scroll_x, scroll_x + width - gw, base)
        line = Strip([gutter, *strip], width)
        if i == self.current_line:
            line = line.apply_style(self.get_component_rich_style("file--current"))
        elif marked:
            line = line.apply_style(self.get_component_rich_style("file--mark"))
        return line.apply_style(base)

    def show_line(self, i: int, marks: frozenset[int] | None = None) -> None:
        """The cursor on line ``i``, a third down the view; ``marks``: the lines to mark (else kept)."""
        self.current_line = i
        if marks is not None:
            self.marked = marks
        h = self.scrollable_content_region.height or 10
        self.scroll_to(y=max(0, i - h // 3), animate=False)
        self.refresh()

    # -- the cursor ----------------------------------------------------------------------------
    @property
    def _height(self) -> int:
        return max(1, self.scrollable_content_region.height or 10)

    def _visible(self, i: int) -> bool:
        top = self.scroll_offset.y
        return top <= i < top + self._height

    def move_cursor(self, to: int) -> None:
        """Put the cursor on line ``to`` (clamped) and scroll just enough to show it."""
        if self.file is None:
            return
        n = self.file.line_count
        to = max(0, min(n - 1, to))
        self.current_line = to
        top, h = self.scroll_offset.y, self._height
        if to < top:
            self.scroll_to(y=to, animate=False)
        elif to >= top + h:
            self.scroll_to(y=to - h + 1, animate=False)
        self.refresh()

    def on_focus(self) -> None:
        """Focused (``o``, Tab, a click): the cursor appears on the top line shown, so P / K and j / k
        act where the user is looking rather than asking for a cursor first."""
        if self.file is not None and (self.current_line < 0 or not self._visible(self.current_line)):
            self.move_cursor(self.scroll_offset.y)

    def _step(self, delta: int) -> None:
        if self.file is None:
            return
        if self.current_line < 0 or not self._visible(self.current_line):
            self.move_cursor(self.scroll_offset.y)  # the cursor appears where the user is looking
        else:
            self.move_cursor(self.current_line + delta)

    def action_cursor_down(self) -> None:
        self._step(1)

    def action_cursor_up(self) -> None:
        self._step(-1)

    def action_cursor_top(self) -> None:
        if self.file is not None:
            self.move_cursor(0)

    def action_cursor_bottom(self) -> None:
        if self.file is not None:
            self.move_cursor(self.file.line_count - 1)

    def action_cursor_page(self, direction: int) -> None:
        """A page down / up, the cursor (when there is one) carried along."""
        if self.file is None:
            return
        h = self._height
        top = max(0, min(self.file.line_count - h, self.scroll_offset.y + direction * h))
        if self.current_line >= 0:
            self.current_line = max(0, min(self.file.line_count - 1, self.current_line + direction * h))
        self.scroll_to(y=top, animate=False)
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        if self.file is None:
            return
        at = event.get_content_offset(self)
        if at is not None and self.scroll_offset.y + at.y < self.file.line_count:
            self.move_cursor(self.scroll_offset.y + at.y)


class FileView(Vertical):
    """A :class:`FileLines` plus its search box."""

    BINDINGS = [
        *bindings("file"),
    ]
    DEFAULT_CSS = """
    FileView { height: 1fr; }
    FileView > FileLines { height: 1fr; }
    FileView > Input { dock: bottom; display: none; height: 3; }
    FileView > Input.-visible { display: block; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path: Path | None = None
        self.root: Path | None = None
        self._token = 0  # which open_path a worker's result belongs to
        self._goto: tuple[Path, int, frozenset[int]] | None = None  # a line to show once that file is

    def compose(self) -> ComposeResult:
        yield FileLines()
        yield Input(placeholder="search (Enter; n / N next / previous; Esc closes)")

    @property
    def lines(self) -> FileLines:
        return self.query_one(FileLines)

    # -- public --------------------------------------------------------------------------------
    def open_path(self, path: Path, root: Path | None = None) -> None:
        """Show ``path``; with ``root``, only if it is inside that run directory. A big file is
        indexed in a thread (the view says so meanwhile); any problem is shown as a message."""
        if self._goto is not None and self._goto[0] != path:
            self._goto = None  # the user went elsewhere
        if path == self.path and root == self.root and self.lines.file is not None:
            return
        self.path = path
        self.root = root
        self._token += 1
        tf = files.open_small_for_view(path, root, THREAD_INDEX_BYTES)
        if tf is not None:
            self._show(tf, path)
            return
        self.lines.set_message(f"indexing {files.display_name(path)}…")
        self._index_in_thread(path, root, self._token)

    def goto(self, path: Path, line: int, marks: frozenset[int] = frozenset()) -> None:
        """The cursor on ``line`` of ``path`` and ``marks`` marked: now if ``path`` is shown, else as
        soon as it is (it may be indexed in a worker); forgotten if another file is opened first."""
        self._goto = (path, line, frozenset(marks))
        if self.path == path and self.lines.file is not None:
            self.call_after_refresh(self._apply_goto)

    def _apply_goto(self) -> None:
        if self._goto is not None:
            _path, line, marks = self._goto
            self._goto = None
            self.lines.show_line(line, marks)

    @property
    def cursor_line(self) -> int:
        """The cursor's line (0-based) in the file shown; -1 when there is no cursor or no file."""
        return self.lines.current_line if self.lines.file is not None else -1

    def show_message(self, text: str | Text) -> None:
        self.path = None
        self._token += 1
        self.lines.set_message(text)

    @work(thread=True, exclusive=True, group="file-index")
    def _index_in_thread(self, path: Path, root: Path | None, token: int) -> None:
        worker = get_current_worker()
        tf = files.open_for_view(path, root, cancelled=lambda: worker.is_cancelled)
        if worker.is_cancelled:
            tf.close()
            return
        self.app.call_from_thread(self._show_if_current, tf, path, token)

    def _show_if_current(self, tf: TextFile, path: Path, token: int) -> None:
        if token == self._token:
            self._show(tf, path)
        else:
            tf.close()

    def _show(self, tf: TextFile, path: Path) -> None:
        if tf.error:
            self.lines.set_message(tf.error)
            tf.close()
            return
        self.lines.set_file(tf, LEXERS.get(path.suffix.lower()))
        if self._goto is not None and self._goto[0] == path:
            self.call_after_refresh(self._apply_goto)  # once laid out: the view's height is known
        if tf.notice:
            self.app.notify(literal(tf.notice), timeout=4)

    # -- search --------------------------------------------------------------------------------
    def action_search(self) -> None:
        if self.lines.file is None:
            self.app.notify("No file to search.", severity="warning")
            return
        box = self.query_one(Input)
        box.add_class("-visible")
        box.focus()

    @on(Input.Submitted)
    def handle_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        self.lines.needle = message.value
        box = self.query_one(Input)
        box.remove_class("-visible")
        self.lines.focus()
        self.action_find(1, from_top=True)

    def on_key(self, event: events.Key) -> None:
        box = self.query_one(Input)
        if event.key == "escape" and box.has_focus:
            box.remove_class("-visible")
            self.lines.focus()
            event.stop()

    def action_find(self, direction: int, from_top: bool = False) -> None:
        lines = self.lines
        if lines.file is None or not lines.needle:
            self.action_search()
            return
        start = lines.current_line
        if from_top and start < 0:
            start = lines.scroll_offset.y - 1
        self._search(lines.file, lines.needle, start, direction, self._token)

    @work(thread=True, exclusive=True, group="file-search")
    def _search(self, tf: TextFile, needle: str, start: int, direction: int, token: int) -> None:
        worker = get_current_worker()
        hit = tf.search(needle, start, forward=direction > 0, cancelled=lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._found, tf, needle, start, direction, hit, token)

    def _found(self, tf: TextFile, needle: str, start: int, direction: int, hit: int | None,
               token: int) -> None:
        lines = self.lines
        if token != self._token or lines.file is not tf:
            return  # another file is shown now
        if hit is None:
            self.app.notify(f"not found: {literal(needle, 60)}", severity="warning", timeout=3)
            lines.refresh()
            return
        if (direction > 0 and hit <= start) or (direction < 0 and hit >= start):
            self.app.notify("search wrapped", timeout=2)
        lines.show_line(hit)
