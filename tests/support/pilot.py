"""Driving the app as a user would (Textual's Pilot): waiting for what a user waits for, and reading
what the terminal shows."""

from __future__ import annotations

import io
import time

from rich.console import Console
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from magi_format.text import UNSAFE_CHARS
from magi_tui.model import RunModel
from magi_tui.ui.widgets.event_tree import EventTree
from tests.support import slow


async def wait_for(pilot: Pilot, cond, timeout: float = 10.0, what: str = "condition") -> None:
    """Poll ``cond()`` while letting the app run; fail naming ``what`` after ``timeout`` s (a base that grows
    on a busy machine: tests/support/slow.py)."""
    timeout = slow.limit(timeout)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if cond():
                return
        except Exception:  # the screen may be changing under us
            pass
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what} ({timeout:.0f} s)")


def run_screen(app):
    from magi_tui.ui.screens.run import RunScreen

    s = app.screen
    return s if isinstance(s, RunScreen) else None


async def loaded_run_screen(pilot: Pilot):
    await wait_for(pilot, lambda: run_screen(pilot.app) is not None and run_screen(pilot.app).loaded,
                   what="the run screen to load")
    return pilot.app.screen


def screen_text(app) -> str:
    """What the terminal shows, as plain text."""
    w, h = app.size
    con = Console(file=io.StringIO(), width=w, height=h, color_system=None, force_terminal=False)
    con.print(app.screen._compositor.render_update(full=True))
    return con.file.getvalue()


def unsafe_on_screen(app) -> list[str]:
    """Every character the terminal would obey rather than show (control, C1, bidi, surrogate) in the
    text of what is on screen now, as ``repr``s of the segments holding them."""
    bad = []
    for strip in app.screen._compositor.render_strips():
        for seg in strip:
            if seg.control:
                continue
            if any(ord(c) in UNSAFE_CHARS for c in seg.text):
                bad.append(repr(seg.text))
    return bad


def notes(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


def selected_event(screen):
    from magi_tui.ui.widgets.event_tree import EventTree

    node = screen.query_one(EventTree).cursor_node
    return node.data.obj if node is not None and node.data is not None else None


def find_event(screen, name: str, nth: int = 0):
    return [e for e in screen.run.events if e.name == name][nth]


def tree_labels(screen) -> str:
    from magi_tui.ui.widgets.event_tree import EventTree

    tree = screen.query_one(EventTree)
    out = []

    def walk(node):
        for child in node.children:
            out.append(str(child.label))
            walk(child)

    walk(tree.root)
    return "\n".join(out)


async def open_triage(pilot: Pilot, screen) -> None:
    """Show the run screen's triage panel (``T`` unless it is already shown)."""
    if screen.query_one("#right").current != "triage":
        await pilot.press("T")
    await wait_for(pilot, lambda: screen.query_one("#right").current == "triage", what="the triage panel")


def triage_rows(panel) -> list[str]:
    """The triage panel's list, one string per row."""
    ol = panel.query_one("#triage-list")
    return [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]


class TreeApp(App):
    """The event tree alone on a bare app, over a model the test folds reads into."""

    def __init__(self, run: RunModel) -> None:
        super().__init__()
        self.run_model = run

    def compose(self) -> ComposeResult:
        yield EventTree(self.run_model, id="tree")
