"""The run screen: event tree (or flat timeline) on the left, detail or triage on the right.

The run is parsed in a thread worker in bounded reads and each read is folded into the model on the UI
loop, so the first screen paints after the first read and keys stay responsive while a 100k-event file
loads; a live run
is followed by a :class:`magi_tui.live.follower.RunFollower`, whose reports arrive as
:class:`~magi_tui.ui.messages.LiveEvent` messages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Static, Tab, Tabs

from magi_format.text import literal
from magi_tui.model import collector
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel, RunUpdate
from magi_tui.ui.actions import bindings
from magi_tui.ui.mark import HoldsMark, Mark, mark_of
from magi_tui.ui.messages import LiveEvent
from magi_tui.ui.screens import lazy
from magi_tui.ui.widgets.detail import EventDetail, FileRef, graph_file
from magi_tui.ui.widgets.event_tree import EventTree
from magi_tui.ui.widgets.file_view import FileView
from magi_tui.ui.widgets.footer import MagiFooter
from magi_tui.ui.widgets.timeline_view import TimelineView
from magi_tui.ui.widgets.triage_panel import NO_STOPS, NO_STOPS_YET, TriagePanel

if TYPE_CHECKING:  # imported where used: a run read once never follows, a P / K is a key away
    from magi_tui.live.follower import RunFollower
    from magi_tui.model.analysis.provenance import Jump
    from magi_tui.model.sources.reader import ReadResult

LOAD_FIRST_BYTES = 1 << 18  # the first read (~700 events): the first screen comes after it
LOAD_READ_BYTES = 1 << 20   # each later read (a few thousand events, folded in on the UI loop)
LOAD_SHOW_EVENTS = 20_000   # while loading, bring the tree up to date after at least this many events ...
#: ... and no fewer than it shows already: the tree doubles each time (3 updates on the way to 100k events, not
#: 5; 6 on the way to 1M, not 50), and each update is a relayout and repaint of the screen ...
LOAD_SHOW_S = 0.5  # ... and no sooner than this after the last one: a load done within it shows its tree once
LIVE_TITLE_S = 0.25         # live: the title's event count follows at most this often
DETAIL_SETTLE_S = 0.06  # the detail pane follows the cursor once it rests this long


class RunScreen(Screen):
    """One run directory."""

    BINDINGS = bindings("run")
    ACTION_SCOPES: tuple[str, ...] = ("run",)

    def __init__(self, run_path: Path, *, live: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = RunModel(run_path)
        self.live = live
        #: q quits rather than going back (set by whoever opened it in place of a first screen)
        self.quit_on_close = False
        self.loaded = False
        self.follow = live
        self._failure_pos = -1
        #: f was pressed while the run was still read and no failure was read yet: go to it once one is
        #: (or say there is none when the load ends)
        self._failure_wanted = False
        self._first_paint_done = False
        self._triage_default_done = False
        self._pending: RunUpdate | None = None
        self._shown_at = 0.0  # when the load last brought the tree up to date (perf_counter)
        self._title_at = 0.0
        self._title_timer: Timer | None = None
        self._detail_pending: tuple[str, Any] | None = None
        self._detail_timer: Timer | None = None
        self.follower: RunFollower | None = None
        self.live_note = ""  # e.g. the run was deleted while followed
        #: where provenance jumps left from: (event, file name, cursor line, marked lines); backspace pops
        self._jumps: list[tuple[Event, str, int, frozenset[int]]] = []
        self._step_token = 0  # the latest P / K: an older step's answer is dropped
        #: the timeline (hidden behind the tree) has not followed the model since it was last shown
        self._timeline_stale = True

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="run-title")
        with Horizontal(id="run-main"):
            with ContentSwitcher(id="left", initial="tree"):
                yield EventTree(self.run, id="tree")
                yield TimelineView(self.run, id="timeline")
            with ContentSwitcher(id="right", initial="detail"):
                yield EventDetail(self.run, id="detail")
                yield TriagePanel(self.run, id="triage", reading=lambda: not self.loaded)
        yield MagiFooter()

    def on_mount(self) -> None:
        self._update_title()
        self.query_one(EventTree).focus()
        self._load()
        self.set_interval(1.0, self._tick)

    def on_resize(self) -> None:
        self.set_class(self.size.width < 100, "-narrow")
        self.set_class(self.size.height < 32, "-short")

    def _update_title(self) -> None:
        from rich.text import Text

        r = self.run
        t = Text(end="")
        t.append(" magi-tui ", style="bold reverse")
        t.append(" " + literal(r.path.name), style="bold")
        status = r.status
        tri = r.triage
        if self.live:
            t.append("  ● LIVE", style="bold green")
        if self.live_note:
            t.append(f"  {self.live_note}", style="bold yellow")
        style = {"failed": "bold red", "interrupted": "bold red", "recovered": "yellow", "degraded": "bold yellow",
                 "ok": "green", "empty": "dim"}.get(status, "cyan")
        t.append(f"  {status}", style=style)
        outcome = r.outcome
        ended = outcome.headline() if outcome is not None else None
        if ended:
            t.append(f"  {literal(ended, 60)}", style="bold red")
        elif tri.compiled_nothing:
            t.append("  compiled nothing", style="bold yellow")
        t.append(f"  {len(r.events)} events", style="dim")
        problems = tri.problems  # one per failure, whatever it cascaded into; restarts are not failures
        if problems:
            unrec = sum(1 for c in problems if not c.recovered)
            t.append(f"  {len(problems)} failure(s)" + (f", {unrec} unrecovered" if unrec else ", recovered"),
                     style="red" if unrec else "yellow")
        if tri.restarts:
            t.append(f"  {len(tri.restarts)} restart(s)", style="magenta")
        if r.malformed:
            t.append(f"  {len(r.malformed)} malformed line(s)", style="yellow")
        if not self.loaded:
            t.append("  loading…", style="cyan")
        mark = mark_of(self.app)
        if mark is not None:
            t.append("  mark: ", style="dim")
            t.append(literal(mark.title, 50), style="magenta")
        # one line high (app.tcss): a new title needs no relayout of the screen
        self.query_one("#run-title", Static).update(t, layout=False)

    # -- loading -------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="load")
    def _load(self) -> None:
        """Parse the file in a thread, in bounded reads; each read is folded into the model on the UI
        loop (``call_from_thread`` waits for it, so reading never runs ahead of what is shown and the
        model is only ever changed on the loop). The first read is small, so the first screen comes
        at once; the tree is then brought up to date in doubling steps (see ``apply_update``: a cadence
        in events, not in time, so a busy machine does not do more work). The cycle collector is held
        off meanwhile, as for a headless load (``RunModel.load``): its passes walked what was read so
        far, again and again; ``_ingest`` freezes what was read."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        started = time.perf_counter()
        reader = self.run.reader
        first = True
        with collector.held():
            while not worker.is_cancelled:
                before = reader.offset
                res = reader.read(LOAD_FIRST_BYTES if first else LOAD_READ_BYTES)
                moved = reader.offset != before or bool(res.reset)
                if not self._call_ui(self._ingest, res, first):
                    return
                first = False
                if not moved:
                    break
        if not worker.is_cancelled:
            self._call_ui(self._loaded_after_refresh, len(self.run.events), time.perf_counter() - started)

    def _loaded_after_refresh(self, events: int, seconds: float) -> None:
        # ``loaded`` once what was read is on screen (tests and benchmarks wait for it)
        if self._alive():
            self.call_after_refresh(self.on_loaded, events, seconds)

    def _call_ui(self, callback: Callable[..., object], *args: object) -> bool:
        """Run ``callback`` on the UI loop and wait for it; False when the app or screen is gone."""
        try:
            self.app.call_from_thread(callback, *args)
        except RuntimeError:  # the app is closing
            return False
        return self._alive()

    def _alive(self) -> bool:
        """Still shown or stacked: ``is_attached`` stays True while a popped screen's widgets are
        being removed, and the load must not touch them then."""
        return self.is_attached and self in self.app.screen_stack

    def _ingest(self, res: ReadResult, initial: bool) -> None:
        if not self._alive():
            return
        up = self.run.ingest(res)
        self.apply_update(up, initial=initial)
        if up.reset:  # the replaced file's events (frozen so far) can go now, before freezing again
            collector.let_go(collect=True)
        # What was read lives as long as the screen: out of the collector's full passes, which otherwise
        # walk every event read so far, again and again (late in a big load, and while a live run is
        # followed); unmounting the screen gives it back (on_unmount).
        collector.keep_out_of_passes()

    def apply_update(self, up: RunUpdate, *, initial: bool = False) -> None:
        """Show what one ``RunModel.update()`` read (called on the UI loop, in read order).

        While the initial load is running, updates are coalesced and shown once ``LOAD_SHOW_EVENTS``
        events and as many as are shown already have come in (each tree change relayouts the screen and
        re-renders the visible rows, so the count of them grows with the log of the file's length), and
        ``LOAD_SHOW_S`` has passed since the last time (a 100k-event run, read in less, is shown twice:
        after its first read and when loaded). Once
        loaded (live), every update is shown at once."""
        if initial or up.reset or self.loaded:
            if self._pending is not None:
                pending, self._pending = self._pending, None
                if not (initial or up.reset):
                    up = pending.merge(up)
            self._show_update(up, initial=initial)
            return
        self._pending = up if self._pending is None else self._pending.merge(up)
        waiting = len(self._pending.events)
        if waiting >= max(LOAD_SHOW_EVENTS, len(self.run.events) - waiting) \
                and time.perf_counter() - self._shown_at >= LOAD_SHOW_S:
            self.flush_pending()  # the title too

    def flush_pending(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._show_update(pending)

    def _show_update(self, up: RunUpdate, *, initial: bool = False) -> None:
        if not self._alive():
            return  # the app closes (or the screen was popped) while the load still runs: nothing to show
        try:
            self._show_update_now(up, initial)
        except NoMatches:
            if self._alive():
                raise  # a widget missing from a live screen is a bug, not a shutdown

    def _show_update_now(self, up: RunUpdate, initial: bool) -> None:
        tree = self.query_one(EventTree)
        self._shown_at = time.perf_counter()
        if initial or up.reset:
            if up.reset:
                collector.let_go()  # the old model may be collected now
                self._jumps.clear()  # they point at the replaced file's events
            tree.rebuild()
            if up.reset and not initial:
                self.notify(f"{self.run.source_name} was {up.reset}: re-read from the start",
                            severity="warning", timeout=6)
        else:
            tree.apply(up)
        if up.malformed and self.loaded:
            m = up.malformed[0]
            self.notify(f"malformed line {m.line_no}: {m.reason}", severity="warning")
        self._refresh_timeline(None if initial or up.reset else up.recovered)
        if up.failures and self.loaded:
            f = up.failures[0]
            self.notify(f"failure: #{f.event.index} {literal(f.event.name, 60)} {literal(f.exception_type, 40)}",
                        severity="error", timeout=8)
        if self.follow and self.loaded and up.events:
            tree.reveal(up.events[-1], phase=False)
        if self.loaded:
            # the triage list is rebuilt only when it is on screen or its content changed
            triage_visible = self.query_one("#right", ContentSwitcher).current == "triage"
            if triage_visible or up.failures or up.recovered:
                self._triage_stale = not triage_visible
                if triage_visible:
                    self.query_one(TriagePanel).refresh_contents()
            self.query_one(EventDetail).refresh_files()
        if tree.cursor_node is None and self.run.events:
            tree.move_cursor_to_line(0)
        if self._failure_wanted and self.run.triage.first_failure is not None:
            self.action_first_failure()  # f, pressed before the failure was read
        if initial or up.reset or not self.loaded:
            self._update_title()
        else:
            self._update_title_soon()

    def _refresh_timeline(self, recovered: list | None = None) -> None:
        """The timeline follows the model while it is shown; hidden, it is brought up to date when ``t``
        shows it (its new length is a relayout of the screen: five of them during a 100k-event load)."""
        tl = self.query_one(TimelineView)
        tl.follow = self.follow
        if self.query_one("#left", ContentSwitcher).current != "timeline":
            self._timeline_stale = True
            return
        tl.refresh_size(None if self._timeline_stale else recovered)
        self._timeline_stale = False

    def _update_title_soon(self) -> None:
        """Live: the title (a relayout of the screen) at most every ``LIVE_TITLE_S``, and surely after."""
        wait = self._title_at + LIVE_TITLE_S - time.perf_counter()
        if wait <= 0:
            self._title_due()
        elif self._title_timer is None:
            self._title_timer = self.set_timer(wait, self._title_due)

    def _title_due(self) -> None:
        self._title_timer = None
        self._title_at = time.perf_counter()
        self._update_title()

    def on_loaded(self, events: int, seconds: float) -> None:
        self.flush_pending()
        if self.live:
            collector.collect_less_often()
        self.loaded = True
        if self._failure_wanted:  # f while reading, and the whole run read: the failure, or that there is none
            self._failure_wanted = False
            self.action_first_failure()
        self.load_seconds = seconds
        self.log(f"loaded {events} events in {seconds:.3f}s")
        self.query_one(TriagePanel).refresh_contents()
        self._refresh_timeline()
        if self.run.triage.failures and not self._triage_default_done:
            self.query_one("#right", ContentSwitcher).current = "triage"
        self._triage_default_done = True
        self._update_title()
        if self.live:
            self.start_live()

    def start_live(self) -> None:
        from magi_tui.live.follower import RunFollower

        if self.follower is None:
            self.follower = RunFollower(self.run, lambda e: self.post_message(LiveEvent(e)))
        self.follower.start()

    def on_unmount(self) -> None:
        if self.follower is not None:
            self.follower.stop()
        collector.let_go()  # this run's events were kept out of the collector while it was shown (_ingest)

    @on(LiveEvent)
    def handle_live_event(self, message: LiveEvent) -> None:
        """Show what the follower read (on the UI loop, in the order it was read)."""
        from magi_tui.live.follower import Deleted, FilesMayHaveChanged, Finished, FollowFailed, Restored, Updated

        message.stop()
        ev = message.event
        if not self.is_attached:
            return
        if isinstance(ev, Updated):
            self.apply_update(ev.update)
            if self.follow and ev.update.events:
                self.query_one(EventTree).fold_stale_buckets()
        elif isinstance(ev, FilesMayHaveChanged):
            if self.loaded:
                self.query_one(EventDetail).refresh_files()
        elif isinstance(ev, Deleted):
            self.notify(f"The {ev.what} was deleted: showing the {ev.events_read} events read so far.",
                        severity="warning", timeout=10)
            self._set_live_note("✗ DELETED (showing what was read)")
        elif isinstance(ev, Restored):
            self._set_live_note("")
            self.notify(f"{self.run.source_name} is back: following it again.", timeout=5)
        elif isinstance(ev, FollowFailed):
            self.notify(f"live update failed: {literal(ev.error, 200)}", severity="error", timeout=10)
        elif isinstance(ev, Finished) and self.live:
            self.stop_live()  # the tracer closed the run: it is finished, not LIVE

    def _set_live_note(self, note: str) -> None:
        if self.live_note != note:
            self.live_note = note
            self._update_title()

    def read_now(self) -> None:
        """Read and show everything written so far (e.g. when the program has just exited)."""
        if self.follower is not None:
            self.follower.poll()
            self.follower.flush()

    def _tick(self) -> None:
        if self.run.open_spans:
            self.query_one(EventTree).tick_open()

    # -- selection -----------------------------------------------------------------------------
    @on(EventTree.NodeHighlighted)
    def handle_tree_node_highlighted(self, message: EventTree.NodeHighlighted) -> None:
        node = message.node
        if node.data is None:
            return
        self._show_detail_soon(node.data.kind, node.data.obj)

    def _show_detail_soon(self, kind: str, obj: Any) -> None:
        """Show the highlighted item once the cursor settles: holding ``j`` or following a live run
        moves the cursor many times a second, and rebuilding the file tabs each time is wasted."""
        self._detail_pending = (kind, obj)
        if self._detail_timer is not None:
            self._detail_timer.stop()
        self._detail_timer = self.set_timer(DETAIL_SETTLE_S, self._show_pending_detail)

    def _show_pending_detail(self) -> None:
        self._detail_timer = None
        if self._detail_pending is not None:
            kind, obj = self._detail_pending
            self._detail_pending = None
            self.query_one(EventDetail).show(kind, obj)

    @on(EventTree.NodeSelected)
    def handle_tree_node_selected(self, message: EventTree.NodeSelected) -> None:
        self.query_one("#right", ContentSwitcher).current = "detail"
        node = message.node
        if node.data is not None:
            self.query_one(EventDetail).show(node.data.kind, node.data.obj)

    @on(TimelineView.Highlighted)
    def handle_timeline_view_highlighted(self, message: TimelineView.Highlighted) -> None:
        self._show_detail_soon("event", message.event)

    @on(TimelineView.Selected)
    def handle_timeline_view_selected(self, message: TimelineView.Selected) -> None:
        self.jump_to(message.event, switch_to_tree=True)

    @on(TriagePanel.Jump)
    def handle_triage_panel_jump(self, message: TriagePanel.Jump) -> None:
        self.jump_to(message.event, show_detail=False)

    def jump_to(self, ev: Event, *, switch_to_tree: bool = False, show_detail: bool = True) -> None:
        tree = self.query_one(EventTree)
        if switch_to_tree:
            self.query_one("#left", ContentSwitcher).current = "tree"
            self.remove_class("-timeline")
        if self.query_one("#left", ContentSwitcher).current == "timeline":
            self.query_one(TimelineView).show_event(ev)
        node = tree.reveal(ev)
        if node is not None and node.data is not None:
            self._detail_pending = None
            self.query_one(EventDetail).show(node.data.kind, node.data.obj, force=True)
        if show_detail:
            self.query_one("#right", ContentSwitcher).current = "detail"
            if self.query_one("#left", ContentSwitcher).current == "tree":
                tree.focus()

    def _shown(self, side: str) -> Widget:
        """What the ``left`` or ``right`` switcher shows (each always shows one of its panes)."""
        shown = self.query_one(f"#{side}", ContentSwitcher).visible_content
        assert shown is not None, f"the {side} pane shows nothing"
        return shown

    # -- actions -------------------------------------------------------------------------------
    def action_back(self) -> None:
        """Esc: close what is open on this screen (timeline, triage, focus in the right pane), then
        the screen itself. Never quits: on the first screen it says how to."""
        left = self.query_one("#left", ContentSwitcher)
        right = self.query_one("#right", ContentSwitcher)
        if left.current == "timeline":
            self.action_toggle_timeline()
        elif right.current == "triage":
            self.action_toggle_triage()
        elif right.visible_content is not None and right.visible_content.has_focus_within:
            self._shown("left").focus()
        elif len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.notify("This is the first screen: q quits (ctrl+q from anywhere).", timeout=3)

    def action_close(self) -> None:
        """q: close this screen; quit on the first one (or on the run attach / run opened by itself)."""
        if len(self.app.screen_stack) > 2 and not self.quit_on_close:
            self.app.pop_screen()
        else:
            self.app.exit()

    def stop_live(self) -> None:
        """The run is no longer written (its program ended): drop LIVE and follow mode."""
        self.live = False
        self.follow = False
        if self.follower is not None:
            self.follower.stop()
        self.query_one(TimelineView).follow = False
        self._update_title()

    def action_first_failure(self) -> None:
        ff = self.run.triage.first_failure
        if ff is None:
            if not self.loaded:  # "none" is not known yet: the rest of the run may hold one
                if not self._failure_wanted:
                    self._failure_wanted = True
                    self.notify("Still reading the run: f goes to the first failure as soon as one is read.",
                                timeout=3)
                return
            self.notify("No failed events in this run.")
            return
        self._failure_wanted = False
        self._triage_default_done = True  # the user chose what the right pane shows: the load's end keeps it
        # n / p go on from there
        self._failure_pos = next((i for i, st in enumerate(self.run.triage.stops) if st[0] is ff.event), 0)
        self.jump_to(ff.event)

    def action_step_failure(self, delta: int) -> None:
        """n / p: step through failures and restarts, one stop per cascade or restart (``Triage.stops``:
        the enclosing lifecycles that failed with it are folded under it, as in triage and the header)."""
        stops = self.run.triage.stops
        if not stops:
            self.notify(NO_STOPS if self.loaded else NO_STOPS_YET)
            return
        self._failure_pos = (self._failure_pos + delta) % len(stops)
        ev, what, recovered = stops[self._failure_pos]
        self.jump_to(ev, show_detail=self.query_one("#right", ContentSwitcher).current != "triage")
        self.notify(f"{what} {self._failure_pos + 1}/{len(stops)}: #{ev.index} {literal(ev.name, 50)}"
                    + (" (recovered)" if recovered else " (NOT recovered)"), timeout=3)

    def action_toggle_triage(self) -> None:
        sw = self.query_one("#right", ContentSwitcher)
        sw.current = "detail" if sw.current == "triage" else "triage"
        if sw.current == "triage":
            self.query_one(TriagePanel).refresh_contents()
            self._triage_stale = False
            self.query_one("#triage-list").focus()
        else:
            self._shown("left").focus()

    def action_toggle_timeline(self) -> None:
        sw = self.query_one("#left", ContentSwitcher)
        tree = self.query_one(EventTree)
        tl = self.query_one(TimelineView)
        self.set_class(sw.current == "tree", "-timeline")
        if sw.current == "tree":
            sw.current = "timeline"
            self._refresh_timeline()
            sel = self.query_one(EventDetail).current_event
            if sel is not None:
                tl.show_event(sel)
            tl.focus()
        else:
            sw.current = "tree"
            tree.focus()

    def action_focus_other(self) -> None:
        if self._shown("left").has_focus:
            right = self.query_one("#right", ContentSwitcher)
            if right.current == "detail":  # the file: j / k move its cursor, P follows provenance
                self.query_one("#detail-file", FileView).lines.focus()
            else:
                self._shown("right").focus()
        else:
            self._shown("left").focus()

    def action_toggle_follow(self) -> None:
        if not self.live:
            self.follow = False
            self.notify("F follows a run while it is written; this run is not live "
                        "(open it with magi-tui attach to follow it).", timeout=4)
            return
        self.follow = not self.follow
        self.query_one(TimelineView).follow = self.follow
        self.notify(f"follow {'on: the newest event is selected as it arrives' if self.follow else 'off'}")

    def action_search(self) -> None:
        self.query_one("#right", ContentSwitcher).current = "detail"
        fv = self.query_one("#detail-file", FileView)
        fv.focus()
        fv.action_search()

    def current_ref(self) -> FileRef | None:
        """The file on screen (or the current event's graph) — what ``m`` marks and ``d`` compares."""
        detail = self.query_one(EventDetail)
        ev = detail.current_event
        if ev is None:
            return None
        cur = detail.current_file
        if cur is not None and cur.name != "attributes.json":
            return cur
        return graph_file(detail.refs, ev)

    def action_mark(self) -> None:
        ref = self.current_ref()
        if ref is None:
            self.notify("Select an event with files to mark.", severity="warning")
            return
        if isinstance(self.app, HoldsMark):
            self.app.mark = Mark(self.run.path, ref)
        self.notify(f"marked {literal(ref.title, 70)} — select another event (any run) and press d")
        self._update_title()

    def action_diff(self) -> None:
        detail = self.query_one(EventDetail)
        ev = detail.current_event
        mark = mark_of(self.app)
        if mark is not None:
            ref = self.current_ref()
            if ref is None:
                self.notify("Select an event with files to compare with the mark.", severity="warning")
                return
            if ref.path == mark.ref.path:
                self.notify("That is the marked file itself: select another event.", severity="warning")
                return
            # the mark is the base (−), what is on screen now the new side (+)
            self.app.push_screen(lazy("DiffScreen")(mark.ref, ref, left_run=mark.run_path, right_run=self.run.path,
                                                    left_note="marked", right_note="current"))
            return
        if ev is None:
            self.notify("Select an event first.", severity="warning")
            return
        span = detail.current_span or self.run.span_of(ev)
        if span is None or span.before is None or span.end is None:
            self.notify("d compares an after/failed event with its before (or press m to mark, then d).",
                        severity="warning")
            return
        refs = detail.refs
        left = graph_file(refs, span.before, graphs_only=True)
        right = graph_file(refs, span.end, graphs_only=True)
        if left is None or right is None or left.path is None or right.path is None:
            self.notify(f"{literal(span.lifecycle)}: no graph on both sides to compare (d diffs a step's graph "
                        "before and after; m marks any file to diff against another).", severity="warning")
            return
        self.app.push_screen(lazy("DiffScreen")(left, right, left_run=self.run.path, right_run=self.run.path))

    def action_compiled_functions(self) -> None:
        if not self.run.has_compiled_functions:
            if not self.run.has_event_folders:
                self.notify("A TORCH_TRACE log or TORCH_COMPILE_DEBUG folder has no compiled_functions/ (the "
                            "tracer writes it): i shows each compile's guards and metrics.", severity="warning")
            else:
                self.notify("This run has no compiled_functions/ (the compile failed, is still running, "
                            "or nothing was compiled).", severity="warning")
            return
        self.app.push_screen(lazy("CompiledFunctionsScreen")(self.run.path))

    def action_frames(self) -> None:
        self.app.push_screen(lazy("FramesScreen")(self.run, on_jump=self.jump_to))

    def action_compile_info(self) -> None:
        self.app.push_screen(lazy("CompileInfoScreen")(self.run))

    def action_bug_report(self) -> None:
        self.notify("Writing the bug report…", timeout=3)
        self._write_bug_report()

    @work(thread=True, exclusive=True, group="bug-report")
    def _write_bug_report(self) -> None:
        from magi_tui.model.outputs.bugreport import ReportError, write_report_beside

        try:
            path = write_report_beside(self.run.path)
        except ReportError as exc:
            self.app.call_from_thread(self.notify, literal(str(exc), 300), severity="warning")
            return
        self.app.call_from_thread(self.notify, f"wrote {literal(str(path), 200)}", timeout=20)

    # -- Inductor provenance: kernel <-> post-grad nodes <-> pre-grad nodes (issue #13) -----------
    def action_provenance(self, direction: int) -> None:
        """P (towards the source) / K (towards the code) from the cursor line of the file shown; the
        model finds the step in a worker, :meth:`_landed` shows it; backspace comes back."""
        detail = self.query_one(EventDetail)
        fv = self.query_one("#detail-file", FileView)
        # the file the view shows (the active tab may lag behind it while tabs are rebuilt)
        ref = next((r for r in detail.refs if r.path is not None and r.path == fv.path), None)
        if ref is None or fv.lines.file is None:
            self.notify("P / K follow Inductor provenance from a file: open an output code (inductor_output.py), "
                        "a post-grad or a pre-grad graph.", severity="warning", timeout=5)
            return
        line = fv.cursor_line
        if line < 0:
            self.notify("Put the cursor on a line of the file first: o to the file, then j / k (or / to search).",
                        severity="warning", timeout=5)
            return
        self.query_one("#right", ContentSwitcher).current = "detail"
        self._step_token += 1
        self._provenance_step(ref.event, ref.name, line, direction, (ref.event, ref.name, line, fv.lines.marked),
                              self._step_token)

    @work(thread=True, group="provenance")
    def _provenance_step(self, ev: Event, name: str, line: int, direction: int,
                         here: tuple[Event, str, int, frozenset[int]], token: int) -> None:
        from magi_tui.model.analysis.provenance import follow, reverse

        try:
            res: Jump | str = (follow if direction > 0 else reverse)(self.run, ev, name, line)
        except Exception as exc:  # a step that cannot be taken says why; it never takes the app down
            res = f"provenance: {type(exc).__name__}: {exc}"
        self._call_ui(self._landed, res, here, token)

    def _landed(self, res: Jump | str, here: tuple[Event, str, int, frozenset[int]], token: int) -> None:
        if token != self._step_token:
            return  # P / K pressed again meanwhile: that step's answer is the one to show
        if isinstance(res, str):
            self.notify(literal(res, 300), severity="warning", timeout=6)
            return
        if self._land(res.event, res.file, res.line, frozenset(res.lines)):
            self._jumps.append(here)
            self.notify(literal(res.note, 300) + "  (backspace: back)", timeout=8)

    def action_jump_back(self) -> None:
        if not self._jumps:
            self.notify("No provenance jump to come back from (P / K jump; backspace comes back).", timeout=3)
            return
        self._step_token += 1  # a P / K still on its way lands nowhere now
        ev, name, line, marks = self._jumps.pop()
        self._land(ev, name, line, marks)

    def _land(self, ev: Event, name: str, line: int, marks: frozenset[int]) -> bool:
        """Select ``ev`` in the tree (as any jump does), its file ``name`` in the detail pane, the cursor
        on ``line`` and ``marks`` marked; focus in the file, so j / k / P go on from there."""
        self.jump_to(ev)
        detail = self.query_one(EventDetail)
        i = next((k for k, r in enumerate(detail.refs) if r.event is ev and r.name == name), None)
        ref = detail.refs[i] if i is not None else None
        if i is None or ref is None or ref.path is None:
            self.notify(f"{literal(name, 80)} of #{ev.index} is not shown here (the event is no longer in the tree)",
                        severity="warning")
            return False
        fv = self.query_one("#detail-file", FileView)
        fv.goto(ref.path, line, marks)
        if i != 0:  # the detail opened its first tab: switch to ours once the new tabs are up
            self._settle_tab(ref, f"file-{detail._gen}-{i}", line, marks, 0)
        fv.lines.focus()
        return True

    def _settle_tab(self, ref: FileRef, tab_id: str, line: int, marks: frozenset[int], tries: int) -> None:
        """Activate the tab of ``ref`` once it is mounted; again while the rebuilt tabs' own first
        activation lands after ours (Tabs activates its first tab when that tab is mounted)."""
        detail = self.query_one(EventDetail)
        fv = self.query_one("#detail-file", FileView)
        if ref.path is None or ref not in detail.refs or (fv.path == ref.path and detail.current_file is ref):
            return
        tabs = detail.query_one("#detail-tabs", Tabs)
        if any(t.id == tab_id for t in tabs.query(Tab)) and tabs.active != tab_id:
            fv.goto(ref.path, line, marks)
            tabs.active = tab_id
        if tries < 100:
            self.set_timer(0.02, lambda: self._settle_tab(ref, tab_id, line, marks, tries + 1))
