"""A run's JSON files, read safely: bounded in size and depth, decoded into typed structures, and a damaged or
hostile file said in one line — never an exception (issue 32.6).

``fix.json``, ``bisect.json``, ``metrics.json``, ``runtime.json`` and ``session.json`` are written by our own
tools, but a run directory is data: a cut write, a disk error, or a file made by someone else must not crash
``triage`` nor the app. Each is read here the same way:

* **size**: at most the file's bound and one byte more is read (:func:`read_bounded`: a regular file, inside
  the run); a file over it is refused as such, not decoded cut short;
* **depth**: more than :data:`MAX_DEPTH` levels of nesting is refused before any decoder recurses
  (:func:`too_deep`, two ``str.count`` on an ordinary file);
* **types**: msgspec decodes into the file's :class:`msgspec.Struct` (its fields typed, lists bounded in
  length): a list where an object belongs, a string where a number does, a number too big for a float is a
  ``ValidationError`` naming where, and no consumer sees a value of a type it does not expect. A field the
  Struct does not declare is skipped. NaN / Infinity and lone surrogates (which Python's ``json`` writes, the
  latter for a file name that is not UTF-8, and msgspec refuses) are read by the stdlib and then checked
  against the same type; what shows them escapes them (``literal``).

:func:`decode` raises :class:`JsonProblem` (its message one line, control and bidi characters made visible);
:func:`decode_or_none` is the quiet form for files that are facts when they parse (metrics, runtime, session).
The stdlib ``json`` is imported only for the odd file msgspec refuses (a headless start stays lean).
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from magi_format.lazyre import lazy_re
from magi_format.text import literal
from magi_tui.model.sources.paths import FileProblem, display_name, open_regular

__all__ = ["Int", "MAX_DEPTH", "JsonProblem", "too_deep", "decode", "decode_or_none", "read_bounded", "MetricsFile",
           "metrics_or_none", "MAX_METRICS_BYTES"]

#: nesting deeper than this is refused (our files nest 5 levels at most)
MAX_DEPTH = 64
#: a run's metrics.json is read up to this many bytes (~1.5 KB each; a fail_reason can be long)
MAX_METRICS_BYTES = 1 << 20

#: a JSON string (escapes included; one cut short runs to the end), or a run of anything but brackets and quotes
_NOT_BRACKETS = lazy_re(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)|[^\[\]{}"]+')
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JsonProblem(ValueError):
    """Why a JSON file was not read: one line, safe to print or show."""


def too_deep(text: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether ``text``'s arrays and objects nest more than ``limit`` levels (brackets inside strings are not
    counted). An ordinary file has fewer brackets than ``limit`` and is answered by two counts; else its
    brackets alone are kept (one regex pass) and the deepest point of their running sum found (C-speed
    ``accumulate``), whatever their depth."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if text.count("[") + text.count("{") <= limit:
        return False
    from itertools import accumulate

    brackets = _NOT_BRACKETS.sub("", text).replace('"', "")  # (a quote left: one before a final backslash)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


_DECODERS: dict[Any, msgspec.json.Decoder] = {}


def _decoder(type_: Any) -> msgspec.json.Decoder:
    dec = _DECODERS.get(type_)
    if dec is None:
        dec = _DECODERS[type_] = msgspec.json.Decoder(type_)
    return dec


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deep"
    if isinstance(exc, UnicodeError):  # msgspec could not quote a lone surrogate in its message
        return "a value of another type where a field is expected (a string with a lone surrogate)"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return literal(text, 200)


def decode(text: str | bytes | None, type_: Any = Any, *, name: str = "the file",
           max_depth: int = MAX_DEPTH) -> Any:
    """``text`` decoded as ``type_`` (a Struct, a container of them, or ``Any``); :class:`JsonProblem` when it
    is empty, nested deeper than ``max_depth``, not JSON, or not of that type. ``name`` starts the message
    (shown as it is: pass it already safe, e.g. :func:`magi_tui.model.sources.files.display_name`)."""
    if text is None or not text.strip():
        raise JsonProblem(f"{name} is empty")
    if too_deep(text, max_depth):
        raise JsonProblem(f"{name} nests deeper than {max_depth} levels: not read")
    try:
        return _decoder(type_).decode(text)
    except msgspec.ValidationError as exc:
        if type_ is not Any:
            raise JsonProblem(f"{name} is damaged: {_why(exc)}") from None
        first: BaseException = exc   # a number out of a float's range: the stdlib reads it as inf
    except msgspec.DecodeError as exc:
        first = exc                  # NaN, Infinity, a lone surrogate: the stdlib reads them
    except RecursionError as exc:
        raise JsonProblem(f"{name} is not valid JSON: {_why(exc)}") from None
    import json  # here: only a file msgspec refused comes this far (a headless start need not import it)

    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        raise JsonProblem(f"{name} is not valid JSON: {_why(first)}") from None
    if type_ is Any:
        return obj
    try:
        return msgspec.convert(obj, type_)
    except (ValueError, RecursionError) as exc:  # ValidationError (UnicodeEncodeError: its message failed)
        raise JsonProblem(f"{name} is damaged: {_why(exc)}") from None


def decode_or_none(text: str | bytes | None, type_: Any = Any, *, max_depth: int = MAX_DEPTH) -> Any:
    """:func:`decode`, or None when the text is not that (a missing, damaged or hostile file)."""
    try:
        return decode(text, type_, max_depth=max_depth)
    except JsonProblem:
        return None


def read_bounded(path: Any, limit: int, root: Any = None, *, name: str | None = None) -> str:
    """A run file's text, bad UTF-8 replaced (opened as :func:`magi_tui.model.sources.paths.open_regular` opens it:
    a regular file, inside ``root`` when given), or :class:`JsonProblem` when it cannot be read or is over
    ``limit`` bytes (at most ``limit + 1`` are read)."""
    try:
        fd, _st = open_regular(path, root)
    except FileProblem as exc:
        raise JsonProblem(str(exc)) from None
    try:
        data = os.pread(fd, limit + 1, 0)
    except OSError as exc:
        raise JsonProblem(f"cannot read {name or display_name(path)}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise JsonProblem(f"{name or display_name(path)} is over {limit:,} bytes: not read")
    return data.decode("utf-8", "replace")


# -- metrics.json ---------------------------------------------------------------------------------------------
#: an integer a 64-bit field holds (a bigger one is no count nor line number of ours)
Int = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]


class MetricsFile(Struct, omit_defaults=True):
    """A compile's ``metrics.json``: the ``compilation_metrics`` fields the mapping keeps
    (:data:`magi_format.torch_mapping.METRICS_KEEP`), each of the type torch records it with."""

    compile_id: str | None = None
    co_name: str | None = None
    co_filename: str | None = None
    co_firstlineno: Int | None = None
    frame_key: str | Int | None = None
    cache_size: Int | None = None
    accumulated_cache_size: Int | None = None
    guard_count: Int | None = None
    shape_env_guard_count: Int | None = None
    graph_op_count: Int | None = None
    graph_node_count: Int | None = None
    graph_input_count: Int | None = None
    start_time: float | None = None
    entire_frame_compile_time_s: float | None = None
    backend_compile_time_s: float | None = None
    inductor_compile_time_s: float | None = None
    code_gen_time_s: float | None = None
    dynamo_time_before_restart_s: float | None = None
    remote_cache_time_saved_s: float | None = None
    structured_logging_overhead_s: float | None = None
    fail_type: str | None = None
    fail_reason: str | None = None
    fail_user_frame_filename: str | None = None
    fail_user_frame_lineno: Int | None = None
    #: a list of reasons; torch's set written by ``default=str`` is one string
    restart_reasons: Annotated[list[str], Meta(max_length=10_000)] | str | None = None
    has_guarded_code: bool | None = None
    recompile_reason: str | None = None
    num_graph_breaks: Int | None = None
    config_suppress_errors: bool | None = None
    is_forward: bool | None = None
    cudagraph_skip_reason: str | None = None


def metrics_or_none(text: str | None) -> dict[str, Any] | None:
    """A ``metrics.json``'s text as the dict its readers take (only the fields it may hold, each of its type;
    absent and null fields left out), or None when there is none or it is damaged."""
    if text is None or len(text) > MAX_METRICS_BYTES:
        return None
    m = decode_or_none(text, MetricsFile)
    if m is None:
        return None
    out: dict[str, Any] = msgspec.to_builtins(m)
    return out
