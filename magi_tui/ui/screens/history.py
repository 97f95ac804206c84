"""The History screen (``H``, from the runs list or a run): an index of many runs (``magi-tui index``) as
a terminal plot of each metric's trend (textual-plotext), the graph-break and recompile causes seen across
the runs, and for the highlighted cause the run where it appeared and the run where it was gone; Enter opens
the run where it appeared, ``o`` the run where it was gone.

Everything comes from :mod:`magi_tui.history` (DuckDB over the index's Parquet, in a thread worker): the
screen opens no file. Opened from a run, the trend and the causes' lifetimes are that run's program's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from magi_format.text import literal
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.widgets.footer import MagiFooter

#: the metrics in the order ``m`` steps through them, with their axis' words
METRIC_TITLES = {"compile_time": "compile time (s)", "breaks": "graph breaks", "recompiles": "recompiles",
                 "cache_hit_rate": "cache hit rate"}


class CausesList(OptionList):
    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="first", bottom="last")


class HistoryScreen(Screen):
    BINDINGS = bindings("history screen")
    ACTION_SCOPES = ("history screen",)
    DEFAULT_CSS = """
    HistoryScreen #history-title { height: 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    HistoryScreen #history-plot { height: 45%; min-height: 7; }
    HistoryScreen #history-causes { height: 1fr; border: none; padding: 0; }
    HistoryScreen #history-status { height: 3; color: $text-muted; }
    """

    def __init__(self, start: Path, run_path: Path | None = None, **kwargs: Any) -> None:
        """``start``: the root (or run) the app shows, where the index is looked for; ``run_path``: the run
        H was pressed on (its program narrows the trend), or None from the runs list."""
        super().__init__(**kwargs)
        self.start = Path(start)
        self.run_path = run_path
        self.index: Path | None = None
        self.label: str | None = None
        self.data: dict[str, Any] | None = None
        self.metric = "compile_time"
        self.causes: list[dict[str, Any]] = []
        self.lifetimes: dict[str, dict[str, Any]] = {}
        self.problem: str | None = None
        self.loaded = False

    def compose(self) -> ComposeResult:
        from textual_plotext import PlotextPlot  # here: only this screen draws plots

        yield Static(Text(" history ", style="bold reverse"), id="history-title")
        yield PlotextPlot(id="history-plot")
        yield CausesList(id="history-causes")
        yield Static(Text("reading the index…", style="cyan"), id="history-status")
        yield MagiFooter()

    def on_mount(self) -> None:
        self.query_one(CausesList).focus()
        self._load()

    # -- the index, read in a worker -------------------------------------------------------------------
    def _open(self) -> Any:
        from magi_tui.history.query import History

        assert self.index is not None
        return History(self.index)

    @work(thread=True, exclusive=True, group="history")
    def _load(self) -> None:
        from magi_tui.history.locate import how_to_make, index_for
        from magi_tui.history.overview import overview, program_of
        from magi_tui.history.query import QueryError

        index = index_for(self.run_path or self.start)
        if index is None:
            self.app.call_from_thread(self._show, None, None, None, how_to_make(self.start))
            return
        try:
            self.index = index
            h = self._open()
            try:
                label = program_of(h, self.run_path) if self.run_path is not None else None
                data = overview(h, label)
            finally:
                h.close()
        except QueryError as exc:
            self.app.call_from_thread(self._show, index, None, None, str(exc))
            return
        except Exception as exc:  # an index the query cannot read: one line, the screen stays
            self.app.call_from_thread(self._show, index, None, None,
                                      f"cannot read the index: {type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self._show, index, label, data, None)

    @work(thread=True, exclusive=True, group="lifetime")
    def _lifetime(self, ident: str) -> None:
        from magi_tui.history.overview import lifetime

        try:
            h = self._open()
            try:
                life = lifetime(h, ident, self.label)
            finally:
                h.close()
        except Exception as exc:
            self.app.call_from_thread(self._status, Text(literal(f"{type(exc).__name__}: {exc}"), style="red"))
            return
        self.app.call_from_thread(self._show_lifetime, life)

    @work(thread=True, exclusive=True, group="history")
    def _index(self) -> None:
        """``i``: index the runs here (only new or grown ones; one process: the app's threads forbid a fork)."""
        from magi_tui.history.locate import default_index, root_of
        from magi_tui.history.write import index_runs

        root = root_of(self.run_path or self.start)
        out = self.index if self.index is not None else default_index(self.run_path or self.start)

        def progress(done: int, total: int) -> None:
            self.app.call_from_thread(self._status, Text(f"indexing {done}/{total} run(s) into {literal(str(out))}…",
                                                         style="cyan"))
        try:
            res = index_runs([root], out, jobs=1, progress=progress)
        except Exception as exc:  # IndexError_ (not an index, another schema version) or the disk's refusal
            self.app.call_from_thread(self._status, Text(literal(f"cannot index: {exc}"), style="red"))
            return
        done = f"indexed {len(res.read)} run(s), {res.unchanged} unchanged, {len(res.errors)} unreadable"
        self.app.call_from_thread(self.notify, done)
        self.app.call_from_thread(self.action_reload)

    def action_make_index(self) -> None:
        self._status(Text("finding runs…", style="cyan"))
        self._index()

    def action_reload(self) -> None:
        self.lifetimes.clear()
        self._load()

    # -- what is shown ---------------------------------------------------------------------------------
    def _show(self, index: Path | None, label: str | None, data: dict[str, Any] | None, problem: str | None) -> None:
        self.index, self.label, self.data, self.problem = index, label, data, problem
        self.loaded = True
        self._title()
        if problem is not None or data is None:
            self._status(Text(literal(problem or "nothing to show"), style="yellow"))
            self._plot()
            return
        self.causes = list(data["causes"])
        table = self.query_one(CausesList)
        table.clear_options()
        table.add_options([Option(self._cause_text(c)) for c in self.causes])
        table.highlighted = 0 if self.causes else None
        self._plot()
        if not self.causes:
            self._status(Text(f"{data['runs']} run(s); no graph break or recompile cause in any · m: next metric",
                              style="dim"))

    def _title(self) -> None:
        parts: list[Any] = [(" history ", "bold reverse"), " "]
        if self.index is not None:
            parts.append((literal(str(_shown(self.index)), 60), "bold"))
        if self.data is not None:
            errors = f", {self.data['errors']} unreadable" if self.data["errors"] else ""
            parts.append(f"  {self.data['runs']} run(s){errors}")
        if self.label is not None:
            parts.append(f" of {literal(self.label, 40)}")
        parts.append(f"  · {METRIC_TITLES[self.metric]}")
        self.query_one("#history-title", Static).update(Text.assemble(*parts))

    def _cause_text(self, c: dict[str, Any]) -> Text:
        kind = "break" if c["kind"] == "graph_break" else "recomp"
        text = Text.assemble((f"{kind:6} ", "bold" if kind == "break" else ""), (f"{c['runs']:>5} runs ", "dim"),
                             (f"{_when(c['first_seen'], 0, 10)}→{_when(c['last_seen'], 5, 10)} ", "dim"),
                             literal(str(c["id"])))
        text.no_wrap, text.overflow = True, "ellipsis"
        return text

    def _plot(self) -> None:
        from textual_plotext import PlotextPlot

        widget = self.query_one(PlotextPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        runs = (self.data or {}).get("trends", {}).get(self.metric, [])
        points = [(i + 1, r["value"]) for i, r in enumerate(runs) if r["value"] is not None]
        if points:
            plt.plot([x for x, _ in points], [y for _, y in points], marker="braille")
            days = [str(r["started"])[:10] for r in runs if r.get("started")]  # a run may not say when it began
            span = f": {days[0]} → {days[-1]}" if days else ""
            plt.title(f"{METRIC_TITLES[self.metric]}{span}")
            plt.xlabel("run (oldest → newest)")
        else:
            plt.title(f"{METRIC_TITLES[self.metric]}: not recorded in these runs" if runs else "no runs")
        widget.refresh()

    def _status(self, text: Text) -> None:
        self.query_one("#history-status", Static).update(text)

    def _show_lifetime(self, life: dict[str, Any]) -> None:
        self.lifetimes[life["id"]] = life
        if self._highlighted_id() != life["id"]:
            return

        def run(r: dict[str, Any] | None) -> str:
            return "-" if r is None else f"{literal(r['label'], 56)} ({_when(r['started'], 5, 16)})"

        of = f" of {literal(life['program'], 30)}" if life.get("program") and self.label is None else ""
        first = f"appeared {run(life['first_seen'])}"
        if life["state"] == "gone":
            after = f"gone {run(life['gone_in'])}"
        elif life["state"] == "present":
            after = "still there in its newest run"
        else:
            after = "never seen" + (f" in {literal(self.label, 40)}" if self.label else "")
        self._status(Text.assemble((literal(str(life["id"]), 50), "bold"),
                                   f" · {life['runs_with_it']} run(s)", of, " · Enter / o: open\n", f"{first}\n{after}"))

    def _highlighted_id(self) -> str | None:
        i = self.query_one(CausesList).highlighted
        return self.causes[i]["id"] if i is not None and 0 <= i < len(self.causes) else None

    @on(OptionList.OptionHighlighted)
    def handle_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        message.stop()
        ident = self._highlighted_id()
        if ident is None:
            return
        if ident in self.lifetimes:
            self._show_lifetime(self.lifetimes[ident])
        elif self.index is not None:
            self._status(Text(f"{literal(ident, 60)}: asking the index…", style="cyan"))
            self._lifetime(ident)

    @on(OptionList.OptionSelected)
    def handle_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self.action_open_first()

    # -- keys ------------------------------------------------------------------------------------------
    def action_next_metric(self) -> None:
        names = list(METRIC_TITLES)
        self.metric = names[(names.index(self.metric) + 1) % len(names)]
        self._title()
        self._plot()

    def _open_run(self, which: str) -> None:
        ident = self._highlighted_id()
        life = self.lifetimes.get(ident or "")
        r = life.get(which) if life else None
        if r is None:
            what = "appeared" if which == "first_seen" else "was gone"
            self.notify(f"No run where it {what} (select a cause; its runs are still being asked).",
                        severity="warning")
            return
        from magi_tui.ui.screens.run import RunScreen

        self.app.push_screen(RunScreen(Path(r["path"])))

    def action_open_first(self) -> None:
        self._open_run("first_seen")

    def action_open_gone(self) -> None:
        self._open_run("gone_in")


def _shown(path: Path) -> Path:
    """``path`` relative to the working folder when it is under it (the index beside the runs: short)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _when(started: Any, a: int, b: int) -> str:
    """A slice of a run's start (``YYYY-MM-DD HH:MM:SS``), or ``?`` when the run does not say when it began."""
    return str(started)[a:b] if started else "?"
