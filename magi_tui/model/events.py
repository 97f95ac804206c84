"""One timeline event, parsed once into a compact object.

A run can hold 100k events, so an ``Event`` keeps only what the tree, the pairing and the triage
need (``__slots__``, interned strings) plus the byte span of its line in ``timeline.jsonl``; the
full attribute map is kept only for the few events triage reports on and is otherwise re-read from
that span on demand (see ``RunModel.attributes``).

Names follow FORMAT.md part A §7: ``(fullgraph|subgraph_<k>)_(before|after|failed|skip)_<frag>``; an
event is a lifecycle event only when ``attributes.lifecycle_name`` is present.
"""

from __future__ import annotations

import math
import sys
from collections.abc import MutableSequence
from typing import Any

import msgspec

from magi_format.names import PHASES, SCOPE_RE, parse_name

__all__ = ["Event", "Span", "PHASES", "KINDS", "kind_of", "name_kind"]

#: attribute keys copied onto the Event (cheap to keep, needed for labels and triage)
_KEEP_FULL_ATTRS_IF = ("exception_type", "reason", "restart_reason", "reasons", "fail_type", "error_type")

_intern = sys.intern
_isfinite = math.isfinite
_KEEP_SET = frozenset(_KEEP_FULL_ATTRS_IF)
_SCOPES = tuple(f"subgraph_{i}" for i in range(64))

#: name -> (interned name, phase word or None, fragment, subgraph index from the name, special)
#: name -> (..., the kind the name alone gives: :func:`name_kind`)
_NAME_CACHE: dict[str, tuple[str, str | None, str, int | None, bool, str]] = {}
_NAME_CACHE_MAX = 50_000  # names come from a small vocabulary; don't let a hostile file grow it


def _parse_name(name: str) -> tuple[str, str | None, str, int | None, bool, str]:
    iname = _intern(name)
    phase, frag, sgi = parse_name(name)
    frag = _intern(frag)
    out = (iname, phase, frag, sgi, _is_special(frag), name_kind(frag))
    if len(_NAME_CACHE) < _NAME_CACHE_MAX:
        _NAME_CACHE[name] = out
    return out


def _opt_float(value: Any) -> float | None:
    """A finite float, else None (NaN / Infinity / a 400-digit int are not times nor durations)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        f = float(value)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


class Event:
    """A parsed timeline line.

    ``seq`` is the event's position in the file over all sessions (unique, stable); ``index`` is the
    writer's own counter, which restarts with each session; ``session`` counts those restarts.
    """

    __slots__ = (
        "seq", "session", "_idelta", "name", "scope", "subgraph_index", "phase", "lifecycle",
        "frag", "files", "timestamp", "duration_ms", "graph_index", "span",
        "compile_id", "subgraph", "_lskip", "_bytes", "attrs", "summary", "depth", "kind",
    )
    # the slots' types, for the type checker (bare annotations: no class attribute, so no clash with
    # ``__slots__``)
    seq: int
    session: int
    _idelta: int
    name: str
    scope: str
    subgraph_index: int | None
    phase: str | None
    lifecycle: str | None
    frag: str
    files: tuple[str, ...]
    timestamp: float | None
    duration_ms: float | None
    graph_index: int | None
    span: Span | None
    compile_id: str | None
    subgraph: str | None
    _lskip: int
    _bytes: int | MutableSequence[int]
    attrs: dict[str, Any] | None
    summary: dict[str, str] | None
    depth: int
    kind: str
    # Memory (issue #14 item 5): an int above 256 is a 28-32 byte object of its own, so ``index`` and
    # ``line_no`` are kept as their (usually small, shared) difference from ``seq``, and the line's
    # byte span as one int (``offset << 32 | length``), or the reader's table of them by ``seq`` (a run
    # dir's timeline read whole: :meth:`TimelineReader._line_table`); identical ``files`` tuples and
    # ``summary`` maps are shared between events (read-only). The properties below give the plain values.

    @property
    def index(self) -> int:
        return self.seq + self._idelta

    @property
    def line_no(self) -> int:
        return self.seq + self._lskip

    @property
    def offset(self) -> int:
        where = self._bytes
        return (where if type(where) is int else where[self.seq]) >> 32  # type: ignore[index]

    @property
    def length(self) -> int:
        where = self._bytes
        return (where if type(where) is int else where[self.seq]) & 0xFFFFFFFF  # type: ignore[index]
    #: ``kind``: a coarse category for marks, computed once when the event is built (see :func:`kind_of`,
    #: the one place the rules live)

    @classmethod
    def from_obj(cls, obj: dict[str, Any], *, seq: int, session: int, line_no: int,
                 offset: int, length: int) -> "Event":
        """Build from a decoded JSON object (already checked to be a dict with a str name)."""
        attrs = obj.get("attributes")
        attrs = attrs if type(attrs) is dict else {}
        return make_event(obj["name"], obj.get("index"), obj.get("files"), obj.get("timestamp"),
                          attrs_values(attrs), attrs, seq, session, line_no, offset, length)

    # -- classification -------------------------------------------------------------------------
    @property
    def is_lifecycle(self) -> bool:
        return self.phase is not None

    @property
    def short_name(self) -> str:
        """The name without its scope prefix: ``after_compiler_compile``, ``after_inductor_schedule``
        (a point event keeps its ``after_``: only the scope is dropped)."""
        m = SCOPE_RE.match(self.name)
        return m.group(3) if m else self.name

    @property
    def pair_key(self) -> tuple:
        """Before/after/failed of one lifecycle share this key (FORMAT.md §10.8, plus compile id)."""
        return (self.lifecycle, self.subgraph_index, self.graph_index, self.compile_id)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Event({self.seq}, {self.index}, {self.name!r})"


_SUMMARY_KEYS = ("load_result", "store_result", "compile_result", "reason", "exception_type",
                 "restart_reason", "cache", "frame", "gb_id", "gb_type", "symbol", "expr")


_SUMMARY_SET = frozenset(_SUMMARY_KEYS)
#: the keys :func:`dict_event` looks for: the summary's and those that keep the map
_SUMMARY_OR_KEEP = _SUMMARY_SET | _KEEP_SET


def _summary(values: tuple) -> dict[str, str] | None:
    """The few short string attributes shown on a tree label (cache results, reasons): ``values`` are
    those of :data:`_SUMMARY_KEYS` (absent: ``UNSET``)."""
    out = None
    for k, v in zip(_SUMMARY_KEYS, values):
        if isinstance(v, (str, int, float)) and not isinstance(v, bool):
            if out is None:
                out = {}
            out[k] = str(v)[:200]
    return out


#: every kind :func:`kind_of` can return, '' (a plain event) aside
KINDS = ("failed", "skip", "restart", "recompile", "graph_break", "cache_hit", "cache_miss", "cache_bypass",
         "cache_store", "cache_skip")


def name_kind(frag: str) -> str:
    """The kind a point event has from its name alone (its fragment, scope prefix removed)."""
    if "restart" in frag:
        return "restart"
    if frag.endswith("recompile"):
        return "recompile"
    if frag.endswith("graph_break"):
        return "graph_break"
    if frag.startswith("cache_hit"):
        return "cache_hit"
    if frag.startswith("cache_bypass"):
        return "cache_bypass"
    if frag.startswith("cache_miss"):
        return "cache_miss"
    return ""


def kind_of(phase: str | None, frag: str, summary: dict[str, str] | None) -> str:
    """The kind rules, in one place: failed, skip, restart, recompile, graph_break, cache_hit,
    cache_miss, cache_bypass (a cache that was not consulted at all: neither hit nor miss),
    cache_store, cache_skip, or '' for a plain event. A point event's name decides first, then the result
    attributes of a lifecycle ``after`` (``load_result``, ``store_result``). A lifecycle's name never gives
    a kind: lifecycle names are anyone's (a vendor's ``RestartSafeRematPass``, ``cache_hit_probe``, a
    ``fix_graph_break`` stage), and its ``before`` / ``after`` are not a restart, a cache hit or a break."""
    if phase == "failed":
        return "failed"
    if phase == "skip":
        return "skip"
    k = name_kind(frag) if phase is None else ""
    if k or not summary:
        return k
    load = summary.get("load_result")
    if load == "hit":
        return "cache_hit"
    if load == "miss":
        return "cache_miss"
    if load == "bypass":
        return "cache_bypass"
    store = summary.get("store_result")
    if store == "stored":
        return "cache_store"
    if store == "skipped":
        return "cache_skip"
    return ""


#: point events triage reads the attributes of, beyond those with a kind
_KEEP_FRAGS = frozenset({"recompile_limit_hit", "tracer_stopped", "export_issue"})


def _is_special(frag: str) -> bool:
    """Whether an event of this name keeps its whole attribute map (triage reports on it)."""
    return name_kind(frag) != "" or frag in _KEEP_FRAGS


_UNSET = msgspec.UNSET


class Attrs(msgspec.Struct, gc=False, omit_defaults=True):
    """The attributes the model reads, decoded straight from a line (msgspec skips the others, so no
    dict is built for them): the fields of an Event, the summary keys (absent: ``UNSET``), the keys
    whose presence keeps a map on the event (:class:`KeptAttrs`) and the others triage reads from it.
    Typed ``Any``: every check is :func:`make_event`'s own. The order of the fields is relied on
    (``_SUM`` / ``_KEEP1`` / ``_KEEP2`` below). ``gc=False``: decoded JSON holds no cycle, so the
    collector need not track one per line; ``omit_defaults``: ``to_builtins`` gives the keys present
    (a missing key and a null read the same for the first six), which is what :class:`KeptAttrs` holds."""

    duration_ms: Any = None
    graph_index: Any = None
    compile_id: Any = None
    subgraph: Any = None
    lifecycle_name: Any = None
    subgraph_index: Any = None
    load_result: Any = _UNSET
    store_result: Any = _UNSET
    compile_result: Any = _UNSET
    reason: Any = _UNSET
    exception_type: Any = _UNSET
    restart_reason: Any = _UNSET
    cache: Any = _UNSET
    frame: Any = _UNSET
    gb_id: Any = _UNSET
    gb_type: Any = _UNSET
    symbol: Any = _UNSET
    expr: Any = _UNSET
    reasons: Any = _UNSET
    fail_type: Any = _UNSET
    error_type: Any = _UNSET
    # read by triage from a kept map (see :class:`KeptAttrs`)
    exception_message: Any = _UNSET
    error_message: Any = _UNSET
    fail_reason: Any = _UNSET
    cache_key: Any = _UNSET
    key: Any = _UNSET
    error: Any = _UNSET


_FIELDS = Attrs.__struct_fields__
_SUM = slice(6, 18)     # load_result .. expr: the summary keys, in _SUMMARY_KEYS' order
_KEEP1 = slice(9, 12)   # reason, exception_type, restart_reason: summary keys that keep the map
_KEEP2 = slice(18, 21)  # reasons, fail_type, error_type
assert _FIELDS[_SUM] == _SUMMARY_KEYS and set(_FIELDS[_KEEP1] + _FIELDS[_KEEP2]) == _KEEP_SET
_NO_SUM = (_UNSET,) * 12
_NO_3 = (_UNSET,) * 3
_astuple = msgspec.structs.astuple
_NO_ATTRS = Attrs()


class KeptAttrs(dict):
    """``Event.attrs`` of an event read by the fast path: only the keys :class:`Attrs` decodes (all
    that triage reads), not the whole map, which :meth:`RunModel.attributes` reads back from the line
    when an event is shown. (Issue #14 item 5: keep only what the answer needs; the whole maps were a
    tenth of a run's memory.)"""

    __slots__ = ()


_to_builtins = msgspec.to_builtins


#: summary values -> (the shared summary map, the kind its results give, whether a key that keeps the
#: whole map is among them); only values all str / None / absent are entered, so that 1, 1.0 and True
#: (equal as keys) never share an entry
_BY_VALUES: dict[tuple, tuple[dict[str, str] | None, str, bool]] = {}


#: the types of summary values that make a key of _BY_VALUES (absent: UNSET)
_PLAIN = frozenset({str, type(None), type(_UNSET)})


def _summary_of(sv: tuple) -> tuple[dict[str, str] | None, str, bool]:
    # one pass for the common case (every value a str or absent: :func:`_summary`'s answer, and the
    # values may be a key of _BY_VALUES); a number or anything else goes the general way
    summary: dict[str, str] | None
    plain = _PLAIN.issuperset(map(type, sv))
    if plain:
        summary = {k: v[:200] for k, v in zip(_SUMMARY_KEYS, sv) if type(v) is str} or None
    else:
        summary = _summary(sv)
    if summary is not None:
        summary = _SUMMARY_CACHE.get(key := tuple(summary.items())) or _new_summary(key)
    got = (summary, _result_kind(summary) if summary is not None else "", sv[3:6] != _NO_3)
    if plain:
        if len(_BY_VALUES) >= _SHARE_MAX:
            _BY_VALUES.clear()
        _BY_VALUES[sv] = got
    return got


def _result_kind(summary: dict[str, str]) -> str:
    """:func:`kind_of` of a summary alone (no phase, no name): what its cache results give."""
    load = summary.get("load_result")
    if load is not None:
        k = _LOAD_KINDS.get(load)
        if k is not None:
            return k
    store = summary.get("store_result")
    if store is not None:
        return _STORE_KINDS.get(store, "")
    return ""


_LOAD_KINDS = {"hit": "cache_hit", "miss": "cache_miss", "bypass": "cache_bypass"}
_STORE_KINDS = {"stored": "cache_store", "skipped": "cache_skip"}


_FIELD_POS = {k: i for i, k in enumerate(_FIELDS)}
_NO_VALUES = _astuple(_NO_ATTRS)


def attrs_values(attrs: dict[str, Any]) -> tuple:
    """``astuple(attrs_struct(attrs))`` without making the struct (the fields are ``Any``: a value is
    taken as it is, a missing key is the field's default)."""
    if not attrs:
        return _NO_VALUES
    vals = list(_NO_VALUES)
    pos = _FIELD_POS.get
    for k, v in attrs.items():  # a map holds a few of the fields: walk it, not all the fields
        i = pos(k)
        if i is not None:
            vals[i] = v
    return tuple(vals)


def attrs_struct(attrs: dict[str, Any]) -> Attrs:
    """:class:`Attrs` from a decoded map (the careful path and the other readers)."""
    if not attrs:
        return _NO_ATTRS
    return msgspec.convert({k: attrs[k] for k in _FIELDS if k in attrs}, Attrs)


_new_event = Event.__new__
#: identical ``files`` tuples / ``summary`` maps are shared (bounded: a hostile file cannot grow them)
_FILES_CACHE: dict[tuple, tuple[str, ...]] = {}
_SUMMARY_CACHE: dict[tuple, dict[str, str]] = {}
_SHARE_MAX = 20_000


#: recent strings of summaries and kept maps, each the one object that the strings equal to it share (bounded
#: as the caches above; a string over 200 characters is not entered: a hostile file's long messages stay
#: only as long as their events)
_STRINGS: dict[str, str] = {}
_STRING_MAX_LEN = 200
#: the attributes whose values the Event's own slots hold interned (``compile_id``, ``lifecycle``, ``subgraph``)
_INTERNED_KEYS = frozenset({"compile_id", "lifecycle_name", "subgraph"})


def _one_copy(v: str) -> str:
    """The object of a recent string equal to ``v`` (``v`` itself the first time): a frame's name and a
    skip's reason repeat in many summaries and kept maps, and each line decodes copies of its own."""
    got = _STRINGS.get(v)
    if got is None:
        if len(v) > _STRING_MAX_LEN:
            return v
        if len(_STRINGS) >= _SHARE_MAX:
            _STRINGS.clear()
        got = _STRINGS[v] = v
    return got


def _new_summary(key: tuple) -> dict[str, str]:
    """The summary map of ``key`` (its ``(attribute, value)`` pairs), kept to be shared by the events that
    have it (the hot paths look it up first: ``_SUMMARY_CACHE.get(key) or _new_summary(key)``). A full
    cache (100k frames name 100k summaries) starts again, so a compile's events still share theirs. Its
    values are :func:`_one_copy`'s: a compile's frame name is in each of its summaries (its frame's, its
    skip's with the reason), a reason in the summaries of many compiles."""
    if len(_SUMMARY_CACHE) >= _SHARE_MAX:
        _SUMMARY_CACHE.clear()
    key = tuple([(k, _one_copy(v)) for k, v in key])
    summary = _SUMMARY_CACHE[key] = dict(key)
    return summary


def _kept_attrs(values: dict[str, Any]) -> KeptAttrs:
    """:class:`KeptAttrs` of a line's decoded attributes with one copy of each string: the events that keep
    their map (a skip in each compile, each failure) repeat their compile id, lifecycle name, frame name
    and reason, which the Event's slots (interned) and the summaries (:func:`_one_copy`) hold already."""
    for k, v in values.items():
        if type(v) is str:
            values[k] = _intern(v) if k in _INTERNED_KEYS else _one_copy(v)
    return KeptAttrs(values)


def make_event(name: str, idx: Any, files: Any, ts: Any, a: Attrs | tuple[Any, ...], attrs: dict[str, Any] | None, seq: int,
               session: int, line_no: int, offset: int, length: int) -> Event:
    """Build an :class:`Event` from a line's fields (``name`` a non-empty str, ``a`` its attributes as
    :class:`Attrs`, or their values in its field order (:func:`attrs_values`, with ``attrs``), ``attrs``
    the whole map when the caller has it, else None).

    This runs once per line of a possibly huge file, so it avoids regexes (names are parsed once per
    distinct name and cached) and generic helpers on the common, well-typed path. An event triage
    reports on keeps ``attrs`` (the whole map) when the caller has it, else :class:`KeptAttrs`."""
    ev = _new_event(Event)
    ev.seq = seq
    ev.session = session
    if type(idx) is not int:
        idx = idx if isinstance(idx, int) and not isinstance(idx, bool) else -1
    ev._idelta = idx - seq
    ev._lskip = line_no - seq
    ev._bytes = offset << 32 | length if length <= 0xFFFFFFFF else offset << 32 | 0xFFFFFFFF
    parsed = _NAME_CACHE.get(name)
    if parsed is None:
        parsed = _parse_name(name)
    iname, phase, frag, name_sgi, special, nkind = parsed
    ev.name = iname
    ev.frag = frag
    ev.span = None
    ev.depth = 0
    if files:
        if type(files) is tuple or type(files) is list:
            key: tuple | None
            try:
                key = files if type(files) is tuple else tuple(files)
                shared = _FILES_CACHE.get(key)
            except TypeError:  # an unhashable item: a list or a map in the list
                key = shared = None
            if shared is None:
                shared = tuple(_intern(f) for f in files if type(f) is str)
                if key is not None and len(_FILES_CACHE) < _SHARE_MAX:
                    _FILES_CACHE[key] = shared
            ev.files = shared
        else:
            ev.files = ()
    else:
        ev.files = ()
    ev.timestamp = ts if type(ts) is float and _isfinite(ts) else _opt_float(ts)
    t = a if isinstance(a, tuple) else _astuple(a)  # isinstance: mypy narrows it (Attrs is no tuple)
    dur, gi, cid, sub, lc, sgi = t[:6]
    ev.duration_ms = dur if dur is None or (type(dur) is float and _isfinite(dur)) else _opt_float(dur)
    ev.graph_index = gi if gi is None or type(gi) is int else None
    ev.compile_id = None if cid is None else _intern(cid if type(cid) is str else str(cid))
    ev.subgraph = _intern(sub) if type(sub) is str and sub else None
    if type(lc) is str:
        ev.lifecycle = _intern(lc)
        ev.phase = phase
        if phase is not None:  # a lifecycle's name gives no kind (kind_of)
            nkind = ""
    else:
        ev.lifecycle = ev.phase = phase = None
    if sgi is None or type(sgi) is not int:
        sgi = name_sgi
    ev.subgraph_index = sgi
    ev.scope = "fullgraph" if sgi is None else (_SCOPES[sgi] if 0 <= sgi < 64 else f"subgraph_{sgi}")
    sv = t[6:18]
    if sv == _NO_SUM:
        ev.summary = None
        keep = special or phase == "failed" or t[_KEEP2] != _NO_3
        kind = nkind
    else:
        try:
            got = _BY_VALUES.get(sv)
        except TypeError:  # a list or a map among the values
            got = None
        if got is None:
            got = _summary_of(sv)
        summary, skind, keep = got
        ev.summary = summary
        # a skip's reason keeps no copy of the line's attributes (:class:`KeptAttrs`): triage reads nothing
        # of a skip, its summary holds the reason, and a screen reads its line (``RunModel.attributes``)
        keep = (keep and (phase != "skip" or attrs is not None)) or special or phase == "failed" \
            or t[_KEEP2] != _NO_3
        kind = nkind or skind
    ev.attrs = (attrs if attrs is not None else _kept_attrs(_to_builtins(a))) if keep else None
    # the kind rules (kind_of), computed once: the name's kind is cached with the name, the kind the
    # result attributes give with the summary
    ev.kind = phase if phase == "failed" or phase == "skip" else kind
    return ev


def place_line(ev: Event, offset: int, length: int) -> None:
    """Where ``ev``'s line is, set once its reader knows (a lean TORCH_TRACE reader stores the attributes
    of an event only once it is known to be kept: ``TraceLogReader.settle``)."""
    ev._bytes = offset << 32 | length if length <= 0xFFFFFFFF else offset << 32 | 0xFFFFFFFF


def _all_str(values: Any) -> bool:
    for v in values:
        if type(v) is not str:
            return False
    return True


#: (name, the map's keys in order) -> what an Event of that name and those keys holds whatever the values:
#: :func:`_dict_shape`. A log's events draw on a few dozen (a 100k-frame log: 5); bounded all the same
_DICT_SHAPES: dict[tuple, tuple] = {}
_DICT_SHAPES_MAX = 4096
#: name -> (the key set of the last map of that name, its shape): what :func:`_dict_shape` reads of the keys
#: is of their set, so a map of the same name and key set has that shape (most maps of a name have one)
_LAST_SHAPE: dict[str, tuple[frozenset, tuple]] = {}
#: ``[(key, value, summary)]`` of the last map whose summary is of one key (a frame's name, most often): a
#: compile's events name their frame with one str object (the mapping's, interned), so the next such map
#: of the same value takes that summary without its key made and looked up (2 of a frame's 4 events of a
#: 100k-frame log; 10k-frame log: 4.647 -> 4.628 G instructions, callgrind)
_LAST_ONE: list[tuple[Any, Any, Any]] = [(None, None, None)]


def _dict_shape(name: str, keys: tuple) -> tuple:
    """What :func:`dict_event` reads of a name and its map's key set alone, worked out once per shape:
    the name's parse (:func:`_parse_name`), which of the six keys an Event slot comes from are present,
    the summary keys present (in :data:`_SUMMARY_KEYS`' order), whether a cache result is among them
    (without one a summary gives no kind: :func:`_result_kind`), and whether a key keeps the map."""
    parsed = _NAME_CACHE.get(name)
    if parsed is None:
        parsed = _parse_name(name)
    iname, phase, frag, name_sgi, special, nkind = parsed
    have = frozenset(keys)
    present = tuple(k for k in _SUMMARY_KEYS if k in have)
    return (iname, phase, frag, name_sgi, nkind, special or not _KEEP_SET.isdisjoint(have),
            present, "load_result" in have or "store_result" in have, "duration_ms" in have, "graph_index" in have, "compile_id" in have, "subgraph" in have,
            "subgraph_index" in have)


def dict_event(name: str, seq: int, files: tuple, ts: float | None, attrs: dict[str, Any], line_no: int,
               offset: int, length: int) -> Event:
    """:func:`make_event` of a map a reader made itself (a TORCH_TRACE log's events: ``index`` is ``seq``,
    session 0, ``files`` a tuple of str, ``ts`` a float or None), the same Event read straight from the
    map. What the name and the map's key set decide is looked up once per shape (:func:`_dict_shape`: a
    log's 400k events have a handful; the last one of each name first, by its key set, with no key made),
    so an event costs its values' checks and slot stores, not a set
    operation over its map and a look-up of each key it lacks."""
    last = _LAST_SHAPE.get(name)
    if last is not None and attrs.keys() == last[0]:  # (a shape is of the key set: compared in C, no key made)
        shape = last[1]
    else:
        skey = (name, *attrs)
        known = _DICT_SHAPES.get(skey)
        if known is None:
            known = _dict_shape(name, skey[1:])
            if len(_DICT_SHAPES) < _DICT_SHAPES_MAX:
                _DICT_SHAPES[skey] = known
        shape = known
        if last is not None or len(_LAST_SHAPE) < _DICT_SHAPES_MAX:
            _LAST_SHAPE[name] = (frozenset(skey[1:]), shape)
    iname, phase, frag, name_sgi, nkind, keep, present, results, has_dur, has_gi, has_cid, has_sub, has_sgi = shape
    ev = _new_event(Event)
    ev.seq = seq
    ev.session = 0
    ev._idelta = 0
    ev._lskip = line_no - seq
    ev._bytes = offset << 32 | length if length <= 0xFFFFFFFF else offset << 32 | 0xFFFFFFFF
    ev.name = iname
    ev.frag = frag
    ev.span = None
    ev.depth = 0
    if files:
        shared = _FILES_CACHE.get(files)
        if shared is None:
            shared = tuple(_intern(f) for f in files if type(f) is str)
            if len(_FILES_CACHE) < _SHARE_MAX:
                _FILES_CACHE[files] = shared
        ev.files = shared
    else:
        ev.files = ()
    ev.timestamp = ts if type(ts) is float and _isfinite(ts) else _opt_float(ts)
    if has_dur:
        dur = attrs["duration_ms"]
        ev.duration_ms = dur if dur is None or (type(dur) is float and _isfinite(dur)) else _opt_float(dur)
    else:
        ev.duration_ms = None
    if has_gi:
        gi = attrs["graph_index"]
        ev.graph_index = gi if gi is None or type(gi) is int else None
    else:
        ev.graph_index = None
    if has_cid:
        cid = attrs["compile_id"]
        ev.compile_id = None if cid is None else _intern(cid if type(cid) is str else str(cid))
    else:
        ev.compile_id = None
    if has_sub:
        sub = attrs["subgraph"]
        ev.subgraph = _intern(sub) if type(sub) is str and sub else None
    else:
        ev.subgraph = None
    lc = attrs.get("lifecycle_name")
    if type(lc) is str:
        ev.lifecycle = _intern(lc)
        ev.phase = phase
        if phase is not None:  # a lifecycle's name gives no kind (kind_of)
            nkind = ""
            if phase == "failed":
                keep = True
    else:
        ev.lifecycle = ev.phase = phase = None
    sgi = attrs["subgraph_index"] if has_sgi else None
    if sgi is None or type(sgi) is not int:
        sgi = name_sgi
    ev.subgraph_index = sgi
    ev.scope = "fullgraph" if sgi is None else (_SCOPES[sgi] if 0 <= sgi < 64 else f"subgraph_{sgi}")
    kind = nkind
    key: tuple[tuple[str, Any], ...]
    if not present:
        ev.summary = None
    elif len(present) == 1 and type(v := attrs[k := present[0]]) is str:  # a frame's name, most often
        last_one = _LAST_ONE[0]
        if v is last_one[1] and k is last_one[0]:  # (the same str as the last such map's: its summary)
            summary = last_one[2]
        else:
            key = ((k, v[:200]),)
            summary = _SUMMARY_CACHE.get(key) or _new_summary(key)
            _LAST_ONE[0] = (k, v, summary)  # (one store: a reader in another thread sees all or none)
        ev.summary = summary
        if not nkind and results:
            kind = _result_kind(summary)
    elif len(present) == 2 and type(v := attrs[present[0]]) is str and type(v2 := attrs[present[1]]) is str:
        key = ((present[0], v[:200]), (present[1], v2[:200]))  # a frame's name and a reason, most often
        ev.summary = summary = _SUMMARY_CACHE.get(key) or _new_summary(key)
        kind = nkind or (_result_kind(summary) if results else "")
    elif _all_str(map(attrs.__getitem__, present)):
        key = tuple([(k, attrs[k][:200]) for k in present])
        ev.summary = summary = _SUMMARY_CACHE.get(key) or _new_summary(key)
        kind = nkind or _result_kind(summary)
    else:  # absent and null read the same for the summary (a key present keeps the map: _KEEP_SET)
        sv = tuple(map(attrs.get, _SUMMARY_KEYS))
        try:
            got = _BY_VALUES.get(sv)
        except TypeError:  # a list or a map among the values
            got = None
        if got is None:
            got = _summary_of(sv)
        ev.summary = got[0]
        kind = nkind or got[1]
    ev.attrs = attrs if keep else None
    ev.kind = phase if phase == "failed" or phase == "skip" else kind
    return ev


#: the attributes a line's fast decoder reads (:mod:`magi_tui.model.sources.reader`): :class:`Attrs`' fields,
#: in its order, the six an Event field comes from typed strictly (msgspec checks them in C; a line
#: whose values are of another type is refused and goes the careful way, :func:`make_event`'s own).
#: Frozen: hashable, so that a line's attributes, its duration set aside, are the key of its shape
LineAttrs = msgspec.defstruct(
    "LineAttrs", [(f, {"duration_ms": float | None, "graph_index": int | None, "compile_id": str | None,
                       "subgraph": str | None, "lifecycle_name": str | None,
                       "subgraph_index": int | None}.get(f, Any), d)
                  for f, d in zip(_FIELDS, Attrs.__struct_defaults__)],
    gc=False, omit_defaults=True, frozen=True, module=__name__)
NO_LINE_ATTRS = LineAttrs()

#: (name, attributes without the duration) -> what an Event of them holds besides its own numbers:
#: ``(name, frag, phase, lifecycle, subgraph_index, scope, graph_index, compile_id, subgraph, summary,
#: kind, keeps its attributes)``, as :func:`make_event` made it for the first such line. Entered only
#: when every value is a str, None or absent beyond the six strictly typed ones (1, 1.0 and True are
#: equal keys, and give different events). Bounded in entries and in the characters its keys hold (a
#: hostile file of long distinct strings cannot make it keep them)
_SHAPES: dict[tuple, tuple] = {}
_SHAPE_MAX = 2_048
_SHAPE_CHARS_MAX = 2_000_000
_shape_chars = [0]


def _shape_size(name: str, a: Any) -> int | None:
    """The characters a shape key of these values holds, or None if they may not be a key."""
    n = len(name)
    values = _astuple(a)
    for v in values[6:]:
        if type(v) is str:
            n += len(v)
        elif v is not _UNSET and v is not None:
            return None
    for v in values[1:6]:
        if type(v) is str:
            n += len(v)
    return n
_set = msgspec.structs.force_setattr
_replace = msgspec.structs.replace


def line_event(name: str, idx: int | None, files: tuple | None, ts: float | None, a: Any, seq: int,
               session: int, line_no: int, offset: int, length: int) -> Event:
    """:func:`make_event` for a line msgspec decoded strictly (``name`` a non-empty str, ``idx`` an int
    or None, ``files`` a tuple of str or None, ``ts`` a finite float or None, ``a`` a
    :class:`LineAttrs`): what is not the event's own numbers is looked up by the line's values (most
    lines repeat those of an earlier line), not worked out again."""
    dur = a.duration_ms
    if dur is not None:
        _set(a, "duration_ms", None)
    try:
        shape = _SHAPES.get((name, a))
    except TypeError:  # a list or a map among the values
        shape = ()
    if not shape:
        if dur is not None:
            _set(a, "duration_ms", dur)
        ev = make_event(name, idx, files, ts, a, None, seq, session, line_no, offset, length)
        size = _shape_size(name, a) if shape is None and len(_SHAPES) < _SHAPE_MAX else None
        if size is not None and _shape_chars[0] + size <= _SHAPE_CHARS_MAX:
            _shape_chars[0] += size
            _SHAPES[(name, _replace(a, duration_ms=None))] = (
                ev.name, ev.frag, ev.phase, ev.lifecycle, ev.subgraph_index, ev.scope, ev.graph_index,
                ev.compile_id, ev.subgraph, ev.summary, ev.kind, ev.attrs is not None)
        return ev
    ev = _new_event(Event)
    (ev.name, ev.frag, ev.phase, ev.lifecycle, ev.subgraph_index, ev.scope, ev.graph_index, ev.compile_id,
     ev.subgraph, ev.summary, ev.kind, keep) = shape
    ev.seq = seq
    ev.session = session
    ev._idelta = (-1 if idx is None else idx) - seq
    ev._lskip = line_no - seq
    ev._bytes = offset << 32 | length if length <= 0xFFFFFFFF else offset << 32 | 0xFFFFFFFF
    if files:
        shared = _FILES_CACHE.get(files)
        if shared is None:
            shared = tuple(_intern(f) for f in files)
            if len(_FILES_CACHE) < _SHARE_MAX:
                _FILES_CACHE[files] = shared
        ev.files = shared
    else:
        ev.files = ()
    ev.timestamp = ts
    ev.duration_ms = dur
    ev.span = None
    ev.depth = 0
    if keep:
        if dur is not None:
            _set(a, "duration_ms", dur)
        ev.attrs = _kept_attrs(_to_builtins(a))
    else:
        ev.attrs = None
    return ev


class Span:
    """One lifecycle: its ``before`` (None for an orphan end) and its closing event (None while open)."""

    __slots__ = ("before", "end", "depth", "group")

    def __init__(self, before: Event | None, depth: int) -> None:
        self.before = before
        self.end: Event | None = None
        self.depth = depth
        #: the tree's group that shows it (a ``model.tree.Group``; typed loosely so that the records know
        #: nothing of the tree)
        self.group: object | None = None

    @property
    def first(self) -> Event:
        return self.before if self.before is not None else self.end  # type: ignore[return-value]

    @property
    def events(self) -> list[Event]:
        return [e for e in (self.before, self.end) if e is not None]

    @property
    def status(self) -> str:
        """``open``, ``ok``, ``failed`` or ``skip``."""
        if self.end is None:
            return "open"
        return {"after": "ok", "failed": "failed", "skip": "skip"}.get(self.end.phase or "", "ok")

    @property
    def lifecycle(self) -> str:
        return self.first.lifecycle or self.first.frag

    @property
    def duration_ms(self) -> float | None:
        """Measured duration of a closed span (the writer's own figure when it gave one)."""
        if self.end is None:
            return None
        if self.end.duration_ms is not None:
            return self.end.duration_ms
        if self.before is not None and self.before.timestamp is not None and self.end.timestamp is not None:
            return max(0.0, (self.end.timestamp - self.before.timestamp) * 1000.0)
        return None

    def __repr__(self) -> str:  # pragma: no cover
        return f"Span({self.lifecycle}, {self.status}, {[e.index for e in self.events]})"
