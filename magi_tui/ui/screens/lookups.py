"""The cache lookups screen: why one cache lookup missed, its key beside the key it was compared with.

Opened from the triage panel's cache-miss line (Enter, or ``L`` on a miss row) and from a miss row of the
compare screen. The two keys come from the model (:func:`magi_tui.model.analysis.cache_lookups.lookups_diff`:
one line per key component, named in the user's terms, the differing ones first, the same ones folded)
and are shown by the diff view, the baseline's lookup (−) against this run's (+): ``]`` / ``[`` go from one
differing component to the next, ``u`` switches side by side / unified, ``a`` lists the same components
too. The line under the title says what changed, as the triage panel words it. Reads nothing itself.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from magi_format.text import literal
from magi_tui.model.analysis.cache_explain import MissExplained
from magi_tui.model.analysis.cache_lookups import key_rows, lookups_diff
from magi_tui.ui.actions import bindings
from magi_tui.ui.widgets.diff_view import DiffView
from magi_tui.ui.widgets.key_bar import KeyBar


def _short_run(name: str) -> str:
    """A run as the title names it: without the tracer's ``magi_depyf/`` folder every run of a root is in."""
    return name.replace("magi_depyf/", "", 1) if "magi_depyf/" in name[:12] else name


class CacheLookupsScreen(Screen):
    ACTION_SCOPES = ("diff", "lookups screen")
    BINDINGS = [*bindings("screen"), *bindings("lookups screen")]
    DEFAULT_CSS = """
    CacheLookupsScreen #lookups-title { height: 2; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    CacheLookupsScreen #lookups-why { height: auto; max-height: 3; }
    CacheLookupsScreen #lookups-status { height: 1; color: $text-muted; }
    """

    def __init__(self, explained: MissExplained, *, this_run: str, other_run: str | None,
                 factors: list[str] | None = None, names: list[str] | None = None, **kwargs: Any) -> None:
        """``explained``: the miss and the lookup it was compared with (``nearest``); ``this_run`` names the
        miss's run, ``other_run`` the compared-with lookup's (None: the same run); ``factors``: what changed
        in the user's words; ``names``: the graph's inputs by position."""
        super().__init__(**kwargs)
        self.explained = explained
        self.this_run = this_run
        self.other_run = other_run
        self.factors = factors or []
        self.names = names or []
        self.fold_same = True
        self.rows = key_rows(explained, self.names)

    def _title(self) -> Text:
        e = self.explained
        badge = " cache lookups "
        t = Text(badge, style="bold reverse", end="", no_wrap=True, overflow="ellipsis")
        other = "earlier in this run" if e.where == "same_run" else "baseline"
        width = max(len(other), len("this run"))
        t.append(" − ", style="bold red")
        t.append(f"{other:<{width}}  ", style="bold")
        t.append(literal(_short_run(self.other_run or self.this_run), 200), style="red")
        t.append("\n" + " " * (len(badge) + 1) + "+ ", style="bold green")
        t.append(f"{'this run':<{width}}  ", style="bold")
        t.append(literal(_short_run(self.this_run), 200), style="green")
        return t

    def _why(self) -> Text:
        if self.explained.nearest is None:
            return Text("Nothing earlier to compare this lookup with: no other lookup of this cache.", style="yellow")
        if not self.explained.differs:
            return Text("Every key component equals the other lookup's: the entry was not there (evicted, "
                        "or not stored).", style="yellow")
        t = Text("because ", style="bold", end="")
        t.append(literal("; ".join(self.factors) if self.factors else "its key differs", 400), style="bold yellow")
        return t

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="lookups-title")
        yield Static(self._why(), id="lookups-why")
        yield Static(id="lookups-status")
        yield DiffView(id="lookups-view")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(DiffView).focus()
        self._show()

    def _show(self) -> None:
        view = self.query_one(DiffView)
        e = self.explained
        nearest = e.nearest
        if nearest is None:
            self._status(Text("no key to compare with", style="dim"))
            return
        differ = sum(1 for r in self.rows if r.differs)
        which = f"{e.miss.cache} lookup #{nearest.index} − / #{e.miss.index} +" + \
            (f" ({e.miss.compile_id})" if e.miss.compile_id else "")
        self._status(Text(f"{which} · {differ} of {len(self.rows)} key components differ, shown first; "
                          f"{len(self.rows) - differ} the same ({'a lists' if self.fold_same else 'a folds'} them)",
                          style="dim"))
        view.fold_words = ("unchanged", "unchanged")
        view.set_diff(lookups_diff(self.explained, self.names, fold_same=self.fold_same),
                      self.other_run or self.this_run, self.this_run)

    def _status(self, text: Text) -> None:
        text.no_wrap, text.overflow = True, "ellipsis"
        self.query_one("#lookups-status", Static).update(text)

    def action_toggle_same(self) -> None:
        """``a``: the components the same on both sides listed after the differing ones, or folded again."""
        self.fold_same = not self.fold_same
        self._show()

    @on(DiffView.NormaliseToggled)
    def handle_diff_view_normalise_toggled(self, event: DiffView.NormaliseToggled) -> None:
        event.stop()
        self.notify("Key components are compared by torch's hash of each: there is no noise to mask.", timeout=3)
