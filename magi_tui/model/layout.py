"""Where an event's files live (FORMAT.md §4, §10.3).

``timeline_events/files/{index:04d}_{name}[/{subgraph}]/{file}``: only events with files have a
folder, the width grows past 9999, and subgraph-scoped events nest one level deeper. The folder can
appear after the line (a live run), so nothing here caches a missing folder.
"""

from __future__ import annotations

from pathlib import Path

from magi_tui.model.events import Event
from magi_tui.model.safepath import UnsafePath, safe_join


def event_folder_name(ev: Event) -> str:
    return f"{ev.index:04d}_{ev.name}"


def event_folder(run_dir: Path, ev: Event) -> Path | None:
    """The event's folder path (whether or not it exists yet); None if its name is unsafe."""
    if ev.index < 0:
        return None
    parts = ["timeline_events", "files", event_folder_name(ev)]
    if ev.subgraph:
        parts.append(ev.subgraph)
    try:
        return safe_join(run_dir, *parts)
    except UnsafePath:
        return None


def event_folder_rel(ev: Event) -> str:
    """The folder relative to the run dir, for reports (``timeline_events/files/0013_...``)."""
    rel = f"timeline_events/files/{event_folder_name(ev)}"
    return f"{rel}/{ev.subgraph}" if ev.subgraph else rel


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
            path = safe_join(folder, name)
            safe_join(run_dir, *path.relative_to(run_dir.resolve()).parts)
        except (UnsafePath, ValueError) as exc:
            out.append((name, None, f"refused: {exc}"))
            continue
        if path.is_file():
            out.append((name, path, None))
        else:
            out.append((name, None, "not written (yet)"))
    return out
