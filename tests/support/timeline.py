"""Building timelines for tests: :func:`record_run` writes through the tracer's own writer (line, event
folder, ``attributes.json``); :func:`ev_line` / :func:`lc` build single lines in the writer's shape with
the contract's own name builders, for tests that need bytes the writer would never write (truncated,
malformed, hostile)."""

from __future__ import annotations

import json
from pathlib import Path

from magi_format.layout import TIMELINE_DIR, TIMELINE_FILE
from magi_format.names import lifecycle_event, scope_attrs


def ev_line(index: int, name: str, *, files=(), ts: float = 1795346341.0, **attrs) -> str:
    """One timeline line in the writer's own shape (key order, ensure_ascii=False)."""
    if "scope" not in attrs:
        attrs = {"scope": "subgraph" if name.startswith("subgraph_") else "fullgraph", **attrs}
    obj = {"index": index, "name": name, "relative_time": "0.0ms", "files": list(files),
           "attributes": attrs, "datetime": "2026-11-22 11:19:01.460", "timestamp": ts + index / 1000}
    return json.dumps(obj, ensure_ascii=False) + "\n"


def lc(index: int, phase: str, lifecycle: str, *, sub: int | None = None, frag: str | None = None,
       **attrs) -> str:
    """A lifecycle event line: ``lc(3, "before", "compiler_compile", graph_index=0)``."""
    files = attrs.pop("files", ())
    name = lifecycle_event(phase, lifecycle, sub) if frag is None else \
        lifecycle_event(phase, "x", sub)[: -len("x")] + frag
    a = scope_attrs(sub)
    a.update(lifecycle_name=lifecycle, runtime_shape=None)
    if phase == "after":
        a["duration_ms"] = 1.5
    if phase == "failed":
        a.setdefault("exception_type", "RuntimeError")
        a.setdefault("exception_message", "boom")
    a.update(attrs)
    return ev_line(index, name, files=files, **a)


def write_run(run_dir: Path, lines: list[str] | str | bytes) -> Path:
    """A run dir whose timeline.jsonl holds exactly ``lines``."""
    te = run_dir / TIMELINE_DIR
    te.mkdir(parents=True, exist_ok=True)
    data = lines if isinstance(lines, (str, bytes)) else "".join(lines)
    (te / TIMELINE_FILE).write_bytes(data.encode() if isinstance(data, str) else data)
    return run_dir


def record_run(run_dir: Path, events: list[tuple[str, dict] | tuple[str, dict, dict[str, str]]]) -> Path:
    """A run dir written by the tracer's own :class:`tracer.writer.RunWriter`: ``(name, attrs[, files])``."""
    from tracer.writer import RunWriter

    w = RunWriter(run_dir)
    try:
        for ev in events:
            name, attrs, *rest = ev
            w.write(name, dict(attrs), dict(rest[0]) if rest else None)
    finally:
        w.close()
    return run_dir
