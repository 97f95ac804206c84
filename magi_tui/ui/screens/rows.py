"""A screen of rows the model reads in a thread: a title line, a keyboard list, a status line and the footer
(the ranks of a job, a fix's changes). The subclass says what it reads (:meth:`RowsScreen.read`, in a thread:
the model's answer, or an exception that becomes the status line, never a traceback) and how it shows it
(:meth:`RowsScreen.show`, on the UI loop, with :meth:`set_rows` and :meth:`set_status`); the layout, the
threaded load, the highlighted row's object and the styles are this class's."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from magi_format.text import literal
from magi_tui.ui.actions import vim_bindings
from magi_tui.ui.screens.compare import STYLES
from magi_tui.ui.widgets.footer import MagiFooter


class RowsList(OptionList):
    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="first", bottom="last")


class RowsScreen(Screen):
    #: the ids' prefix and the title's label: ``<NAME>-title``, ``<NAME>-table``, ``<NAME>-status``
    NAME: ClassVar[str] = "rows"
    #: the status line while :meth:`read` runs
    READING: ClassVar[str] = "reading…"
    #: the list widget (a subclass of :class:`RowsList`, so tests and styles can name it)
    LIST: ClassVar[type[RowsList]] = RowsList

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.DEFAULT_CSS = f"""
    {cls.__name__} #{cls.NAME}-title {{ height: 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }}
    {cls.__name__} #{cls.NAME}-table {{ height: 1fr; border: none; padding: 0; }}
    {cls.__name__} #{cls.NAME}-status {{ height: 1; color: $text-muted; }}
    """

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = Path(root)
        self.row_objects: list[Any] = []
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble((f" {self.NAME} ", "bold reverse"), "  under ", (literal(str(self.root), 120), "bold")),
                     id=f"{self.NAME}-title")
        yield self.LIST(id=f"{self.NAME}-table")
        yield Static(Text(self.READING, style="cyan"), id=f"{self.NAME}-status")
        yield MagiFooter()

    def on_mount(self) -> None:
        self.query_one(self.LIST).focus()
        self._load()

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        try:
            got: Any = self.read()
        except Exception as exc:  # the model's answer is typed: this would be our bug, said, not raised
            got = exc
        self.app.call_from_thread(self._loaded, got)

    def _loaded(self, got: Any) -> None:
        if isinstance(got, Exception):
            self.set_rows([])
            self.set_status(f"cannot read {self.NAME}: {type(got).__name__}: {got}", "red")
        else:
            self.show(got)
        self.loaded = True

    # -- what a subclass says -------------------------------------------------------------------------
    def read(self) -> Any:
        """What the screen shows, read by the model (in a thread)."""
        raise NotImplementedError

    def show(self, got: Any) -> None:
        """Show what :meth:`read` gave (on the UI loop)."""
        raise NotImplementedError

    # -- what a subclass uses -------------------------------------------------------------------------
    def set_rows(self, rows: list[tuple[str, str, Any]]) -> None:
        """``(style, text, object)`` per row: the object is what Enter on the row acts on (None: nothing)."""
        table = self.query_one(self.LIST)
        table.clear_options()
        self.row_objects = [obj for _s, _t, obj in rows]
        table.add_options([Option(Text(literal(text) or " ", style=STYLES.get(style, ""), overflow="fold"))
                           for style, text, _obj in rows])
        table.highlighted = 0 if rows else None

    def set_status(self, text: str, style: str = "dim") -> None:
        self.query_one(f"#{self.NAME}-status", Static).update(Text(literal(text), style=style))

    def highlighted_object(self) -> Any:
        i = self.query_one(self.LIST).highlighted
        return self.row_objects[i] if i is not None and 0 <= i < len(self.row_objects) else None
