"""The ranks view: the ranks of each job under a root (run dirs, or a folder of per-rank TORCH_TRACE logs):
which aspects the ranks agree on and, for each that differs, the groups of ranks that agree; then the ranks,
divergent first, and every divergence (compile ids on some ranks only, different graphs, cache patterns,
recompile reasons).

Built by the model (:func:`magi_tui.model.outputs.ranks.find_jobs`) in a thread worker (:class:`RowsScreen`);
Enter on a rank row opens that rank's run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.widgets import OptionList

from magi_format.text import literal
from magi_tui.model.outputs.ranks import RankRun, find_jobs, ranks_lines
from magi_tui.ui.actions import bindings
from magi_tui.ui.screens.rows import RowsList, RowsScreen, title_text
from magi_tui.ui.screens.run import RunScreen


class RanksTable(RowsList):
    pass


class RanksScreen(RowsScreen):
    BINDINGS = bindings("ranks screen")
    ACTION_SCOPES = ("ranks screen",)
    NAME = "ranks"
    READING = "reading every rank…"
    LIST = RanksTable

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = Path(root)
        self.jobs: list = []

    def title_line(self) -> Text:
        return title_text(self.NAME, str(self.root), joint="  under ", cap=120)

    def read(self) -> tuple[list, list[str]]:
        return find_jobs(self.root)

    def show(self, got: tuple[list, list[str]]) -> None:
        jobs, _loners = got
        self.jobs = jobs
        rows: list[tuple[str, str, Any]] = []
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
                rows.append((style, text, obj))
        self.set_rows(rows)
        if not jobs:
            self.set_status(f"no job with several ranks under {literal(str(self.root))} "
                            "(runs named model_<i>_<label>_rank_<r>, or a folder of per-rank TORCH_TRACE logs)",
                            "yellow")
        else:
            n = sum(1 for j in jobs if j.diverged)
            self.set_status(f"{len(jobs)} job(s), {n} diverged · Enter on a rank opens its run")

    @on(OptionList.OptionSelected)
    def handle_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self.action_open_rank()

    def action_open_rank(self) -> None:
        obj = self.highlighted_object()
        if not isinstance(obj, RankRun):
            self.notify("Select a rank row to open its run.", severity="warning")
            return
        self.app.push_screen(RunScreen(obj.run.path))
