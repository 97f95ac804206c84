"""The triage panel: what happened, did it match expectations, where to look first, and why.

The checks, the graph-break worklist, the recompiles explained and the frames all come from the model
(:mod:`magi_tui.model.checks`, the same analysis ``magi-tui triage`` prints). Failures are listed one per
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

from magi_format.text import fmt_seconds, literal
from magi_tui.model.checks import Analysis, Check, analyse
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.labels import time_bar
from magi_tui.ui.messages import EventMessage

CAP = 50
#: in a live run the analysis (frames, compile time) is refreshed at most this often unless findings change
REANALYSE_S = 1.0
#: an analysis that took longer than this is redone in a thread (the UI loop must not stall on it)
THREAD_MIN_S = 0.03
#: threaded analyses overtaken by updates in a row before the next one is done on the loop
MAX_RACES = 3
_ICON = {"ok": ("  ✓ ", "green"), "warn": ("  ⚠ ", "yellow"), "fail": ("  ✗ ", "bold red")}


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
        t, run = self.run.triage, self.run
        return (len(t.failures), sum(1 for f in t.failures if f.recovered), len(t.restarts),
                sum(1 for r in t.restarts if r.recovered), len(t.recompiles), len(t.graph_breaks),
                len(t.cache_hits), len(t.cache_misses), len(t.cache_bypasses), len(t.cache_skipped_stores),
                len(t.recompile_limit_hits), len(t.tracer_stopped), len(run.malformed), run.partial_line,
                bool(run.events), tuple(s.first.seq for s in run.open_spans[:CAP]))

    def analysis(self, *, wait: bool = True) -> Analysis | None:
        """The model's analysis of the run. In a live run it is redone when the findings change, at most
        every few times its own cost (a recompile storm on a 100k-event run must not stall the app), and
        a timer catches up with whatever was deferred.

        A costly analysis (a 1M-event run: ~0.5 s) runs in a thread when ``wait`` is false, so the UI
        loop never stalls on it: the old analysis (or None, the first time) is returned meanwhile and the
        panel is refreshed when the new one is in. Its result is kept only if no update reached the model
        while it ran (the same event list, as long); otherwise it is tried again, and after
        ``MAX_RACES`` such races in a row done on the loop."""
        sig = self._findings_sig()
        now = time.monotonic()
        a = self._analysis
        fresh = a is not None and self._analysis_n == len(self.run.events) and sig == self._analysis_sig
        if a is None or not fresh:
            # cheap (a normal run): redo it whenever the findings change; costly: not more than ~20% of the time
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
        saw enough events to tell) times the events now, else a measured ~0.5 µs per event."""
        n = len(self.run.events)
        if self._analysis_n >= 1000:
            return self._analysis_cost * n / self._analysis_n
        return n * 0.5e-6

    def _analyse_in_thread(self, sig: tuple, at: float) -> None:
        run = self.run
        events, n = run.events, len(run.events)
        t0 = time.perf_counter()
        try:
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
        run = self.run
        a = a if a is not None else self.analysis()
        text = Text(end="")
        text.append("Status ", style="bold")
        style = {"failed": "bold red", "incomplete": "bold red", "recovered": "yellow", "degraded": "bold yellow",
                 "ok": "green",
                 "empty": "yellow"}.get(a.status, "cyan")
        text.append(a.status.upper(), style=style)
        cc = a.cache["counts"]
        nr = a.not_recorded  # a fact the source cannot know is "?", never a zero

        def n(fact: str, value: object) -> str:
            return "?" if fact in nr else str(value)
        text.append(f"   {len(run.events)} events · {len(a.problems)} failures · {n('restarts', len(a.restarts))} "
                    f"restarts · {n('recompiles', len(a.recompiles))} recompiles · "
                    f"{n('graph_breaks', a.graph_break_total)} breaks · "
                    + ("cache not recorded\n" if "cache" in nr else
                       f"cache {cc['hits']} hit / {cc['misses']} miss / {cc['bypasses']} bypass\n"))
        if a.empty_note:
            text.append("  " + a.empty_note + "\n", style="yellow")
            if a.log_tail:
                text.append(f"  last lines of {literal(a.log_path or '', 80)}:\n", style="dim")
                for ln in a.log_tail[-6:]:
                    text.append("    | " + literal(ln, 160) + "\n", style="dim")
        for c in a.checks:
            icon, st = _ICON.get(c.level, ("  ? ", ""))
            text.append(icon, style=st)
            text.append(literal(c.message, 300) + "\n")
        look = next((c.head for c in a.problems if not c.recovered), None) or (
            a.problems[0].head if a.problems else None)
        if look is not None:
            text.append("Look first: ", style="bold")
            text.append(f"#{look.event.index} {literal(look.event.name, 60)}", style="bold red")
            if look.exception_type:
                text.append(f"  {literal(look.exception_type, 50)}")
            # a run dir's event folder; a log's LOG:line (a log has no folders: it named one inside timeline_events/)
            where = look.folder if self.run.has_event_folders else self.run.where(look.event, look.folder)
            if where:
                text.append(f"\n  {literal(where)}", style="dim")
            text.append("   (f jumps there)", style="dim")
        elif a.worklist:
            b = a.worklist[0]
            text.append("Look first: ", style="bold")
            text.append(f"graph break ×{b.count} at {literal(b.where, 80)}", style="yellow")
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
        run, t = self.run, self.run.triage
        options: list[Option] = []
        used: set[str] = set()
        current = [""]

        def section(title: str, count: int) -> None:
            current[0] = title
            options.append(Option(Text(f"{title} ({count})", style="bold underline"), disabled=True))

        def cap() -> int | None:
            return None if current[0] in self._expanded else CAP

        def row(ev: Event | None, body: Text, key: str) -> None:
            oid = f"{key}:{ev.seq}" if ev is not None else None
            if oid is None or oid in used:
                options.append(Option(body, disabled=ev is None))
                return
            used.add(oid)
            options.append(Option(body, id=oid))

        def more(n: int) -> None:
            if n > 0 and current[0] not in self._expanded:
                options.append(Option(Text(f"… {n} more (Enter shows them)", style="dim"),
                                      id=f"more:{current[0]}"))

        if a.problems:
            section("Failures", len(a.problems))
            for c in a.problems[:cap()]:
                body = self._failure_text(c.head)
                src = a.failure_sources.get(id(c))
                if src and src[0]:
                    body.append(("\n    raised at " if src[2] == "raised" else "\n    in frame ")
                                + literal(f"{src[0]}:{src[1]}", 140), style="cyan")
                row(c.head.event, body, "fail")
                for m in c.members[1:]:
                    row(m.event, self._folded_text(m), "fail")
            more(len(a.problems) - CAP)
        if a.restarts:
            section("Restarts", len(a.restarts))
            for r in a.restarts[:cap()]:
                body = Text(f"#{r.event.index:04d} ", style="dim", end="")
                body.append(literal(r.event.name, 60), style="magenta")
                body.append("  recovered" if r.recovered else "  NOT recovered",
                            style="yellow" if r.recovered else "red")
                if r.reason:
                    body.append("  " + literal(r.reason, 160), style="dim")
                row(r.event, body, "fail" if r.cascade is not None else "restart")
                if r.cascade is not None:
                    for m in r.cascade.members[1:]:
                        row(m.event, self._folded_text(m), "fail")
            more(len(a.restarts) - CAP)
        if a.ran_eagerly:
            section("Ran eagerly", len(a.ran_eagerly))
            for e in a.ran_eagerly[:cap()]:
                body = Text(literal(e.frame, 80), style="bold", end="")
                if e.compile_id:
                    body.append(f" {literal(e.compile_id, 20)}", style="dim")
                body.append(f"  {e.cause.replace('_', ' ')}: ", style="bold yellow")
                body.append(literal(e.reason, 160))
                if e.where:
                    body.append(f"\n    at {literal(e.where, 140)}", style="cyan")
                row(e.event, body, "eager")
            more(len(a.ran_eagerly) - CAP)
        if a.worklist:
            section("Graph breaks", len(a.worklist))
            for b in a.worklist[:cap()]:
                body = Text(f"×{b.count} ", style="bold yellow", end="")
                if b.gb_id:
                    body.append(literal(b.gb_id, 20) + " ", style="dim")
                body.append(literal(b.reason, 120))
                body.append(f"\n    at {literal(b.where, 120)}" + (f" in {literal(b.function, 60)}" if b.function else ""),
                            style="cyan")
                if b.source_line:
                    body.append(f"\n    {literal(b.source_line, 120)}", style="dim")
                if b.in_user_code is False:
                    body.append("\n    in a library", style="bold")
                    if b.call_site:
                        f, ln, fn, _src = b.call_site
                        body.append(f" · your call: {literal(f, 100)}:{ln}" + (f" in {literal(fn, 60)}" if fn else ""),
                                    style="cyan")
                if b.explanation:
                    body.append(f"\n    why: {literal(b.explanation, 200)}", style="dim")
                for h in b.hints[:3]:
                    body.append(f"\n    hint: {literal(h, 200)}", style="green")
                if b.compile_ids:
                    body.append(f"\n    compile ids: {literal(', '.join(b.compile_ids[:10]), 120)}", style="dim")
                elif b.resume_fns:
                    body.append(f"\n    evidence: {literal(b.resume_fns[0], 160)}", style="dim")
                row(b.events[0] if b.events else None, body, "gb")
            more(len(a.worklist) - CAP)
        if a.recompiles:
            section("Recompiles", len(a.recompiles))
            for r in a.recompiles[:cap()]:
                body = Text(literal(r.frame, 80), style="bold", end="")
                if r.compile_id:
                    body.append(f" {literal(r.compile_id, 20)}", style="dim")
                p = r.primary
                if p is not None:
                    body.append("  " + literal(p.guard, 120), style="yellow")
                    if p.expected is not None:
                        body.append(f"  expected {literal(p.expected, 40)}")
                        body.append(f"  actual {literal(p.actual, 40)}" if p.actual is not None else
                                    "  actual not recorded")
                    if r.automatic_dynamic:
                        body.append("  automatic dynamic: normal", style="dim")
                    if p.suggestion:
                        body.append(f"\n    → {literal(p.suggestion, 200)}", style="green")
                    if len(r.reasons) > 1:
                        body.append(f"\n    +{len(r.reasons) - 1} more reason(s) ({literal(', '.join(r.kinds), 80)}): "
                                    + literal("; ".join(x.text for x in r.reasons[1:4]), 200), style="dim")
                else:
                    body.append("  reason not recorded", style="dim")
                d = r.guard_diff
                if d is not None and not d.empty:
                    head = d.headline()
                    if head:  # the changed tokens first; reverse so they stand out without colour too
                        body.append("\n    changed: ", style="dim")
                        body.append(literal(head, 160), style="bold reverse")
                    lines = d.as_json()["changed_lines"][:2]
                    for c in lines:
                        body.append(f"\n    - {literal(c['older'], 140)}", style="red")
                        body.append(f"\n    + {literal(c['newer'], 140)}", style="green")
                    if not lines:
                        for x in d.removed[:2]:
                            body.append(f"\n    - {literal(x, 140)}", style="red")
                        for x in d.added[:2]:
                            body.append(f"\n    + {literal(x, 140)}", style="green")
                elif d is not None:
                    body.append("\n    guards: no difference past the noise (cut at 120 chars)", style="dim")
                row(r.event, body, "rc")
            more(len(a.recompiles) - CAP)
        if a.frames:
            section("Frames", len(a.frames))
            for f in a.frames[:cap()]:
                body = Text(f"{f.compiles:>3}× ", style="bold yellow" if f.compiles > 1 else "dim", end="")
                body.append(literal(f.frame, 100))
                body.append(f"  breaks {f.graph_breaks} · cache {f.cache_hits}/{f.cache_misses}/{f.cache_bypasses}"
                            f" · {fmt_seconds(f.compile_s)} · limit {f.recompile_limit}", style="dim")
                if f.limit_hit:
                    body.append("  LIMIT HIT → eager", style="bold red")
                row(f.limit_event or f.first_event, body, "frame")
            more(len(a.frames) - CAP)
        if a.fallbacks:
            section("Silent fallbacks", len(a.fallbacks))
            for fb in a.fallbacks[:cap()]:
                body = Text(literal(fb.kind, 30), style="bold red" if fb.calls else "bold yellow", end="")
                if fb.calls is not None:
                    body.append(f"  {fb.calls} eager call(s)", style="bold red" if fb.calls else "dim")
                body.append("  " + literal(fb.what, 160))
                where = fb.frame or (f"compile {fb.compile_id}" if fb.compile_id else None)
                if where:
                    body.append(f"\n    at {literal(where, 120)}", style="cyan")
                row(fb.event, body, "fallback")
            more(len(a.fallbacks) - CAP)
        ct = a.compile_time
        ranked = [(p["phase"], p["seconds"], None) for p in ct.get("phases", []) if p.get("seconds")]
        ranked += [(f"frame {name}", secs, None) for name, secs in sorted(
            (ct.get("per_frame") or {}).items(), key=lambda kv: -(kv[1] or 0)) if secs]
        ranked += [(f"piece {p['piece']} ({p.get('lifecycle', '')})", p["seconds"], None)
                   for p in ct.get("per_piece", []) if p.get("seconds")]
        if ranked:
            section("Where compile time went", len(ranked))
            top = max(secs for _, secs, _ in ranked)
            for name, secs, _ in ranked[:cap()]:
                body = Text(f"{fmt_seconds(secs):>8} ", style="bold", end="")
                body.append(time_bar(secs / top if top else 0.0), style="cyan")
                body.append(" " + literal(name, 100))
                options.append(Option(body, disabled=True))
            more(len(ranked) - CAP)
            if ct.get("note"):
                options.append(Option(Text("  " + literal(ct["note"], 200), style="dim"), disabled=True))
        lists = (("Cache bypasses", t.cache_bypasses), ("Cache misses", t.cache_misses),
                 ("Skipped cache stores", t.cache_skipped_stores), ("Recompile limit hit", t.recompile_limit_hits),
                 ("Tracer stopped", t.tracer_stopped))
        for title, items in lists:
            if items:
                section(title, len(items))
                for it in items[:cap()]:
                    body = Text(f"#{it.event.index:04d} ", style="dim", end="")
                    body.append(literal(it.event.short_name, 50))
                    if it.reason:
                        body.append("  " + literal(it.reason, 160), style="yellow")
                    row(it.event, body, title)
                more(len(items) - CAP)
        if run.open_spans:
            section("Never closed", len(run.open_spans))
            for s in run.open_spans[:cap()]:
                body = Text(f"#{s.first.index:04d} ", style="dim", end="")
                body.append(literal(s.first.name, 80))
                body.append("  … open", style="cyan")
                row(s.first, body, "open")
            more(len(run.open_spans) - CAP)
        if len(options) == 0:
            msg = ("Nothing recorded: see the summary above." if a.status == "empty" else
                   "Nothing to triage: no failures, restarts, recompiles, graph breaks or cache misses.")
            options.append(Option(Text(msg, style="yellow" if a.status == "empty" else "green"), disabled=True))
        ol.add_options(options)
        if highlighted is not None and highlighted < ol.option_count:
            ol.highlighted = highlighted

    @staticmethod
    def _folded_text(f) -> Text:
        ev = f.event
        body = Text("    ↳ ", style="dim", end="")
        body.append(f"#{ev.index:04d} ", style="dim")
        body.append(literal(ev.name, 60), style="yellow" if f.recovered else "red")
        body.append("  folded: failed with it" + ("  (recovered)" if f.recovered else "  NOT recovered"),
                    style="dim" if f.recovered else "bold red")
        return body

    @staticmethod
    def _failure_text(f) -> Text:
        ev = f.event
        body = Text(f"#{ev.index:04d} ", style="dim", end="")
        body.append(literal(ev.name, 60), style="yellow" if f.recovered else "bold red")
        # what matters most stands out without colour too (NO_COLOR): bold / reverse, never dim
        body.append("  recovered" if f.recovered else "  NOT recovered", style="yellow" if f.recovered else "bold reverse red")
        if f.exception_type:
            body.append("  " + literal(f.exception_type, 60), style="bold")
        if f.message:
            body.append(": " + literal(" ".join(f.message.split()), 160))
        return body

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
