"""What the app's bisect screen shows: a bisect's steps as lines, its culprit, the culprit's before/after graphs.

The live bisect (:class:`magi_tui.live.bisect.Bisector`) hands the screen each step as it is made; a finished
``bisect_<ts>/`` folder is read here from its ``bisect.json`` (:func:`magi_tui.model.bugreport.find_bisect`).
Either way a step is the JSON object the headless ``magi-tui bisect --json`` lists, so one function formats
both. Nothing here imports Textual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from msgspec import Struct

from magi_format.safepath import UnsafePath, safe_join

__all__ = ["is_bisect_folder", "step_line", "culprit_lines", "load_bisect", "GraphFile", "culprit_diff"]


def step_line(n: int, step: dict[str, Any]) -> str:
    """One step, numbered: its verdict, time, what it changed and (unless it passed) why."""
    change = step.get("change") or "as it is"
    why = step.get("why") or ""
    verdict = str(step.get("verdict") or "?")
    seconds = step.get("seconds")
    t = f"{seconds:6.1f}s" if isinstance(seconds, (int, float)) else "     ?s"
    return f"{n:>3} {verdict:10} {t}  {change}" + (f"  [{why}]" if why and verdict != "passes" else "")


def culprit_lines(result: dict[str, Any]) -> list[str]:
    """The outcome, as ``magi-tui bisect`` words it: the culprit's layer, stage, application and graph."""
    if result.get("error"):
        return [f"could not bisect: {result['error']}"]
    c = result.get("culprit")
    if not result.get("reproduced") or not isinstance(c, dict):
        return [f"not reproduced ({len(result.get('steps') or [])} run(s))"]
    lines = [f"culprit: {c.get('layer') or c.get('backend')}"]
    if c.get("subsystem"):
        n = c.get("bisect_number")
        lines.append(f"stage: {c['subsystem']}" + (f", application #{n} of {c.get('applications')}"
                                                    if c.get("applications") and n is not None else ""))
    if c.get("debug_info"):
        lines.append(f"what: {c['debug_info']}")
    g = c.get("graph")
    if isinstance(g, dict):
        lines.append(f"graph: {g.get('compile_id')} {g.get('frame') or ''} ({g.get('found_by')})".rstrip())
    runs = result.get("runs", len(result.get("steps") or []))
    torch = result.get("torch_bisector_runs")
    lines.append(f"{runs} run(s); torch's bisector: {'n/a' if torch is None else torch}")
    return lines


def is_bisect_folder(path: Path) -> bool:
    """Whether ``path`` is a bisect's folder (``bisect.json`` in it, a regular file): the app opens it on the
    bisect screen."""
    f = Path(path) / "bisect.json"
    return f.is_file() and not f.is_symlink()


def load_bisect(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A finished bisect's result (``bisect.json`` in ``path`` or a parent), or a problem in words."""
    # bugreport pulls in the whole analysis (checks, metrics); every launch asks is_bisect_folder
    from magi_tui.model.bugreport import find_bisect

    try:
        f, obj = find_bisect(Path(path))
    except OSError as exc:
        return None, f"cannot read bisect.json: {exc.strerror or exc}"
    if obj is None:
        return None, f"no readable bisect.json in {path}"
    if not isinstance(obj.get("steps", []), list):
        return None, f"{f}: steps is not a list"
    return obj, None


class GraphFile(Struct, frozen=True):
    """One graph file of a run, as the diff screen opens it (``path``, ``title``)."""

    path: Path
    title: str


def culprit_diff(result: dict[str, Any]) -> tuple[GraphFile, GraphFile, Path] | str:
    """The culprit graph's before/after files of its stage (inside its run), or why there are none."""
    c = cu if isinstance(cu := result.get("culprit"), dict) else {}
    g = gr if isinstance(gr := c.get("graph"), dict) else None
    if not g:
        return "the bisect named no culprit graph"
    if not (g.get("before") and g.get("after") and g.get("run")):
        return "the culprit is not a pass with before/after graphs (nothing to diff)"
    run = Path(str(g["run"]))
    try:
        before = safe_join(run, *Path(str(g["before"])).parts)
        after = safe_join(run, *Path(str(g["after"])).parts)
    except UnsafePath as exc:
        return f"cannot open the culprit's graphs: {exc}"
    stage = c.get("subsystem") or "stage"
    return (GraphFile(before, f"{g.get('compile_id')} before {stage}"),
            GraphFile(after, f"{g.get('compile_id')} after {stage}"), run)
