"""The diff screen: two graph files side by side (or unified), hunk by hunk.

The diff itself is computed off the UI loop (``compute_diff`` in a thread worker), and the view
highlights only the lines on screen, so a 20k-line pair opens without freezing the app. The screen's
first frame waits for the diff up to :data:`FIRST_FRAME_WAIT_S` (a 20k-line graph pair is read and
diffed in tens of ms): a diff ready by then is the first thing painted, not a "computing diff…" frame
painted, then replaced a timer tick later; a slower one shows "computing diff…" meanwhile.

``z`` masks per-process noise (addresses, generated names, object ids, source line numbers) so only
real differences remain; on from the start for guard trees. The title says when it is on; toggling
recomputes from the lines already read (the files are not read again).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerError

from magi_format.text import literal
from magi_tui.model.analysis.diff import Diff, compute_diff, default_normalise, diff_files
from magi_tui.ui.actions import bindings
from magi_tui.ui.widgets.diff_view import DiffView
from magi_tui.ui.widgets.key_bar import KeyBar

#: the longest the screen's first frame waits for the diff (see the module doc)
FIRST_FRAME_WAIT_S = 0.25


def side_title(ref: Any, run_path: Path | None, other_run: Path | None) -> str:
    title = ref.title
    if run_path is not None and other_run is not None and run_path != other_run:
        name = run_path.name
        if run_path.name == other_run.name:  # two runs of one model: the run id tells them apart
            name = f"{run_path.parent.name}/{name}"
        title = f"{name}: {title}"
    return title


class DiffScreen(Screen):
    ACTION_SCOPES = ("diff",)
    BINDINGS = [
        *bindings("screen"),
    ]

    def __init__(self, left: Any, right: Any, *, left_run: Path | None = None,
                 right_run: Path | None = None, left_note: str = "", right_note: str = "",
                 **kwargs: Any) -> None:
        """``left`` is the base (−), ``right`` the new side (+); ``left_note`` / ``right_note`` say where
        each came from (``marked`` / ``current``: ``m`` then ``d``, the mark is the base)."""
        super().__init__(**kwargs)
        self.left_note = left_note
        self.right_note = right_note
        self.left = left
        self.right = right
        self.left_run = left_run  # each side is read only inside its run
        self.right_run = right_run
        self.left_title = side_title(left, left_run, right_run)
        self.right_title = side_title(right, right_run, left_run)
        self.diff: Diff | None = None
        #: per-process noise masked (``z``): on from the start for guard trees
        self.normalise = default_normalise(left.path) and default_normalise(right.path)

    def _title(self) -> Text:
        badge = " diff · noise masked (z) " if self.normalise else " diff "
        t = Text(badge, style="bold reverse", end="", no_wrap=True, overflow="ellipsis")
        t.append(" − ", style="bold red")
        width = max(len(self.left_note), len(self.right_note))
        if width:
            t.append(f"{self.left_note:<{width}}  ", style="bold")
        t.append(literal(self.left_title, 160), style="red")
        t.append("\n" + " " * (len(badge) + 1) + "+ ", style="bold green")
        if width:
            t.append(f"{self.right_note:<{width}}  ", style="bold")
        t.append(literal(self.right_title, 160), style="green")
        return t

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="diff-title")
        yield Static(Text("computing diff…", style="cyan", no_wrap=True, overflow="ellipsis"), id="diff-status")
        yield DiffView(id="diff-view")
        yield KeyBar()

    async def on_mount(self) -> None:
        self.query_one(DiffView).focus()
        await self._first_frame_shows(self._compute())

    @staticmethod
    async def _first_frame_shows(worker: Worker[None]) -> None:
        """Hold the screen's first frame until ``worker`` has shown the diff (or its problem), at most
        :data:`FIRST_FRAME_WAIT_S`: the screen paints once mounted, and a diff that comes a moment
        later costs a second frame and the wait for the next refresh."""
        try:
            await asyncio.wait_for(worker.wait(), FIRST_FRAME_WAIT_S)
        except (asyncio.TimeoutError, WorkerError):
            pass  # still computing ("computing diff…" shows until it is done), or failed (it says why)

    @work(thread=True, exclusive=True)
    def _compute(self) -> None:
        # each side read once, in block reads (model.diff.read_side); a problem comes back as text
        diff, problem = diff_files(self.left.path, self.right.path,
                                   left_root=getattr(self.left, "root", None) or self.left_run,
                                   right_root=getattr(self.right, "root", None) or self.right_run,
                                   normalise=self.normalise)
        if diff is None:
            self.app.call_from_thread(self._failed, problem or "cannot read")
            return
        self.app.call_from_thread(self._show, diff)

    def _failed(self, message: str) -> None:
        self.query_one("#diff-status", Static).update(Text(literal(message), style="red"))

    @on(DiffView.NormaliseToggled)
    def handle_diff_view_normalise_toggled(self, event: DiffView.NormaliseToggled) -> None:
        self.action_toggle_normalise()

    def action_toggle_normalise(self) -> None:
        if self.diff is None:
            return  # still reading: the first diff already follows the current setting
        self.normalise = not self.normalise
        self.query_one("#diff-title", Static).update(self._title(), layout=False)  # two lines, as before
        self._status(Text("computing diff…", style="cyan"))
        self._recompute(self.diff, self.normalise)

    @work(thread=True, exclusive=True)
    def _recompute(self, old: Diff, normalise: bool) -> None:
        diff = compute_diff(old.a, old.b, normalise=normalise)  # the lines already read
        self.app.call_from_thread(self._show, diff)

    def _show(self, diff: Diff) -> None:
        self.diff = diff
        if diff.noise_only:
            n = max(len(diff.a), len(diff.b))
            status = Text(f"identical once noise is masked ({n} lines, shown once); z shows the raw difference",
                          style="bold green")
        elif diff.identical:
            status = Text(f"identical: both sides have the same content ({len(diff.a)} lines, shown once)",
                          style="bold green")
        else:
            status = Text(f"-{diff.removed} +{diff.added} · {len(diff.hunks)} hunk(s) · ] next  [ prev  "
                          "u unified/split  z noise", style="dim")
        self._status(status)
        suffix = Path(str(self.right.path)).suffix
        self.query_one(DiffView).set_diff(diff, self.left_title, self.right_title,
                                           language="python" if suffix == ".py" else None)

    def _status(self, text: Text) -> None:
        """One line of status, replacing one line: no new layout of the screen for it."""
        text.no_wrap, text.overflow = True, "ellipsis"
        self.query_one("#diff-status", Static).update(text, layout=False)
