"""Where the index of a root is, for the History screen (``H``): the app is opened on runs, not on an index,
and ``magi_tui/ui`` never looks at files itself.

An index is a folder with ``_manifest/`` (``magi-tui index``). The screen uses, in order: ``$MAGI_TUI_INDEX``;
the path itself or a folder above it (up to :data:`LEVELS`) that is an index; ``.magi-index`` in one of
those (``magi-tui index ROOT -o ROOT/.magi-index``: discovery never walks a dot-folder, so the index can sit
beside the runs it indexes).
"""

from __future__ import annotations

import os
from pathlib import Path

from magi_tui.history.schema import MANIFEST

#: the index folder's name the screen looks for beside the runs
DEFAULT_NAME = ".magi-index"
#: how many folders above a run the screen looks (a log in ROOT/<program>/, a rank's run dir in ROOT/<job>/)
LEVELS = 3
ENV = "MAGI_TUI_INDEX"


def is_index(path: Path) -> bool:
    try:
        return (path / MANIFEST).is_dir()
    except (OSError, ValueError):
        return False


def index_for(path: str | os.PathLike[str]) -> Path | None:
    """The index that holds ``path``'s runs, or None (the screen then says how to make one)."""
    env = os.environ.get(ENV)
    if env:
        return Path(env)  # named by the user: opened (or refused, with its reason) as it is
    p = Path(path).absolute()
    for d in [p, *list(p.parents)[:LEVELS]]:
        for candidate in (d, d / DEFAULT_NAME):
            if is_index(candidate):
                return candidate
    return None


def root_of(path: str | os.PathLike[str]) -> Path:
    """The folder whose runs an index beside them holds: ``path`` itself, or the folder of a log or run."""
    root = Path(path)
    return root if root.is_dir() and not (root / "timeline_events").is_dir() else root.parent


def default_index(path: str | os.PathLike[str]) -> Path:
    """Where the History screen's ``i`` writes an index of ``path``'s runs: ``ROOT/.magi-index``."""
    return root_of(path) / DEFAULT_NAME


def how_to_make(path: str | os.PathLike[str]) -> str:
    """The one line the screen shows when no index is found."""
    root = root_of(path)
    return (f"no history index for {root}: press i to index its runs into {root / DEFAULT_NAME} "
            f"(as `magi-tui index {root} -o {root / DEFAULT_NAME}`), or set {ENV}=INDEX_DIR")
