"""The magi-tui app: decides the first screen, holds the cross-run mark, offers the actions of the
screen on top in the command palette (from :mod:`magi_tui.ui.actions`), applies the user's keymap
and colour settings (``--ansi`` / ``NO_COLOR``)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

from textual import events
from textual.app import App, SystemCommand
from textual.command import Hit, Hits, Provider
from textual.screen import Screen

from magi_format.text import literal
from magi_tui.config import keymap_path, load_keymap
from magi_tui.model.outputs.bisect_view import is_bisect_folder
from magi_tui.model.sources.discovery import find_runs, normalise
from magi_tui.ui.actions import bindings, display_keys, keymap_ids, palette_acts
from magi_tui.ui.mark import Mark
from magi_tui.ui.screens import lazy
from magi_tui.ui.screens.help import HelpScreen
from magi_tui.ui.screens.run import RunScreen

__all__ = ["MagiApp", "Mark"]


_NUMBER = re.compile(r"^\s*#?\s*(\d{1,9})\s*$")


class EventJumpProvider(Provider):
    """Palette: jump to any event of the open run by number (``13``, ``#0013``) or by name; before
    anything is typed, it offers what to look at first: failures, restarts, graph breaks, recompiles."""

    DISCOVER_CAP = 20  # per kind: the palette is for jumping, the triage panel lists them all

    async def discover(self) -> Hits:
        screen = self.screen
        if not isinstance(screen, RunScreen):
            return
        t = screen.run.triage
        kinds = [
            ("failure", [(f.event, f.exception_type or "failed", "recovered" if f.recovered else "NOT recovered")
                         for f in t.failures]),
            ("restart", [(r.event, r.reason, "") for r in t.restarts]),
            ("graph break", [(i.event, i.reason, "") for i in t.graph_breaks]),
            ("recompile", [(i.event, i.reason, "") for i in t.recompiles]),
            ("recompile limit", [(i.event, i.reason, "") for i in t.recompile_limit_hits]),
        ]
        # Scored hits rather than DiscoveryHits: the palette orders discovery hits by arrival, so the
        # app's actions could push these below the fold; a score keeps what to look at first on top.
        n = 0
        for kind, rows in kinds:
            for ev, what, note in rows[: self.DISCOVER_CAP]:
                text = f"{kind}: #{ev.index:04d} {literal(what, 80)}" + (f"  ({note})" if note else "")
                n += 1
                yield Hit(1.0 - n * 1e-6, text, partial(screen.jump_to, ev), text=text, help=literal(ev.name, 100))

    async def search(self, query: str) -> Hits:
        screen = self.screen
        if not isinstance(screen, RunScreen):
            return
        m = _NUMBER.match(query)
        if m is not None:  # an event number: that event first (one per session that has it)
            n = int(m.group(1))
            for ev in screen.run.events:
                if ev.index == n:
                    text = f"#{ev.index:04d} {ev.name}"
                    yield Hit(1.0, literal(text), partial(screen.jump_to, ev),
                              help=f"jump to event {n}" + (f" (session {ev.session})" if ev.session else ""))
            return  # a number is an event number: no fuzzy pass over every event (2 s a key at 1M events)
        matcher = self.matcher(query)
        shown = 0
        scores: dict[str, float] = {}  # names come from a small vocabulary: each is matched once
        for ev in screen.run.events:
            score = scores.get(ev.name)
            if score is None:
                score = scores[ev.name] = matcher.match(ev.name)
            if score > 0:
                text = f"#{ev.index} {ev.name}"
                yield Hit(score, matcher.highlight(literal(text)), partial(screen.jump_to, ev),
                          help="jump to this event in the tree")
                shown += 1
                if shown >= 50:
                    return


class MagiApp(App):
    TITLE = "magi-tui"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {EventJumpProvider}
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = bindings("app")

    def __init__(self, path: Path, *, live: bool = False, ansi: bool = False,
                 command: list[str] | None = None, keymap: str | None = None, bisector: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bisector = bisector  # magi-tui bisect --app: run here, on the bisect screen
        self.path = Path(path)
        self.live = live
        self.command = command
        self.mark: Mark | None = None
        if ansi or os.environ.get("MAGI_TUI_ANSI"):
            self.theme = "ansi-dark"
        if self.no_color:  # greys that can be read, failures bold / reversed (ui/no_color.py)
            from magi_tui.ui.no_color import use_readable_no_color

            use_readable_no_color(getattr(self, "_filters", []))
        self.keymap_file = keymap_path(keymap)
        self.user_keymap, self.keymap_problems = load_keymap(self.keymap_file, keymap_ids())
        if self.user_keymap:
            self.set_keymap(self.user_keymap)

    # Once q (or ctrl+q) asked the app to exit, what the terminal still delivers -- the next typed or pasted
    # key, a click -- does nothing: acting on it would push or fill screens that are being torn down (qc, qn,
    # qf crashed with MountError / NoMatches). Input arriving after the exit is dropped here; keys already
    # forwarded to a widget with the q (one read of the terminal) reach their binding, where run_action stops.
    async def on_event(self, event: events.Event) -> None:
        if self._exit and isinstance(event, (events.InputEvent, events.Paste)):
            return
        await super().on_event(event)

    async def run_action(self, action: Any, default_namespace: Any = None, namespaces: Any = None) -> bool:
        if self._exit:
            return True  # handled: by doing nothing
        return await super().run_action(action, default_namespace, namespaces)

    def on_mount(self) -> None:
        for problem in self.keymap_problems:
            self.notify(literal(problem), severity="warning", timeout=10)

        if self.command is not None or self.live:
            self._start_live()
            return
        if self.bisector is not None or is_bisect_folder(self.path):
            self.push_screen(lazy("BisectScreen")(self.path, bisector=self.bisector))
            return
        path = normalise(self.path)
        runs = find_runs(path)
        if len(runs) == 1:
            self.push_screen(RunScreen(runs[0].path))
        else:
            self.push_screen(lazy("RunsScreen")(path))

    def _start_live(self) -> None:
        """``attach`` / ``run``: open the run live, or wait for one to appear under the path.

        With a command (``magi-tui run``), the program is started under the tracer first; its output
        goes to the log panel and its run is opened as soon as the tracer names it."""
        from magi_tui.live.runner import ProgramRunner, tracer_command  # only attach / run need it

        runner = None
        if self.command is not None:
            runner = ProgramRunner(tracer_command(self.command, self.path))
            self.program = runner  # the CLI stops it if anything is left when the app returns
        self.push_screen(lazy("WaitingScreen")(self.path, command=self.command, runner=runner))

    def action_switch_newest(self) -> None:
        """attach on a root: follow the newer run that was announced."""
        for screen in self.screen_stack:
            if isinstance(screen, lazy("WaitingScreen")):
                if screen.newer is None:
                    self.notify("No newer run under this root.")
                    return
                while self.screen is not screen:
                    self.pop_screen()
                screen.action_switch_newest()
                return
        self.notify("N follows a newer run when attached to a root (magi-tui attach ROOT).")

    def action_history(self) -> None:
        """H: the History screen over the index of this root (from a run: that run's program)."""
        if isinstance(self.screen, lazy("HistoryScreen")):
            return
        run_path = self.screen.run.path if isinstance(self.screen, RunScreen) else None
        self.push_screen(lazy("HistoryScreen")(self.path, run_path=run_path))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        scopes = set(getattr(screen, "ACTION_SCOPES", ())) | {"app"}
        for a in palette_acts(scopes):
            action = a.action
            target: Any = self if action.startswith("app.") else screen
            action = action.removeprefix("app.")
            if hasattr(target, f"action_{action.split('(')[0]}"):
                keys = display_keys(self.user_keymap.get(a.id, a.keys))
                yield SystemCommand(f"{a.title}  ({keys})", a.help, partial(target.run_action, action))
