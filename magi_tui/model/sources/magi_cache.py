"""MagiCompiler's cache sidecars beside a run, and its magi cache misses explained with them (issue 33.3).

MagiCompiler (2026) keeps, under the cache root that holds ``magi_depyf/`` (SandAI-org/MagiCompiler
``config.py``: ``magi_cache_dump_path``, ``triton_cache_dump_path``; ``magi_backend.py``: ``CompilerManager``):

* ``magi_cache/<model folder>/<hash>/subgraph_indices.py`` — the piecewise cache, a ``pprint`` of
  ``{(runtime_shape, graph_index, backend_name[, static_sizes]): (key, artifact path, restart_analysis_count)}``.
  The model folder is the run's own name (``model_<i>[_<tag>]_rank_<r>_<topology>``), so a cache is per model,
  rank *and topology*; the hash covers the compile config, the Inductor config, the compiler and the traced
  source files. The restart count is how many Dynamo restarts (``TensorifyScalarRestartAnalysis``) the bake
  saw: a later run skips that many loads of the piece to replay them (its load reads ``miss``,
  ``cache_entry_load_miss``, ``remaining_restart_skip_count``), then loads it.
* ``…/<hash>/host_slots.py`` (graph weight offload on) — a ``pprint`` of ``{slot: {name, shape, dtype, nbytes,
  resident}}``: which weight each host slot baked into the artifacts held; a process whose bound weights do not
  match drops the cache (``passes/weight_offload/cache/offload_cache.py``).
* ``triton_cache/`` (``TRITON_CACHE_DIR`` while compiling): Triton's kernels, one folder each.
* With ``MAGI_COMPILE_ASSERT_CACHE_HIT=1`` a miss raises ``RuntimeError("MAGI_COMPILE_ASSERT_CACHE_HIT: …")``
  instead of compiling (a pre-baked cache that does not cover a piece).

:func:`explain_magi_misses` turns each magi miss (``compiler_manager_load`` with ``load_result: miss``) of a run
into a row of the cache section (``cache_explain.run_misses_explained``): why it missed, from the run's own
events first (stored later by this run: a first compile; a restart replay), then from the sidecars (nothing baked
for this topology, baked for another one, another hash). Nothing here runs for a run without magi misses, and the
sidecars are read only for a run in a cache root (``<root>/magi_depyf/run_*/model_*``). Files are read with
:func:`magi_tui.model.sources.files.read_head` inside the cache root (a link that leaves it is refused), at most
``MAX_SIDECAR_BYTES`` each; the literals are read with patterns, not ``ast`` (a headless start stays lean).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct, field

from magi_format.lazyre import lazy_re
from magi_format.runname import parse_run_name
from magi_tui.model.events import Event, KeptAttrs
from magi_tui.model.sources.files import read_head

ASSERT_PREFIX = "MAGI_COMPILE_ASSERT_CACHE_HIT"
INDICES_FILE = "subgraph_indices.py"
HOST_SLOTS_FILE = "host_slots.py"
MAX_SIDECAR_BYTES = 1 << 20
#: hash folders of one model folder read, at most (each is one compile config)
MAX_HASH_DIRS = 32
#: other folders of the same model under ``magi_cache/`` looked at (other topologies, the older form)
MAX_OTHER_DIRS = 16
#: Triton kernel folders counted, at most
MAX_TRITON_DIRS = 100_000
#: magi misses explained per run, at most (as many as torch's: ``cache_explain.MAX_LOOKUPS``)
MAX_MISSES = 400

_STR = r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\""
#: one entry of ``subgraph_indices.py``: ``(shape, index, 'backend'[, 'static']): ('key' | None, 'path'[, count])``
_ENTRY = lazy_re(r"\(\s*(None|-?\d{1,18})\s*,\s*(-?\d{1,18})\s*,\s*(" + _STR + r")\s*(?:,\s*(" + _STR + r")\s*)?,?\s*\)"
                 r"\s*:\s*\(\s*(None|" + _STR + r")\s*,\s*(" + _STR + r")\s*(?:,\s*(-?\d{1,18})\s*)?,?\s*\)")
#: one slot of ``host_slots.py``: ``<slot>: {...}``
_SLOT = lazy_re(r"(-?\d{1,18})\s*:\s*\{([^{}]{0,4000})\}")
_SLOT_NAME = lazy_re(r"'name'\s*:\s*(" + _STR + r")")
_SLOT_BYTES = lazy_re(r"'nbytes'\s*:\s*(\d{1,20})")
_SLOT_RESIDENT = lazy_re(r"'resident'\s*:\s*True")


def _unquote(s: str) -> str:
    """A Python string literal as ``pprint`` writes one (no ``ast``: the common escapes only)."""
    body = s[1:-1]
    if "\\" not in body:
        return body
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append({"n": "\n", "t": "\t", "r": "\r"}.get(nxt, nxt))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class CacheEntry(Struct):
    """One piece in ``subgraph_indices.py``."""

    runtime_shape: int | None
    graph_index: int
    backend: str
    key: str | None
    #: the artifact folder's name (the path written is the baking machine's; its last part is looked up here)
    artifact: str
    restart_count: int
    #: whether that artifact folder is in the hash folder
    present: bool

    def as_json(self) -> dict[str, Any]:
        return {"runtime_shape": self.runtime_shape, "graph_index": self.graph_index, "backend": self.backend,
                "key": self.key, "artifact": self.artifact, "restart_count": self.restart_count,
                "artifact_present": self.present}


class HostSlots(Struct):
    """What ``host_slots.py`` says: the weights graph weight offload baked into host slots."""

    slots: int
    resident: int
    nbytes: int
    names: list[str] = field(default_factory=list)

    def text(self) -> str:
        size = f"{self.nbytes / (1 << 20):.1f} MiB" if self.nbytes >= 1 << 20 else f"{self.nbytes / 1024:.1f} KiB"
        names = ", ".join(self.names[:3]) + (f", +{len(self.names) - 3} more" if len(self.names) > 3 else "")
        return (f"{self.slots} weight(s) baked into host slots ({size}, {self.resident} kept resident)"
                + (f": {names}" if names else ""))

    def as_json(self) -> dict[str, Any]:
        return {"slots": self.slots, "resident": self.resident, "nbytes": self.nbytes, "names": self.names}


class HashDir(Struct):
    name: str
    #: None: no ``subgraph_indices.py`` (nothing stored under this hash, or the cache is off)
    entries: list[CacheEntry] | None
    host_slots: HostSlots | None = None
    problem: str | None = None

    def find(self, graph_index: int | None, runtime_shape: Any) -> CacheEntry | None:
        for e in self.entries or ():
            if e.graph_index == graph_index and e.runtime_shape == runtime_shape:
                return e
        return None

    def as_json(self) -> dict[str, Any]:
        return {"hash": self.name, "indices": self.entries is not None,
                "entries": [e.as_json() for e in self.entries or ()],
                "host_slots": self.host_slots.as_json() if self.host_slots else None, "problem": self.problem}


class ModelDir(Struct):
    """``magi_cache/<name>/``: one model, rank and topology."""

    name: str
    topology: str | None
    hashes: list[HashDir] = field(default_factory=list)

    def find(self, graph_index: int | None, runtime_shape: Any) -> tuple[HashDir, CacheEntry] | None:
        for h in self.hashes:
            e = h.find(graph_index, runtime_shape)
            if e is not None:
                return h, e
        return None

    def as_json(self) -> dict[str, Any]:
        return {"folder": f"magi_cache/{self.name}", "topology": self.topology,
                "hashes": [h.as_json() for h in self.hashes]}


class Sidecars(Struct):
    """The sidecars of one run: its own ``magi_cache`` folder (None when there is none), the same model's
    folders of other topologies, the Triton cache."""

    root: str
    own: ModelDir | None
    others: list[ModelDir] = field(default_factory=list)
    #: Triton kernel folders under ``triton_cache/`` (None: no such folder)
    triton_kernels: int | None = None
    triton_capped: bool = False

    @property
    def host_slots(self) -> HostSlots | None:
        for h in self.own.hashes if self.own else ():
            if h.host_slots is not None:
                return h.host_slots
        return None

    def as_json(self) -> dict[str, Any]:
        return {"root": self.root, "own": self.own.as_json() if self.own else None,
                "other_topologies": [o.as_json() for o in self.others],
                "triton_cache": None if self.triton_kernels is None else
                {"kernels": self.triton_kernels, "capped": self.triton_capped}}


def cache_root(run_path: Path) -> Path | None:
    """The cache root of a magi_compile run (``<root>/magi_depyf/run_*/model_*``), else None."""
    try:
        if run_path.parent.parent.name != "magi_depyf" or parse_run_name(run_path).model_index is None:
            return None
        return run_path.parent.parent.parent
    except (OSError, ValueError):
        return None


def _subdirs(path: Path, cap: int) -> tuple[list[str], bool]:
    """Names of the folders in ``path`` (not links), sorted, at most ``cap``; and whether there were more."""
    out: list[str] = []
    try:
        with os.scandir(path) as it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        out.append(e.name)
                except (OSError, ValueError):
                    continue
                if len(out) > cap:
                    break
    except (OSError, ValueError):
        return [], False
    return sorted(out[:cap]), len(out) > cap


def _count_dirs(path: Path, cap: int) -> tuple[int | None, bool]:
    n = 0
    try:
        with os.scandir(path) as it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        n += 1
                except (OSError, ValueError):
                    continue
                if n >= cap:
                    return n, True
    except (OSError, ValueError):
        return None, False
    return n, False


def parse_indices(text: str, hash_dir: Path | None = None) -> list[CacheEntry]:
    """The entries of a ``subgraph_indices.py`` text (the ``pprint`` of a dict of tuples)."""
    out = []
    for m in _ENTRY.finditer(text):
        shape, gi, backend, _static, key, path, count = m.groups()
        artifact = _unquote(path).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        present = False
        if hash_dir is not None and artifact and artifact not in (".", ".."):
            try:
                present = (hash_dir / artifact).is_dir() and not (hash_dir / artifact).is_symlink()
            except (OSError, ValueError):
                present = False
        out.append(CacheEntry(None if shape == "None" else int(shape), int(gi), _unquote(backend),
                              None if key == "None" else _unquote(key), artifact,
                              int(count) if count is not None else 0, present))
    return out


def parse_host_slots(text: str) -> HostSlots:
    slots = resident = nbytes = 0
    names: list[str] = []
    for m in _SLOT.finditer(text):
        body = m.group(2)
        slots += 1
        nm = _SLOT_NAME.search(body)
        if nm is not None and len(names) < 64:
            names.append(_unquote(nm.group(1)))
        nb = _SLOT_BYTES.search(body)
        if nb is not None:
            nbytes += int(nb.group(1))
        if _SLOT_RESIDENT.search(body) is not None:
            resident += 1
    return HostSlots(slots, resident, nbytes, names)


def _read(path: Path, root: Path) -> tuple[str | None, str | None]:
    text, problem = read_head(path, MAX_SIDECAR_BYTES, root)
    return text, problem


def _model_dir(root: Path, name: str) -> ModelDir:
    base = root / "magi_cache" / name
    md = ModelDir(name, parse_run_name(base).topology)
    hashes, _more = _subdirs(base, MAX_HASH_DIRS)
    for h in hashes:
        hd = base / h
        indices = hd / INDICES_FILE
        entries: list[CacheEntry] | None = None
        problem = None
        if os.path.lexists(indices):
            text, problem = _read(indices, root)
            entries = parse_indices(text, hd) if text is not None else None
        slots = None
        if os.path.lexists(hd / HOST_SLOTS_FILE):
            text, p2 = _read(hd / HOST_SLOTS_FILE, root)
            slots = parse_host_slots(text) if text is not None else None
            problem = problem or p2
        md.hashes.append(HashDir(h, entries, slots, problem))
    return md


def read_sidecars(run_path: Path) -> Sidecars | None:
    """The sidecars of the run at ``run_path``; None when it is not in a cache root."""
    root = cache_root(run_path)
    if root is None:
        return None
    me = parse_run_name(run_path)
    mc = root / "magi_cache"
    own = _model_dir(root, run_path.name) if (mc / run_path.name).is_dir() else None
    others: list[ModelDir] = []
    names, _more = _subdirs(mc, 10_000)
    for name in names:
        if name == run_path.name or len(others) >= MAX_OTHER_DIRS:
            continue
        n = parse_run_name(mc / name)
        if (n.model_index, n.tag, n.rank) == (me.model_index, me.tag, me.rank) and n.topology != me.topology:
            others.append(_model_dir(root, name))
    kernels, capped = _count_dirs(root / "triton_cache", MAX_TRITON_DIRS)
    return Sidecars(str(root), own, others, kernels, capped)


class MagiMissExplained(Struct):
    """A magi cache miss, explained (a row of the cache section beside torch's :class:`MissExplained`)."""

    index: int
    graph_index: int | None
    runtime_shape: Any
    reason: str
    key: str
    summary: str
    #: ``{component, value, nearest, change}`` rows, as torch's misses have (``component`` names the fact)
    differs: list[dict[str, Any]] = field(default_factory=list)
    #: the ``MAGI_COMPILE_ASSERT_CACHE_HIT`` error this miss raised, with its event's index
    assert_error: str | None = None
    assert_index: int | None = None
    #: :meth:`Sidecars.as_json`, on a run's first magi row only (they are the run's, not the miss's)
    sidecars: dict[str, Any] | None = None

    @property
    def same_graph(self) -> bool | None:
        return None

    def line(self) -> str:
        shape = "dynamic shape" if self.runtime_shape is None else f"shape {self.runtime_shape}"
        return f"magi miss #{self.index} (subgraph {self.graph_index}, {shape}): {self.summary}"

    def as_json(self) -> dict[str, Any]:
        return {"run": "this", "index": self.index, "cache": "magi", "state": "miss", "compile_id": None,
                "key": self.key, "nearest": None, "same_graph": None, "differs": self.differs, "components": 0,
                "graph_index": self.graph_index, "runtime_shape": self.runtime_shape, "reason": self.reason,
                "explained": self.summary, "assert_cache_hit": self.assert_error,
                "assert_cache_hit_index": self.assert_index, "magi_cache": self.sidecars}


def _row(component: str, change: str) -> dict[str, Any]:
    return {"component": component, "value": None, "nearest": None, "change": change}


def _shape_text(shape: Any) -> str:
    return "None" if shape is None else str(shape)


def _attributes(run: Any, ev: Event) -> dict[str, Any]:
    """The event's attribute map: kept whole, else read back from its line with msgspec (``RunModel.attributes``
    imports the stdlib's ``json``, which a headless start does without)."""
    kept = ev.attrs
    if kept is not None and type(kept) is not KeptAttrs:
        return kept
    raw = run.reader.event_line_bytes(ev)
    obj: Any = None
    if raw:
        try:
            obj = msgspec.json.decode(raw)
        except (msgspec.DecodeError, ValueError):
            obj = None
    if isinstance(obj, dict) and obj.get("name") == ev.name and isinstance(obj.get("attributes"), dict):
        return obj["attributes"]
    return dict(kept or {})


def explain_magi_misses(run: Any) -> list[MagiMissExplained]:
    """Every magi miss of ``run`` (a :class:`~magi_tui.model.run.RunModel`), explained; [] when it has none."""
    t = run.triage
    misses = [it for it in t.cache_misses if it.event.lifecycle == "compiler_manager_load"][:MAX_MISSES]
    if not misses:
        return []
    stored: dict[str, list[Any]] = {}
    for it in t.cache_stores:
        if it.event.lifecycle == "compiler_manager_cache_store":
            key = str(_attributes(run, it.event).get("key") or it.reason or "")
            stored.setdefault(key, []).append(it.event)
    asserts = [f for f in t.failures if f.event is f.cascade_head and f.message.startswith(ASSERT_PREFIX)]
    sc = read_sidecars(run.path)
    sc_json = sc.as_json() if sc is not None else None
    out = []
    for n, it in enumerate(misses):
        ev = it.event
        a = _attributes(run, ev)
        gi = ev.graph_index if ev.graph_index is not None else a.get("graph_index")
        rs = a.get("runtime_shape")
        reason = str(a.get("reason") or it.reason or "")
        key = str(a.get("cache_key") or f"artifact_shape_{_shape_text(rs)}_subgraph_{gi}")
        rows: list[dict[str, Any]] = []
        raised = next((f for f in asserts if f.event.seq > ev.seq), None)
        nxt = misses[n + 1].event.seq if n + 1 < len(misses) else None
        if raised is not None and nxt is not None and raised.event.seq > nxt:
            raised = None  # it followed a later miss
        own = sc.own.find(gi, rs) if sc is not None and sc.own is not None else None
        later = [s for s in stored.get(key, ()) if s.seq > ev.seq]
        if reason == "cache_entry_load_miss" and "remaining_restart_skip_count" in a:
            count = own[1].restart_count if own else None
            summary = ("load skipped on purpose, to replay a Dynamo restart its bake saw"
                       + (f" (restart count {count})" if count else "") + "; the retry loads it")
            rows.append(_row("restart count", f"{a.get('remaining_restart_skip_count')} skip(s) left after this one"
                             + (f"; subgraph_indices.py records {count}" if count is not None else "")))
        elif reason == "cache_entry_load_miss":
            summary = "an entry exists but its artifact did not load"
            if own is not None and sc is not None and sc.own is not None:
                where = f"magi_cache/{sc.own.name}/{own[0].name}"
                rows.append(_row("artifact", f"{own[1].artifact} {'is in' if own[1].present else 'is missing from'} "
                                             f"{where}"))
        elif later:
            summary = f"first compile of this piece: stored by this run (#{later[0].index})"
            if own is not None and own[1].restart_count:
                rows.append(_row("restart count", f"{own[1].restart_count} recorded: a warm run skips "
                                                   f"{own[1].restart_count} load(s) of it to replay the restart"))
        else:
            summary = "not in the cache"
            if sc is None:
                summary += " (no magi_cache beside this run to say more)"
            elif sc.own is None or not any(h.entries for h in sc.own.hashes):
                summary += ": nothing baked for this model, rank and topology"
                rows.append(_row("magi_cache", f"magi_cache/{run.path.name} "
                                 + ("has no subgraph_indices.py" if sc.own is not None else "does not exist")))
            elif own is not None:
                summary += " when it ran (stored since)"
                rows.append(_row("magi_cache", f"magi_cache/{sc.own.name}/{own[0].name} holds {own[1].artifact} now"))
            else:
                hashes = [h for h in sc.own.hashes if h.entries]
                summary += " under this model, rank and topology"
                rows.append(_row("magi_cache", f"magi_cache/{sc.own.name} does not hold {key}"))
                if len(sc.own.hashes) > 1:
                    rows.append(_row("hashes", f"{len(sc.own.hashes)} hash folders ({len(hashes)} with entries): "
                                               "the compile config, Inductor config, compiler or traced source "
                                               "changed between runs"))
            if sc is not None:
                for o in sc.others:
                    hit = o.find(gi, rs)
                    if hit is not None:
                        me = sc.own.topology if sc.own is not None else parse_run_name(run.path).topology
                        summary = (f"baked for topology {o.topology or '(none)'} only, not {me or '(none)'} "
                                   "(a cache per topology)")
                        rows.append(_row("other topology", f"magi_cache/{o.name}/{hit[0].name} has {hit[1].artifact}"
                                                           f" (restart count {hit[1].restart_count})"))
                        break
        if raised is not None:
            summary = f"{ASSERT_PREFIX} (#{raised.event.index}): " + summary
            rows.insert(0, _row(ASSERT_PREFIX, raised.message[len(ASSERT_PREFIX):].lstrip(": ")))
        if sc is not None and n == 0:  # the run's sidecars, said once
            hs = sc.host_slots
            if hs is not None:
                rows.append(_row("host_slots.py", hs.text()))
            if sc.triton_kernels is not None:
                rows.append(_row("triton_cache", f"{sc.triton_kernels}{'+' if sc.triton_capped else ''} "
                                                 f"Triton kernel folder(s) in {sc.root}/triton_cache"))
        out.append(MagiMissExplained(ev.index, gi, rs, reason, key, summary, rows,
                                     raised.message if raised is not None else None,
                                     raised.event.index if raised is not None else None,
                                     sc_json if n == 0 else None))  # the sidecars once, on the first row
    return out
