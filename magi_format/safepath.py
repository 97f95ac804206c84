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
import stat
from pathlib import Path


class UnsafePath(ValueError):
    """A name that would leave the run directory (or cannot be a path at all)."""


def resolve_path(p: Path) -> Path:
    """``p.resolve()``, or :class:`UnsafePath` for what cannot be a path (the one rule for both)."""
    try:
        return p.resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # ENAMETOOLONG, surrogates, NUL, loops
        raise UnsafePath(f"cannot resolve path: {type(exc).__name__}") from None


def safe_join(root: Path, *parts: str) -> Path:
    """``root/part/...`` resolved, or :class:`UnsafePath` if that leaves ``root``."""
    return safe_join_resolved(resolve_path(Path(root)), *parts)


def safe_join_resolved(base: Path, *parts: str) -> Path:
    """:func:`safe_join` below a ``base`` already resolved (``Path.resolve()``) by the caller: what
    resolves one run directory once for many files (a comparison locates hundreds of graph files, each
    through its event's folder) uses this, and pays only for the components below it."""
    names: list[str] = []
    for part in parts:
        if not isinstance(part, str) or not part or part in (".", "..") or os.path.isabs(part) \
                or "\x00" in part:
            raise UnsafePath(f"refusing path component {part!r}")
        split = Path(part).parts if "/" in part or (os.altsep and os.altsep in part) else (part,)
        if ".." in split:
            raise UnsafePath(f"refusing path component {part!r}")
        names.extend(split)
    target = _below(base, names)
    if target is None:  # a link, or a component stat cannot answer for: resolved the whole way, as ever
        target = resolve_path(base.joinpath(*parts))
    if target != base and base not in target.parents:
        raise UnsafePath(f"{'/'.join(parts)!r} leaves the run directory")
    return target


def _below(base: Path, parts: list[str]) -> Path | None:
    """``base/parts`` as ``Path.resolve()`` gives it when no component below ``base`` is a link: each
    component is ``lstat``-ed once (``resolve`` ``lstat``-s every component from ``/`` again, ~10 per
    file in a deep run directory); a missing one ends the walk (``resolve`` keeps the rest as written).
    None, and the caller resolves the whole way, when a component is a link or ``lstat`` fails for any
    other reason (a name too long, no permission, a surrogate): those keep their one careful path."""
    path = str(base)
    for i, part in enumerate(parts):
        path = os.path.join(path, part)
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            # like resolve(): nothing below a missing component can be a link
            return Path(os.path.join(path, *parts[i + 1:])) if i + 1 < len(parts) else Path(path)
        except (OSError, ValueError):
            return None
        if stat.S_ISLNK(mode):
            return None
    return Path(path)


def is_inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (after resolving symlinks) is inside ``root``; False when it cannot tell."""
    try:
        base = resolve_path(Path(root))
        target = None
        # written below the resolved root, with no ``..`` (relpath drops those by spelling, resolve through
        # the links they follow): only what is below the root is looked at
        rel = os.path.relpath(path, base) if os.path.isabs(path) and ".." not in Path(path).parts else None
        if rel is not None and rel != ".." and not rel.startswith("../") and "\x00" not in rel:
            target = base if rel == "." else _below(base, list(Path(rel).parts))  # written below it
        if target is None:
            target = resolve_path(Path(path))
    except (UnsafePath, ValueError):
        return False
    return target == base or base in target.parents
