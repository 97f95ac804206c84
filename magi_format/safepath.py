"""Opening files from a run directory without ever leaving it.

Event names and file names come from the run (FORMAT.md: "Names never carry paths"), so anything that
turns them into paths resolves the result and checks it is still inside the run directory: ``..``,
absolute names and symlinks that point outside are refused with :class:`UnsafePath`.

Both functions are total for hostile input: a name that cannot be encoded (a lone surrogate from a
JSON ``"\\ud800"``), one longer than ``PATH_MAX``/``NAME_MAX`` (``ENAMETOOLONG``) or a symlink loop is
refused (:class:`UnsafePath`, resp. ``False``), never an unexpected exception.
"""

from __future__ import annotations

import os
from pathlib import Path


class UnsafePath(ValueError):
    """A name that would leave the run directory (or cannot be a path at all)."""


def _resolve(p: Path) -> Path:
    try:
        return p.resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # ENAMETOOLONG, surrogates, NUL, loops
        raise UnsafePath(f"cannot resolve path: {type(exc).__name__}") from None


def safe_join(root: Path, *parts: str) -> Path:
    """``root/part/...`` resolved, or :class:`UnsafePath` if that leaves ``root``."""
    for part in parts:
        if not isinstance(part, str) or not part or part in (".", "..") or os.path.isabs(part) \
                or "\x00" in part:
            raise UnsafePath(f"refusing path component {part!r}")
        if any(p == ".." for p in Path(part).parts):
            raise UnsafePath(f"refusing path component {part!r}")
    base = _resolve(Path(root))
    target = _resolve(base.joinpath(*parts))
    if target != base and base not in target.parents:
        raise UnsafePath(f"{'/'.join(parts)!r} leaves the run directory")
    return target


def is_inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (after resolving symlinks) is inside ``root``; False when it cannot tell."""
    try:
        base = _resolve(Path(root))
        target = _resolve(Path(path))
    except UnsafePath:
        return False
    return target == base or base in target.parents
