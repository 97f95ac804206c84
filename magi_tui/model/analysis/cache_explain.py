"""Why a cache missed: which components of its key differ from the nearest lookup that would have hit.

Torch 2.13 logs, with every FX-graph and AOTAutograd cache hit, miss and bypass, the key and its
``components``: one line per thing hashed into it, ``[<hash>] <name>: <value>`` — the graph (``gm``, or
the AOT graph), each input's metadata (``example_inputs[0]``), every Inductor config value
(``inductor_config[max_fusion_size]``), the torch version, the system. Our tracer and the TORCH_TRACE
reader keep that record as the cache event's ``cache_info.json``.

A miss is explained against the *nearest* other lookup of the same cache (the one with the fewest differing
components): an earlier lookup of the same run (a recompile: the inputs changed) or any lookup of a
baseline run (``compare A B``, ``check --baseline``: a warm rerun that missed because a setting changed).
Components are compared by torch's own hash of each; the value is shown, cut, to say what it was.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field

from magi_format.lazyre import lazy_re
from magi_tui.model.sources.files import json_or_none

if TYPE_CHECKING:
    from magi_tui.model.sources.magi_cache import MagiMissExplained

#: cache_info.json files read per run, at most (each holds the whole key: the graph's code included)
MAX_LOOKUPS = 400
MAX_INFO_BYTES = 4 << 20
#: a component's value as kept, at most (the window around the first difference comes from it; torch itself
#: cuts a long value at 1,024 characters, so whether the two recorded texts are the same is known)
VALUE_CHARS = 2048
#: the graph component's code as kept, at most (its ops are read from it: :mod:`.cache_terms`)
GRAPH_CHARS = 64 << 10
_LINE = lazy_re(r"^\[(?P<hash>[^\]]{1,200})\] (?P<name>[^:\n]{1,300}): ?(?P<value>.*)$", re.S)
CACHE_INFO_FILE = "cache_info.json"
#: the component holding the graph (FX-graph and AOTAutograd keys alike: AOT's details extend FX's)
GRAPH_COMPONENT = "gm"


class Lookup(Struct):
    """One cache lookup with its key's components (name -> (hash, value as shown))."""

    index: int
    cache: str
    state: str                           # hit | miss | bypass
    compile_id: str | None
    key: str | None
    components: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: the graph component's code, line breaks kept (None: not recorded)
    graph: str | None = None

    def as_ref(self, where: str | None) -> dict[str, Any]:
        return {"run": where, "index": self.index, "cache": self.cache, "state": self.state,
                "compile_id": self.compile_id, "key": self.key}


class MissExplained(Struct):
    miss: Lookup
    nearest: Lookup | None
    where: str | None                    # "same_run" | "baseline"
    differs: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {**self.miss.as_ref("this"), "nearest": self.nearest.as_ref(self.where) if self.nearest else None,
                "same_graph": self.same_graph, "differs": self.differs, "components": len(self.miss.components)}

    @property
    def same_graph(self) -> bool | None:
        """Whether the nearest lookup had the same graph (None: no nearest, or no graph component)."""
        if self.nearest is None:
            return None
        a, b = self.miss.components.get(GRAPH_COMPONENT), self.nearest.components.get(GRAPH_COMPONENT)
        return None if a is None or b is None else a[0] == b[0]

    def line(self) -> str:
        m = self.miss
        head = f"{m.cache} miss #{m.index}" + (f" ({m.compile_id})" if m.compile_id else "")
        if self.nearest is None:
            return f"{head}: no other lookup of this cache to compare with"
        n = self.nearest
        other = ("an earlier lookup" if self.where == "same_run" else "the baseline's lookup") + \
            f" #{n.index}" + (f" ({n.compile_id})" if n.compile_id else "")
        if not self.differs:
            return f"{head}: every component equals {other}'s (the entry was not there: evicted, or not stored)"
        if self.same_graph is False:
            return f"{head}: a graph no lookup had before (nearest: {other}, {len(self.differs)} component(s) differ)"
        names = ", ".join(d["component"] for d in self.differs[:6]) + (" …" if len(self.differs) > 6 else "")
        return f"{head}: differs from {other} in {names}"


def parse_components(lines: Any) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    if not isinstance(lines, list):
        return out
    for ln in lines[:5000]:
        if not isinstance(ln, str):
            continue
        m = _LINE.match(ln)
        if m is None:
            continue
        value = " ".join(m.group("value").split())   # a graph's code on one line
        out[m.group("name")] = (m.group("hash"), value[:VALUE_CHARS] + ("…" if len(value) > VALUE_CHARS else ""))
    return out


def graph_code(lines: Any) -> str | None:
    """The graph component's code with its line breaks (cut at :data:`GRAPH_CHARS`), or None."""
    if not isinstance(lines, list):
        return None
    prefix = f"] {GRAPH_COMPONENT}: "
    for ln in lines[:5000]:
        if isinstance(ln, str) and ln.startswith("[") and prefix in ln[:220]:
            return ln.split(prefix, 1)[1][:GRAPH_CHARS]
    return None


def run_lookups(run: Any) -> list[Lookup]:
    """The run's cache lookups with the components torch logged (in event order; those without are left
    out: an older torch, a magi cache event)."""
    t = run.triage
    items = [("hit", i) for i in t.cache_hits] + [("miss", i) for i in t.cache_misses] + \
        [("bypass", i) for i in t.cache_bypasses]
    items.sort(key=lambda si: si[1].event.index)
    out: list[Lookup] = []
    for state, it in items[:MAX_LOOKUPS]:
        ev = it.event
        if CACHE_INFO_FILE not in (ev.files or ()):
            continue
        info = json_or_none(run.file_text(ev, CACHE_INFO_FILE, MAX_INFO_BYTES))
        if not isinstance(info, dict):
            continue
        comps = parse_components(info.get("components"))
        if not comps:
            continue
        cache = str((ev.summary or {}).get("cache") or "-")
        key = info.get("key")
        out.append(Lookup(ev.index, cache, state, ev.compile_id, key if isinstance(key, str) else None, comps,
                          graph_code(info.get("components"))))
    return out


def diff_components(a: dict[str, tuple[str, str]], b: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """Components whose hash differs (or that one side lacks): ``{component, value, nearest}``, this
    lookup's value first."""
    out = []
    for name in list(a) + [n for n in b if n not in a]:
        ha, hb = a.get(name), b.get(name)
        if ha is None or hb is None or ha[0] != hb[0]:
            va, vb = ha[1] if ha else None, hb[1] if hb else None
            out.append({"component": name, "value": va, "nearest": vb, "change": change(vb, va)})
    return out


def change(old: str | None, new: str | None, width: int = 36) -> str:
    """``…shape=torch.Size([4, 3])… → …shape=torch.Size([8, 3])…``: the two values around where they
    first differ (a long TensorMetadata or graph differs in a few characters)."""
    if old is None or new is None:
        return f"{'(absent)' if old is None else _cut(old, width)} → {'(absent)' if new is None else _cut(new, width)}"
    p = 0
    while p < len(old) and p < len(new) and old[p] == new[p]:
        p += 1
    start = max(0, p - width // 2)

    def win(v: str) -> str:
        return ("…" if start else "") + v[start:start + width] + ("…" if len(v) > start + width else "")
    return f"{win(old)} → {win(new)}"


def _cut(v: str, width: int) -> str:
    return v[:width] + ("…" if len(v) > width else "")


def explain_misses(lookups: list[Lookup], baseline: list[Lookup] | None = None) -> list[MissExplained]:
    """Every miss against its nearest lookup of the same cache: earlier in the same run, or anywhere in
    ``baseline``. A lookup of the same graph is preferred to any other; ties go to the baseline (a rerun),
    then to the most recent."""
    out = []
    for i, m in enumerate(lookups):
        if m.state != "miss":
            continue
        cands = [("baseline", c) for c in (baseline or []) if c.cache == m.cache] + \
            [("same_run", c) for c in reversed(lookups[:i]) if c.cache == m.cache]
        best: tuple[int, str, Lookup, list] | None = None
        graph = m.components.get(GRAPH_COMPONENT)
        same = [wc for wc in cands if graph is not None and wc[1].components.get(GRAPH_COMPONENT) == graph]
        for where, c in same or cands:
            d = diff_components(m.components, c.components)
            if best is None or len(d) < best[0]:
                best = (len(d), where, c, d)
        if best is None:
            out.append(MissExplained(m, None, None))
        else:
            out.append(MissExplained(m, best[2], best[1], best[3]))
    return out


def run_misses_explained(run: Any) -> list[MissExplained | MagiMissExplained]:
    """A run's misses against its own earlier lookups (nothing is read when it has no miss); then its magi
    cache misses (MagiCompiler's ``compiler_manager_load``), explained by its events and the ``magi_cache/``
    sidecars beside it (:mod:`magi_tui.model.sources.magi_cache`, imported only when there is one)."""
    misses = run.triage.cache_misses
    if not misses:
        return []
    out: list[MissExplained | MagiMissExplained] = list(explain_misses(run_lookups(run)))
    if any(it.event.lifecycle == "compiler_manager_load" for it in misses):
        from magi_tui.model.sources.magi_cache import explain_magi_misses

        out.extend(explain_magi_misses(run))
    return out
