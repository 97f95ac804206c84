"""Finding runs under any path a user may type.

A run is a directory holding ``timeline_events/`` and/or ``compiled_functions/`` (FORMAT.md §10.1).
Accepted: a run dir, its ``timeline_events/``, a ``magi_depyf/`` root, a cache root holding
``magi_depyf/``, a bare ``explain_compilation`` output root, or a folder of any of these. The walk is
breadth-first, depth-bounded, never descends into a run (its ``files/`` can hold thousands of
folders) nor into ``visualizations/``, ``magi_cache/``, ``inductor_cache/``, ``triton_cache/`` and friends
(MagiCompiler's cache sidecars beside ``magi_depyf/``: :mod:`magi_tui.model.sources.magi_cache` reads them).

A ``TORCH_COMPILE_DEBUG`` run folder (``torch_compile_debug/run_*``, holding ``torchinductor/`` or
``torchdynamo/``) is a run too (:mod:`magi_tui.model.sources.debugdir`); a path inside one means that run.

A TORCH_TRACE log is a run too (:mod:`magi_tui.model.sources.torchtrace`): a log file given as the path (by
torch's name ``dedicated_log_torch_trace_*.log`` or by its first line), and every ``*.log`` in the folders walked
that is named like one or starts with a trace record (``TORCH_TRACE=<dir>`` holds one per rank). Only
regular files, never links.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from msgspec import Struct

from magi_format.layout import RUN_MARKERS, TIMELINE_DIR, TIMELINE_FILE
from magi_format.runname import RunName, parse_run_name
from magi_tui.model.sources.debugdir import MARKERS as DEBUG_MARKERS
from magi_tui.model.sources.debugdir import debug_run_name, debug_run_root
from magi_tui.model.sources.torchtrace import is_log_name, is_trace_log, log_run_name, name_rank

SKIP_DIRS = frozenset({
    "visualizations", "magi_cache", "inductor_cache", "triton_cache", "torch_aot_compile", "joint_graph_views",
    "__pycache__", ".git", "node_modules", ".venv", "venv", "site-packages", ".cache_tmp",
})
MARKERS = RUN_MARKERS
MAX_DEPTH = 6
MAX_DIRS = 20000
MAX_SNIFFS = 200  # ``*.log`` files opened per walk to see whether they are trace logs


class FoundRun(Struct, frozen=True):
    path: Path
    name: RunName
    has_timeline_dir: bool
    has_compiled_functions: bool


def _isdir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # ENAMETOOLONG, ELOOP, EACCES, a name that cannot be encoded
        return False


def is_run_dir(path: Path) -> bool:
    return any(_isdir(path / m) for m in MARKERS)


def normalise(path: Path) -> Path:
    """A path inside a run -> the run dir: ``.../timeline_events``, ``.../timeline_events/timeline.jsonl``,
    ``.../timeline_events/files/0013_x``, ``.../compiled_functions/forward/entry_0`` ..."""
    if path.name == TIMELINE_FILE and path.parent.name == TIMELINE_DIR:
        return path.parent.parent
    if path.name in MARKERS and _isdir(path):
        return path.parent
    for parent in list(path.parents)[:8]:  # deeper inside a run (compiled_functions trees nest deep)
        if parent.name in MARKERS and is_run_dir(parent.parent):
            return parent.parent
    return debug_run_root(path) or path  # a TORCH_COMPILE_DEBUG run folder, or a path inside one


def _named_log_run_name(path: Path) -> RunName:
    """A log's run name from its file name alone (no record read)."""
    return RunName(None, None, None, name_rank(path.name), None)


def find_runs(path: str | os.PathLike[str], max_depth: int = MAX_DEPTH, *, log_ranks: bool = True
              ) -> list[FoundRun]:
    """Every run under ``path`` (the path itself included), in path order. ``log_ranks=False``: a log's name
    carries only the rank its file name gives (its records are not searched for one: an indexer that only
    needs the paths, and reads each new run whole anyway, does not decompress thousands of logs twice)."""
    log_name = log_run_name if log_ranks else _named_log_run_name
    try:
        root = normalise(Path(path))
    except (OSError, ValueError, TypeError):
        return []
    if not _isdir(root):
        if is_trace_log(root):
            return [FoundRun(root, log_name(root), False, False)]
        return []
    found: list[FoundRun] = []
    queue: deque[tuple[Path, int]] = deque([(root, 0)])
    seen = 0
    sniffs = [MAX_SNIFFS]
    while queue and seen < MAX_DIRS:
        d, depth = queue.popleft()
        seen += 1
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except (OSError, ValueError):
            continue
        subdirs = [e for e in entries if _is_dir(e)]
        names = {e.name for e in subdirs}
        if names & set(MARKERS):
            found.append(FoundRun(d, parse_run_name(d), TIMELINE_DIR in names,
                                  "compiled_functions" in names))
            continue  # never walk inside a run
        if names & set(DEBUG_MARKERS):  # a TORCH_COMPILE_DEBUG run folder (magi_tui/model/debugdir)
            found.append(FoundRun(d, debug_run_name(d), False, False))
            continue
        for e in entries:  # TORCH_TRACE logs beside (or instead of) run dirs
            if _is_log_file(e, sniffs):
                p = Path(e.path)
                found.append(FoundRun(p, log_name(p), False, False))
        if depth >= max_depth:
            continue
        for e in sorted(subdirs, key=lambda e: e.name):
            if e.name in SKIP_DIRS or e.name.startswith("."):
                continue
            queue.append((Path(e.path), depth + 1))
    found.sort(key=lambda r: str(r.path))
    return found


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except (OSError, ValueError):
        return False


def _is_log_file(entry: os.DirEntry, sniffs: list[int]) -> bool:
    """Named like torch's trace log, or a ``*.log`` / ``*.log.gz`` whose first line is a trace record (at most
    ``MAX_SNIFFS`` files are opened per walk)."""
    try:
        if not entry.name.endswith((".log", ".log.gz")) or not entry.is_file(follow_symlinks=False):
            return False
        if is_log_name(entry.name):
            return True
        if sniffs[0] <= 0:
            return False
        sniffs[0] -= 1
        return is_trace_log(entry.path)
    except (OSError, ValueError):
        return False
