"""The compiled_functions browser: functions -> entries (most recently used first, as Dynamo keeps them) -> guards / decompiled code /
compiled fns / resume fns, with the chosen file on the right (overview.md rendered as Markdown). An entry
says which compile made it and, for a run our tracer recorded, the calls it served and their seconds.

Files are indexed and read by the model (:mod:`magi_tui.model.analysis.compiled_functions`,
:mod:`magi_tui.model.sources.files`) in thread workers: nothing outside the run directory is listed or shown
(a link out of it, a FIFO or a device is named and refused), and Markdown links are not followed."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Footer, Markdown, Tree
from textual.widgets.tree import TreeNode

from magi_format.text import fmt_seconds, literal
from magi_tui.model.analysis.compiled_functions import (
    CompiledFn,
    Entry,
    Function,
    compiled_functions_problem,
    index_compiled_functions,
)
from magi_tui.model.analysis.runtime import EntryCalls, read_runtime_file
from magi_tui.model.sources import files
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.mark import HoldsMark, Mark, mark_of
from magi_tui.ui.screens.rows import ListScreen, title_text
from magi_tui.ui.widgets.file_view import FileView

MAX_MARKDOWN_BYTES = files.MAX_MARKDOWN_BYTES


class CFTree(Tree[Any]):
    HELP_TITLE = "Compiled functions tree"
    BINDINGS = vim_bindings(down="cursor_down", up="cursor_up", top="scroll_home", bottom="scroll_end")

    def process_label(self, label: Any) -> Text:
        return label if isinstance(label, Text) else Text(literal(label))


class CompiledFunctionsScreen(ListScreen):
    """A :class:`ListScreen` whose list is a tree, with the chosen file beside it; no status line (what the
    read found, or why not, is a leaf of the tree) and Textual's own footer."""
    BINDINGS = [
        *bindings("compiled"),
    ]
    NAME = "cf"
    LIST_ID = "tree"
    LIST = CFTree
    CANNOT = "cannot read compiled_functions/"
    STATUS = False
    FOOTER = Footer
    TITLE_CSS = LIST_CSS = None  # app.tcss: #cf-title, #cf-tree

    def __init__(self, run_path: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run_path = run_path
        self.current: Path | None = None
        self.calls: dict[str, EntryCalls] = {}   # compile id -> what its entry served at run time

    def title_line(self) -> Text:
        return title_text("compiled_functions", self.run_path.name)

    def make_list(self) -> Widget:
        return CFTree(Text("compiled_functions"), id=self.list_id)

    def compose_body(self) -> Iterable[Widget]:
        with Horizontal(id="cf-main"):
            yield self.make_list()
            with ContentSwitcher(id="cf-right", initial="cf-file"):
                yield FileView(id="cf-file")
                with VerticalScroll(id="cf-md-scroll"):
                    yield Markdown(id="cf-md", open_links=False)

    def on_mount(self) -> None:
        self.query_one(CFTree).show_root = False

    def read(self) -> tuple[list[Function], str | None, dict[str, EntryCalls]]:
        problem = compiled_functions_problem(self.run_path)
        fns = index_compiled_functions(self.run_path) if problem is None else []
        info = read_runtime_file(self.run_path) if problem is None else None
        return fns, problem, {e.compile_id: e for lst in info.entries.values() for e in lst} if info is not None else {}

    def set_status(self, text: str, style: str = "dim") -> None:
        tree = self.query_one(CFTree)
        tree.clear()
        tree.root.add_leaf(Text(literal(text), style=style))

    def _leaf(self, parent: TreeNode, label: str, path: Path | None, style: str = "") -> None:
        if path is None:
            return
        parent.add_leaf(Text(literal(label), style=style), path)

    def _refused(self, parent: TreeNode, refused: list[tuple[str, str]]) -> None:
        """Files that are there but not shown (a link out of the run, a FIFO): the reason is the data,
        shown in the file pane when the leaf is highlighted."""
        for name, problem in refused:
            label = Text(literal(name, 60), style="dim", end="")
            label.append("  ∅ refused", style="red")
            parent.add_leaf(label, _Refused(problem))

    def _add_function(self, parent: TreeNode, fn: Function, expand: bool = False) -> None:
        label = Text(literal(fn.name), style="bold", end="")
        label.append(f"  {len(fn.entries)} entr{'y' if len(fn.entries) == 1 else 'ies'}", style="dim")
        if fn.duplicate_of:
            label.append("  (shown elsewhere)", style="dim")
        if fn.truncated:
            label.append("  (deeper levels not indexed)", style="dim")
        if fn.problem:
            label.append(f"  ({literal(fn.problem, 80)})", style="red")
        node = parent.add(label, fn.overview, expand=expand)
        self._leaf(node, "overview.md", fn.overview)
        self._leaf(node, "decompiled_code.py (original)", fn.decompiled)
        self._leaf(node, "bytecode_info.txt", fn.bytecode, "dim")
        self._refused(node, fn.refused)
        for e in fn.entries:
            self._add_entry(node, e)

    def _add_entry(self, parent: TreeNode, e: Entry) -> None:
        label = Text(e.label, style="bold cyan" if e.index == 0 else "cyan", end="")
        ran = self.calls.get(e.compile_id or "")   # first: the tree's width cuts what follows
        if ran is not None and ran.calls is not None:
            first = "" if ran.first_call_seconds is None else f", 1st {fmt_seconds(ran.first_call_seconds)}"
            label.append(f"  ×{ran.calls} call(s)" + ("" if ran.seconds is None else f" {fmt_seconds(ran.seconds)}")
                         + first, style="green" if ran.calls else "yellow")
        if e.compile_id:
            label.append(f"  compile {literal(e.compile_id, 40)}", style="dim")
        if e.guard_leaves is not None:
            label.append(f"  {e.guard_leaves} guards", style="dim")
        node = parent.add(label, e.decompiled, expand=e.index == 0)
        self._leaf(node, f"guards.txt ({e.guard_leaves} leaf)" if e.guard_leaves is not None else "guards.txt",
                   e.guards)
        self._leaf(node, "decompiled_code.py (transformed)", e.decompiled)
        self._leaf(node, "bytecode_info.txt", e.bytecode, "dim")
        self._refused(node, e.refused)
        if e.compiled_fns:
            cfs = node.add(Text("compiled_fns/", style="bold"), None, expand=True)
            for cf in e.compiled_fns:
                self._add_cf(cfs, cf)
        if e.resume_fns:
            rfs = node.add(Text("resume_fns/", style="bold"), None)
            for r in e.resume_fns:
                self._add_function(rfs, r)

    def _add_cf(self, parent: TreeNode, cf: CompiledFn) -> None:
        label = Text(literal(cf.name, 60), end="")
        if cf.is_stub:
            label.append("  (stub)", style="dim")
        if not cf.extras and not cf.submods:
            parent.add_leaf(label, cf.path)
            return
        node = parent.add(label, cf.path)
        for x in cf.extras:
            self._leaf(node, x.name, x)
        for name, sub_files in cf.submods:
            sub = node.add(Text(literal(name)), None)
            for f in sub_files:
                self._leaf(sub, f.name, f)

    def show(self, got: tuple[list[Function], str | None, dict[str, EntryCalls]]) -> None:
        fns, problem, self.calls = got
        tree = self.query_one(CFTree)
        tree.clear()
        if problem:
            self.set_status(problem, "red")
        elif not fns:
            tree.root.add_leaf(Text("compiled_functions/ is empty", style="dim"))
        for fn in fns:
            self._add_function(tree.root, fn, expand=len(fns) <= 3)
        tree.move_cursor_to_line(0) if tree.last_line >= 0 else None

    @on(Tree.NodeHighlighted)
    def handle_tree_node_highlighted(self, message: Tree.NodeHighlighted) -> None:
        path = message.node.data
        if isinstance(path, Path):
            self._open(path)
        elif isinstance(path, _Refused):
            self.current = None
            self.query_one("#cf-right", ContentSwitcher).current = "cf-file"
            self.query_one("#cf-file", FileView).show_message(path.problem)

    def _open(self, path: Path) -> None:
        self.current = path
        if path.suffix == ".md":
            self._load_markdown(path)
        else:
            self._show_file(path)

    def _show_file(self, path: Path) -> None:
        self.query_one("#cf-right", ContentSwitcher).current = "cf-file"
        self.query_one("#cf-file", FileView).open_path(path, root=self.run_path)

    @work(thread=True, exclusive=True, group="cf-markdown")
    def _load_markdown(self, path: Path) -> None:
        text, problem = files.markdown_text(path, self.run_path, MAX_MARKDOWN_BYTES)
        self.app.call_from_thread(self._show_markdown, path, text, problem)

    def _show_markdown(self, path: Path, text: str | None, problem: str | None) -> None:
        if path != self.current:
            return
        if text is None:  # too big for Markdown, or refused: the file view shows it or says why
            if problem:
                self.query_one("#cf-right", ContentSwitcher).current = "cf-file"
                self.query_one("#cf-file", FileView).show_message(problem)
            else:
                self._show_file(path)
            return
        self.query_one("#cf-right", ContentSwitcher).current = "cf-md-scroll"
        # overview.md links are relative; the Markdown widget shows them as text we do not follow
        self.query_one("#cf-md", Markdown).update(text)

    def action_focus_other(self) -> None:
        if self.query_one(CFTree).has_focus:
            shown = self.query_one("#cf-right", ContentSwitcher).visible_content
            if shown is not None:
                shown.focus()
        else:
            self.query_one(CFTree).focus()

    def _ref(self) -> _PathRef | None:
        if self.current is None:
            return None
        problem = files.check(self.current, self.run_path)  # a refused file is never marked / diffed
        if problem is not None:
            self.notify(literal(problem, 200), severity="warning")
            return None
        try:
            rel = str(self.current.relative_to(self.run_path))
        except ValueError:
            rel = self.current.name
        return _PathRef(rel, self.current)

    def action_mark(self) -> None:
        if self.current is None:
            self.notify("Select a file to mark.", severity="warning")
            return
        ref = self._ref()
        if ref is None:
            return
        if isinstance(self.app, HoldsMark):
            self.app.mark = Mark(self.run_path, ref)
        self.notify(f"marked {literal(ref.title, 70)}")

    def action_diff(self) -> None:
        from magi_tui.ui.screens.diff import DiffScreen

        mark = mark_of(self.app)
        ref = self._ref()
        if mark is None or ref is None:
            self.notify("Mark a file with m, select another, then press d.", severity="warning")
            return
        self.app.push_screen(DiffScreen(mark.ref, ref, left_run=mark.run_path, right_run=self.run_path,
                                        left_note="marked", right_note="current"))


class _Refused:
    """A tree leaf's data: a file that is there but refused, and why."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


class _PathRef:
    """A plain file (not an event's) that can be marked and diffed."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path

    @property
    def title(self) -> str:
        return self.name
