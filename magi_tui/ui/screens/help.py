"""``?``: every key of the screen underneath, grouped by where it applies."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

GLOBAL_KEYS = [
    ("?", "this help"), ("ctrl+p", "command palette (every action, jump to an event)"),
    ("q / esc", "back (quit on the first screen)"), ("ctrl+q", "quit"),
    ("tab / shift+tab", "move focus between panes"), ("↑↓ j k", "move"), ("g / G", "top / bottom"),
    ("enter", "open / select"),
]


def describe_keys(screen: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """(section, [(keys, description)]) from the bindings of the screen and its widgets."""
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    seen: set[str] = set()

    def collect(title: str, bindings: list) -> None:
        rows = []
        for b in bindings:
            if not isinstance(b, Binding) or not b.description:
                continue
            key = b.key_display or b.key.replace("slash", "/").replace("right_square_bracket", "]") \
                .replace("left_square_bracket", "[").replace(",", " / ")
            sig = f"{title}:{key}"
            if sig in seen:
                continue
            seen.add(sig)
            rows.append((key, b.description))
        if rows:
            sections.append((title, rows))

    collect(type(screen).__name__.replace("Screen", "") + " screen", list(getattr(screen, "BINDINGS", [])))
    done = set()
    for widget in screen.query("*"):
        cls = type(widget)
        if cls in done or not getattr(cls, "BINDINGS", None) or cls.__module__.startswith("textual."):
            continue
        done.add(cls)
        collect(cls.__name__, list(cls.BINDINGS))
    sections.append(("Everywhere", GLOBAL_KEYS))
    return sections


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,question_mark", "app.pop_screen", "Close")]

    def __init__(self, under: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.under = under

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for title, rows in describe_keys(self.under):
            table.add_row(Text(title, style="bold underline"), "")
            for key, desc in rows:
                table.add_row(Text(key), Text(desc))
            table.add_row("", "")
        with VerticalScroll(id="help-box"):
            yield Static(Text("Keys  (esc closes)", style="bold"))
            yield Static(table)
