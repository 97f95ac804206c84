"""``?``: every key of the screen underneath, grouped by where it applies."""

from __future__ import annotations

import re
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from magi_tui.ui.actions import CATALOGUE, VIM, act, binding, display_keys, vim_bindings

CATALOGUE_IDS = frozenset(a.id for a in CATALOGUE)

GLOBAL_KEYS = [
    ("?", "this help"), ("ctrl+p", "command palette (every action of this screen; type 13 or #0013 to jump "
                                    "to an event)"),
    ("esc", "back (closes a pane, then the screen; never quits)"), ("q", "close the screen (quit on the first)"),
    ("ctrl+q", "quit"), ("tab / shift+tab", "move focus between panes"),
    (f"↑↓ {VIM['down']} {VIM['up']}", "move"), (f"{VIM['top']} / {VIM['bottom']}", "top / bottom"),
    ("enter", "open / select"),
]


class HelpBody(VerticalScroll):
    """The scrolling help text: j/k/g/G like everywhere else."""

    BINDINGS = vim_bindings(down="scroll_down", up="scroll_up", top="scroll_home", bottom="scroll_end")


def section_title(cls: type) -> str:
    """A section of ``?`` in words: the class's ``HELP_TITLE``, else its name spelt out (``EventTree`` ->
    ``Event tree``, ``RunScreen`` -> ``Run screen``), never a bare class name."""
    title = getattr(cls, "HELP_TITLE", None)
    if title:
        return title
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", cls.__name__)
    return " ".join([words[0], *(w.lower() if not w.isupper() else w for w in words[1:])]) if words else cls.__name__


def describe_keys(screen: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """(section, [(keys, description)]) from the bindings of the screen and its widgets (all of them
    built from the action catalogue), with the user's keymap applied."""
    keymap = getattr(screen.app, "user_keymap", {}) if screen.is_attached else {}
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    seen: set[str] = set()

    def collect(title: str, bindings: list) -> None:
        rows = []
        for b in bindings:
            if not isinstance(b, Binding) or not b.description:
                continue
            keys = keymap.get(b.id, b.key) if b.id else b.key
            key = b.key_display or display_keys(keys)
            sig = f"{title}:{key}"
            if sig in seen:
                continue
            seen.add(sig)
            rows.append((key, act(b.id).help if b.id in CATALOGUE_IDS else b.description))
        if rows:
            sections.append((title, rows))

    collect(section_title(type(screen)), list(getattr(screen, "BINDINGS", [])))
    done = set()
    for widget in screen.query("*"):
        cls = type(widget)
        if cls in done or not getattr(cls, "BINDINGS", None) or cls.__module__.startswith("textual."):
            continue
        done.add(cls)
        collect(section_title(cls), list(cls.BINDINGS))
    sections.append(("Everywhere", GLOBAL_KEYS))
    return sections


class HelpScreen(ModalScreen):
    BINDINGS = [binding("help_close")]

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
        with HelpBody(id="help-box"):
            yield Static(Text("Keys  (esc closes)", style="bold"))
            yield Static(table)

    def on_mount(self) -> None:
        self.query_one(HelpBody).focus()
