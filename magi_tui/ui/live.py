"""Following a run while it is written.

File-change hints come from ``watchfiles.awatch`` on the run's ``timeline_events/`` directory
(non-recursive, filtered to ``timeline.jsonl``; watching the directory survives an atomic replace),
and a cheap periodic check reads whatever the hints missed (polling backends on NFS drop appends,
TUI.md §3.3). Every wake-up just calls ``RunModel.update()``, which reads from the last complete line
to EOF, so a missed or duplicated hint can neither lose nor repeat an event.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.run import RunScreen

WATCH_STEP_MS = 20
POLL_S = 0.3


def poll(screen: "RunScreen") -> None:
    """Read what is new and show it (safe to call at any time, from the UI loop)."""
    run = screen.run
    up = run.update()
    if up.deleted and not getattr(screen, "_deleted_notified", False):
        screen._deleted_notified = True
        screen.notify("The run's timeline.jsonl was deleted: showing what was read.", severity="warning",
                      timeout=10)
    if up.events or up.reset or up.malformed:
        if up.reset is None and run.reader.exists:
            screen._deleted_notified = False
        screen.apply_update(up)


def tail_run(screen: "RunScreen") -> None:
    """Start following ``screen.run``: a watcher worker plus a periodic safety-net poll."""
    screen.set_interval(POLL_S, lambda: poll(screen), name="live-poll")
    screen.run_worker(_watch(screen), exclusive=True, group="tail", name="tail")


async def _watch(screen: "RunScreen") -> None:
    from watchfiles import awatch

    folder = screen.run.path / "timeline_events"
    while not folder.is_dir():  # the writer creates it at session start
        await asyncio.sleep(POLL_S)
    target = str(folder / "timeline.jsonl")

    def only_timeline(_change, path: str) -> bool:
        return path == target

    while True:
        try:
            async for _changes in awatch(folder, watch_filter=only_timeline, recursive=False,
                                         step=WATCH_STEP_MS, debounce=200, yield_on_timeout=False):
                poll(screen)
        except (FileNotFoundError, RuntimeError, OSError):
            pass  # the folder went away: the poll timer says so; wait for it to come back
        await asyncio.sleep(POLL_S)
        while not folder.is_dir():
            await asyncio.sleep(POLL_S)


def start_live_app(app: "MagiApp") -> None:
    """``attach`` / ``run``: open the run live, or wait for one to appear under the path."""
    from magi_tui.ui.screens.waiting import WaitingScreen

    app.push_screen(WaitingScreen(app.path, command=app.command))
