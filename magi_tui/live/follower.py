"""Following a run while it is written (no Textual: the UI turns what this reports into messages).

File-change hints come from ``watchfiles.awatch`` on the run's ``timeline_events/`` directory
(non-recursive, filtered to ``timeline.jsonl``; watching the directory survives an atomic replace),
and a cheap periodic check reads whatever the hints missed (polling backends on NFS drop appends,
TUI.md §3.3). Every wake-up just calls ``RunModel.update()``, which reads from the last complete line
to EOF, so a missed or duplicated hint can neither lose nor repeat an event.

The watcher re-arms itself when ``timeline_events/`` does not exist yet, is deleted, or is replaced by
another directory (checked by inode once a second through ``yield_on_timeout``), so a run dir that
is deleted and written again is followed again.

What was read is reported as typed events (:class:`Updated`, :class:`Deleted`, :class:`Restored`,
:class:`FilesMayHaveChanged`, :class:`FollowFailed`, :class:`Finished`) to one sink. Reading is immediate, reporting is
coalesced: at most one :class:`Updated` per ``apply_min_s`` (showing an update re-renders the visible
tree, so reporting every watcher wake-up at 1,000 events/s would saturate the UI loop).
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Union

from magi_format.layout import TIMELINE_FILE
from magi_tui.model.run import RunModel, RunUpdate

WATCH_STEP_MS = 5        # watchfiles reports a change once the file is quiet this long: the lag of one append
WATCH_TIMEOUT_MS = 1000  # wake up once a second to check the watched folder is still the same one
WATCH_DEBOUNCE_MS = 20   # at most this long between a change and its report while a writer never pauses
                         # (watchfiles groups changes until the file is quiet for `step` or this long)
POLL_S = 0.3             # the safety net: a stat + read-to-EOF, whatever the watcher said
APPLY_MIN_S = 0.02       # report updates at most this often (one or two frames)


@dataclass
class Updated:
    """New events (merged since the last report); ``update.reset`` when the file was replaced."""

    update: RunUpdate


@dataclass
class Deleted:
    """The timeline (or the whole run dir) went away; what was read is kept."""

    what: str          # "timeline.jsonl" or "run directory"
    events_read: int


@dataclass
class Restored:
    """The timeline is back after a deletion."""


@dataclass
class FilesMayHaveChanged:
    """Nothing new in the timeline: an event's folder may have been written since (FORMAT.md §4)."""


@dataclass
class FollowFailed:
    """Reading failed (reported once; following goes on)."""

    error: str


@dataclass
class Finished:
    """The tracer closed the run (its end-of-session record is written): nothing more will come. Reported
    once, after everything before it was read."""


FollowEvent = Union[Updated, Deleted, Restored, FilesMayHaveChanged, FollowFailed, Finished]


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class RunFollower:
    """Follows one :class:`RunModel` on the running asyncio loop; reports to ``sink``."""

    def __init__(self, run: RunModel, sink: Callable[[FollowEvent], object], *, poll_s: float = POLL_S,
                 apply_min_s: float = APPLY_MIN_S) -> None:
        self.run = run
        run.reader.followed = True  # a TORCH_TRACE log's cut last record waits for its writer's quiet
        self.sink = sink
        self.poll_s = poll_s
        self.apply_min_s = apply_min_s
        self.deleted = False
        self._pending: RunUpdate | None = None
        self._last_report = 0.0
        self._flush_handle: asyncio.TimerHandle | None = None
        self._failed_once = False
        self._finished = False
        self._tasks: list[asyncio.Task] = []

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Start watching and polling (call from the loop that should receive the reports)."""
        if self._tasks:
            return
        self._tasks = [asyncio.create_task(self._watch(), name="magi-follow-watch"),
                       asyncio.create_task(self._poll_forever(), name="magi-follow-poll")]

    def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        self._tasks = []
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None

    @property
    def running(self) -> bool:
        return bool(self._tasks)

    # -- reading ---------------------------------------------------------------------------------
    def poll(self) -> None:
        """Read what is new now and report it (never raises)."""
        try:
            self._poll()
        except Exception as exc:  # following must never take the app down
            if not self._failed_once:
                self._failed_once = True
                self._emit(FollowFailed(f"{type(exc).__name__}: {exc}"))

    def _poll(self) -> None:
        run = self.run
        reader = run.reader
        # The file (or the whole run dir) went away: keep what was read and say so. Checked here rather
        # than left to the reader, so a deletion can never clear what is on screen.
        if reader.exists and _identity(reader.path) is None:
            if not self.deleted:
                self.deleted = True
                what = "run directory" if not run.path.exists() else TIMELINE_FILE
                self._emit(Deleted(what, len(run.events)))
            return
        up = run.update()
        if self.deleted and reader.exists:
            self.deleted = False
            self._emit(Restored())
        if up.deleted and not self.deleted:
            self.deleted = True
            self._emit(Deleted(TIMELINE_FILE, len(run.events)))
        if up.reset:
            self._pending = None  # what was pending belongs to the file that is gone
            self._report(up)
        elif up.events or up.malformed:
            self._pending = up if self._pending is None else self._pending.merge(up)
            self._schedule()
        else:
            self._emit(FilesMayHaveChanged())
            if not self._finished and run.session_ended:
                self._finished = True
                self.flush()
                self._emit(Finished())

    def flush(self) -> None:
        """Report whatever was read and not reported yet."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._report(pending)

    def _schedule(self) -> None:
        if self._flush_handle is not None:
            return  # already scheduled
        wait = self._last_report + self.apply_min_s - time.perf_counter()
        if wait <= 0:
            self.flush()
        else:
            self._flush_handle = asyncio.get_running_loop().call_later(wait, self.flush)

    def _report(self, up: RunUpdate) -> None:
        self._last_report = time.perf_counter()
        self._emit(Updated(up))

    def _emit(self, event: FollowEvent) -> None:
        try:
            self.sink(event)
        except Exception:  # a closing view must not stop the follower
            pass

    # -- the loops -------------------------------------------------------------------------------
    async def _poll_forever(self) -> None:
        while True:
            await asyncio.sleep(self.poll_s)
            self.poll()

    async def _watch(self) -> None:
        from watchfiles import Change, awatch

        # the file the reader follows: timeline_events/timeline.jsonl, or a TORCH_TRACE log itself
        target_path = Path(self.run.reader.path)
        folder = target_path.parent
        target = str(target_path)

        def only_timeline(_change: Change, path: str) -> bool:
            return path == target

        while True:
            ident = _identity(folder)
            while ident is None:  # not created yet, or deleted: the poll loop covers the gap
                await asyncio.sleep(self.poll_s)
                ident = _identity(folder)
            self.poll()  # whatever was written before the watch started
            try:
                watcher = awatch(folder, watch_filter=only_timeline, recursive=False, step=WATCH_STEP_MS,
                                 debounce=WATCH_DEBOUNCE_MS, rust_timeout=WATCH_TIMEOUT_MS, yield_on_timeout=True)
                async with aclosing(watcher):
                    async for changes in watcher:
                        if changes:
                            self.poll()
                        if _identity(folder) != ident:
                            break  # deleted or replaced by another directory: watch the new one
            except (FileNotFoundError, RuntimeError, OSError):
                pass
            await asyncio.sleep(self.poll_s)
