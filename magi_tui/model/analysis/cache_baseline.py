"""The earlier run a cache miss is explained against when only one run is given.

A warm rerun misses because something in its key changed since the run that filled the cache. That run is
*the last earlier run of the same program that used the same cache directory*; it is looked for

* among the runs under the same root as this one (the folder above ``magi_depyf/`` of a tracer run, the
  folder of a TORCH_TRACE log),
* under the roots given with ``--against ROOT`` (:func:`look_also_under`), and
* in a history index of runs, where this install has one (:func:`_history_paths`: used only if a
  ``magi_tui.history`` module exists).

"The same cache directory" is read off where each run's output code went (:mod:`~magi_tui.model.sources.cache_dir`);
"the same program" is the script the tracer recorded, else a compiled frame (name and file) both runs
have. When no such run exists, the cache was cold for this run (a first run, or another directory): never
"missed because of X".
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Any

from msgspec import Struct

from magi_tui.model.run import RunModel
from magi_tui.model.sources.cache_dir import scan_cache_dir

#: runs under a root looked at, at most (the most recently written first)
MAX_CANDIDATES = 64
_EXTRA_ROOTS: list[Path] = []
_DIRS: dict[tuple[str, int, float], str | None] = {}
_MEMO: "weakref.WeakKeyDictionary[RunModel, Baseline]" = weakref.WeakKeyDictionary()


class Baseline(Struct):
    """What the search found: the run (None: none), where it was found, and this run's cache dir."""

    run: RunModel | None
    found: str | None               # same_root | against | history
    cache_dir: str | None
    roots: list[str]
    looked_at: int = 0

    def as_json(self) -> dict[str, Any]:
        r = self.run
        return {"run": str(r.path) if r is not None else None, "found": self.found,
                "started": r.started if r is not None else None}


def look_also_under(paths: list[str] | list[Path]) -> None:
    """Roots given with ``--against``: searched for a baseline besides this run's own root."""
    _EXTRA_ROOTS[:] = [Path(p) for p in paths]
    _MEMO.clear()


def timeline_file(run: RunModel) -> Path:
    """The file torch's records of this run are in (the timeline, or the log itself)."""
    return run.reader.path


def cache_dir_of(run: RunModel) -> str | None:
    """The Inductor cache directory the run used (memoised by file size and mtime), or None."""
    return _dir_of(timeline_file(run))


def _dir_of(file: Path) -> str | None:
    try:
        st = file.stat()
    except OSError:
        return None
    key = (str(file), st.st_size, st.st_mtime)
    if key not in _DIRS:
        _DIRS[key] = scan_cache_dir(file)
    return _DIRS[key]


def run_root(path: Path) -> Path:
    """The root a run was written under: above ``magi_depyf/`` (our tracer's layout), else the folder of a
    run dir or a log."""
    p = Path(path)
    for up in p.parents:
        if up.name == "magi_depyf":
            return up.parent
    return p.parent


def _history_paths(run: RunModel) -> list[Path]:
    """Earlier runs a history index knows of (the one seam to it: used only where this install has
    ``magi_tui.history`` with ``earlier_runs(path)``)."""
    import importlib.util

    if importlib.util.find_spec("magi_tui.history") is None:
        return []
    mod = __import__("magi_tui.history", fromlist=["earlier_runs"])
    fn = getattr(mod, "earlier_runs", None)
    if fn is None:
        return []
    try:
        return [Path(p) for p in fn(run.path)]
    except Exception:  # an index that cannot answer: searched no further
        return []


def program_of(run: RunModel) -> tuple[str | None, frozenset[str]]:
    """The script (when the tracer recorded it) and the files of the frames torch compiled. (Read off the
    run's bytes, not its analysis: the analysis' rules ask for this run's own baseline.)"""
    from magi_tui.model.sources.cache_dir import compiled_files

    out = run.outcome
    script = getattr(out, "script", None) if out is not None else None
    return script, compiled_files(timeline_file(run))


def same_program(a: tuple[str | None, frozenset], b: tuple[str | None, frozenset]) -> bool:
    if a[0] and b[0]:
        return os.path.realpath(a[0]) == os.path.realpath(b[0])
    return bool(a[1] & b[1])


def _candidates(run: RunModel) -> list[tuple[Path, str]]:
    from magi_tui.model.sources.discovery import find_runs

    me = os.path.realpath(run.path)
    seen = {me}
    out: list[tuple[Path, str]] = []
    roots = [(run_root(run.path), "same_root")] + [(r, "against") for r in _EXTRA_ROOTS]
    for root, how in roots:
        try:
            found = find_runs(root)
        except OSError:
            continue
        for f in found:
            rp = os.path.realpath(f.path)
            if rp not in seen:
                seen.add(rp)
                out.append((f.path, how))
    for p in _history_paths(run):
        rp = os.path.realpath(p)
        if rp not in seen:
            seen.add(rp)
            out.append((p, "history"))
    return out


def _mtime(file: Path) -> float:
    try:
        return file.stat().st_mtime
    except OSError:
        return 0.0


def find_baseline(run: RunModel) -> Baseline:
    """The last earlier run of the same program that used this run's cache directory (memoised per run)."""
    got = _MEMO.get(run)
    if got is not None:
        return got
    mine = cache_dir_of(run)
    roots = [str(run_root(run.path))] + [str(r) for r in _EXTRA_ROOTS]
    if mine is None:
        b = Baseline(None, None, None, roots)
        _MEMO[run] = b
        return b
    started = run.started
    program = program_of(run)
    cands = []
    for path, how in _candidates(run):
        probe = RunModel(path)
        file = timeline_file(probe)
        cands.append((_mtime(file), path, how, file))
    cands.sort(key=lambda c: -c[0])
    best: tuple[float, RunModel, str] | None = None
    looked = 0
    for _mt, path, how, file in cands[:MAX_CANDIDATES]:
        if _dir_of(file) != mine:
            continue
        looked += 1
        from magi_tui.model.analysis.checks import TimelineFold

        other = RunModel(path).load(fold=TimelineFold())
        if other.error:
            continue
        t = other.started
        if started is not None and (t is None or t >= started):
            continue
        if not same_program(program, program_of(other)):
            continue
        if best is None or (t or 0.0) > best[0]:
            best = (t or 0.0, other, how)
    b = Baseline(best[1] if best else None, best[2] if best else None, mine, roots, looked)
    _MEMO[run] = b
    return b
