"""A file viewer that opens a 50k-line ``inductor_output.py`` instantly.

Line API (toolong style): only the rows on screen are read (``TextFile``: an offset index and
``pread``) and highlighted — Pygments runs on a window of lines around the viewport, cached, so a
multi-line string that started a little above still gets its colour without lexing the whole file.
The lexer is chosen by extension, never guessed from content. ``/`` searches, ``n``/``N`` step.
Text is shown literally: tabs expanded, control characters (ANSI escapes) made visible.

The widget never opens, stats or parses a file itself: :mod:`magi_tui.model.files` does (inside the
run, regular files only, bounded lines, pretty JSON). A small file is opened at once (one bounded
read); a bigger one is indexed in a thread worker, and searches run in a worker too, so a huge file
never blocks the event loop.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input
from textual.worker import get_current_worker

from magi_format.text import literal
from magi_tui.model import files
from magi_tui.model.textfile import TextFile
from magi_tui.ui.actions import bindings, vim_bindings

WINDOW = 200            # lines lexed together
MAX_WINDOWS = 24        # cached windows
#: files up to this size are opened on the spot (one bounded read); bigger ones in a worker
THREAD_INDEX_BYTES = 1 << 20
LEXERS = {".py": "python", ".json": "json", ".pyi": "python"}


def _clean(s: str) -> str:
    return literal(s.expandtabs(4))


class FileLines(ScrollView, can_focus=True):
    """The scrolling text itself."""

    BINDINGS = [
        *vim_bindings(down="scroll_down", up="scroll_up", top="scroll_home", bottom="scroll_end",
                      left="scroll_left", right="scroll_right", page_up="page_up", page_down="page_down",
                      arrows=True),
    ]
    COMPONENT_CLASSES = {"file--gutter", "file--match", "file--current", "file--message"}
    DEFAULT_CSS = """
    FileLines { background: $surface; }
    FileLines > .file--gutter { color: $text-muted; }
    FileLines > .file--match { background: $warning 60%; color: $text; text-style: bold; }
    FileLines > .file--current { background: $accent 30%; }
    FileLines > .file--message { color: $text-muted; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.file: TextFile | None = None
        self.lexer: str | None = None
        self.message: Text | None = Text("")
        self.needle = ""
        self.current_line = -1
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
        win = self._windows.get(start)
        if win is not None:
            self._windows.move_to_end(start)
            return win
        assert self.file is not None
        lines = [_clean(s) for s in self.file.lines(start, start + WINDOW)]
        if self.lexer:
            code = "\n".join(lines)
            try:
                text = Syntax(code, self.lexer, theme="ansi_dark", word_wrap=False).highlight(code)
                text.rstrip()
                win = text.split("\n", allow_blank=True)
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
        gutter = Segment(f"{i + 1:>{gw - 1}} ", self.get_component_rich_style("file--gutter"))
        segs = list(body.render(self.app.console))
        strip = Strip(segs).crop_extend(scroll_x, scroll_x + width - gw, base)
        line = Strip([gutter, *strip], width)
        if i == self.current_line:
            line = line.apply_style(self.get_component_rich_style("file--current"))
        return line.apply_style(base)

    def show_line(self, i: int) -> None:
        self.current_line = i
        h = self.scrollable_content_region.height or 10
        self.scroll_to(y=max(0, i - h // 3), animate=False)
        self.refresh()


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

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        self.lines.needle = message.value
        box = self.query_one(Input)
        box.remove_class("-visible")
        self.lines.focus()
        self.action_find(1, from_top=True)

    def on_key(self, event) -> None:
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
