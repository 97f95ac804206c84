"""The list screens' base: a title line, a keyboard list (any widget: an OptionList, a DataTable, a Tree), a
status line and the footer, filled by one read of the model in a thread.

:class:`ListScreen` owns the layout, the ids (``<NAME>-title``, ``<NAME>-<LIST_ID>``, ``<NAME>-status``), the
styles of those three, the threaded read (an exception becomes the status line, never a traceback) and the
``loaded`` flag tests wait on. A screen says only what is its own: what it reads (:meth:`ListScreen.read`, in
the thread), how it shows it (:meth:`ListScreen.show`, on the UI loop), its title (:meth:`ListScreen.title_line`),
the widgets around its list (:meth:`ListScreen.compose_body`) and its keys. :class:`RowsScreen` is the common case: styled text rows in an
OptionList, each with the object Enter acts on (ranks, fix, compare).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from magi_format.text import literal
from magi_tui.ui.actions import vim_bindings
from magi_tui.ui.widgets.footer import MagiFooter

#: a row's style name -> its Rich style (the model's row lines name these)
STYLES = {"head": "bold", "add": "green", "del": "red", "warn": "yellow", "same": "", "dim": "dim", "": ""}


def title_text(label: str, subject: str, *more: tuple[str, str] | str, joint: str = " ",
               cap: int | None = None) -> Text:
    """A title line: `` label `` reversed, then the subject (a path, a run's name) in bold, shown literally."""
    return Text.assemble((f" {label} ", "bold reverse"), joint, (literal(subject, cap), "bold"), *more)


class ListScreen(Screen):
    #: the ids' prefix: ``<NAME>-title``, ``<NAME>-<LIST_ID>``, ``<NAME>-status``; ``cannot read <NAME>`` on failure
    NAME: ClassVar[str] = "list"
    LIST_ID: ClassVar[str] = "table"
    #: the list widget's class (a subclass per screen, so tests and styles can name it)
    LIST: ClassVar[type[Widget]] = OptionList
    #: the status line while :meth:`read` runs, and what it says when the read raised (None: ``cannot read NAME``)
    READING = "reading…"
    CANNOT: ClassVar[str | None] = None
    #: whether the screen has a status line of its own (without one it says where :meth:`set_status` writes)
    STATUS: ClassVar[bool] = True
    #: a status line longer than the screen is cut with ``…`` (else wrapped, its first line shown)
    STATUS_CUT: ClassVar[bool] = False
    FOOTER: ClassVar[type[Widget]] = MagiFooter
    #: ``loaded`` once :meth:`show` has run; False: the screen sets it when what ``show`` started is on screen
    SHOW_LOADS: ClassVar[bool] = True
    #: the styles of the title, the list and the status line (None: the app's stylesheet has them); a
    #: screen's own ``DEFAULT_CSS`` styles its other widgets
    TITLE_CSS: ClassVar[str | None] = "height: 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis;"
    LIST_CSS: ClassVar[str | None] = "height: 1fr; border: none; padding: 0;"
    STATUS_CSS: ClassVar[str | None] = "height: 1; color: $text-muted;"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("DEFAULT_CSS", "")
        rules = [(f"{cls.NAME}-title", cls.TITLE_CSS), (f"{cls.NAME}-{cls.LIST_ID}", cls.LIST_CSS),
                 (f"{cls.NAME}-status", cls.STATUS_CSS if cls.STATUS else None)]
        cls.DEFAULT_CSS = "".join(f"\n    {cls.__name__} #{i} {{ {css} }}" for i, css in rules if css) + own

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = False

    # -- what a screen says ---------------------------------------------------------------------------
    def title_line(self) -> Text:
        """The title line (:func:`title_text`)."""
        raise NotImplementedError

    def read(self) -> Any:
        """What the screen shows, read by the model (in a thread)."""
        raise NotImplementedError

    def show(self, got: Any) -> None:
        """Show what :meth:`read` gave (on the UI loop)."""
        raise NotImplementedError

    def make_list(self) -> Widget:
        """The list widget (a screen gives its constructor's other arguments here)."""
        return self.LIST(id=self.list_id)

    def compose_body(self) -> Iterable[Widget]:
        """What lies between the title and the status line: the list, and the screen's widgets around it."""
        yield self.make_list()

    # -- the layout and the read ----------------------------------------------------------------------
    @property
    def list_id(self) -> str:
        return f"{self.NAME}-{self.LIST_ID}"

    def list_widget(self) -> Widget:
        return self.query_one(f"#{self.list_id}")

    def compose(self) -> ComposeResult:
        yield Static(self.title_line(), id=f"{self.NAME}-title")
        yield from self.compose_body()
        if self.STATUS:
            yield Static(self.status_text(self.READING, "cyan"), id=f"{self.NAME}-status")
        yield self.FOOTER()

    def on_mount(self) -> None:
        self.list_widget().focus()
        self.load()

    def load(self) -> None:
        """(Re)read in a thread; a read still running is superseded (``loaded`` stays set from the first)."""
        self.run_worker(self._read, thread=True, exclusive=True, group=f"{self.NAME}-read")

    def _read(self) -> None:
        try:
            got: Any = self.read()
        except Exception as exc:  # the model's answer is typed: this would be our bug, said, not raised
            got = exc
        try:
            self.app.call_from_thread(self._loaded, got)
        except RuntimeError:
            pass  # the app is closing: nothing left to show it on

    def _loaded(self, got: Any) -> None:
        if isinstance(got, Exception):
            self.failed(f"{self.CANNOT or 'cannot read ' + self.NAME}: {type(got).__name__}: {got}")
            self.loaded = True
            return
        self.show(got)
        if self.SHOW_LOADS:
            self.loaded = True

    def failed(self, message: str) -> None:
        """The read raised: say so (in the status line)."""
        self.set_status(message, "red")

    def status_text(self, text: str, style: str) -> Text:
        if self.STATUS_CUT:
            return Text(literal(text), style=style, no_wrap=True, overflow="ellipsis")
        return Text(literal(text), style=style)

    def set_status(self, text: str, style: str = "dim") -> None:
        self.query_one(f"#{self.NAME}-status", Static).update(self.status_text(text, style))


class RowsList(OptionList):
    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="first", bottom="last")


class RowsScreen(ListScreen):
    """Rows of styled text in an OptionList (:meth:`set_rows`), each with the object Enter on it acts on."""
    NAME = "rows"
    LIST: ClassVar[type[Widget]] = RowsList

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.row_objects: list[Any] = []

    def options(self) -> OptionList:
        return self.query_one(f"#{self.list_id}", OptionList)

    def set_rows(self, rows: list[tuple[str, str, Any]]) -> None:
        """``(style, text, object)`` per row: the object is what Enter on the row acts on (None: nothing)."""
        table = self.options()
        table.clear_options()
        self.row_objects = [obj for _s, _t, obj in rows]
        # folded, not cut: a wrapped line keeps its indent and at 80 columns nothing is lost
        table.add_options([Option(Text(literal(text) or " ", style=STYLES.get(style, ""), overflow="fold"))
                           for style, text, _obj in rows])
        table.highlighted = 0 if rows else None

    def highlighted_object(self) -> Any:
        i = self.options().highlighted
        return self.row_objects[i] if i is not None and 0 <= i < len(self.row_objects) else None
