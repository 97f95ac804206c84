"""Where an event's files live (FORMAT.md §4, §10.3).

``timeline_events/files/{index:04d}_{name}[/{subgraph}]/{file}``: only events with files have a
folder, the width grows past 9999, and subgraph-scoped events nest one level deeper. The folder can
appear after the line (a live run), so nothing here caches a missing folder.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from magi_format import layout as fmt
from magi_format.safepath import UnsafePath, resolve_path, safe_join_resolved
from magi_tui.model.events import Event


def _one_name(name: str) -> str:
    """A run-supplied name must be a single path component (FORMAT.md: names never carry paths)."""
    if "/" in name or (os.sep != "/" and os.sep in name) or (os.altsep and os.altsep in name):
        raise UnsafePath(f"refusing name with a path separator: {name!r}")
    return name


def event_folder_name(ev: Event) -> str:
    return fmt.event_folder_name(ev.index, ev.name)


def event_folder(run_dir: Path, ev: Event) -> Path | None:
    """The event's folder path (whether or not it exists yet); None if its name is unsafe (or cannot
    be a path at all: a lone surrogate, a name longer than the file system allows)."""
    try:
        return _folder_below(resolve_path(Path(run_dir)), ev)
    except (UnsafePath, ValueError, TypeError, OSError):
        return None


def _folder_below(base: Path, ev: Event) -> Path | None:
    """:func:`event_folder` in a run directory already resolved (raises :class:`UnsafePath`)."""
    if ev.index < 0:
        return None
    parts = [fmt.TIMELINE_DIR, fmt.FILES_DIR, _one_name(event_folder_name(ev))]
    if ev.subgraph:
        parts.append(_one_name(ev.subgraph))
    return safe_join_resolved(base, *parts)


def event_folder_rel(ev: Event) -> str:
    """The folder relative to the run dir, for reports (``timeline_events/files/0013_...``)."""
    return fmt.event_folder_rel(ev.index, ev.name, ev.subgraph)


def event_files(run_dir: Path, ev: Event) -> list[tuple[str, Path | None, str | None]]:
    """``(file name, path or None, problem or None)`` for each listed file plus ``attributes.json``.

    A path is only returned when it is safe and a regular file; otherwise ``problem`` says why
    ("not written yet", "refused: ...", "a FIFO ..."). Never raises: whatever the event holds, the
    detail pane gets a list.
    """
    try:
        return _event_files(run_dir, ev)
    except Exception as exc:  # a hostile event must not take the app down
        return [("?", None, f"cannot list files: {type(exc).__name__}")]


def _event_files(run_dir: Path, ev: Event) -> list[tuple[str, Path | None, str | None]]:
    out: list[tuple[str, Path | None, str | None]] = []
    names = [n if isinstance(n, str) else str(n) for n in (ev.files or ())]
    if not names:
        return out
    names.append("attributes.json")
    # the run directory resolved once for the folder and all its files (each resolved below it)
    try:
        folder = _folder_below(resolve_path(Path(run_dir)), ev)
    except (UnsafePath, ValueError, TypeError, OSError):
        folder = None
    for name in names:
        if folder is None:
            out.append((name, None, "refused: unsafe event name"))
            continue
        try:
            path = safe_join_resolved(folder, _one_name(name))  # inside the folder, so inside the run
        except (UnsafePath, ValueError, OSError) as exc:
            out.append((name, None, f"refused: {exc}"))
            continue
        out.append((name, *_classify(path)))
    return out


def _classify(path: Path) -> tuple[Path | None, str | None]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None, "not written (yet)"
    except (OSError, ValueError) as exc:
        return None, f"cannot read: {getattr(exc, 'strerror', None) or type(exc).__name__}"
    if stat.S_ISREG(st.st_mode):
        return path, None
    if stat.S_ISDIR(st.st_mode):
        return None, "a directory, not a file: not shown"
    if stat.S_ISFIFO(st.st_mode):
        return None, "a FIFO (named pipe), not a file: not shown"
    return None, "not a regular file: not shown"


def list_event_folders(run_dir: Path) -> list[tuple[int, str, Path]]:
    """``(index, event name, folder)`` for every ``files/NNNN_<name>`` folder, sorted by the parsed
    integer (the width grows past 9999, so ``10000_x`` sorts after ``9999_y``, not before ``2000_z``).
    With several sessions in one file the folders hold the last session's files (FORMAT.md §10.6)."""
    base = Path(run_dir) / fmt.TIMELINE_DIR / fmt.FILES_DIR
    out = []
    try:
        with os.scandir(base) as it:
            for e in it:
                parsed = fmt.parse_event_folder(e.name)
                if parsed and e.is_dir(follow_symlinks=False):
                    out.append((parsed[0], parsed[1], Path(e.path)))
    except OSError:
        return []
    out.sort(key=lambda t: (t[0], t[1]))
    return out
