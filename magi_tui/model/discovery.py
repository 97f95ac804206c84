"""Finding runs under any path a user may type.

A run is a directory holding ``timeline_events/`` and/or ``compiled_functions/`` (FORMAT.md §10.1).
Accepted: a run dir, its ``timeline_events/``, a ``magi_depyf/`` root, a cache root holding
``magi_depyf/``, a bare ``explain_compilation`` output root, or a folder of any of these. The walk is
breadth-first, depth-bounded, never descends into a run (its ``files/`` can hold thousands of
folders) nor into ``visualizations/``, ``magi_cache/``, ``inductor_cache/`` and friends.
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from magi_format.layout import RUN_MARKERS, TIMELINE_DIR, TIMELINE_FILE
from magi_format.runname import RunName, parse_run_name

SKIP_DIRS = frozenset({
    "visualizations", "magi_cache", "inductor_cache", "torch_aot_compile", "joint_graph_views",
    "__pycache__", ".git", "node_modules", ".venv", "venv", "site-packages", ".cache_tmp",
})
MARKERS = RUN_MARKERS
MAX_DEPTH = 6
MAX_DIRS = 20000


@dataclass(frozen=True)
class FoundRun:
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
    return path


def find_runs(path: str | os.PathLike[str], max_depth: int = MAX_DEPTH) -> list[FoundRun]:
    """Every run under ``path`` (the path itself included), in path order."""
    try:
        root = normalise(Path(path))
    except (OSError, ValueError, TypeError):
        return []
    if not _isdir(root):
        return []
    found: list[FoundRun] = []
    queue: deque[tuple[Path, int]] = deque([(root, 0)])
    seen = 0
    while queue and seen < MAX_DIRS:
        d, depth = queue.popleft()
        seen += 1
        try:
            with os.scandir(d) as it:
                subdirs = [e for e in it if _is_dir(e)]
        except (OSError, ValueError):
            continue
        names = {e.name for e in subdirs}
        if names & set(MARKERS):
            found.append(FoundRun(d, parse_run_name(d), TIMELINE_DIR in names,
                                  "compiled_functions" in names))
            continue  # never walk inside a run
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
