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

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option, OptionDoesNotExist

from magi_format.text import literal
from magi_tui.model import collector
from magi_tui.model.analysis.checks import Analysis, Check, analyse
from magi_tui.model.outputs.triage_sections import Row, failure_spans, folded_row, triage_sections, triage_summary
from magi_tui.model.run import RunModel
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.labels import time_bar
from magi_tui.ui.messages import EventMessage

CAP = 50
#: what analysing one event costs before the panel has timed an analysis of its own (measured on a big run)
EVENT_COST_S = 0.5e-6
#: in a live run the analysis (frames, compile time) is refreshed at most this often unless findings change
REANALYSE_S = 1.0
#: an analysis that took longer than this is redone in a thread (the UI loop must not stall on it)
THREAD_MIN_S = 0.03
#: threaded analyses overtaken by updates in a row before the next one is done on the loop
MAX_RACES = 3
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

    def __init__(self, run: RunModel, **kwargs) -> None:
        super().__init__(**kwargs)
        self.run = run
        self._failure_pos = -1
        self._shown_sig: tuple | None = None
        self._analysis: Analysis | None = None
        self._analysis_sig: tuple | None = None
        self._analysis_at = 0.0
        self._analysis_n = -1
        self._analysis_cost = 0.0
        self._catch_up_pending = False
        self._expanded: set[str] = set()  # sections whose "… N more" row was chosen
        self._thread_running = False
        self._races = 0  # threaded analyses in a row that an update overtook

    def compose(self) -> ComposeResult:
        yield Static(id="triage-summary")
        yield TriageList(id="triage-list")

    def on_mount(self) -> None:
        self.refresh_contents()

    # -- the model's analysis, throttled ---------------------------------------------------------
    def _findings_sig(self) -> tuple:
        return self.run.findings_signature(CAP)

    def analysis(self, *, wait: bool = True) -> Analysis | None:
        """The model's analysis of the run. In a live run it is redone when the findings change, at most
        every few times its own cost (a recompile storm on a 100k-event run must not stall the app), and
        a timer catches up with whatever was deferred.

        A costly analysis (a run of a million events) runs in a thread when ``wait`` is false, so the UI
        loop never stalls on it: the old analysis (or None, the first time) is returned meanwhile and the
        panel is refreshed when the new one is in. Its result is kept only if no update reached the model
        while it ran (the same event list, as long); otherwise it is tried again, and after
        ``MAX_RACES`` such races in a row done on the loop."""
        sig = self._findings_sig()
        now = time.monotonic()
        a = self._analysis
        fresh = a is not None and self._analysis_n == len(self.run.events) and sig == self._analysis_sig
        if a is None or not fresh:
            # cheap (a normal run): redo it whenever the findings change; costly: a fraction of the time
            gap = 0.0 if self._analysis_cost < 0.02 else 4 * self._analysis_cost
            waited = now - self._analysis_at
            if a is None or (sig != self._analysis_sig and waited >= gap) or waited >= max(REANALYSE_S, gap):
                if not wait and self._races < MAX_RACES and self.is_mounted and self._expected_cost() >= THREAD_MIN_S:
                    if not self._thread_running:
                        self._thread_running = True
                        self.run_worker(lambda: self._analyse_in_thread(sig, now), thread=True,
                                        group="triage-analysis", exit_on_error=False)
                    return a
                self._races = 0
                t0 = time.perf_counter()
                self._analysis = a = analyse(self.run)
                self._analysis_cost = time.perf_counter() - t0
                self._analysis_sig, self._analysis_at, self._analysis_n = sig, now, len(self.run.events)
            elif not self._catch_up_pending and self.is_mounted:
                self._catch_up_pending = True
                delay = (gap if sig != self._analysis_sig else max(REANALYSE_S, gap)) - waited
                self.set_timer(max(0.05, delay), self._catch_up)
        return a

    def _expected_cost(self) -> float:
        """What analysing the run as it is now should cost: the last analysis's cost per event (once it
        saw enough events to tell) times the events now, else a per-event cost measured once (``EVENT_COST_S``)."""
        n = len(self.run.events)
        if self._analysis_n >= 1000:
            return self._analysis_cost * n / self._analysis_n
        return n * EVENT_COST_S

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
        self._thread_running = False
        if result is None or self.run.events is not events or len(events) != n:
            # an update came in while it ran: try again (throttled as usual); after a few such races in a
            # row (a fast live run) it is done on the loop, so the panel is never left behind for good
            self._races += 1
            self._analysis_at = at
        else:
            self._races = 0
            self._analysis, self._analysis_cost = result, cost
            self._analysis_sig, self._analysis_at, self._analysis_n = sig, at, n
        if self.is_mounted:
            self.refresh_contents()

    def _catch_up(self) -> None:
        self._catch_up_pending = False
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
        return (self._analysis_sig, self._analysis_n, len(a.worklist), a.graph_break_total, len(a.recompiles),
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
    def _folded_text(f) -> Text:
        return row_text(folded_row(f))

    @staticmethod
    def _failure_text(f) -> Text:
        return row_text(Row(failure_spans(f)))

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        oid = message.option.id or ""
        if oid.startswith("more:"):
            self._expanded.add(oid[5:])
            self._shown_sig = None
            self.refresh_contents()
            return
        if ":" in oid:
            seq = int(oid.rsplit(":", 1)[1])
            self.post_message(self.Jump(self.run.events[seq]))

    def action_step(self, delta: int) -> None:
        """n / p: one stop per failure cascade or restart (``Triage.stops``), as the screen's n / p and the
        header count them (the lifecycles that failed with it are folded under its row)."""
        stops = self.run.triage.stops
        if not stops:
            self.app.notify("No failures or restarts in this run.")
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
