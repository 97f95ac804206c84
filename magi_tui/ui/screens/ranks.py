"""The ranks view: the ranks of each job under a root (run dirs, or a folder of per-rank TORCH_TRACE logs):
which aspects the ranks agree on and, for each that differs, the groups of ranks that agree; then the ranks,
divergent first, and every divergence (compile ids on some ranks only, different graphs, cache patterns,
recompile reasons).

Built by the model (:func:`magi_tui.model.outputs.ranks.find_jobs`) in a thread worker; Enter on a rank row
opens that rank's run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from magi_format.text import literal
from magi_tui.model.outputs.ranks import RankRun, find_jobs, ranks_lines
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.screens.compare import STYLES
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.widgets.footer import MagiFooter


class RanksTable(OptionList):
    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="first", bottom="last")


class RanksScreen(Screen):
    BINDINGS = bindings("ranks screen")
    ACTION_SCOPES = ("ranks screen",)
    DEFAULT_CSS = """
    RanksScreen #ranks-title { height: 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    RanksScreen #ranks-table { height: 1fr; border: none; padding: 0; }
    RanksScreen #ranks-status { height: 1; color: $text-muted; }
    """

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = Path(root)
        self.jobs: list = []
        self.row_objects: list[Any] = []
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble((" ranks ", "bold reverse"), "  under ", (literal(str(self.root), 120), "bold")),
                     id="ranks-title")
        yield RanksTable(id="ranks-table")
        yield Static(Text("reading every rank…", style="cyan"), id="ranks-status")
        yield MagiFooter()

    def on_mount(self) -> None:
        self.query_one(RanksTable).focus()
        self._scan()

    @work(thread=True, exclusive=True)
    def _scan(self) -> None:
        try:
            jobs, loners = find_jobs(self.root)
        except Exception as exc:
            self.app.call_from_thread(self._show, [], [], f"cannot read ranks: {type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self._show, jobs, loners, None)

    def _show(self, jobs: list, loners: list[str], problem: str | None) -> None:
        self.jobs = jobs
        table = self.query_one(RanksTable)
        table.clear_options()
        self.row_objects = []
        options = []
        for job in jobs:
            by_rank = {r.rank: r for r in job.ranks}
            for style, text in ranks_lines([job]):
                obj = None
                stripped = text.lstrip(" !")
                if stripped.startswith("rank "):
                    try:
                        obj = by_rank.get(int(stripped.split(":", 1)[0].split()[1]))
                    except (ValueError, IndexError):
                        obj = None
                options.append(Option(Text(literal(text) or " ", style=STYLES.get(style, ""), overflow="fold")))
                self.row_objects.append(obj)
        table.add_options(options)
        table.highlighted = 0 if options else None
        status = self.query_one("#ranks-status", Static)
        if problem:
            status.update(Text(literal(problem), style="red"))
        elif not jobs:
            status.update(Text(f"no job with several ranks under {literal(str(self.root))} "
                               "(runs named model_<i>_<label>_rank_<r>, or a folder of per-rank TORCH_TRACE logs)",
                               style="yellow"))
        else:
            n = sum(1 for j in jobs if j.diverged)
            status.update(Text(f"{len(jobs)} job(s), {n} diverged · Enter on a rank opens its run", style="dim"))
        self.loaded = True

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self.action_open_rank()

    def action_open_rank(self) -> None:
        i = self.query_one(RanksTable).highlighted
        obj = self.row_objects[i] if i is not None and 0 <= i < len(self.row_objects) else None
        if not isinstance(obj, RankRun):
            self.notify("Select a rank row to open its run.", severity="warning")
            return
        self.app.push_screen(RunScreen(obj.run.path))
