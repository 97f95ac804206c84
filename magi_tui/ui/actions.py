"""The action catalogue: every key of the app, once.

Each :class:`Act` is one user action with a stable id (the binding id, and the name a user remaps in
the keymap file), its default keys, the Textual action it runs, a footer title and a sentence for the
palette and help. Screens and widgets take their ``BINDINGS`` from here (:func:`bindings`), the
command palette lists the acts of the screen on top (:func:`palette_acts`), ``?`` shows them
(:mod:`magi_tui.ui.screens.help`) and the README's key table is generated from them
(:func:`markdown_table`; a test keeps the README in step).

Users remap keys by id in a keymap file (:mod:`magi_tui.config`), applied with ``App.set_keymap``.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True)
class Act:
    id: str
    keys: str          # Textual key names, comma-separated: "escape", "question_mark", "f"
    action: str        # the Textual action it runs: "first_failure", "step_failure(1)"
    title: str         # footer text
    help: str          # palette / help / README sentence
    scope: str | tuple[str, ...]  # where it applies (one or several): app, run, runs, attach, program, tree, timeline, detail,
                       # file, diff, compiled, triage, help, move
    show: bool = True  # in the footer
    priority: bool = False
    palette: bool = True

    @property
    def display_keys(self) -> str:
        return display_keys(self.keys)


_KEY_NAMES = {"question_mark": "?", "slash": "/", "right_square_bracket": "]", "left_square_bracket": "[",
              "escape": "esc", "space": "space", "pageup": "pgup", "pagedown": "pgdn"}


def display_keys(keys: str) -> str:
    return " / ".join(_KEY_NAMES.get(k.strip(), k.strip()) for k in keys.split(","))


#: vim movement, defined once: every list, tree, file and diff moves the same way
VIM = {"down": "j", "up": "k", "top": "g", "bottom": "G", "left": "h", "right": "l"}

CATALOGUE: tuple[Act, ...] = (
    # -- everywhere --------------------------------------------------------------------------
    Act("help", "question_mark", "app.help", "Help", "Every key of this screen", "app"),
    Act("quit", "ctrl+q", "app.quit", "Quit", "Quit magi-tui from anywhere", "app", show=False),
    Act("newest", "N", "app.switch_newest", "Newest run",
        "Follow the newer run that appeared under the attached root", "app", show=False),
    Act("history", "H", "app.history", "History",
        "Trends and break / recompile causes across many runs (an index made by magi-tui index)", ("runs", "run"),
        show=False),
    # -- the run screen ----------------------------------------------------------------------
    Act("back", "escape", "back", "Back",
        "Back: close the timeline or triage pane, then the screen (never quits)", "run"),
    Act("close", "q", "close", "Close",
        "Close this screen (quit on the first screen)", "run", show=False),
    Act("first_failure", "f", "first_failure", "First failure", "Jump to the first failed event", "run"),
    Act("next_failure", "n", "step_failure(1)", "Next failure", "Step to the next failed event", "run",
        show=False),
    Act("prev_failure", "p", "step_failure(-1)", "Prev failure", "Step to the previous failed event", "run",
        show=False),
    Act("triage", "T", "toggle_triage", "Triage",
        "Triage panel: what happened, where to look first; frames that ran eagerly (status degraded), "
        "recompiles with the changed guard tokens first", "run"),
    Act("timeline", "t", "toggle_timeline", "Timeline", "Flat timeline with relative times and gaps", "run"),
    Act("diff", "d", "diff", "Diff",
        "Diff an after/failed event's graph with its before; with a mark, the mark (−) against this one (+)", "run"),
    Act("mark", "m", "mark", "Mark",
        "Mark the current event's graph (or file), then d anywhere, also in another run or rank", "run"),
    Act("compiled", "c", "compiled_functions", "Compiled fns",
        "compiled_functions browser: cache entries, guards, decompiled code, resume functions", "run"),
    Act("search", "slash", "search", "Search file", "Search in the open file (n / N: next / previous match)",
        "run"),
    Act("follow", "F", "toggle_follow", "Follow",
        "Follow a live run: the newest event is selected as it arrives", "run", show=False),
    Act("other_pane", "o", "focus_other", "Other pane", "Move focus to the other pane", "run", show=False),
    Act("compile_info", "i", "compile_info", "Compile info",
        "Per compile id: times, guards, graph size, restarts, dynamic shapes, phases, stack trie, reproducer",
        "run", show=False),
    Act("bug_report", "B", "bug_report", "Bug report",
        "Write a bug-report bundle beside the run: REPORT.md with the reproducer, versions, settings, the "
        "failure, breaks and recompiles, and the bisect result when a bisect made the run", "run", show=False),
    # -- the runs list -----------------------------------------------------------------------
    Act("runs_back", "escape,q", "back", "Quit", "Clear the filter; quit on the first screen", "runs"),
    Act("filter", "slash", "filter", "Filter", "Filter runs by label, path or status (or just type)", "runs"),
    Act("sort", "s", "sort", "Sort", "Sort by the next column", "runs"),
    Act("reload", "r", "reload", "Reload", "Scan the root again", "runs"),
    # -- attach / run ------------------------------------------------------------------------
    Act("program_log", "l", "toggle_log", "Program log", "Show or hide the traced program's output",
        "program", priority=True),
    Act("stop_program", "ctrl+c", "stop_program", "Stop program",
        "Stop the traced program (SIGINT; again: SIGTERM, then SIGKILL)", "program", priority=True),
    Act("newest_run", "N", "newest", "Newest run", "Follow the newer run that appeared", "attach",
        priority=True),
    # -- panes and widgets -------------------------------------------------------------------
    Act("expand", "l,right", "expand_node", "Expand", "Open a tree node", "tree", show=False, palette=False),
    Act("collapse", "h,left", "collapse_node", "Collapse", "Close a tree node", "tree", show=False,
        palette=False),
    Act("timeline_select", "enter", "select", "Show in tree", "Show the timeline's event in the tree",
        "timeline", palette=False),
    Act("next_file", "tab,right_square_bracket", "next_file", "Next file", "Next file tab", "detail",
        show=False, palette=False),
    Act("prev_file", "shift+tab", "prev_file", "Prev file", "Previous file tab", "detail", show=False,
        palette=False),
    Act("screen_back", "escape,q", "app.pop_screen", "Back", "Back to the previous screen", ("screen", "compiled")),
    Act("file_search", "slash", "search", "Search", "Search in the file (type, Enter)", "file"),
    Act("find_next", "n", "find(1)", "Next match", "Next match of the search", "file", show=False),
    Act("find_prev", "N", "find(-1)", "Prev match", "Previous match of the search", "file", show=False),
    Act("next_hunk", "right_square_bracket", "hunk(1)", "Next hunk", "Next changed hunk", "diff"),
    Act("prev_hunk", "left_square_bracket", "hunk(-1)", "Prev hunk", "Previous changed hunk", "diff"),
    Act("unified", "u", "toggle_unified", "Unified/split", "Unified or side-by-side diff", "diff"),
    Act("triage_next", "n", "step(1)", "Next failure", "Next failure in the triage list", "triage"),
    Act("triage_prev", "p", "step(-1)", "Prev failure", "Previous failure in the triage list", "triage"),
    Act("cf_mark", "m", "mark", "Mark", "Mark the file shown, then d on another (any run) to diff them",
        "compiled"),
    Act("cf_diff", "d", "diff", "Diff with mark", "Diff the marked file (−) against the one shown (+)", "compiled"),
    Act("cf_other_pane", "o", "focus_other", "Other pane", "Move focus to the other pane", "compiled",
        show=False),
    Act("help_close", "escape,q,question_mark", "app.pop_screen", "Close", "Close help", "help"),
    # -- frames (issue #10) ---------------------------------------------------------------------
    Act("frames", "w", "frames", "Frames",
        "Frames view: one row per compiled code object (compiles, recompiles, breaks, cache, time)", "run"),
    Act("frames_back", "escape,q", "back", "Back", "Back to the frames, then to the run", "frames"),
    Act("frames_sort", "s", "sort", "Sort",
        "Sort by the next column (time, compiles, recompiles, breaks, calls, eager calls, name)", "frames"),
    # -- run vs run, rank vs rank (issue #12) -------------------------------------------------
    Act("mark_run", "m", "mark_run", "Mark",
        "Mark the run under the cursor as A, then B (a third mark replaces the older)", "runs"),
    Act("compare_runs", "c", "compare_runs", "Compare",
        "Compare the two marked runs (or the marked run with the one under the cursor)", "runs"),
    Act("ranks", "R", "ranks", "Ranks",
        "Ranks view: where the ranks of one job compiled differently, divergent ranks first", "runs"),
    Act("compare_back", "escape,q", "app.pop_screen", "Back", "Back to the runs list", "compare screen"),
    Act("compare_diff", "d", "diff_pass", "Diff pass",
        "Side-by-side diff of the selected pass's (or piece's) graph in A against B (also Enter)",
        "compare screen"),
    Act("compare_next", "right_square_bracket", "next_pass", "Next differing",
        "Move to the next pass whose graph differs between A and B", "compare screen"),
    # -- why the cache missed (issue 34) --------------------------------------------------------
    Act("cache_lookups", "L", "cache_lookups", "Lookups",
        "The missed cache lookup beside the one it was compared with (the baseline's): the differing key "
        "components first, in your terms (also Enter on the cache-miss line)", ("triage", "compare screen")),
    Act("lookups_same", "a", "toggle_same", "Same too",
        "Also list the key components that are the same on both sides (folded into one row at first)",
        "lookups screen"),
    Act("ranks_back", "escape,q", "app.pop_screen", "Back", "Back to the runs list", "ranks screen"),
    Act("ranks_open", "enter", "open_rank", "Open rank", "Open the run of the rank under the cursor",
        "ranks screen"),
    # -- fix with proof (issue #23) ------------------------------------------------------------
    Act("fix", "F", "fix", "Fix",
        "Fix view: the newest magi-tui fix result under the root (changes tried and proven, best first)", "runs"),
    Act("fix_back", "escape,q", "app.pop_screen", "Back", "Back to the runs list", "fix screen"),
    Act("fix_open", "enter", "open_candidate", "Open run", "Open the run of the change under the cursor",
        "fix screen"),
    Act("fix_compare", "c", "compare_candidate", "Compare",
        "Compare the baseline run with the run of the change under the cursor", "fix screen"),
    # -- bisect, live (issue #22) ---------------------------------------------------------------
    Act("bisect_open", "enter", "open_step", "Open run", "Open the traced run of the bisect step under the cursor",
        "bisect screen"),
    Act("bisect_culprit", "c", "open_culprit", "Culprit run", "Open the run of the bisect's culprit graph",
        "bisect screen"),
    Act("bisect_diff", "d", "culprit_diff", "Culprit diff",
        "Diff the culprit graph before and after the culprit pass", "bisect screen"),
    Act("bisect_stop", "ctrl+c", "stop", "Stop",
        "Stop the running bisect: its running trial is killed with its children", "bisect screen", priority=True),
    Act("bisect_back", "escape", "back", "Back", "Back to the previous screen (never quits)", "bisect screen"),
    Act("bisect_quit", "q", "quit_bisect", "Quit", "Quit, stopping a running bisect first", "bisect screen"),
    # -- compile info (issue #13: what tlparse shows) ----------------------------------------
    Act("history_back", "escape,q", "app.pop_screen", "Back", "Back to the previous screen", "history screen"),
    Act("history_metric", "m", "next_metric", "Metric",
        "Plot the next metric: compile time, graph breaks, recompiles, cache hit rate", "history screen"),
    Act("history_first", "enter", "open_first", "Open appeared",
        "Open the run where the highlighted break or recompile cause first appeared", "history screen"),
    Act("history_gone", "o", "open_gone", "Open gone",
        "Open the first run after the highlighted cause's last one (where it was gone)", "history screen"),
    Act("history_index", "i", "make_index", "Index",
        "Index the runs here now (only new or grown ones; into ROOT/.magi-index when there is no index)",
        "history screen"),
    Act("compile_info_back", "escape,q", "app.pop_screen", "Back", "Back to the run", "compile info"),
    Act("stack_trie", "s", "toggle_trie", "Stack trie",
        "Stack trie: which user call stacks triggered which compiles (again: the compile's detail)",
        "compile info"),
    Act("reproducer", "r", "write_reproducer", "Write repro",
        "Write the compile's runnable reproducer (fx_graph_runnable) next to the run, never over a file, "
        "and show the command", "compile info"),
    Act("compile_jump", "enter", "jump_compile", "Show in tree",
        "Back to the run with the compile selected in the tree (its events and files)", "compile info"),
    Act("compile_post_grad", "P", "jump_post_grad", "Post-grad graph",
        "Back to the run on the compile's post-grad graph: the FX nodes its kernels fused (see provenance)",
        "compile info"),
    Act("compile_info_pane", "o", "focus_other", "Other pane",
        "Move focus between the table and the detail (to scroll it)", "compile info"),
    # -- Inductor provenance in the run screen (issue #13: tlparse -i) --------------------------
    Act("provenance", "P", "provenance(1)", "Provenance",
        "Provenance towards the source, from the file's cursor line: a kernel of the output code -> the "
        "post-grad FX nodes it fused (marked) -> the pre-grad nodes they came from", "run", show=False),
    Act("provenance_kernel", "K", "provenance(-1)", "To kernel",
        "Provenance towards the code: a pre-grad node -> its post-grad nodes -> the kernel that computes it "
        "in the output code", "run", show=False),
    Act("jump_back", "backspace", "jump_back", "Jump back",
        "Back to the file and line a provenance jump (P / K) left, as many times as you jumped", "run",
        show=False),
    # -- diffs that read well (issue #12) -----------------------------------------------------
    Act("diff_normalise", "z", "toggle_normalise", "Noise",
        "Mask per-process noise (addresses, generated names, object ids, source line numbers) so only "
        "real differences remain; on by default for guards", "diff", show=False),  # the status line says z
)

_BY_ID = {a.id: a for a in CATALOGUE}


def _scopes(a: Act) -> tuple[str, ...]:
    return a.scope if isinstance(a.scope, tuple) else (a.scope,)
assert len(_BY_ID) == len(CATALOGUE), "action ids must be unique"


def act(act_id: str) -> Act:
    return _BY_ID[act_id]


def bindings(*scopes: str) -> list[BindingType]:
    """The bindings of the acts in ``scopes``, each with its catalogue id."""
    return [Binding(a.keys, a.action, a.title, show=a.show, priority=a.priority, id=a.id)
            for a in CATALOGUE if set(_scopes(a)) & set(scopes)]


def binding(act_id: str, *, action: str | None = None, title: str | None = None, show: bool | None = None,
            priority: bool | None = None) -> Binding:
    """One act's binding, a field overridden where given (e.g. ``action="app.pop_screen"`` for a screen of
    its own)."""
    a = _BY_ID[act_id]
    return Binding(a.keys, a.action if action is None else action, a.title if title is None else title,
                   show=a.show if show is None else show, priority=a.priority if priority is None else priority,
                   id=a.id)


def vim_bindings(*, down: str, up: str, top: str, bottom: str, left: str | None = None,
                 right: str | None = None, page_up: str | None = None, page_down: str | None = None,
                 arrows: bool = False) -> list[BindingType]:
    """j/k/g/G (and h/l) for a widget, mapped onto its own movement actions.

    ``arrows=True`` also binds the arrow keys / home / end (for widgets that do not already)."""
    pairs = [("down", down, "down"), ("up", up, "up"), ("top", top, "home"), ("bottom", bottom, "end")]
    if left:
        pairs.append(("left", left, "left"))
    if right:
        pairs.append(("right", right, "right"))
    out: list[BindingType] = []
    for name, action, arrow in pairs:
        keys = f"{arrow},{VIM[name]}" if arrows else VIM[name]
        out.append(Binding(keys, action, name.capitalize(), show=False, id=f"move_{name}"))
    if page_up:
        out.append(Binding("pageup", page_up, "Page up", show=False, id="move_page_up"))
    if page_down:
        out.append(Binding("pagedown,space", page_down, "Page down", show=False, id="move_page_down"))
    return out


def palette_acts(scopes: set[str]) -> list[Act]:
    return [a for a in CATALOGUE if a.palette and set(_scopes(a)) & set(scopes) and "help" not in _scopes(a)]


def markdown_table() -> str:
    """The README's key table (between ``<!-- keys:start -->`` and ``<!-- keys:end -->``)."""
    where = {"app": "everywhere", "run": "run screen", "runs": "runs list", "program": "`magi-tui run`",
             "attach": "`magi-tui attach`", "tree": "event tree", "timeline": "timeline", "detail": "detail pane",
             "screen": "pushed screens", "help": "help", "file": "file view", "diff": "diff view",
             "triage": "triage panel", "compiled": "compiled functions"}
    rows = ["| key | action | where |", "|---|---|---|"]
    for a in CATALOGUE:
        keys = " ".join(f"`{k.strip()}`" for k in a.display_keys.split(" / "))
        places = ", ".join(where.get(sc, sc) for sc in _scopes(a))
        rows.append(f"| {keys} | {a.help} | {places} |")
    moves = " ".join(f"`{v}`" for v in VIM.values())
    rows.append(f"| {moves} | move down / up / top / bottom / left / right (as the arrows, home, end) "
                "| lists, trees, files, diffs, help |")
    return "\n".join(rows)


def keymap_ids() -> set[str]:
    """Every id a keymap file may name."""
    return set(_BY_ID) | {f"move_{n}" for n in VIM} | {"move_page_up", "move_page_down"}


if __name__ == "__main__":  # python -m magi_tui.ui.actions: the README's key table
    print(markdown_table())
