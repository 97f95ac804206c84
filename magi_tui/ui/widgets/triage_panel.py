"""The triage panel: what happened, did it match expectations, where to look first, and why.

The checks, the graph-break worklist, the recompiles explained and the frames all come from the model
(:mod:`magi_tui.model.analysis.checks`, the same analysis ``magi-tui triage`` prints). Failures are listed one per
cascade with the enclosing failed lifecycles folded under them; a Dynamo restart is listed under
Restarts, not as a failure. Choosing a row (Enter) asks the screen to jump to that event. Sections show
their first ``CAP`` rows so a recompile storm cannot make the panel slow (an OptionList measures every row
it holds); the "… N more" row of a section shows the rest on Enter.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal, overload

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option, OptionDoesNotExist

from magi_format.text import literal
from magi_tui.live.analysis_throttle import AnalysisThrottle
from magi_tui.model import collector
from magi_tui.model.analysis.checks import Analysis, Check, analyse
from magi_tui.model.outputs.triage_sections import Row, failure_spans, folded_row, triage_sections, triage_summary
from magi_tui.model.run import RunModel
from magi_tui.model.triage import Failure
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.labels import time_bar
from magi_tui.ui.messages import EventMessage

CAP = 50
#: how the panel shows each role of the model's spans (model/outputs/triage_sections.py ROLES)
ROLE_STYLE = {"": "", "dim": "dim", "label": "magenta", "warn": "yellow", "bad": "red", "strong": "bold",
              "key": "bold yellow", "path": "cyan", "good": "green", "worst": "bold red", "changed": "bold reverse",
              "alarm": "bold reverse red", "title": "bold underline", "bar": "cyan", "info": "cyan"}


def row_text(row: Row) -> Text:
    """One finding as the list shows it: the first span is the row's base style, as it always was."""
    first, *rest = row.spans
    text = Text(first.text, style=ROLE_STYLE[first.role], end="")
    for sp in rest:
        text.append(time_bar(sp.value or 0.0) if sp.role == "bar" else sp.text, style=ROLE_STYLE[sp.role])
    return text


#: n / p with nothing to step through: the whole run read, or still being read
NO_STOPS = "No failures or restarts in this run."
NO_STOPS_YET = "No failure or restart read yet: the run is still being read."


class TriageList(OptionList):
    """The findings list: an OptionList that also moves with j / k / g / G, as help says lists do."""

    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="first", bottom="last")


class TriagePanel(Vertical):
    """Summary and checks on top, a keyboard list of findings below."""

    BINDINGS = [
        *bindings("triage"),
    ]

    class Jump(EventMessage):
        """A finding was chosen: jump to its event."""

    def __init__(self, run: RunModel, *, reading: Callable[[], bool] = lambda: False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run
        #: whether the run is still being read (its first load): "none" is not known yet
        self.reading = reading
        self._failure_pos = -1
        self._shown_sig: tuple | None = None
        #: the run's analysis and when to redo it (live/analysis_throttle.py)
        self.throttle = AnalysisThrottle()
        self._expanded: set[str] = set()  # sections whose "… N more" row was chosen

    def compose(self) -> ComposeResult:
        yield Static(id="triage-summary")
        yield TriageList(id="triage-list")

    def on_mount(self) -> None:
        self.refresh_contents()

    # -- the model's analysis, throttled ---------------------------------------------------------
    def _findings_sig(self) -> tuple:
        return self.run.findings_signature(CAP)

    @overload
    def analysis(self, *, wait: Literal[True] = ...) -> Analysis: ...
    @overload
    def analysis(self, *, wait: bool) -> Analysis | None: ...

    def analysis(self, *, wait: bool = True) -> Analysis | None:
        """The model's analysis of the run, redone as :class:`~magi_tui.live.analysis_throttle.AnalysisThrottle`
        says: here, in a thread (``wait`` false: the old analysis, or None the first time, is returned
        meanwhile and the panel refreshed when the new one is in), or later by a timer."""
        sig = self._findings_sig()
        now = time.monotonic()
        th = self.throttle
        n = len(self.run.events)
        plan, delay = th.plan(sig, n, now, can_thread=not wait and self.is_mounted, can_wait=self.is_mounted)
        if plan == "thread":
            self.run_worker(lambda: self._analyse_in_thread(sig, now), thread=True, group="triage-analysis",
                            exit_on_error=False)
        elif plan == "now":
            t0 = time.perf_counter()
            result = analyse(self.run)
            th.made(result, sig, now, n, time.perf_counter() - t0)
        elif plan == "later":
            self.set_timer(delay, self._catch_up)
        return th.result

    def _analyse_in_thread(self, sig: tuple, at: float) -> None:
        run = self.run
        events, n = run.events, len(run.events)
        t0 = time.perf_counter()
        try:
            # the collector held off, as for a load: the analysis makes a row per frame and no garbage
            # cycle, and each pass walked them as they grew
            with collector.held():
                result: Analysis | None = analyse(run)
        except Exception:  # the model changed under it (a live update): redo it on the loop
            result = None
        cost = time.perf_counter() - t0
        try:
            self.app.call_from_thread(self._analysis_done, result, events, n, sig, at, cost)
        except RuntimeError:  # the app is gone
            pass

    def _analysis_done(self, result: Analysis | None, events: list, n: int, sig: tuple, at: float,
                       cost: float) -> None:
        overtaken = self.run.events is not events or len(events) != n
        self.throttle.thread_done(result, overtaken, sig, at, n, cost)
        if self.is_mounted:
            self.refresh_contents()

    def _catch_up(self) -> None:
        self.throttle.caught_up()
        self.refresh_contents()

    def checks(self) -> list[Check]:
        return self.analysis().checks

    # -- summary ---------------------------------------------------------------------------------
    def summary_text(self, a: Analysis | None = None) -> Text:
        """The model's summary (:func:`triage_summary`) in the panel's styles."""
        a = a if a is not None else self.analysis()
        text = Text(end="")
        for sp in triage_summary(self.run, a):
            text.append(sp.text, style=ROLE_STYLE[sp.role])
        return text

    # -- the list --------------------------------------------------------------------------------
    def _signature(self, a: Analysis) -> tuple:
        # what the shown analysis was made from (not the run now: a deferred analysis is caught up later)
        return (self.throttle.sig, self.throttle.n, len(a.worklist), a.graph_break_total, len(a.recompiles),
                tuple((f.key, f.compiles, f.graph_breaks, f.limit_hit) for f in a.frames[:CAP]))

    def refresh_contents(self) -> None:
        """Update the summary; rebuild the list only when what it lists changed (a live run calls
        this on every update, and rebuilding an OptionList of hundreds of rows is not free)."""
        a = self.analysis(wait=False)
        if a is None:
            self.query_one("#triage-summary", Static).update(Text("Analysing the run …", style="dim"))
            return
        self.query_one("#triage-summary", Static).update(self.summary_text(a))
        sig = self._signature(a)
        if sig == self._shown_sig:
            return
        self._shown_sig = sig
        ol = self.query_one("#triage-list", OptionList)
        highlighted = ol.highlighted
        ol.clear_options()
        options: list[Option] = []
        used: set[str] = set()
        for sec in triage_sections(self.run, a, CAP, self._expanded):
            if not sec.panel:
                continue
            options.append(Option(Text(f"{sec.title} ({sec.count})", style="bold underline"), disabled=True))
            for r in sec.rows:
                body = row_text(r)
                oid = f"{r.nav}:{r.target.seq}" if r.target is not None and not r.inert else None
                if oid is None or oid in used:
                    options.append(Option(body, disabled=oid is None))
                else:
                    used.add(oid)
                    options.append(Option(body, id=oid))
            if sec.left > 0:
                options.append(Option(Text(f"… {sec.left} more (Enter shows them)", style="dim"),
                                      id=f"more:{sec.title}"))
            if sec.note is not None:
                note = row_text(sec.note)
                note.end = "\n"
                options.append(Option(note, disabled=True))
        if len(options) == 0:
            msg = ("Nothing recorded: see the summary above." if a.status == "empty" else
                   "Nothing to triage: no failures, restarts, recompiles, graph breaks or cache misses.")
            options.append(Option(Text(msg, style="yellow" if a.status == "empty" else "green"), disabled=True))
        # a list taller than the panel gets its scrollbar: its gutter is kept from the start, so the rows
        # are measured once, at the width they are shown (the scrollbar's arrival re-measured all of them); a list that fits has none, as before
        gutter = "stable" if len(options) > ol.size.height > 0 else "auto"
        if ol.styles.scrollbar_gutter != gutter:
            ol.styles.scrollbar_gutter = gutter
        ol.add_options(options)
        if highlighted is not None and highlighted < ol.option_count:
            ol.highlighted = highlighted

    @staticmethod
    def _folded_text(f: Failure) -> Text:
        return row_text(folded_row(f))

    @staticmethod
    def _failure_text(f: Failure) -> Text:
        return row_text(Row(failure_spans(f)))

    @on(OptionList.OptionSelected)
    def handle_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        oid = message.option.id or ""
        if oid.startswith("more:"):
            self._expanded.add(oid[5:])
            self._shown_sig = None
            self.refresh_contents()
            return
        if oid.startswith("cache_why:") and self._open_lookups(int(oid.rsplit(":", 1)[1])):
            return   # the cache-miss line: the two lookups side by side (a miss with no key recorded jumps)
        if ":" in oid:
            seq = int(oid.rsplit(":", 1)[1])
            self.post_message(self.Jump(self.run.events[seq]))

    def action_cache_lookups(self) -> None:
        """``L``: the highlighted cache miss (the cache-miss line, or a row under Cache misses) beside the
        lookup it was compared with, differing key components first."""
        ol = self.query_one("#triage-list", OptionList)
        i = ol.highlighted
        oid = (ol.get_option_at_index(i).id or "") if i is not None else ""
        if oid.startswith(("cache_why:", "Cache misses:")):
            if not self._open_lookups(int(oid.rsplit(":", 1)[1])):
                self.app.notify("This miss's key was not recorded: nothing to compare.", severity="warning")
            return
        self.app.notify("Select the cache-miss line (under “Why the cache missed”) or a row under “Cache "
                        "misses”.", severity="warning")

    def _open_lookups(self, seq: int) -> bool:
        """Push the lookups screen for the miss at event ``seq``; False when the model explained no such miss."""
        from magi_tui.model.analysis.cache_verdict import cache_miss, run_shown
        from magi_tui.ui.screens import lazy

        v = cache_miss(self.run)
        m = v.miss_at(self.run.events[seq].index)
        if m is None or m.explained.nearest is None:
            return False
        self.app.push_screen(lazy("CacheLookupsScreen")(m.explained, this_run=run_shown(self.run),
                                                        other_run=v.against(m), factors=m.factor_texts,
                                                        names=m.names))
        return True

    def action_step(self, delta: int) -> None:
        """n / p: one stop per failure cascade or restart (``Triage.stops``), as the screen's n / p and the
        header count them (the lifecycles that failed with it are folded under its row)."""
        stops = self.run.triage.stops
        if not stops:
            self.app.notify(NO_STOPS_YET if self.reading() else NO_STOPS)
            return
        self._failure_pos = (self._failure_pos + delta) % len(stops)
        ev, what, recovered = stops[self._failure_pos]
        ol = self.query_one("#triage-list", OptionList)
        for oid in (f"fail:{ev.seq}", f"restart:{ev.seq}"):
            try:
                ol.highlighted = ol.get_option_index(oid)
                break
            except OptionDoesNotExist:  # beyond the section's cap, or the list is behind a live run
                continue
        self.app.notify(f"{what} {self._failure_pos + 1}/{len(stops)}: #{ev.index} {literal(ev.name, 50)}"
                        + (" (recovered)" if recovered else " (NOT recovered)"), timeout=3)
        self.post_message(self.Jump(ev))
