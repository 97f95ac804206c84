"""Where an event's files live (FORMAT.md §4, §10.3).

``timeline_events/files/{index:04d}_{name}[/{subgraph}]/{file}``: only events with files have a
folder, the width grows past 9999, and subgraph-scoped events nest one level deeper. The folder can
appear after the line (a live run), so nothing here caches a missing folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from magi_format import layout as fmt
from magi_format.safepath import UnsafePath, safe_join
from magi_tui.model.events import Event


def _one_name(name: str) -> str:
    """A run-supplied name must be a single path component (FORMAT.md: names never carry paths)."""
    if "/" in name or (os.sep != "/" and os.sep in name) or (os.altsep and os.altsep in name):
        raise UnsafePath(f"refusing name with a path separator: {name!r}")
    return name


def event_folder_name(ev: Event) -> str:
    return fmt.event_folder_name(ev.index, ev.name)


def event_folder(run_dir: Path, ev: Event) -> Path | None:
    """The event's folder path (whether or not it exists yet); None if its name is unsafe."""
    if ev.index < 0:
        return None
    try:
        parts = [fmt.TIMELINE_DIR, fmt.FILES_DIR, _one_name(event_folder_name(ev))]
        if ev.subgraph:
            parts.append(_one_name(ev.subgraph))
        return safe_join(run_dir, *parts)
    except UnsafePath:
        return None


def event_folder_rel(ev: Event) -> str:
    """The folder relative to the run dir, for reports (``timeline_events/files/0013_...``)."""
    return fmt.event_folder_rel(ev.index, ev.name, ev.subgraph)


def event_files(run_dir: Path, ev: Event) -> list[tuple[str, Path | None, str | None]]:
    """``(file name, path or None, problem or None)`` for each listed file plus ``attributes.json``.

    A path is only returned when it is safe and exists; otherwise ``problem`` says why
    ("not written yet", "refused: ...").
    """
    out: list[tuple[str, Path | None, str | None]] = []
    folder = event_folder(run_dir, ev)
    names = list(ev.files)
    if names:
        names.append("attributes.json")
    for name in names:
        if folder is None:
            out.append((name, None, "refused: unsafe event name"))
            continue
        try:
            path = safe_join(folder, _one_name(name))
            safe_join(run_dir, *path.relative_to(run_dir.resolve()).parts)
        except (UnsafePath, ValueError) as exc:
            out.append((name, None, f"refused: {exc}"))
            continue
        if path.is_file():
            out.append((name, path, None))
        else:
            out.append((name, None, "not written (yet)"))
    return out


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
