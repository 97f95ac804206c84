"""A fix result on disk (``fix.json``, written by ``magi-tui fix``): found under a root and read bounded into
its typed shape, or one line saying why not -- read by the fix screen, ``magi-tui fix`` and the analysis
(a proven fix of the run's program)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from magi_format.text import literal
from magi_tui.model.sources.paths import display_name
from magi_tui.model.sources.safejson import Int, JsonProblem, decode, read_bounded

FIX_FILE = "fix.json"
MAX_FIX_JSON = 8 * 1024 * 1024


class _Number(Struct, omit_defaults=True):
    index: Int | None = None
    first: Int | float | str | None = None
    second: Int | float | str | None = None


class _Reference(Struct, omit_defaults=True):
    deterministic: bool | None = None
    why: str | None = None
    moved: Annotated[list[str], Meta(max_length=1000)] = []
    numbers_moved: Annotated[list[_Number], Meta(max_length=1000)] = []
    numbers_changed: Int | None = None
    max_abs_diff: float | None = None


class _Baseline(Struct, omit_defaults=True):
    graph_breaks: Int | None = None
    recompiles: Int | None = None
    compile_s: float | None = None
    exit_code: Int | None = None
    run: str | None = None
    worklist: Annotated[list[str], Meta(max_length=100_000)] = []


class _Tried(Struct, omit_defaults=True):
    """A change as ``fix.json`` lists it (``magi_tui.live.fix.Tried.as_json``)."""

    change: str | None = None
    key: str | None = None
    env: dict[str, str] = {}
    config: Annotated[list[str], Meta(max_length=1000)] = []
    patch: str | None = None
    code: str | None = None
    graph_breaks: Int | None = None
    recompiles: Int | None = None
    compile_s: float | None = None
    outputs_equal: bool | None = None
    kept: bool | None = None
    tried: bool | None = None
    why: str | None = None
    exit_code: Int | None = None
    run: str | None = None
    targets: Annotated[list[str], Meta(max_length=100_000)] = []
    resolved: Annotated[list[str], Meta(max_length=100_000)] = []
    patch_proven: bool | None = None
    patch_why: str | None = None
    patch_run: str | None = None


class FixFile(Struct, omit_defaults=True):
    """``fix.json`` (``magi_tui.live.fix.FixResult.as_json``): every field its readers use, each of its type."""

    verdict: str | None = None
    command: Annotated[list[str], Meta(max_length=10_000)] | None = None
    directory: str | None = None
    baseline: _Baseline | None = None
    candidates: Annotated[list[_Tried], Meta(max_length=1000)] = []
    best: _Tried | None = None
    runs: Int | None = None
    error: str | None = None
    notes: Annotated[list[str], Meta(max_length=1000)] = []
    advice: Annotated[list[str], Meta(max_length=1000)] = []
    reference: _Reference | None = None
    interrupted: bool | None = None
    signal: str | None = None
    trial_timeout_s: float | None = None


def read_fix_json(path: Path) -> dict[str, Any]:
    """One ``fix.json`` as the dict :func:`magi_tui.model.outputs.fixes.fix_lines` and the fix view take: only :class:`FixFile`'s fields,
    each of its type (absent ones left out); :class:`~magi_tui.model.sources.safejson.JsonProblem` (one line) when it
    cannot be read, is over :data:`MAX_FIX_JSON` bytes, nests too deep or is not a fix result."""
    name = literal(str(path), 300) or display_name(path)
    text = read_bounded(path, MAX_FIX_JSON, path.parent, name=name)
    obj: dict[str, Any] = msgspec.to_builtins(decode(text, FixFile, name=name))
    return obj


def find_fix(path: str | Path) -> tuple[Path | None, dict[str, Any] | None, str | None]:
    """The newest ``fix.json`` at ``path`` (a fix folder, or a root holding ``fix_*`` folders, or a root whose
    ``runs/`` holds them): ``(file, its JSON, None)`` or ``(None, None, why not)`` — why in one line, a damaged
    or hostile file included (never an exception)."""
    p = Path(path)
    found: list[tuple[float, str, Path]] = []
    for base in (p, p / "runs"):
        try:
            cands = [base / FIX_FILE, *(d / FIX_FILE for d in base.glob("fix_*") if d.is_dir() and not d.is_symlink())]
            for f in cands:
                if f.is_file() and not f.is_symlink():
                    found.append((f.stat().st_mtime, str(f), f))
        except (OSError, ValueError):
            continue
    if not found:
        return None, None, literal(f"no {FIX_FILE} under {p}: run magi-tui fix -o {p} -- python script.py", 600)
    newest = max(found)[2]
    try:
        return newest, read_fix_json(newest), None
    except JsonProblem as exc:
        return None, None, str(exc)
