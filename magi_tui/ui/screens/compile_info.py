"""Compile info: one row per compile id (times, guards, graph size, status, as tlparse's
compilation_metrics pages), and the highlighted compile's detail below — restart / recompile / failure
reasons, dynamic shapes (symbols, sources, specialisations, shape guards, each with its user line),
the compile phases drawn as bars, the user stack that triggered it, its guards. ``s`` shows the stack
trie instead (which user call stacks triggered which compiles); ``r`` writes the highlighted compile's
runnable reproducer next to the run and shows the command.

Everything is read by the model (:mod:`magi_tui.model.analysis.metrics`) in thread workers: the compiles in
the base's (:class:`~magi_tui.ui.screens.rows.ListScreen`), the highlighted one's detail in its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import Text
from textual import on, work
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from magi_format.text import literal
from magi_tui.model.analysis.metrics import (
    STATUS_STYLE,
    TABLE_HEAD,
    CompileInfo,
    compile_infos,
    detail_lines,
    guards_lines,
    stack_trie,
    table_row,
    trie_lines,
    write_reproducer,
)
from magi_tui.model.analysis.provenance import kernel_provenance
from magi_tui.model.run import RunModel
from magi_tui.ui.actions import bindings
from magi_tui.ui.screens.rows import ListScreen, RowsList, title_text

STYLES = {"head": "bold", "ok": "green", "warn": "yellow", "fail": "bold red", "dim": "dim", "text": ""}


class CompileTable(RowsList):
    pass


class CompileInfoScreen(ListScreen):
    """A :class:`ListScreen` without a status line: the detail pane below the list says what the read found."""
    BINDINGS = bindings("compile info")
    ACTION_SCOPES = ("compile info",)
    NAME = "ci"
    LIST = CompileTable
    READING = "reading the compiles…"
    CANNOT = "cannot read the compiles"
    STATUS = False
    SHOW_LOADS = False  # loaded: the first compile's detail on screen (its own read)
    LIST_CSS = "height: auto; max-height: 8; border: none; padding: 0;"
    DEFAULT_CSS = """
    CompileInfoScreen #ci-head { height: 1; color: $text-muted; text-wrap: nowrap; }
    CompileInfoScreen #ci-scroll { height: 1fr; border-top: solid $panel; }
    CompileInfoScreen #ci-detail { width: auto; }
    """

    def __init__(self, run: RunModel, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run
        self.infos: list[CompileInfo] = []
        self.show_trie = False
        self._shown: int | None = None

    def title_line(self) -> Text:
        return title_text("compile info", self.run.path.name, cap=100)

    def compose_body(self) -> Iterable[Widget]:
        yield Static(Text(TABLE_HEAD), id="ci-head")
        yield self.make_list()
        with VerticalScroll(id="ci-scroll"):
            yield Static(self.status_text(self.READING, "cyan"), id="ci-detail")

    def set_status(self, text: str, style: str = "dim") -> None:
        self.query_one("#ci-detail", Static).update(self.status_text(text, style))

    def read(self) -> list[CompileInfo]:
        return compile_infos(self.run)

    def show(self, infos: list[CompileInfo]) -> None:
        self.infos = infos
        table = self.query_one(CompileTable)
        table.clear_options()
        table.add_options([Option(Text(literal(table_row(i)), style=STYLES[STATUS_STYLE[i.status]], no_wrap=True,
                                       overflow="ellipsis")) for i in infos])
        if not infos:
            self.set_status("no compile ids in this run (an upstream run records none: see c, compiled functions)",
                            "yellow")
            self.loaded = True
            return
        table.highlighted = 0
        self._detail(0)

    @on(OptionList.OptionHighlighted)
    def handle_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        message.stop()
        if not self.show_trie and message.option_index is not None:
            self._detail(message.option_index)

    @property
    def current(self) -> CompileInfo | None:
        i = self.query_one(CompileTable).highlighted
        return self.infos[i] if i is not None and 0 <= i < len(self.infos) else None

    def _detail(self, index: int) -> None:
        self._shown = index
        self._read_detail(self.infos[index], index)

    @work(thread=True, exclusive=True, group="ci-detail")
    def _read_detail(self, info: CompileInfo, index: int) -> None:
        lines = detail_lines(info, guards_lines(self.run, info), provenance=kernel_provenance(self.run, info))
        self.app.call_from_thread(self._put, lines, index)

    def _put(self, lines: list[tuple[str, str]], index: int | None) -> None:
        if index is not None and (index != self._shown or self.show_trie):
            return
        text = Text(no_wrap=True, overflow="ellipsis")
        for n, (style, line) in enumerate(lines):
            text.append(("\n" if n else "") + literal(line), style=STYLES.get(style, ""))
        self.query_one("#ci-detail", Static).update(text)
        self.query_one("#ci-scroll", VerticalScroll).scroll_home(animate=False)
        self.loaded = True

    def action_toggle_trie(self) -> None:
        self.show_trie = not self.show_trie
        if self.show_trie:
            self._put(trie_lines(stack_trie(self.infos)), None)
        elif self.current is not None:
            self._detail(self.infos.index(self.current))

    def action_write_reproducer(self) -> None:
        info = self.current
        if info is None:
            self.notify("No compile selected.", severity="warning")
            return
        self._write(info)

    @work(thread=True, exclusive=True, group="ci-write")
    def _write(self, info: CompileInfo) -> None:
        path, msg = write_reproducer(self.run, info)
        if path is None:
            self.app.call_from_thread(self.notify, literal(msg, 300), severity="warning")
        else:
            self.app.call_from_thread(self.notify, f"wrote {literal(str(path), 200)} — run it: {literal(msg, 300)}",
                                      timeout=20)

    def action_focus_other(self) -> None:
        table = self.query_one(CompileTable)
        (self.query_one("#ci-scroll", VerticalScroll) if table.has_focus else table).focus()

    @on(OptionList.OptionSelected)
    def handle_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self.action_jump_compile()

    def _jump(self, ev: Any, what: str) -> None:
        if ev is None:
            self.notify(f"This compile has no {what}.", severity="warning")
            return
        self.app.pop_screen()
        jump = getattr(self.app.screen, "jump_to", None)
        if jump is not None:
            jump(ev, switch_to_tree=True)

    def action_jump_compile(self) -> None:
        info = self.current
        if info is not None:
            self._jump(info.start or info.close, "event in the tree")

    def action_jump_post_grad(self) -> None:
        info = self.current
        if info is not None:
            self._jump(info.post_grad[0] if info.post_grad else None, "post-grad graph (not compiled by Inductor)")
