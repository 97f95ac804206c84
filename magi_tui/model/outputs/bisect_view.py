"""What the app's bisect screen shows: a bisect's steps as lines, its culprit, the culprit's before/after graphs.

The live bisect (:class:`magi_tui.live.bisect.Bisector`) hands the screen each step as it is made; a finished
``bisect_<ts>/`` folder is read here from its ``bisect.json`` (:func:`load_bisect`: typed and bounded, a damaged
file said in one line).
Either way a step is the JSON object the headless ``magi-tui bisect --json`` lists, so one function formats
both. Nothing here imports Textual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from msgspec import Meta, Struct

from magi_format.safepath import UnsafePath, safe_join
from magi_format.text import literal
from magi_tui.model.sources.safejson import Int

__all__ = ["is_bisect_folder", "step_line", "culprit_lines", "outcome_line", "load_bisect", "GraphFile",
           "culprit_diff", "culprit_pass_diff", "graph_diff_lines", "MAX_PASS_DIFF_LINES"]

#: lines of the culprit application's own diff kept in ``culprit.graph.pass_diff.lines``
MAX_PASS_DIFF_LINES = 40
#: characters of one such line
_MAX_DIFF_LINE = 160


def step_line(n: int, step: dict[str, Any]) -> str:
    """One step, numbered: its verdict, time, what it changed and (unless it passed) why."""
    change = step.get("change") or "as it is"
    why = step.get("why") or ""
    verdict = str(step.get("verdict") or "?")
    seconds = step.get("seconds")
    t = f"{seconds:6.1f}s" if isinstance(seconds, (int, float)) else "     ?s"
    return f"{n:>3} {verdict:10} {t}  {change}" + (f"  [{why}]" if why and verdict != "passes" else "")


def outcome_line(result: dict[str, Any]) -> str:
    """A bisect that named no culprit, in one line: nondeterministic (the reference disagreed with itself),
    the failure did not reproduce (and how the program ran as it is), or (a ``bisect.json`` of before these
    were recorded) not reproduced."""
    ref = result.get("reference")
    if result.get("verdict") == "nondeterministic" or (isinstance(ref, dict) and ref.get("deterministic") is False):
        why = ref.get("why") if isinstance(ref, dict) else None
        return ("nondeterministic: two runs with torch.compile disabled disagree"
                + (f" ({why})" if why else "") + ": no layer is blamed, no run can be judged against that reference")
    rep = result.get("as_reported")
    if isinstance(rep, dict) and rep.get("reproduces") is False:
        return f"the failure did not reproduce: {rep.get('why')}"
    return "not reproduced"


def culprit_lines(result: dict[str, Any]) -> list[str]:
    """The outcome, as ``magi-tui bisect`` words it: the culprit's layer, stage, application and graph (and
    the lines the culprit application itself changed, counted: ``d`` shows them); or why there is none, what
    moved and what to do."""
    if result.get("error"):
        return [f"could not bisect: {result['error']}"]
    c = result.get("culprit")
    runs = result.get("runs", len(result.get("steps") or []))
    if not result.get("reproduced") or not isinstance(c, dict):
        lines = [f"{outcome_line(result)} ({runs} run(s))"]
        ref = result.get("reference")
        if isinstance(ref, dict) and ref.get("deterministic") is False and ref.get("moved"):
            lines.append("moved: " + "  ".join(str(m) for m in ref["moved"][:4]))
        lines.extend(f"→ {a}" for a in result.get("advice") or [])
        return lines
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
        own = g.get("pass_diff")
        if isinstance(own, dict):
            lines.append(f"its own diff: {own.get('file')} -{own.get('removed')} +{own.get('added')} line(s) "
                         f"(application #{own.get('application')} alone; d shows it)")
    torch = result.get("torch_bisector_runs")
    lines.append(f"{runs} run(s); torch's bisector: {'n/a' if torch is None else torch}")
    return lines


def is_bisect_folder(path: Path) -> bool:
    """Whether ``path`` is a bisect's folder (``bisect.json`` in it, a regular file): the app opens it on the
    bisect screen."""
    f = Path(path) / "bisect.json"
    return f.is_file() and not f.is_symlink()


# -- bisect.json, read back: typed and bounded (issue 32.6) ---------------------------------------------------
#: bisect.json is read up to this many bytes (steps are ~300 bytes; the culprit's diff lines are bounded)
MAX_BISECT_JSON = 8 << 20


class _Step(Struct, omit_defaults=True):
    backend: str | None = None
    subsystem: str | None = None
    limit: Int | None = None
    verdict: str | None = None
    seconds: float | None = None
    run: str | None = None
    change: str | None = None
    why: str | None = None
    graphs: Annotated[list[Int], Meta(max_length=100_000)] | None = None


class _Side(Struct, omit_defaults=True):
    run: str | None = None
    file: str | None = None
    limit: Int | None = None


class _PassDiff(Struct, omit_defaults=True):
    application: Int | None = None
    event: str | None = None
    file: str | None = None
    before: _Side | None = None
    after: _Side | None = None
    added: Int | None = None
    removed: Int | None = None
    lines: Annotated[list[str], Meta(max_length=1000)] = []


class _Graph(Struct, omit_defaults=True):
    compile_id: str | None = None
    frame_id: Int | None = None
    frame: str | None = None
    run: str | None = None
    found_by: str | None = None
    before: str | None = None
    after: str | None = None
    pass_diff: _PassDiff | None = None


class _Culprit(Struct, omit_defaults=True):
    backend: str | None = None
    layer: str | None = None
    subsystem: str | None = None
    bisect_number: Int | None = None
    applications: Int | None = None
    debug_info: str | None = None
    graph: _Graph | None = None
    run: str | None = None


class _Reference(Struct, omit_defaults=True):
    deterministic: bool | None = None
    why: str | None = None
    moved: Annotated[list[str], Meta(max_length=1000)] = []


class _AsReported(Struct, omit_defaults=True):
    reproduces: bool | None = None
    why: str | None = None
    run: str | None = None


class BisectFile(Struct, omit_defaults=True):
    """``bisect.json`` (``magi_tui.live.bisect.BisectResult.as_json``): every field the bisect view reads, each
    of its type; lists bounded in length."""

    verdict: str | None = None
    reproduced: bool | None = None
    culprit: _Culprit | None = None
    reference: _Reference | None = None
    as_reported: _AsReported | None = None
    advice: Annotated[list[str], Meta(max_length=1000)] = []
    steps: Annotated[list[_Step], Meta(max_length=100_000)] = []
    runs: Int | None = None
    torch_bisector_runs: Int | None = None
    error: str | None = None
    directory: str | None = None
    notes: Annotated[list[str], Meta(max_length=1000)] = []
    interrupted: bool | None = None


def _bisect_file(path: Path) -> Path | None:
    """``bisect.json`` at ``path`` or in one of its three parents (a run a bisect made lies at
    ``bisect_<ts>/magi_depyf/run_<ts>/model_<...>``), a regular file."""
    try:
        p = Path(path).resolve()
        for d in [p, *list(p.parents)[:3]]:
            f = d / "bisect.json"
            if f.is_file() and not f.is_symlink():
                return f
    except (OSError, ValueError, RuntimeError):
        return None
    return None


def load_bisect(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A finished bisect's result (``bisect.json`` in ``path`` or a parent) as the dict the bisect view takes
    (only :class:`BisectFile`'s fields, each of its type), or a problem in one line: none there, unreadable,
    over :data:`MAX_BISECT_JSON` bytes, nested too deep, or not a bisect's result. Never raises."""
    import msgspec

    from magi_tui.model.sources.safejson import JsonProblem, decode, read_bounded

    f = _bisect_file(Path(path))
    if f is None:
        return None, f"no readable bisect.json in {literal(str(path), 300)}"
    name = literal(str(f), 300)
    try:
        text = read_bounded(f, MAX_BISECT_JSON, f.parent, name=name)
        obj: dict[str, Any] = msgspec.to_builtins(decode(text, BisectFile, name=name))
    except JsonProblem as exc:
        return None, str(exc)
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


def _mask_noise(lines: list[str]) -> list[str]:
    """A graph file's lines with what differs between two processes of the same program masked: the graph's
    ``# graph id: <id(graph)>`` comment (``pre_grad_graph.py``) and object addresses."""
    import re

    out = []
    for line in lines:
        if "graph id" in line or "0x" in line:
            line = re.sub(r"(#\s*graph id:\s*)\d+", r"\1<id>", line)
            line = re.sub(r"\b0x[0-9a-fA-F]{6,}\b", "0x…", line)
        out.append(line)
    return out


def graph_diff_lines(left_run: Path, left: str, right_run: Path, right: str,
                     context: int = 1) -> tuple[list[str], int, int] | str:
    """Two graph files (each relative to its run, read only inside it) as a short unified diff: ``(lines,
    added, removed)``, the lines ``-`` / ``+`` / two spaces (``context`` equal lines around a change, the rest
    folded), at most :data:`MAX_PASS_DIFF_LINES`, per-process noise masked (:func:`_mask_noise`: two runs of
    one program differ there); or why they cannot be read."""
    from magi_tui.model.analysis.diff import compute_diff, read_side

    try:
        lpath = safe_join(Path(left_run), *Path(left).parts)
        rpath = safe_join(Path(right_run), *Path(right).parts)
    except UnsafePath as exc:
        return f"cannot open the graphs: {exc}"
    a, problem = read_side(lpath, left_run)
    if problem:
        return problem
    b, problem = read_side(rpath, right_run)
    if problem:
        return problem
    d = compute_diff(_mask_noise(a), _mask_noise(b), context=context)
    if d.identical:
        return [], 0, 0
    out: list[str] = []
    for row in d.unified:
        if row.kind == "fold":
            line = f"  … {row.folded} equal line(s)"
        elif row.kind == "equal":
            line = "  " + row.left
        elif row.kind == "delete":
            line = "- " + row.left
        else:
            line = "+ " + row.right
        out.append(line if len(line) <= _MAX_DIFF_LINE else line[:_MAX_DIFF_LINE - 1] + "…")
    if len(out) > MAX_PASS_DIFF_LINES:
        more = len(out) - MAX_PASS_DIFF_LINES
        out = out[:MAX_PASS_DIFF_LINES] + [f"… {more} more line(s)"]
    return out, d.added, d.removed


def culprit_pass_diff(result: dict[str, Any]) -> tuple[GraphFile, GraphFile, Path, Path] | str:
    """The culprit application's own before/after graphs (``culprit.graph.pass_diff``: the runs with
    applications ``0..N-1`` and ``0..N``), each inside its run, or why there are none."""
    c = cu if isinstance(cu := result.get("culprit"), dict) else {}
    g = gr if isinstance(gr := c.get("graph"), dict) else {}
    own = g.get("pass_diff")
    if not isinstance(own, dict):
        return "the bisect recorded no diff of the culprit application alone"
    sides = []
    for key in ("before", "after"):
        side = own.get(key)
        if not isinstance(side, dict) or not side.get("run") or not side.get("file"):
            return "the culprit application's diff names no graph"
        run = Path(str(side["run"]))
        try:
            path = safe_join(run, *Path(str(side["file"])).parts)
        except UnsafePath as exc:
            return f"cannot open the culprit application's graphs: {exc}"
        limit = side.get("limit")
        applied = "none" if limit == -1 else f"0..{limit}"
        sides.append((GraphFile(path, f"{g.get('compile_id')} {own.get('file')}, {c.get('subsystem')} "
                                      f"applications {applied}"), run))
    (before, brun), (after, arun) = sides
    return before, after, brun, arun
