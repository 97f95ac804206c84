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

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from magi_format.lazyre import lazy_re
from magi_tui.model.sources.files import read_head

#: guards.txt is read up to this many bytes (a guard tree of a huge model is still bounded)
MAX_GUARDS_BYTES = 512 * 1024

_CID_PREFIX = lazy_re(r"^\s*(\[?!?[\d/_\]]*\d[\d/_\]]*\]?)\s*:\s+")
# torch's C++ TENSOR_MATCH failure (``tensor 'kwargs['input_ids']' size mismatch at index 1. expected 8,
# actual 16``): the source may hold quotes, so the name runs up to the last ``' <what> mismatch``
_TENSOR = lazy_re(
    r"tensor '(?P<name>.*)' (?P<what>size|stride|dtype|device|rank|requires_grad|dispatch key set|[\w ]+?)"
    r" mismatch(?: at index (?P<index>-?\d+))?\.\s*expected (?P<expected>.+?)(?:,\s*actual (?P<actual>.+?))?\s*$")
_DEVICE_INDEX = lazy_re(r"device index mismatch\. Expected device index to be (?P<e>-?\d+), actual (?P<a>-?\d+)",
                           re.I)
_EQ = lazy_re(r"^(?P<lhs>.+?)\s*(?P<op>==|!=)\s*(?P<rhs>[^=]+?)$")
_SCALAR = lazy_re(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$|^(True|False|None)$")
_NUMBER = lazy_re(r"^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$|^-?(inf|nan)$")
_STRING = lazy_re(r"""^(?:'[^']*'|"[^"]*")$""")
_LEN = lazy_re(r"^len\((?P<x>.+)\)$")
#: ``___check_obj_id(f, 1403…), type=<class 'builtin_function_or_method'>`` (ID_MATCH), ``___check_type_id(…)``
#: (TYPE_MATCH); ``type=`` names the type the guard was compiled for
_ID_CHECK = lazy_re(r"___check_(?P<which>obj|type)_id\((?P<x>.+?),\s*-?\d+\)(?:,\s*type=<class '(?P<t>[^']*)'>)?")
_GLOBAL_STATE = lazy_re(r"GLOBAL_STATE changed:\s*(?P<what>.*)$")
_DUPLICATE = lazy_re(r"Duplicate tensors? found")
#: ``(HINT: …)`` torch appends to a guard's text (an nn.Module int, ``type list``)
_HINT = lazy_re(r"\s*\(HINT: (?P<hint>.*)\)\s*$")
#: the C++ tensor check's type failure, torch 2.13: ``expected type of 'y' to be a tensor type, ' but found
#: <class 'NoneType'>`` (the stray quote is torch's), or ``… but found a different type``
_TENSOR_TYPE = lazy_re(r"expected type of '(?P<name>.*)' to be a tensor type, (?:' )?but found "
                       r"(?:<class '(?P<t>[^']*)'>|a different type)")
_KEYS = lazy_re(r"DispatchKeySet\(([^)]*)\)")
_TYPE_MISMATCH = lazy_re(r"^TYPE_MISMATCH\((?P<x>.+)\)$")
_LOOKUP_ERROR = lazy_re(r"^(?P<err>KeyError|IndexError) on (?P<src>.+)\[(?P<key>[^\[\]]+)\]$")
_DICT_KEY = lazy_re(r"^list\(dict\.keys\((?P<d>.+)\)\)\[(?P<i>\d+)\]\s*==\s*(?P<k>.+)$")
_DICT_CONTAINS = lazy_re(r"^(?P<neg>not\s+)?___dict_contains\((?P<k>.+?),\s*(?P<d>.+)\)$")
_INVALIDATED = lazy_re(r"Cache line invalidated because (?P<x>.+?) got deallocated")
_IS = lazy_re(r"^(?P<lhs>[^\s()]+(?:\([^()]*\))?[^\s]*) is (?P<neg>not )?(?P<rhs>\S+)$")
#: global state guards other than GLOBAL_STATE, by what they check (older torch spells some as functions)
_GLOBAL_STATE_CHECKS = [
    (lazy_re(r"___check_torch_function_mode_stack\("), "torch_function_mode_stack",
     "the torch function mode stack: torch.set_default_device or a TorchFunctionMode"),
    (lazy_re(r"___check_global_state\("), "global_state", "grad mode / autocast / deterministic algorithms"),
    (lazy_re(r"___is_grad_enabled\("), "grad_mode", "grad_mode"),
    (lazy_re(r"___are_deterministic_algorithms_enabled\("), "deterministic_algorithms", "deterministic_algorithms"),
    (lazy_re(r"___is_torch_function_enabled\("), "torch_function", "torch_function"),
    (lazy_re(r"forward_ad\._current_level\b"), "forward_ad_level", "the forward-mode AD level"),
    (lazy_re(r"compare_functorch_state\("), "functorch_stack", "the functorch transform stack (vmap, grad)"),
    (lazy_re(r"top_saved_tensors_hooks\b"), "saved_tensors_hooks", "saved tensors hooks"),
]
_SHAPE_RANGE = lazy_re(r"(?:\.size\(\)\[|\.stride\(\)\[|\.storage_offset\(\)|\bs\d+\b|Ne\(|Eq\(|<=|>=|<|>)")

#: the guard kinds whose value decides which graph runs (a new value is a new compile)
KINDS = ("size", "stride", "dtype", "device", "rank", "requires_grad", "dispatch_key_set", "scalar", "float",
         "bool", "constant", "none", "identity", "function", "type", "length", "dict_keys", "global_state", "aliasing",
         "shape_range", "backend", "other")

# torch's short dtype names (``Float``) -> the spelling a user writes
DTYPES = {
    "Float": "torch.float32", "Double": "torch.float64", "Half": "torch.float16", "BFloat16": "torch.bfloat16",
    "Long": "torch.int64", "Int": "torch.int32", "Short": "torch.int16", "Char": "torch.int8",
    "Byte": "torch.uint8", "Bool": "torch.bool", "ComplexFloat": "torch.complex64",
    "ComplexDouble": "torch.complex128",
}
_TORCH_DTYPE = lazy_re(r"^torch\.(float|int|uint|bfloat|complex|bool)\w*$")
_DEVICE = lazy_re(r"^(cpu|cuda|mps|xpu|meta|hpu)(:\d+)?$|^device\(")


class Reason(Struct):
    """One failed guard of one cache entry, as torch reported it."""

    text: str                       # the reason's first line, compile-id prefix removed
    entry_compile_id: str | None    # the cache entry whose guard failed (``0/0``), when torch said
    guard: str                      # the guard expression (``x.size()[0] == 4``, ``n == 3``)
    kind: str                       # one of KINDS
    subject: str | None = None      # the source the guard is about, as torch wrote it (``kwargs['input_ids']``)
    expected: str | None = None
    actual: str | None = None       # None: torch did not record it (``n == 3`` names the compiled value only)
    suggestion: str | None = None
    index: int | None = None        # the dimension of a size / stride guard
    #: the entry for ``TORCH_COMPILE_DYNAMIC_SOURCES`` that makes this source dynamic from the first compile
    #: (sizes and ints: torch ignores it for floats and strides)
    dynamic_source: str | None = None
    #: the id of the advice the suggestion is (:data:`magi_tui.model.analysis.advice.TABLE`), None with no suggestion
    advice: str | None = None
    #: torch's own ``(HINT: …)`` on the guard, verbatim
    hint: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"text": self.text, "entry_compile_id": self.entry_compile_id, "guard": self.guard,
                "kind": self.kind, "subject": self.subject, "user_expr": user_expr(self.subject),
                "index": self.index, "expected": self.expected, "actual": self.actual,
                "actual_recorded": self.actual is not None, "suggestion": self.suggestion,
                "dynamic_source": self.dynamic_source, "advice": self.advice, "hint": self.hint}


def _pretty_dtype(v: str | None) -> str | None:
    if v is None:
        return None
    return DTYPES.get(v.strip(), v.strip())


# -- sources: what torch calls a value (``L['self']._modules['h']._parameters['w']``) -----------------
_LOCAL = lazy_re(r"""L\[\s*['"](.*?)['"]\s*\]""")
_ATTR_DICT = lazy_re(r"""\._(?:modules|parameters|buffers)\[\s*['"]([^'"]+)['"]\s*\]""")
_ROOT = lazy_re(r"^(?P<root>[A-Za-z_]\w*)(?P<rest>.*)$", re.S)


def user_expr(source: str | None) -> str | None:
    """A source as the user would write it: ``L['self']._modules['h']._modules['0']._parameters['w']``
    -> ``self.h[0].w``; ``kwargs['input_ids']`` stays (it is the dict the keyword arrived in)."""
    if not source:
        return source
    s = _LOCAL.sub(r"\1", source)

    def attr(m: re.Match) -> str:
        n = m.group(1)
        return f"[{n}]" if n.isdigit() else f".{n}"
    return _ATTR_DICT.sub(attr, s)


def keyword_of(source: str | None) -> str | None:
    """``kwargs['input_ids']`` / ``model_kwargs['position_ids']`` -> ``input_ids``: the keyword argument a
    tensor arrived as, when the source is an entry of a ``**kwargs`` dict."""
    if not source:
        return None
    m = re.fullmatch(r"""(?:L\[\s*['"])?(?P<d>\w*kw\w*)(?:['"]\s*\])?\[\s*['"](?P<k>[^'"]+)['"]\s*\]""",
                     source.strip())
    return m.group("k") if m else None


def dynamic_source_entry(source: str | None, index: int | None = None) -> str | None:
    """The ``TORCH_COMPILE_DYNAMIC_SOURCES`` entry (``torch.compiler.config.dynamic_sources``) for a source
    as a recompile reason names it: torch matches the full source name (``L['kwargs']['input_ids']``),
    which the reason printed without its ``L[…]`` (``strip_local_scope``); ``:N`` names one dimension.
    None for values that are not frame inputs (``___stack0``, generated names) or hold a comma."""
    if not source:
        return None
    s = _LOCAL.sub(lambda m: f"L['{m.group(1)}']", source.strip())
    m = _ROOT.match(s)
    if not m or s.startswith("___") or "," in s or " " in s:
        return None
    root, rest = m.group("root"), m.group("rest")
    if root == "L":
        root2 = re.match(r"\['(\w+)'\](.*)$", rest)
        if not root2:
            return None
        root, rest = root2.group(1), root2.group(2)
    elif root == "G":
        # a global, as torch names it (``G['K']``, ``G['cfg'].K``): torch matches that name too
        # (tests/advice: TORCH_COMPILE_DYNAMIC_SOURCES="G['K']" removes the recompiles of a global int)
        return s if index is None else f"{s}:{index}"
    # a frame input (``x``), an entry of a **kwargs dict, or a path under ``self`` (a module's tensors)
    if rest and not (keyword_of(f"{root}{rest}") or root == "self"):
        return None
    s = f"L['{root}']{rest}"
    return s if index is None else f"{s}:{index}"


#: the advice for each reason kind when nothing more is known (:func:`advice_for` refines ints, floats)
_ADVICE_OF_KIND = {"size": "size", "stride": "stride", "dtype": "dtype", "device": "device", "rank": "rank",
                   "requires_grad": "requires_grad", "dispatch_key_set": "dispatch_key_set", "scalar": "int",
                   "float": "float", "bool": "bool", "constant": "constant", "none": "none",
                   "identity": "identity", "function": "function", "type": "type", "length": "length",
                   "dict_keys": "dict_keys", "global_state": "global_state", "aliasing": "aliasing",
                   "shape_range": "shape_range", "backend": "backend"}
#: an int attribute of a submodule (``self._modules['h'].n``); ``self.n`` is one by torch's HINT only (a
#: plain object's int attribute is made dynamic as an argument's is)
_MODULE_ATTR = lazy_re(r"""\._modules\[[^\]]+\]\.\w+$""")
_GLOBAL_NAME = lazy_re(r"""G\[\s*['"]([^'"]+)['"]\s*\]""")


def advice_for(kind: str, subject: str | None, expected: str | None = None, hint: str | None = None) -> str | None:
    """The id of the advice (:data:`magi_tui.model.analysis.advice.TABLE`) for a failed guard of ``kind`` on ``subject``;
    None for a kind with no advice (``other``)."""
    subj = subject or ""
    if kind in ("scalar", "float") and subj.startswith("___stack"):
        return "scalar_output"  # a value computed before a graph break (.item())
    if kind == "scalar":
        if (hint and "nn.Module" in hint) or _MODULE_ATTR.search(subj):
            return "module_int"
        if subj.startswith("G["):
            return "global_int"
    return _ADVICE_OF_KIND.get(kind)


#: what each advice says when torch did not record a value
_UNKNOWN_ACTUAL = {"size": "not recorded", "stride": "not recorded", "dtype": "another dtype",
                   "type": "another type", "device": "another device", "rank": "another number of"}
_UNKNOWN_EXPECTED = {"dtype": "one dtype", "type": "one type", "device": "one device", "rank": "another number",
                     "requires_grad": "the other value", "length": "another length", "dict_keys": "other keys"}


def advise(advice_id: str, subject: str | None, expected: str | None, actual: str | None, index: int | None = None,
           extra: str | None = None, hint: str | None = None, sources: list[str] | None = None) -> str:
    """The → line of ``advice_id`` (:data:`magi_tui.model.analysis.advice.TABLE`, each entry proven on real torch) for
    one failed guard; ``sources``: the ``TORCH_COMPILE_DYNAMIC_SOURCES`` entries of everything the recompile
    made dynamic (the ``*_automatic`` entries); ``hint``: torch's own HINT, shown verbatim."""
    from magi_tui.model.analysis.advice import CLAUSES, render

    u = user_expr(subject) or "it"
    kw = keyword_of(subject)
    dyn = dynamic_source_entry(subject, index)
    mark = f"torch._dynamo.mark_dynamic({kw or u}, {index if index is not None else 'dim'})"
    env = ",".join(sources) if sources else dyn
    start = CLAUSES["env"].format(env=env) if env else CLAUSES["dynamic_true"]
    if advice_id == "size_automatic":
        start = (CLAUSES["env"].format(env=env) + (CLAUSES["or_mark"].format(mark=mark) if len(sources or ()) <= 1
                                                     else "")) if env else CLAUSES["mark"].format(mark=mark)
    remedy = CLAUSES["hint"].format(hint=hint) if hint else CLAUSES["module_int_remedy"]
    if advice_id == "module_int" and dyn:
        remedy = f"{remedy.rstrip('.')}. {CLAUSES['module_int_env'].format(env=dyn)}"
    exp = expected or _UNKNOWN_EXPECTED.get(advice_id, "another value")
    names = [n.strip() for n in (extra or "").split(" and ") if n.strip()]
    fields = {
        "u": u, "subject": subject or u, "index": index if index is not None else "?",
        "expected": exp, "actual": actual or _UNKNOWN_ACTUAL.get(advice_id, "another value"),
        "who": (f"{u} (the {kw}= argument)" if kw else u) if advice_id.startswith("size") else (extra or "two inputs"),
        "mark": mark, "or_env": CLAUSES["or_env"].format(env=dyn) if dyn else "", "start": start,
        "n": len(sources) if sources else 1, "name": _GLOBAL_NAME.sub(r"\1", subject or u), "remedy": remedy,
        "what": (extra or subject or "grad mode / autocast") if advice_id == "global_state" else (
            "a float" if expected is not None and not re.fullmatch(r"-?\d+", expected) else "an int"),
        "example": CLAUSES["not_none"] if actual and "NoneType" in actual else "",
        "was": CLAUSES["was"].format(expected=expected) if expected else "", "which": "",
        "last": user_expr(names[-1]) if names else u, "change": extra or f"{exp} -> {actual}",
    }
    text = render(advice_id, **fields)
    if hint and advice_id != "module_int":
        text += ". " + CLAUSES["hint"].format(hint=hint)
    return text


def suggestion_for(kind: str, subject: str | None, expected: str | None, actual: str | None,
                   index: int | None = None, extra: str | None = None, hint: str | None = None) -> str | None:
    """The → line for a failed guard of this kind (:func:`advise` of :func:`advice_for`), or None when
    there is none."""
    aid = advice_for(kind, subject, expected, hint)
    return None if aid is None else advise(aid, subject, expected, actual, index, extra, hint)


def function_changed_text(u: str, older: str | None = None, newer: str | None = None) -> str:
    """Why a frame recompiles when a function it calls is another one: the frame is a wrapper (a
    decorator's inner function) that several functions come through; each compiles its own entry of the
    one frame. Not fixed by reusing an object (the identity advice): it is how Dynamo caches by code."""
    from magi_tui.model.analysis.advice import CLAUSES, render

    which = CLAUSES["which"].format(older=older, newer=newer) if older and newer else ""
    return render("function", u=u, which=which)


#: a guard on the code object of a function the frame calls: ``___check_obj_id(L['func'].__code__, 1234)``,
#: with the code object described by some torch versions (``type=<code object forward at 0x…, file
#: "…/modeling_llama.py", line 436>``)
_CODE_GUARD = lazy_re(r"___check_obj_id\((?P<src>[LG]\[.+?\](?:\.\w+)*)\.__code__,\s*-?\d+\)"
                         r"(?:,\s*type=<code object (?P<name>\S+) at [^,]*, file \"(?P<file>[^\"]*)\", line (?P<line>\d+)>)?")


def functions_changed(d: GuardDiff) -> list[tuple[str, str | None, str | None]]:
    """``(source, older function, newer function)`` for each function the frame calls whose code differs
    between the two entries (the functions named as ``forward (modeling_llama.py:436)`` where the guard
    describes the code object; None where it does not)."""
    def codes(lines: list[str]) -> dict[str, tuple[str, str | None]]:
        out: dict[str, tuple[str, str | None]] = {}
        for ln in lines:
            m = _CODE_GUARD.search(ln)
            if m:
                label = None
                if m.group("name"):
                    label = f"{m.group('name')} ({m.group('file').rsplit('/', 1)[-1]}:{m.group('line')})"
                out.setdefault(m.group("src"), (ln, label))
        return out

    old, new = codes(d.removed), codes(d.added)
    return [(src, old[src][1], new[src][1]) for src in old if src in new and old[src][0] != new[src][0]]


def _strip_comment(line: str) -> str:
    """``n == 3      # y = x * n  # file.py:5 in f`` -> ``n == 3``."""
    i = line.find("  #")
    if i < 0:
        i = line.find(" # ")
    return (line[:i] if i >= 0 else line).strip()


def subject_of(expr: str) -> str:
    """``L['x']`` -> ``x``: the name a reason gives a source (else the expression as written; a global
    stays ``G['K']``, as torch writes it)."""
    s = expr.strip()
    m = re.fullmatch(r"""L\[\s*['"]([^'"]+)['"]\s*\]""", s)
    return m.group(1) if m else s


def parse_reason(raw: Any) -> Reason:
    """One of torch's recompile reasons -> guard, expected/actual values and a suggestion. Total: any
    text gives a Reason (kind ``other`` and the text verbatim when no family matches)."""
    r = _parse_reason_cached(str(raw)[:4000])
    return Reason(r.text, r.entry_compile_id, r.guard, r.kind, r.subject, r.expected, r.actual, r.suggestion,
                  r.index, r.dynamic_source, r.advice, r.hint)


#: the advice whose source ``TORCH_COMPILE_DYNAMIC_SOURCES`` makes dynamic (proven in tests/advice)
_DYNAMIC_SOURCE_ADVICE = ("size", "int", "global_int", "module_int")


def _reason(text: str, cid: str | None, guard: str, kind: str, subj: str | None = None, exp: str | None = None,
            act: str | None = None, index: int | None = None, extra: str | None = None,
            hint: str | None = None) -> Reason:
    aid = advice_for(kind, subj, exp, hint)
    dyn = dynamic_source_entry(subj, index) if aid in _DYNAMIC_SOURCE_ADVICE else None
    sugg = advise(aid, subj, exp, act, index, extra, hint) if aid else None
    return Reason(text, cid, guard, kind, subj, exp, act, sugg, index, dyn, aid, hint)


@lru_cache(maxsize=4096)
def _parse_reason_cached(raw: str) -> Reason:
    first = next((ln for ln in raw.splitlines() if ln.strip()), "").strip()
    cid = None
    m = _CID_PREFIX.match(first)
    if m:
        cid = m.group(1)
        first = first[m.end():]
    text = first
    hint = None
    hm = _HINT.search(first)
    if hm:  # torch's own advice on the guard (an nn.Module int, a type): shown verbatim
        hint = hm.group("hint").strip()
        first = first[:hm.start()].rstrip()
    guard = _strip_comment(first)
    try:
        return _classify(text, cid, guard, hint)
    except (ValueError, IndexError, KeyError, re.error):  # a grammar gap is an "other", never an exception
        return Reason(text, cid, guard, "other", hint=hint)


def _dispatch_keys(guard: str, tm: re.Match) -> tuple[str, str | None, str | None, str | None]:
    """A ``dispatch key set mismatch``: ``device`` with the backend keys (``CPU`` -> ``Meta``) when the first
    key differs (a tensor on another device), else ``dispatch_key_set`` with the keys added / removed."""
    exp, act = tm.group("expected"), tm.group("actual")
    ek, ak = (_KEYS.findall(v or "") for v in (exp, act))
    ek = [k.strip() for k in ek[0].split(",")] if ek else []
    ak = [k.strip() for k in ak[0].split(",")] if ak else []
    if ek and ak and ek[0] != ak[0]:
        return "device", ek[0], ak[0], None
    change = ", ".join([f"-{k}" for k in ek if k not in ak] + [f"+{k}" for k in ak if k not in ek])
    return "dispatch_key_set", exp, act, change or None


def _classify(text: str, cid: str | None, guard: str, hint: str | None = None) -> Reason:
    tm = _TENSOR.search(guard)
    if tm:
        kind = tm.group("what").strip().replace(" ", "_")
        name = tm.group("name")
        exp, act = tm.group("expected"), tm.group("actual")
        extra = None
        if kind == "dtype":
            exp, act = _pretty_dtype(exp), _pretty_dtype(act)
        if kind == "requires_grad" and exp and exp.startswith("requires_grad="):
            exp = "True" if exp.endswith("1") else "False"
            act = act or ("False" if exp == "True" else "True")  # a bool: the other value
        if kind == "dispatch_key_set":
            kind, exp, act, extra = _dispatch_keys(guard, tm)
        idx = tm.group("index")
        index = int(idx) if idx is not None else None
        if index is not None and kind in ("size", "stride"):
            guard = f"{name}.{kind}()[{index}] == {exp}"
        return _reason(text, cid, guard, kind, name, exp, act, index, extra, hint)
    ty = _TENSOR_TYPE.search(guard)
    if ty:  # ``expected type of 'y' to be a tensor type, ' but found <class 'NoneType'>`` (the quote is torch's)
        return _reason(text, cid, guard, "type", ty.group("name"), "Tensor", ty.group("t"), hint=hint)
    dm = _DEVICE_INDEX.search(guard)
    if dm:
        return _reason(text, cid, guard, "device", None, dm.group("e"), dm.group("a"), hint=hint)
    gm = _GLOBAL_STATE.search(guard)
    if gm:
        what = gm.group("what").strip() or None
        return _reason(text, cid, guard, "global_state", what, extra=what, hint=hint)
    for rx, name, what in _GLOBAL_STATE_CHECKS:
        if rx.search(guard):
            return _reason(text, cid, guard, "global_state", name, extra=what, hint=hint)
    if _DUPLICATE.search(guard):
        names = re.findall(r'"([^"]+)"', guard)
        return _reason(text, cid, guard, "aliasing", names[0] if names else None,
                       extra=" and ".join(names) if names else None, hint=hint)
    if guard.startswith("BACKEND_MATCH") or guard.startswith("___check_current_backend"):
        return _reason(text, cid, guard, "backend", hint=hint)
    cm = _TYPE_MISMATCH.match(guard)
    if cm:  # a dict guard's type check (``dict`` -> ``OrderedDict``)
        return _reason(text, cid, guard, "type", subject_of(cm.group("x")), hint=hint)
    km = _LOOKUP_ERROR.match(guard)
    if km:  # ``KeyError on d['a']``: a key the compile read is gone; ``IndexError on xs[2]``: a shorter list
        src, key = km.group("src"), km.group("key")
        if km.group("err") == "KeyError":
            return _reason(text, cid, guard, "dict_keys", subject_of(src), f"key {key}", hint=hint)
        return _reason(text, cid, guard, "length", subject_of(src),
                       f"more than {key} items" if key.isdigit() else None, hint=hint)
    dk = _DICT_KEY.match(guard)
    if dk:  # ``list(dict.keys(d))[0] == 'a'``: the key at one position of a dict
        return _reason(text, cid, guard, "dict_keys", subject_of(dk.group("d")),
                       f"key {dk.group('k')} at position {dk.group('i')}", hint=hint)
    dc = _DICT_CONTAINS.match(guard)
    if dc:
        have = "absent" if dc.group("neg") else "present"
        return _reason(text, cid, guard, "dict_keys", subject_of(dc.group("d")), f"key {dc.group('k')} {have}",
                       hint=hint)
    inv = _INVALIDATED.search(guard)
    if inv:  # an object a guard held was freed (a module or function made anew): the identity advice
        return _reason(text, cid, guard, "identity", subject_of(inv.group("x")), hint=hint)
    om = _ID_CHECK.search(guard)
    if om:
        kind = "identity" if om.group("which") == "obj" else "type"
        t = om.group("t")
        subj = subject_of(om.group("x"))
        if kind == "identity" and t == "NoneType":
            return _reason(text, cid, guard, "none", subj, "None", hint=hint)
        if kind == "identity" and subj.endswith(".__code__"):  # the code of a function the frame calls
            return _reason(text, cid, guard, "function", subj[: -len(".__code__")], "code", hint=hint)
        return _reason(text, cid, guard, kind, subj, t.rsplit(".", 1)[-1] if t else None, hint=hint)
    im = _IS.match(guard)
    if im:
        lhs, rhs = im.group("lhs").strip(), im.group("rhs").strip()
        if rhs == "None":  # NONE_MATCH / NOT_NONE_MATCH: ``y is None``, ``y is not None``
            return _reason(text, cid, guard, "none", subject_of(lhs), "not None" if im.group("neg") else "None",
                           hint=hint)
        if not im.group("neg"):  # ``x is y``: two inputs that were one object when compiled
            return _reason(text, cid, guard, "aliasing", subject_of(lhs),
                           extra=f"{subject_of(lhs)} and {subject_of(rhs)}", hint=hint)
    em = _EQ.match(guard)
    if em:
        lhs, rhs, op = em.group("lhs").strip(), em.group("rhs").strip(), em.group("op")
        lm = _LEN.match(lhs)
        if lm:
            # ``len(xs) == 2`` (a list's guard), ``len(d) != 1`` (the C++ dict guard's failure: the length
            # is not the 1 it was compiled for)
            return _reason(text, cid, guard, "length", subject_of(lm.group("x")), rhs, hint=hint)
        subj = subject_of(lhs)
        if "CURRENT_DEVICE" in lhs:  # DEFAULT_DEVICE: torch.set_default_device changed between calls
            return _reason(text, cid, guard, "global_state", "default device", rhs,
                           extra="the default device (torch.set_default_device)", hint=hint)
        if op == "==" and not _SHAPE_RANGE.search(lhs):
            if rhs in ("True", "False"):
                return _reason(text, cid, guard, "bool", subj, rhs, hint=hint)
            if rhs == "None":
                return _reason(text, cid, guard, "none", subj, rhs, hint=hint)
            if _NUMBER.match(rhs):
                kind = "scalar" if re.fullmatch(r"-?\d+", rhs) else "float"
                return _reason(text, cid, guard, kind, subj, rhs, hint=hint)
            if _STRING.match(rhs):
                return _reason(text, cid, guard, "constant", subj, rhs, hint=hint)
        if _SHAPE_RANGE.search(guard):
            return _reason(text, cid, guard, "shape_range", lhs, rhs, hint=hint)
        return Reason(text, cid, guard, "other", subj, rhs, hint=hint)
    if _SHAPE_RANGE.search(guard) and (".size()" in guard or ".stride()" in guard):
        return _reason(text, cid, guard, "shape_range", guard, hint=hint)
    return Reason(text, cid, guard, "other", hint=hint)


# -- guard trees ------------------------------------------------------------------------------------
_ADDR = lazy_re(r"0x[0-9a-fA-F]{4,}")
_GEN_NAMES = [
    (lazy_re(r"(__compiled_fn_)\d+(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?"), r"\1N"),
    (lazy_re(r"(__resume_at_)\d+_\d+"), r"\1N"),
    (lazy_re(r"(\w___)\d+\b"), r"\1N"),       # __builtins_dict___20, __import_x___3
    (lazy_re(r"(___stack)\d+"), r"\1N"),
]


#: object ids in identity guards (``___check_obj_id(G['x'], 139698252714032)``): new in every process
_OBJ_ID_VALUE = lazy_re(r"(___check_(?:obj|type)_id\(.*?,\s*)\d{4,}(?=\))")
#: the line number of a source comment (``# File: /m/model.py:83 in forward, code: …``)
_SRC_LINE = lazy_re(r"(\.py):\d+(?=\s+in\s)")


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
            s = _OBJ_ID_VALUE.sub(r"\1<id>", s)
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


class GuardDiff(Struct):
    """What differs between an older and a newer cache entry's guards, noise removed."""

    older: str                      # e.g. ``compiled_functions/f/entry_1/guards.txt``
    newer: str
    removed: list[str] = field(default_factory=list)   # guard lines only in the older entry
    added: list[str] = field(default_factory=list)     # guard lines only in the newer entry
    #: (older token, newer token) pairs where one line changed in place: ``torch.float32`` -> ``torch.float64``
    changes: list[tuple[str, str]] = field(default_factory=list)
    #: lines that changed in place: (older line, newer line, their token changes)
    changed: list[tuple[str, str, list[tuple[str, str]]]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.removed or self.added)

    def as_json(self) -> dict[str, Any]:
        return {"older": self.older, "newer": self.newer, "removed": self.removed, "added": self.added,
                "changes": [{"older": a, "newer": b} for a, b in self.changes],
                # each changed line cut around its first changed token, so the difference is in view
                "changed_lines": [{"older": focus(x, ch[0][0] if ch else ""), "newer": focus(y, ch[0][1] if ch else ""),
                                   "changes": [{"older": a, "newer": b} for a, b in ch]}
                                  for x, y, ch in self.changed]}

    def headline(self) -> str:
        """The changed tokens, first, named by the field they are in: ``torch.float32 -> torch.float64``;
        ``size: 4 -> 8``; ``requires_grad: False -> True``."""
        out: list[str] = []
        for x, y, _ch in self.changed:
            for label, a, b in _labelled_changes(x, y):
                out.append(f"{label}: {a} -> {b}" if label else f"{a} -> {b}")
        if not out:
            out = [f"{a} -> {b}" for a, b in self.changes]
        return "; ".join(dict.fromkeys(out[:4]))


def focus(line: str, token: str, width: int = 100) -> str:
    """``line`` cut to ``width`` characters around the first place ``token`` appears (``…`` where cut):
    a long guard line shows its difference, not its common start."""
    if len(line) <= width:
        return line
    i = line.find(token) if token else -1
    if i < 0:
        return line[:width - 1] + "…"
    start = max(0, min(i - width // 3, len(line) - width))
    out = line[start:start + width]
    if start > 0:
        out = "…" + out[1:]
    if start + width < len(line):
        out = out[:-1] + "…"
    return out


_TOKEN = lazy_re(r"[\w.]+|[^\w\s]")


def _labelled_changes(a: str, b: str) -> list[tuple[str, str, str]]:
    """``(field, older tokens, newer tokens)`` for each in-place change of a line: the field is the
    ``name=`` the tokens sit in (``size=[4, 8]`` -> ``size``), ``""`` for a positional one (a dtype)."""
    import difflib  # here, not at the top: a headless start that diffs no guards need not import it

    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    out = []
    sm = difflib.SequenceMatcher(a=ta, b=tb, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "replace":
            label = ""
            k = i1 - 1
            while k >= 1 and ta[k] not in ("(", ")", "]"):
                if ta[k] == "=" and re.fullmatch(r"\w+", ta[k - 1]):
                    label = ta[k - 1]
                    break
                k -= 1
            out.append((label, " ".join(ta[i1:i2]), " ".join(tb[j1:j2])))
    return out


def _token_changes(a: str, b: str) -> list[tuple[str, str]]:
    return [(x, y) for _label, x, y in _labelled_changes(a, b)]


def diff_guards(older: list[str], newer: list[str], older_name: str = "older",
                newer_name: str = "newer", limit: int = 40) -> GuardDiff:
    """Compare two guard trees line by line after normalising both (closure variables are left out:
    they are the guard functions' own objects, new for every compile)."""
    def body(lines: list[str]) -> list[str]:
        out = []
        for ln in lines:
            if ln.strip() == "closure_vars:":
                break
            if ln.startswith("Guard latency"):  # torch's timing of the guard check, new every compile
                continue
            out.append(_strip_comment(normalise_guard_line(ln)))
        return out

    import difflib  # here, not at the top: a headless start that diffs no guards need not import it

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
                ch = _token_changes(x, y)
                d.changes.extend(ch)
                d.changed.append((x, y, ch))
            continue
        d.removed.extend(a[i1:i2])
        d.added.extend(b[j1:j2])
    d.removed, d.added, d.changes = d.removed[:limit], d.added[:limit], d.changes[:limit]
    d.changed = d.changed[:limit]
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
