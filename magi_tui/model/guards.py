"""Why a frame recompiled: torch's recompile reasons parsed, and guard trees compared.

Pure text processing (no torch import). Two sources of evidence:

* the reasons torch reports for a recompile (one per cache entry that failed its guards), e.g.
  ``0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8``,
  ``tensor 'x' dtype mismatch. expected Float, actual Double``, ``L['n'] == 3``;
* ``compiled_functions/<fn>/entry_<i>/guards.txt`` of consecutive cache entries, compared after memory
  addresses (``0x7f…``) and generated names (``__builtins_dict___20``, ``__compiled_fn_3_…``) are
  normalised, so that only real differences remain.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from magi_tui.model.files import read_head

#: torch's default ``torch._dynamo.config.recompile_limit`` (``cache_size_limit`` before 2.6)
DEFAULT_RECOMPILE_LIMIT = 8
#: guards.txt is read up to this many bytes (a guard tree of a huge model is still bounded)
MAX_GUARDS_BYTES = 512 * 1024

_CID_PREFIX = re.compile(r"^\s*(\[?!?[\d/_\]]*\d[\d/_\]]*\]?)\s*:\s+")
_TENSOR = re.compile(
    r"tensor '(?P<name>[^']+)' (?P<what>[\w ]+?) mismatch(?: at index (?P<index>-?\d+))?\."
    r"\s*expected (?P<expected>.+?)(?:,\s*actual (?P<actual>.+?))?\s*$")
_EQ = re.compile(r"^(?P<lhs>.+?)\s*==\s*(?P<rhs>[^=]+?)$")
_SCALAR = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$|^(True|False|None)$")
_NAME = re.compile(r"^(?:L|G)\['(?P<n>[^']+)'\]$|^(?P<bare>[A-Za-z_][\w.]*)$")
_LEN = re.compile(r"^len\((?P<x>.+)\)$")
_OBJ_ID = re.compile(r"___check_(obj|type)_id\((?P<x>[^,]+),")

# torch's short dtype names (``Float``) -> the spelling a user writes
DTYPES = {
    "Float": "torch.float32", "Double": "torch.float64", "Half": "torch.float16", "BFloat16": "torch.bfloat16",
    "Long": "torch.int64", "Int": "torch.int32", "Short": "torch.int16", "Char": "torch.int8",
    "Byte": "torch.uint8", "Bool": "torch.bool", "ComplexFloat": "torch.complex64",
    "ComplexDouble": "torch.complex128",
}
_TORCH_DTYPE = re.compile(r"^torch\.(float|int|uint|bfloat|complex|bool)\w*$")
_DEVICE = re.compile(r"^(cpu|cuda|mps|xpu|meta|hpu)(:\d+)?$|^device\(")


@dataclass
class Reason:
    """One failed guard of one cache entry, as torch reported it."""

    text: str                       # the reason's first line, compile-id prefix removed
    entry_compile_id: str | None    # the cache entry whose guard failed (``0/0``), when torch said
    guard: str                      # the guard expression (``x.size()[0] == 4``, ``n == 3``)
    kind: str                       # size|stride|dtype|device|rank|requires_grad|scalar|identity|type|length|other
    subject: str | None = None      # the tensor / variable the guard is about
    expected: str | None = None
    actual: str | None = None
    suggestion: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"text": self.text, "entry_compile_id": self.entry_compile_id, "guard": self.guard,
                "kind": self.kind, "subject": self.subject, "expected": self.expected, "actual": self.actual,
                "suggestion": self.suggestion}


def _pretty_dtype(v: str | None) -> str | None:
    if v is None:
        return None
    return DTYPES.get(v.strip(), v.strip())


def suggestion_for(kind: str, subject: str | None, expected: str | None, actual: str | None) -> str | None:
    """The standard one-line fix for a failed guard of this kind, or None when there is none."""
    s = subject or "it"
    if kind in ("size", "stride", "rank"):
        return (f"the shape of {s} changed: mark it dynamic (torch._dynamo.mark_dynamic({s}, dim)) "
                "or compile with dynamic=True")
    if kind == "dtype":
        return (f"{s} arrived as {actual or 'another dtype'} but was compiled for {expected or 'one dtype'}: "
                f"cast it earlier ({s}.to({expected})) or expect one compile per dtype")
    if kind == "device":
        return (f"{s} moved to {actual or 'another device'} (compiled for {expected or 'one device'}): "
                "move it earlier, or expect one compile per device")
    if kind == "requires_grad":
        return f"requires_grad of {s} changed between calls: keep it the same (detach, or torch.no_grad())"
    if kind == "scalar":
        return (f"the Python scalar {s} was specialised to {expected}: pass it as a tensor, or mark it dynamic "
                "(dynamic=True / torch._dynamo.config.specialize_int=False)")
    if kind == "length":
        return f"the length of {s} changed: pass a fixed-length sequence, or a tensor"
    if kind == "identity":
        return f"{s} is a new object on each call: create it once and reuse it"
    if kind == "type":
        return f"the type of {s} changed between calls"
    return None


def _strip_comment(line: str) -> str:
    """``n == 3      # y = x * n  # file.py:5 in f`` -> ``n == 3``."""
    i = line.find("  #")
    if i < 0:
        i = line.find(" # ")
    return (line[:i] if i >= 0 else line).strip()


def _subject(expr: str) -> str:
    m = _NAME.match(expr.strip())
    if m:
        return m.group("n") or m.group("bare")
    return expr.strip()


def parse_reason(raw: str) -> Reason:
    """One of torch's recompile reasons -> guard, expected/actual values and a suggestion."""
    r = _parse_reason_cached(str(raw)[:4000])
    return Reason(r.text, r.entry_compile_id, r.guard, r.kind, r.subject, r.expected, r.actual, r.suggestion)


@lru_cache(maxsize=4096)
def _parse_reason_cached(raw: str) -> Reason:
    first = next((ln for ln in str(raw).splitlines() if ln.strip()), "").strip()
    cid = None
    m = _CID_PREFIX.match(first)
    if m:
        cid = m.group(1)
        first = first[m.end():]
    text = first
    guard = _strip_comment(first)
    tm = _TENSOR.search(guard)
    if tm:
        what = tm.group("what").strip().replace(" ", "_")
        kind = {"size": "size", "stride": "stride", "dtype": "dtype", "device": "device", "rank": "rank",
                "requires_grad": "requires_grad", "dispatch_key_set": "dispatch_key_set"}.get(what, what)
        name = tm.group("name")
        exp, act = tm.group("expected"), tm.group("actual")
        if kind == "dtype":
            exp, act = _pretty_dtype(exp), _pretty_dtype(act)
        idx = tm.group("index")
        if idx is not None and kind in ("size", "stride"):
            guard = f"{name}.{kind}()[{idx}] == {exp}"
        r = Reason(text, cid, guard, kind, name, exp, act)
        r.suggestion = suggestion_for(kind, name, exp, act)
        return r
    om = _OBJ_ID.search(guard)
    if om:
        kind = "identity" if om.group(1) == "obj" else "type"
        subj = _subject(om.group("x"))
        return Reason(text, cid, guard, kind, subj, suggestion=suggestion_for(kind, subj, None, None))
    em = _EQ.match(guard)
    if em:
        lhs, rhs = em.group("lhs").strip(), em.group("rhs").strip()
        lm = _LEN.match(lhs)
        if lm:
            subj = _subject(lm.group("x"))
            return Reason(text, cid, guard, "length", subj, rhs, None, suggestion_for("length", subj, rhs, None))
        if _SCALAR.match(rhs):
            subj = _subject(lhs)
            return Reason(text, cid, guard, "scalar", subj, rhs, None, suggestion_for("scalar", subj, rhs, None))
        return Reason(text, cid, guard, "other", _subject(lhs), rhs)
    return Reason(text, cid, guard, "other")


# -- guard trees ------------------------------------------------------------------------------------
_ADDR = re.compile(r"0x[0-9a-fA-F]{4,}")
_GEN_NAMES = [
    (re.compile(r"(__compiled_fn_)\d+(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?"), r"\1N"),
    (re.compile(r"(__resume_at_)\d+_\d+"), r"\1N"),
    (re.compile(r"(\w___)\d+\b"), r"\1N"),       # __builtins_dict___20, __import_x___3
    (re.compile(r"(___stack)\d+"), r"\1N"),
]


#: object ids in identity guards (``___check_obj_id(G['x'], 139698252714032)``): new in every process
_OBJ_ID = re.compile(r"(___check_(?:obj|type)_id\(.*?,\s*)\d{4,}(?=\))")
#: the line number of a source comment (``# File: /m/model.py:83 in forward, code: …``)
_SRC_LINE = re.compile(r"(\.py):\d+(?=\s+in\s)")


def normalise_guard_line(line: str, *, across_processes: bool = False) -> str:
    """A guard line with what changes between two identical compiles (addresses, generated names) masked.

    ``across_processes``: also what differs between two processes or two edits of the source but
    is no real difference between the compiles: object ids of identity guards and the line numbers
    of ``# File: model.py:83 in forward`` comments (graphs and guards alike; the diff view's noise
    toggle, :func:`normalise_noise`). Off for triage, where two entries of one process whose ids
    differ did see different objects."""
    s = line.rstrip()
    if "0x" in s:
        s = _ADDR.sub("0x…", s)
    if "__" in s:
        for rx, rep in _GEN_NAMES:
            s = rx.sub(rep, s)
    if across_processes:
        if "_id(" in s:
            s = _OBJ_ID.sub(r"\1<id>", s)
        if ".py:" in s:
            s = _SRC_LINE.sub(r"\1:N", s)
    return s


def normalise_noise(line: str) -> str:
    """A graph or guard line with per-process noise masked (addresses, generated names, object
    ids, source line numbers): the diff view's noise toggle."""
    return normalise_guard_line(line, across_processes=True)


def read_guards(path: Path | None, base: Path | None = None) -> list[str] | None:
    """A guards.txt's lines (bounded), read only if it is a regular file inside ``base``; None else."""
    if path is None:
        return None
    text, _problem = read_head(path, MAX_GUARDS_BYTES, base)
    return None if text is None else text.splitlines()


@dataclass
class GuardDiff:
    """What differs between an older and a newer cache entry's guards, noise removed."""

    older: str                      # e.g. ``compiled_functions/f/entry_1/guards.txt``
    newer: str
    removed: list[str] = field(default_factory=list)   # guard lines only in the older entry
    added: list[str] = field(default_factory=list)     # guard lines only in the newer entry
    #: (older token, newer token) pairs where one line changed in place: ``torch.float32`` -> ``torch.float64``
    changes: list[tuple[str, str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.removed or self.added)

    def as_json(self) -> dict[str, Any]:
        return {"older": self.older, "newer": self.newer, "removed": self.removed, "added": self.added,
                "changes": [{"older": a, "newer": b} for a, b in self.changes]}


_TOKEN = re.compile(r"[\w.]+|[^\w\s]")


def _token_changes(a: str, b: str) -> list[tuple[str, str]]:
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    out = []
    sm = difflib.SequenceMatcher(a=ta, b=tb, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "replace":
            out.append((" ".join(ta[i1:i2]), " ".join(tb[j1:j2])))
    return out


def diff_guards(older: list[str], newer: list[str], older_name: str = "older",
                newer_name: str = "newer", limit: int = 40) -> GuardDiff:
    """Compare two guard trees line by line after normalising both (closure variables are left out:
    they are the guard functions' own objects, new for every compile)."""
    def body(lines: list[str]) -> list[str]:
        out = []
        for ln in lines:
            if ln.strip() == "closure_vars:":
                break
            out.append(_strip_comment(normalise_guard_line(ln)))
        return out

    a, b = body(older), body(newer)
    d = GuardDiff(older_name, newer_name)
    sm = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and i2 - i1 == j2 - j1:
            for x, y in zip(a[i1:i2], b[j1:j2]):
                if x.startswith(y) or y.startswith(x):
                    continue  # the writer cut both lines at 120 characters, at different places
                d.removed.append(x)
                d.added.append(y)
                d.changes.extend(_token_changes(x, y))
            continue
        d.removed.extend(a[i1:i2])
        d.added.extend(b[j1:j2])
    d.removed, d.added, d.changes = d.removed[:limit], d.added[:limit], d.changes[:limit]
    return d


def reason_from_diff(d: GuardDiff) -> Reason | None:
    """When torch's own reason was not recorded (upstream runs): the guard that changed between two
    consecutive entries, as a reason (``check_tensor(L['a'], … torch.float32 …)`` -> dtype, expected
    float32, actual float64). None when nothing but noise differs."""
    if d.empty:
        return None
    line = d.removed[0] if d.removed else d.added[0]
    guard = line[len("LEAF:"):].strip() if line.startswith("LEAF:") else line
    guard = _strip_comment(guard)
    exp = act = None
    kind = "other"
    subj = None
    m = re.search(r"(?:L|G)\['([^']+)'\]", guard)
    if m:
        subj = m.group(1)
    if d.changes:
        exp, act = d.changes[0]
        if _TORCH_DTYPE.match(exp) and _TORCH_DTYPE.match(act):
            kind = "dtype"
        elif _DEVICE.match(exp) and _DEVICE.match(act):
            kind = "device"
        elif guard.startswith("check_tensor") and exp.isdigit() and act.isdigit():
            kind = "size"
        elif "==" in guard and _SCALAR.match(exp) and _SCALAR.match(act):
            kind = "scalar"
    return Reason(f"guard changed: {guard}", None, guard, kind, subj, exp, act,
                  suggestion_for(kind, subj, exp, act))
