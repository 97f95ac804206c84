"""The graph files a comparison reads: where an event's graph is (:class:`GraphRef`), reading them on
a budget and hashing them with addresses and generated names masked (:class:`_GraphReader`)."""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePath
from typing import Any

from magi_format.layout import event_folder_rel as fmt_event_folder_rel
from magi_tui.model.analysis.diff import read_side
from magi_tui.model.analysis.guards import normalise_guard_line
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel

MAX_GRAPH_READS = 2000       # graph files read per comparison, at most (the rest: not compared)
GRAPH_MAX_LINES = 50_000


# -- small helpers ----------------------------------------------------------------------------------
def _base(file: str | None) -> str | None:
    return PurePath(file).name if file else None


def _delta(a: float | int | None, b: float | int | None, digits: int = 6) -> float | int | None:
    if a is None or b is None:
        return None
    d = b - a
    return round(d, digits) if isinstance(d, float) else d


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a <= 0:
        return None
    return round((b - a) / a, 4)


def _first_line(text: Any) -> str:
    for ln in str(text or "").splitlines():
        if ln.strip():
            return ln.strip()
    return ""


def _norm(text: str) -> str:
    return normalise_guard_line(text)


def _graph_name(ev: Event) -> str | None:
    """The graph file an event carries (as the run screen picks it: ``<phase>_…graph…`` first)."""
    names = [n for n in (ev.files or ()) if isinstance(n, str) and n != "attributes.json"]
    for pred in (lambda n: ev.phase is not None and n.startswith(f"{ev.phase}_") and "graph" in n,
                 lambda n: "graph" in n):
        for n in names:
            if pred(n):
                return n
    return None


class GraphRef:
    """One graph file of a run (what the diff screen opens: ``path`` and ``title``).

    The file is located (checked to be a regular file inside the run) only when ``path`` is first
    asked for: a run with 100k events has tens of thousands of pass graphs, and a comparison reads a
    bounded number of them."""

    __slots__ = ("run", "event", "name", "_found")

    def __init__(self, run: RunModel, event: Event, name: str) -> None:
        self.run = run
        self.event = event
        self.name = name
        self._found: tuple[Any, str | None] | None = None

    def _locate(self) -> tuple[Any, str | None]:
        if self._found is None:
            self._found = (None, "not listed")
            for fname, path, problem in self.run.files(self.event):
                if fname == self.name:
                    self._found = (path, problem)
                    break
        return self._found

    @property
    def path(self) -> Path | None:
        """The file (a regular file inside the run), else None (see ``problem``)."""
        return self._locate()[0]

    @property
    def problem(self) -> str | None:
        return self._locate()[1]

    @property
    def root(self) -> Path:
        """The folder the file must lie inside: the run dir, or for a log the folder its reader writes
        the payloads to (not the log file's own path: nothing would be inside it)."""
        return self.run.files_root

    @property
    def rel(self) -> str:
        """Where the file is, relative to the run dir (not checked)."""
        return f"{fmt_event_folder_rel(self.event.index, self.event.name, self.event.subgraph)}/{self.name}"

    @property
    def title(self) -> str:
        return f"{self.event.index:04d} {self.event.name} · {self.name}"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.event.index, "event": self.event.name, "file": self.name,
                               "rel": self.rel}
        if self._found is not None:  # read for the comparison: whether it could be
            out["problem"] = self._found[1]
        return out


def graph_ref(run: RunModel, ev: Event) -> GraphRef | None:
    name = _graph_name(ev)
    return None if name is None else GraphRef(run, ev, name)


class _GraphReader:
    """Normalised graph text (addresses and generated names masked), read once per file, bounded."""

    def __init__(self) -> None:
        self.budget = MAX_GRAPH_READS
        self._cache: dict[str, tuple[str, ...] | None] = {}

    def lines(self, ref: GraphRef | None) -> tuple[str, ...] | None:
        if ref is None:
            return None
        key = f"{ref.run.path}\0{ref.rel}"
        if key in self._cache:
            return self._cache[key]
        if self.budget <= 0:
            return None
        self.budget -= 1
        if ref.path is None:
            self._cache[key] = None
            return None
        lines, problem = read_side(ref.path, ref.root, GRAPH_MAX_LINES)
        # comments (``# File: /home/…/model.py:12 in forward``) name paths of one machine: not the graph
        out = None if problem else tuple(_norm(ln) for ln in lines if not ln.lstrip().startswith("#"))
        self._cache[key] = out
        return out

    def digest(self, ref: GraphRef | None) -> str | None:
        lines = self.lines(ref)
        if lines is None:
            return None
        return hashlib.sha1("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()[:12]

