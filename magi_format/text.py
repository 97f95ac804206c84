"""Showing run-supplied text: literally, never obeyed; and the one duration format.

Every string that comes from a run (event names, compile ids, exception messages, file contents, a
traced program's output) goes through :func:`literal` before it reaches a terminal, a widget or
headless output. One function, one character set, wherever the string is shown:

* C0 controls (ESC, BEL, CR, BS, ...), DEL and C1 controls (``0x9b`` is a one-byte CSI) -> ``\\xNN``,
  so an ANSI/OSC sequence (colours, clearing, titles, OSC 52 clipboard writes) is text;
* bidirectional controls (U+202A-202E, U+2066-2069, U+200E/F, U+061C) and line/paragraph separators
  -> ``\\uXXXX``, so "Trojan Source" reordering is visible instead of obeyed;
* lone surrogates (legal in JSON as ``"\\ud800"``, unencodable on a terminal) -> ``\\uXXXX``.

``multiline=True`` keeps newlines and tabs (file contents, tracebacks); everything else is the same.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable

from magi_format.lazyre import lazy_re

_C0 = [c for c in range(0x20)]
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029]
_REST = "\\x7f-\\x9f" + "".join(f"\\u{c:04x}" for c in _BIDI) + "\\ud800-\\udfff"
_UNSAFE_LINE = lazy_re(f"[\\x00-\\x1f{_REST}]")
_UNSAFE_MULTI = lazy_re(f"[\\x00-\\x08\\x0b-\\x1f{_REST}]")  # keeps \\t and \\n
#: the characters :func:`literal` rewrites (single-line form), for tests and scanners
UNSAFE_CHARS = frozenset([*_C0, 0x7F, *range(0x80, 0xA0), *_BIDI, *range(0xD800, 0xE000)])


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def literal(text: object, limit: int | None = None, *, multiline: bool = False) -> str:
    """``text`` made safe to show: control, bidi and surrogate characters written as escapes.

    ``limit`` cuts the result to that many characters (ending in ``…``) before escaping, so a
    hostile megabyte-long name costs no more than its first ``limit`` characters.
    """
    s = text if type(text) is str else str(text)
    if limit is not None and len(s) > limit:
        s = s[: max(limit - 1, 0)] + "…"
    if s.isprintable():  # every character rewritten here is unprintable (tests/model/test_text_literal.py)
        return s
    pattern = _UNSAFE_MULTI if multiline else _UNSAFE_LINE
    if pattern.search(s) is None:
        return s
    return pattern.sub(_escape, s)


def u_escaped(text: str) -> str:
    """``text`` with every character :func:`literal` would rewrite (tabs and newlines kept) written as
    ``\\uXXXX``: what machine-read output (JSON, JUnit XML) shows instead of C0/C1 controls, DEL, bidi
    overrides and lone surrogates."""
    if _UNSAFE_MULTI.search(text) is None:
        return text
    return _UNSAFE_MULTI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_literal(dumped: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with every character :func:`literal` would
    rewrite written as a ``\\uXXXX`` escape (:func:`u_escaped`): still the same JSON value, safe on a
    terminal and encodable (a lone surrogate cannot be printed as UTF-8). JSON escapes C0 itself; the
    indent's newlines are JSON whitespace."""
    return u_escaped(dumped)


def is_literal(text: str, *, multiline: bool = False) -> bool:
    """Whether ``text`` has nothing :func:`literal` would rewrite."""
    if text.isprintable():
        return True
    return (_UNSAFE_MULTI if multiline else _UNSAFE_LINE).search(text) is None


def fmt_ms(ms: float | None) -> str:
    """A duration for people: ``69µs``, ``8.9ms``, ``27.41s``, ``2m05s``; ``-`` when unknown."""
    if ms is None or not isinstance(ms, (int, float)) or not math.isfinite(ms):
        return "-"
    if ms < 1 and round(ms * 1000) < 1000:  # 0.9996 ms is 1.0ms, not "1000µs"
        return f"{ms * 1000:.0f}µs"
    if ms < 1000:
        return f"{ms:.1f}ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f}s"
    m, s = divmod(int(ms / 1000), 60)
    return f"{m}m{s:02d}s"


def fmt_seconds(seconds: float | None) -> str:
    """:func:`fmt_ms` for a value in seconds."""
    if seconds is None or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        return "-"
    return fmt_ms(seconds * 1000)


def relative_time(seconds: float) -> str:
    """The timeline's ``relative_time`` field as the writer records it (FORMAT.md §7):
    ``"328.4ms"`` under a second, ``"17.93s"`` under a minute, else ``"2m5s"``."""
    if seconds < 1:
        return f"{seconds * 1000:.1f}ms"
    if seconds < 60:
        return f"{seconds:.2f}s"
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s}s"


def json_safe(value: Any) -> Any:
    """``value`` if JSON can hold it, else the same structure with what it cannot hold as ``repr``
    (what the tracer writes into an event's attributes, and what a log reader keeps of a record's)."""
    import json  # here: a headless start whose answer parses no JSON text need not import it

    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=repr))


_CONTAINERS = (dict, list, tuple)


@functools.cache
def _encoders() -> tuple[Callable[[Any], str], Callable[[Any], str]]:
    """The C encoder for one value, and for a map of scalars in one call (items joined the way
    ``indent=2`` joins them at the top level); made at the first use (``json``'s import is paid only then)."""
    import json

    return (json.JSONEncoder(default=str).encode,
            json.JSONEncoder(default=str, separators=(",\n  ", ": ")).encode)


def json_indented(obj: Any, *, default: Any = str, _pad: str = "") -> str:
    """``json.dumps(obj, indent=2, default=default)``, the same text, through the C encoder.

    The stdlib indents in pure Python, with closures that refer to each other: every call leaves a
    reference cycle (about 30 objects, ~3 KB) for the cycle collector. A bulk load holds the collector
    off and freezes what it read, so those cycles stayed for good: ~2.8 KB per compile of a
    TORCH_TRACE log (``metrics.json``), more than the compile's events. Keys that are not strings, and
    values the stdlib would pass to ``default`` as containers, take the stdlib's path."""
    t = type(obj)
    encode, encode_flat = _encoders()
    if default is not str:
        import json

        encode = json.JSONEncoder(default=default).encode
    if t is dict:
        if not obj:
            return "{}"
        if any(type(k) is not str for k in obj):
            import json

            return json.dumps(obj, indent=2, default=default).replace("\n", "\n" + _pad)
        if not _pad and default is str and not any(type(v) in _CONTAINERS for v in obj.values()):
            return "{\n  " + encode_flat(obj)[1:-1] + "\n}"
        inner = _pad + "  "
        return "{\n" + ",\n".join(f"{inner}{encode(k)}: {json_indented(v, default=default, _pad=inner)}"
                                  for k, v in obj.items()) + "\n" + _pad + "}"
    if t is list or t is tuple:
        if not obj:
            return "[]"
        inner = _pad + "  "
        return "[\n" + ",\n".join(inner + json_indented(v, default=default, _pad=inner) for v in obj) \
            + "\n" + _pad + "]"
    return encode(obj)
