"""The triage panel: what happened, did it match expectations, where to look first.

Lists the first failure, then every failure (recovered ones marked), restarts, recompiles, graph breaks,
cache misses and lifecycles never closed; choosing a row (Enter) asks the screen to jump to that event.
Sections are capped so a recompile storm cannot make the panel slow.
"""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from magi_tui.model.events import Event
from magi_tui.model.run import RunModel
from magi_tui.ui.messages import EventMessage
from magi_format.text import literal

CAP = 200


def expectations(run: RunModel) -> list[tuple[bool, str]]:
    """(ok, sentence) checks a compiler engineer makes first."""
    t = run.triage
    out: list[tuple[bool, str]] = []
    unrec = t.unrecovered
    if unrec:
        out.append((False, f"{len(unrec)} failure(s) not recovered"))
    elif t.failures:
        out.append((True, f"all {len(t.failures)} failure(s) recovered (restart/retry)"))
    else:
        out.append((True, "no failed events"))
    if t.recompiles:
        out.append((False, f"{len(t.recompiles)} recompile(s) — expected none once warmed up"))
    frames = Counter()
    for s in run.tree.sessions:
        for c in s.compiles:
            if c.compile_id and c.frame:
                frames[c.frame] += 1
    many = [(f, n) for f, n in frames.items() if n > 1]
    if many:
        f, n = max(many, key=lambda x: x[1])
        out.append((False, f"frame {literal(f, 40)} compiled {n}× — expected once per frame"))
    elif frames:
        out.append((True, f"{len(frames)} frame(s), one compile each"))
    if t.graph_breaks:
        out.append((False, f"{len(t.graph_breaks)} graph break(s)"))
    if t.cache_hits and t.cache_misses:
        out.append((False, f"cache: {len(t.cache_hits)} hit(s) but {len(t.cache_misses)} miss(es) — "
                           "a warm run expects no misses"))
    elif t.cache_hits:
        out.append((True, f"cache: {len(t.cache_hits)} hit(s), no misses"))
    elif t.cache_misses:
        out.append((True, f"cache: cold ({len(t.cache_misses)} miss(es))"))
    if run.open_spans:
        out.append((False, f"{len(run.open_spans)} lifecycle(s) never closed"))
    if run.malformed:
        out.append((False, f"{len(run.malformed)} malformed line(s) in timeline.jsonl"))
    return out


class TriagePanel(Vertical):
    """Summary on top, a keyboard list of findings below."""

    BINDINGS = [
        Binding("n", "step(1)", "Next failure"),
        Binding("p", "step(-1)", "Prev failure"),
    ]

    class Jump(EventMessage):
        """A finding was chosen: jump to its event."""

    def __init__(self, run: RunModel, **kwargs) -> None:
        super().__init__(**kwargs)
        self.run = run
        self._failure_pos = -1
        self._shown_sig: tuple | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="triage-summary")
        yield OptionList(id="triage-list")

    def on_mount(self) -> None:
        self.refresh_contents()

    def summary_text(self) -> Text:
        run, t = self.run, self.run.triage
        text = Text(end="")
        text.append("Status ", style="bold")
        style = {"failed": "bold red", "recovered": "yellow", "ok": "green"}.get(run.status, "cyan")
        text.append(run.status.upper(), style=style)
        text.append(f"   {len(run.events)} events · {len(t.failures)} failed · {len(t.restarts)} restarts · "
                    f"{len(t.recompiles)} recompiles · {len(t.graph_breaks)} breaks · "
                    f"cache {len(t.cache_hits)} hit / {len(t.cache_misses)} miss\n")
        for ok, sentence in expectations(run):
            text.append("  ✓ " if ok else "  ⚠ ", style="green" if ok else "yellow")
            text.append(sentence + "\n")
        ff = next(iter(t.unrecovered), None) or t.first_failure
        if ff is not None:
            text.append("Look first: ", style="bold")
            text.append(f"#{ff.event.index} {literal(ff.event.name, 60)}", style="bold red")
            if ff.exception_type:
                text.append(f"  {literal(ff.exception_type, 50)}")
            if ff.folder:
                text.append(f"\n  {literal(ff.folder)}", style="dim")
            text.append("   (f jumps there)", style="dim")
        return text

    def _signature(self) -> tuple:
        t = self.run.triage
        return (len(t.failures), sum(1 for f in t.failures if f.recovered), len(t.restarts),
                len(t.recompiles), len(t.graph_breaks), len(t.cache_misses), len(t.cache_skipped_stores),
                tuple(s.first.seq for s in self.run.open_spans[:CAP]))

    def refresh_contents(self) -> None:
        """Update the summary; rebuild the list only when what it lists changed (a live run calls
        this on every update, and rebuilding an OptionList of hundreds of rows is not free)."""
        self.query_one("#triage-summary", Static).update(self.summary_text())
        sig = self._signature()
        if sig == self._shown_sig:
            return
        self._shown_sig = sig
        ol = self.query_one("#triage-list", OptionList)
        highlighted = ol.highlighted
        ol.clear_options()
        t = self.run.triage
        options: list[Option | None] = []

        def section(title: str, count: int) -> None:
            options.append(Option(Text(f"{title} ({count})", style="bold underline"), disabled=True))

        def row(ev: Event, body: Text, key: str) -> None:
            options.append(Option(body, id=f"{key}:{ev.seq}"))

        if t.first_failure is not None:
            f = t.first_failure
            section("First failure", 1)
            row(f.event, self._failure_text(f), "first")
        for title, items, key in (("Failures", t.failures, "fail"),):
            if items:
                section(title, len(items))
                for f in items[:CAP]:
                    row(f.event, self._failure_text(f), key)
        lists = (("Restarts", t.restarts), ("Recompiles", t.recompiles), ("Graph breaks", t.graph_breaks),
                 ("Cache misses", t.cache_misses), ("Skipped cache stores", t.cache_skipped_stores))
        for title, items in lists:
            if items:
                section(title, len(items))
                for it in items[:CAP]:
                    body = Text(f"#{it.event.index:04d} ", style="dim", end="")
                    body.append(literal(it.event.short_name, 50))
                    if it.reason:
                        body.append("  " + literal(it.reason, 160), style="yellow")
                    row(it.event, body, title)
                if len(items) > CAP:
                    options.append(Option(Text(f"… {len(items) - CAP} more", style="dim"), disabled=True))
        if self.run.open_spans:
            section("Never closed", len(self.run.open_spans))
            for s in self.run.open_spans[:CAP]:
                body = Text(f"#{s.first.index:04d} ", style="dim", end="")
                body.append(literal(s.first.name, 80))
                body.append("  … open", style="cyan")
                row(s.first, body, "open")
        if len(options) == 0:
            options.append(Option(Text("Nothing to triage: no failures, restarts, recompiles or cache misses.",
                                       style="green"), disabled=True))
        ol.add_options(options)
        if highlighted is not None and highlighted < ol.option_count:
            ol.highlighted = highlighted

    @staticmethod
    def _failure_text(f) -> Text:
        ev = f.event
        body = Text(f"#{ev.index:04d} ", style="dim", end="")
        body.append(literal(ev.name, 60), style="yellow" if f.recovered else "bold red")
        body.append("  recovered" if f.recovered else "  NOT recovered", style="yellow" if f.recovered else "red")
        if f.exception_type:
            body.append("  " + literal(f.exception_type, 60))
        if f.message:
            body.append(": " + literal(f.message, 160), style="dim")
        return body

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        oid = message.option.id or ""
        if ":" in oid:
            seq = int(oid.rsplit(":", 1)[1])
            self.post_message(self.Jump(self.run.events[seq]))

    def action_step(self, delta: int) -> None:
        fails = self.run.triage.failures
        if not fails:
            self.app.notify("No failures in this run.")
            return
        self._failure_pos = (self._failure_pos + delta) % len(fails)
        ol = self.query_one("#triage-list", OptionList)
        try:
            idx = ol.get_option_index(f"fail:{fails[self._failure_pos].event.seq}")
            ol.highlighted = idx
        except Exception:
            pass
        self.post_message(self.Jump(fails[self._failure_pos].event))
