"""Following a run while it is written.

File-change hints come from ``watchfiles.awatch`` on the run's ``timeline_events/`` directory
(non-recursive, filtered to ``timeline.jsonl``; watching the directory survives an atomic replace),
and a cheap periodic check reads whatever the hints missed (polling backends on NFS drop appends,
TUI.md §3.3). Every wake-up just calls ``RunModel.update()``, which reads from the last complete line
to EOF, so a missed or duplicated hint can neither lose nor repeat an event.

The watcher re-arms itself when ``timeline_events/`` does not exist yet, is deleted, or is replaced by
another directory (checked by inode once a second through ``yield_on_timeout``), so a run dir that
is deleted and written again is followed again.
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING


if TYPE_CHECKING:  # pragma: no cover
    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.run import RunScreen

WATCH_STEP_MS = 10       # watchfiles' sleep between checks: sets the lag (TUI.md §3.3: 20 ms -> ~27 ms median; 10 ms measured ~10 ms less, idle CPU unchanged)
WATCH_TIMEOUT_MS = 1000  # wake up once a second to check the watched folder is still the same one
POLL_S = 0.3             # the safety net: a stat + read-to-EOF, whatever the watcher said
#: Reading is immediate, showing is coalesced: at most one tree/detail/triage update per slot. Each
#: update re-renders the visible tree (~10-30 ms with Textual's Tree), so at 1,000 events/s showing
#: every watcher wake-up (~every 20 ms) would keep the UI loop saturated.
APPLY_MIN_S = 0.02  # show live updates at most this often (one or two frames)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def poll(screen: "RunScreen") -> None:
    """Read what is new and show it (safe to call at any time, from the UI loop; never raises)."""
    try:
        _poll(screen)
    except Exception as exc:  # a live view must never take the app down
        screen.log.error(f"live update failed: {exc!r}")
        if not getattr(screen, "_live_error_notified", False):
            screen._live_error_notified = True
            screen.notify(f"live update failed: {type(exc).__name__}: {exc}", severity="error", timeout=10)


def _set_note(screen: "RunScreen", note: str) -> None:
    if getattr(screen, "live_note", "") != note:
        screen.live_note = note
        screen._update_title()


def _poll(screen: "RunScreen") -> None:
    run = screen.run
    reader = run.reader
    if not screen.is_attached:
        return
    # The file (or the whole run dir) went away: keep what was read and say so. Checked here rather
    # than left to the reader, so a deletion can never clear what is on screen.
    if reader.exists and _identity(reader.path) is None:
        if not getattr(screen, "_live_deleted", False):
            screen._live_deleted = True
            what = "run directory" if not run.path.exists() else "timeline.jsonl"
            screen.notify(f"The {what} was deleted: showing the {len(run.events)} events read so far.",
                          severity="warning", timeout=10)
            _set_note(screen, "✗ DELETED (showing what was read)")
        return
    up = run.update()
    if getattr(screen, "_live_deleted", False) and reader.exists:
        screen._live_deleted = False
        _set_note(screen, "")
        if not up.reset:
            screen.notify("timeline.jsonl is back: following it again.", timeout=5)
    if up.deleted and not getattr(screen, "_live_deleted", False):
        screen._live_deleted = True
        screen.notify("The run's timeline.jsonl was deleted: showing what was read.", severity="warning",
                      timeout=10)
        _set_note(screen, "✗ DELETED (showing what was read)")
    if up.reset:
        screen._live_pending = None  # what was pending belongs to the file that is gone
        _apply(screen, up)
    elif up.events or up.malformed:
        pending = getattr(screen, "_live_pending", None)
        screen._live_pending = up if pending is None else pending.merge(up)
        _schedule(screen)
    elif screen.loaded:
        # an event's folder is written after its line (FORMAT.md §4): show its files once they appear
        from magi_tui.ui.widgets.detail import EventDetail

        for detail in screen.query(EventDetail):
            detail.refresh_files()


def _apply(screen: "RunScreen", up) -> None:
    screen._live_last_apply = time.perf_counter()
    screen.apply_update(up)
    if screen.follow and up.events:
        _fold_old_buckets(screen)


def _fold_old_buckets(screen: "RunScreen") -> None:
    """Follow mode opens the newest bucket of a big group; fold the ones it left behind, or the
    visible lines (which Textual's Tree rebuilds on every change) grow with the run."""
    from magi_tui.ui.widgets.event_tree import EventTree

    tree = screen.query_one(EventTree)
    cursor = tree.cursor_node
    keep = set()
    node = cursor
    while node is not None:
        keep.add(id(node))
        node = node.parent
    for gnode in getattr(tree, "_group_nodes", {}).values():
        buckets = gnode.data.children if gnode.data is not None else None
        if not buckets or len(buckets) < 2:
            continue
        last = max(buckets)
        for start, bnode in buckets.items():
            if start != last and bnode.is_expanded and id(bnode) not in keep:
                bnode.collapse()


def _schedule(screen: "RunScreen") -> None:
    """Show the pending update now, or at the next apply slot (at most one per APPLY_MIN_S)."""
    if getattr(screen, "_live_timer", None) is not None:
        return  # already scheduled
    wait = getattr(screen, "_live_last_apply", 0.0) + APPLY_MIN_S - time.perf_counter()
    if wait <= 0:
        flush(screen)
    else:
        screen._live_timer = screen.set_timer(wait, lambda: flush(screen), name="live-apply")


def flush(screen: "RunScreen") -> None:
    """Show whatever was read and not shown yet."""
    screen._live_timer = None
    pending = getattr(screen, "_live_pending", None)
    if pending is None or not screen.is_attached:
        return
    screen._live_pending = None
    try:
        _apply(screen, pending)
    except Exception as exc:
        screen.log.error(f"live apply failed: {exc!r}")
        if not getattr(screen, "_live_error_notified", False):
            screen._live_error_notified = True
            screen.notify(f"live update failed: {type(exc).__name__}: {exc}", severity="error", timeout=10)


def tail_run(screen: "RunScreen") -> None:
    """Start following ``screen.run``: a watcher worker plus a periodic safety-net poll."""
    screen.set_interval(POLL_S, lambda: poll(screen), name="live-poll")
    screen.run_worker(_watch(screen), exclusive=True, group="tail", name="tail", exit_on_error=False)


async def _watch(screen: "RunScreen") -> None:
    from watchfiles import awatch

    folder = screen.run.path / "timeline_events"
    target = str(folder / "timeline.jsonl")

    def only_timeline(_change, path: str) -> bool:
        return path == target

    while True:
        ident = _identity(folder)
        while ident is None:  # not created yet, or deleted: the poll timer covers the gap
            await asyncio.sleep(POLL_S)
            ident = _identity(folder)
        poll(screen)  # whatever was written before the watch started
        try:
            watcher = awatch(folder, watch_filter=only_timeline, recursive=False, step=WATCH_STEP_MS,
                             debounce=200, rust_timeout=WATCH_TIMEOUT_MS, yield_on_timeout=True)
            async with aclosing(watcher):
                async for changes in watcher:
                    if changes:
                        poll(screen)
                    if _identity(folder) != ident:
                        break  # deleted or replaced by another directory: watch the new one
        except (FileNotFoundError, RuntimeError, OSError) as exc:
            screen.log.warning(f"watch on {folder} ended: {exc!r}")
        await asyncio.sleep(POLL_S)


def start_live_app(app: "MagiApp") -> None:
    """``attach`` / ``run``: open the run live, or wait for one to appear under the path.

    With a command (``magi-tui run``), the program is started under the tracer first; its output goes
    to the log panel and its run is opened as soon as the tracer names it.
    """
    from magi_tui.ui.screens.waiting import WaitingScreen

    runner = None
    if app.command is not None:
        from magi_tui.ui.process import ProgramRunner, tracer_command

        runner = ProgramRunner(tracer_command(app.command, app.path))
        app.program = runner  # the CLI stops it if anything is left when the app returns
    app.push_screen(WaitingScreen(app.path, command=app.command, runner=runner))
