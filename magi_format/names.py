"""Event names, exactly as FORMAT.md part A §4 and §7 define them: the builders the tracer writes with
and the parser the viewer reads with, side by side so they cannot drift.

``(fullgraph|subgraph_<k>)_(before|after|failed|skip)_<frag>`` is a lifecycle phase (when
``attributes.lifecycle_name`` is present); ``(fullgraph|subgraph_<k>)_<base>`` is a point event.
"""

from __future__ import annotations

import re

PHASES = ("before", "after", "failed", "skip")
NAME_RE = re.compile(r"^(fullgraph|subgraph_(\d+))_(before|after|failed|skip)_(.+)$")
SCOPE_RE = re.compile(r"^(fullgraph|subgraph_(\d+))_(.+)$")
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


def parse_name(name: str) -> tuple[str | None, str, int | None]:
    """``(phase or None, fragment, subgraph index from the name or None)``.

    ``fullgraph_after_removeitempass`` -> ``("after", "removeitempass", None)``;
    ``subgraph_2_cache_hit`` -> ``(None, "cache_hit", 2)``; a name outside the grammar -> ``(None, name, None)``.
    """
    m = NAME_RE.match(name)
    if m is not None:
        _scope, sgi, phase, fragment = m.groups()
    else:
        phase = None
        sm = SCOPE_RE.match(name)
        sgi, fragment = (sm.group(2), sm.group(3)) if sm else (None, name)
    try:
        sgi_int = int(sgi) if sgi is not None else None
    except ValueError:  # thousands of digits: not a subgraph number anyone wrote
        sgi_int = None
    return phase, fragment, sgi_int


# -- point events the tracer writes (FORMAT.md part B); the viewer classifies by these ------------
GRAPH_BREAK = "graph_break"        # attrs: reason, gb_id, gb_type, explanation, hints, user_file, user_line,
                                   #        user_function, source_line, user_frame ("file:line")
RECOMPILE = "recompile"            # attrs: frame, reason (first line), reasons (all), recompile_limit
RECOMPILE_LIMIT_HIT = "recompile_limit_hit"  # attrs: frame, recompile_limit, reason
RESTART = "restart_analysis"       # attrs: restart_reason, reason
CACHE_HIT = "cache_hit"            # attrs: cache, key, reason
CACHE_MISS = "cache_miss"
CACHE_BYPASS = "cache_bypass"
TRACER_STOPPED = "tracer_stopped"  # attrs: reason, error: the tracer stopped recording before the program ended
