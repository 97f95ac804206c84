"""Event names and display strings, exactly as FORMAT.md part A §4 and §7.1 define them.

Shared by every emitter so the viewer can parse what the tracer writes with no special case.
"""

from __future__ import annotations

import re

PHASES = ("before", "after", "failed", "skip")
_NON_ALNUM = re.compile(r"[^0-9A-Za-z]+")


def frag(name: str) -> str:
    """``RemoveItemPass`` -> ``removeitempass``; runs of non-alphanumerics -> ``_``; empty -> ``unknown``."""
    out = _NON_ALNUM.sub("_", str(name)).strip("_").lower()
    return out or "unknown"


def scope_prefix(subgraph_index: int | None) -> str:
    return "fullgraph" if subgraph_index is None else f"subgraph_{subgraph_index}"


def lifecycle_event(phase: str, lifecycle: str, subgraph_index: int | None = None) -> str:
    return f"{scope_prefix(subgraph_index)}_{phase}_{frag(lifecycle)}"


def point_event(base: str, subgraph_index: int | None = None) -> str:
    return f"{scope_prefix(subgraph_index)}_{base}"


def scope_attrs(subgraph_index: int | None) -> dict:
    if subgraph_index is None:
        return {"scope": "fullgraph"}
    return {"scope": "subgraph", "subgraph": f"submod_{subgraph_index}", "subgraph_index": subgraph_index}


def relative_time(seconds: float) -> str:
    """``"328.4ms"`` under a second, ``"17.93s"`` under a minute, else ``"2m5s"``."""
    if seconds < 1:
        return f"{seconds * 1000:.1f}ms"
    if seconds < 60:
        return f"{seconds:.2f}s"
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s}s"


def sanitize_label(label: str) -> str:
    """Labels go into directory names: keep ``[A-Za-z0-9_]``."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", label).strip("_") or "run"
