"""Opening files from a run directory without ever leaving it.

Event names and file names come from the run (FORMAT.md: "Names never carry paths"), so anything that
turns them into paths resolves the result and checks it is still inside the run directory: ``..``,
absolute names and symlinks that point outside are refused with :class:`UnsafePath`.
"""

from __future__ import annotations

import os
from pathlib import Path


class UnsafePath(ValueError):
    """A name that would leave the run directory."""


def safe_join(root: Path, *parts: str) -> Path:
    """``root/part/...`` resolved, or :class:`UnsafePath` if that leaves ``root``."""
    for part in parts:
        if not part or part in (".", "..") or os.path.isabs(part) or "\x00" in part:
            raise UnsafePath(f"refusing path component {part!r}")
        if any(p == ".." for p in Path(part).parts):
            raise UnsafePath(f"refusing path component {part!r}")
    base = root.resolve()
    target = base.joinpath(*parts).resolve()
    if target != base and base not in target.parents:
        raise UnsafePath(f"{'/'.join(parts)!r} leaves the run directory")
    return target


def is_inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (after resolving symlinks) is inside ``root``."""
    base = root.resolve()
    target = path.resolve()
    return target == base or base in target.parents
