"""Looking for runs under a root while a program may be creating them (``attach`` / ``run``)."""

from __future__ import annotations

from pathlib import Path

from magi_format.layout import TIMELINE_DIR
from magi_format.runname import parse_run_name
from magi_tui.model.sources.discovery import find_runs, is_run_dir


def run_started(path: Path) -> float:
    """When a run started: its dir name's time, else its timeline folder's mtime (the later of both)."""
    t = parse_run_name(path).run_time or 0.0
    tl = path / TIMELINE_DIR
    try:
        m = (tl if tl.exists() else path).stat().st_mtime
    except OSError:
        m = 0.0
    return max(t, m)


def newest(paths: list[Path]) -> Path:
    return max(paths, key=lambda p: (run_started(p), str(p)))


def scan_root(root: Path) -> list[Path] | None:
    """The run dirs under ``root`` now; ``[root]`` when it is itself a run; None when it does not exist."""
    if is_run_dir(root):
        return [root]
    if not root.exists():
        return None
    return [r.path for r in find_runs(root)]
