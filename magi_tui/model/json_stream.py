"""The headless commands' JSON, written a piece at a time.

``triage --json`` on a TORCH_TRACE log of many frames would hold a dict per frame and the whole encoded
text if its document were built whole and encoded whole, on top of the analysis it is made from. Here a big array is a :class:`Lazy` (its items are made while it is written) or is encoded a
batch of items at a time, and :func:`write_json` hands each piece to the output as it comes: the
whole document and the whole text never exist at once.

The text is byte for byte :func:`encode` of the whole document (``json.dumps(obj, indent=2,
ensure_ascii=False)`` with what :func:`~magi_format.text.literal` would rewrite written ``\\uXXXX``, by
msgspec): each piece is :func:`encode` of a part, re-indented to its depth (the indent's newlines are
the only raw newlines in JSON text, and every rewrite is per token or per character). One difference,
on hostile input only: where msgspec refuses a value (a lone surrogate, a type it does not know), the
stdlib encoder writes that piece, not the whole document, so a non-finite float elsewhere stays
``null``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from magi_format.lazyre import lazy_re
from magi_format.text import json_literal

__all__ = ["Lazy", "encode", "iter_json", "materialize", "write_json"]

#: items per encoded piece of a big array or object (a triage frame is ~500 bytes of text)
CHUNK = 1000

#: digits and "." read as "0" (``bytes.translate``), so that an exponent after a digit or "." is
#: :data:`_EXPONENT_AT_0`, a pattern that starts with two literals: one on ``e`` stopped at every "e" of the
#: text (a triage frame row has ~36; 13.8M instructions a batch of 1000 rows, 6.1M this way, callgrind)
_DIGITS_AS_0 = bytes.maketrans(b"123456789.", b"0000000000")
_EXPONENT_AT_0 = lazy_re(rb"0e[-+]?0")
#: a float msgspec spells otherwise than ``repr`` (``0.000051`` / ``1e-7`` for ``5.1e-05`` / ``1e-07``),
#: as it follows a ``:``, ``,`` or ``[`` in compact JSON; a string may hold the same bytes (see below)
_TOKEN = lazy_re(rb'"(?:[^"\\]|\\.)*"|(?<=[:,\[])(-?(?:0\.0000\d*|\d[\d.]*e[-+]?\d+))(?=[,\]}])')


class Lazy:
    """A JSON array whose items are made one at a time while it is written (each a plain JSON value:
    dicts, lists, str, numbers, bools, None). Iterable once; :func:`materialize` makes it a list."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[Any]) -> None:
        self._items = items

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)


def _has_lazy(obj: Any) -> bool:
    if isinstance(obj, Lazy):
        return True
    if isinstance(obj, dict):
        return any(isinstance(v, (Lazy, dict, list)) and _has_lazy(v) for v in obj.values())
    if isinstance(obj, list):
        return any(isinstance(v, (Lazy, dict, list)) and _has_lazy(v) for v in obj)
    return False


def materialize(obj: Any) -> Any:
    """``obj`` with every :class:`Lazy` (in dicts and lists, at any depth) made a list: the document
    :func:`write_json` writes, as one value (``obj`` itself when it holds none)."""
    if isinstance(obj, Lazy):
        return list(obj)
    if not _has_lazy(obj):
        return obj
    if isinstance(obj, dict):
        return {k: materialize(v) for k, v in obj.items()}
    return [materialize(x) for x in obj]


def _float_candidate(raw: bytes) -> bool:
    """Whether ``raw`` may hold a float msgspec spells otherwise than Python (``0.00001`` for ``1e-05``,
    ``1e16`` for ``1e+16``): what :data:`_TOKEN` rewrites has ``0.0000`` in it or an ``e`` between a digit
    (or ``.``) and an exponent. A superset (the same bytes in a string count, and an ``e`` before a ``.``):
    ``_TOKEN`` decides."""
    if b"0.0000" in raw:
        return True
    return _EXPONENT_AT_0.search(raw.translate(_DIGITS_AS_0)) is not None


def _py_float(m: re.Match) -> bytes:
    return m.group(0) if m.group(1) is None else repr(float(m.group(1))).encode()


def encode(obj: Any) -> bytes | str:
    """JSON with non-ASCII kept readable, but no raw control character reaching the terminal: bytes
    when it is plain ASCII with nothing to escape (a big text never becomes a str), else the str.

    Byte for byte ``json.dumps(obj, indent=2, ensure_ascii=False)``, written by msgspec (a tenth of
    the stdlib encoder's time on a big triage); floats it spells otherwise are rewritten as Python
    spells them (strings skipped). A float that is not finite (a hostile file's durations adding up
    past 1e308) is written ``null``, valid JSON where the stdlib wrote ``Infinity``. What msgspec
    refuses (a lone surrogate from a hostile line, a type it does not know) goes through the stdlib
    encoder."""
    import msgspec

    if type(obj) is float:  # alone, with no ``:``, ``,`` or ``[`` before it for the rewrite to see
        return (repr(obj) if math.isfinite(obj) else "null").encode("ascii")
    try:
        raw = msgspec.json.encode(obj)
        if _float_candidate(raw):
            raw = _TOKEN.sub(_py_float, raw)
        out = msgspec.json.format(raw, indent=2)
        del raw
        if out.isascii() and b"\x7f" not in out:  # msgspec escapes C0; the newlines are the indent's
            return out
        text = out.decode("utf-8")
    except (TypeError, ValueError, OverflowError):  # UnicodeEncodeError is a ValueError
        import json  # here: only what msgspec refuses needs it

        text = json.dumps(obj, indent=2, ensure_ascii=False)
    return json_literal(text)


def _at(piece: bytes | str, depth: int) -> bytes | str:
    """``piece`` (a value encoded at the top) indented as a value ``depth`` levels down."""
    if not depth:
        return piece
    if isinstance(piece, bytes):
        return piece.replace(b"\n", b"\n" + b"  " * depth)
    return piece.replace("\n", "\n" + "  " * depth)


def _walks(obj: Any) -> bool:
    """Whether ``obj`` is written in pieces: a :class:`Lazy`, an array or object of more than
    :data:`CHUNK` items, or one holding such a thing (through objects, and small arrays' objects)."""
    if isinstance(obj, Lazy):
        return True
    if isinstance(obj, dict):
        if not obj or not all(type(k) is str for k in obj):  # other keys: the encoders' own rules
            return False
        return len(obj) > CHUNK or any(isinstance(v, (Lazy, dict, list)) and _walks(v) for v in obj.values())
    if isinstance(obj, list):
        return len(obj) > CHUNK or any(isinstance(v, (Lazy, dict, list)) and _walks(v) for v in obj)
    return False


def _batches(items: Iterable[Any]) -> Iterator[list[Any]]:
    it = iter(items)
    while batch := list(itertools.islice(it, CHUNK)):
        yield batch


def _inner(piece: bytes | str, depth: int) -> bytes | str:
    """A batch's encoded array or object, re-indented to ``depth``, without its brackets and closing
    line: ``\\n<indent>item,\\n<indent>item``."""
    piece = _at(piece, depth)
    return piece[1:len(piece) - 2 - 2 * depth]


def iter_json(obj: Any, depth: int = 0) -> Iterator[bytes | str]:
    """The pieces of ``encode(materialize(obj))`` at ``depth``, in order; each bytes (ASCII) or str."""
    if not _walks(obj):  # holds no Lazy, unless under an object with other keys than str
        yield _at(encode(materialize(obj) if isinstance(obj, dict) else obj), depth)
        return
    close = "\n" + "  " * depth
    if isinstance(obj, dict):
        if len(obj) > CHUNK and not any(isinstance(v, (Lazy, dict, list)) and _walks(v) for v in obj.values()):
            yield from _joined((_inner(encode(dict(b)), depth) for b in _batches(obj.items())), "{", close + "}")
            return
        pad = "\n" + "  " * (depth + 1)
        for i, (k, v) in enumerate(obj.items()):
            key = encode(k)
            yield ("{" if i == 0 else ",") + pad + (key.decode("ascii") if isinstance(key, bytes) else key) + ": "
            yield from iter_json(v, depth + 1)
        yield close + "}"
        return
    if isinstance(obj, list) and not any(isinstance(v, (dict, list, Lazy)) and _walks(v) for v in obj):
        yield from _joined((_inner(encode(b), depth) for b in _batches(obj)), "[", close + "]")
        return
    if isinstance(obj, list):
        pad = "\n" + "  " * (depth + 1)
        for i, v in enumerate(obj):
            yield ("[" if i == 0 else ",") + pad
            yield from iter_json(v, depth + 1)
        yield close + "]"
        return
    # a Lazy: its items are plain values, encoded a batch at a time
    yield from _joined((_inner(encode(b), depth) for b in _batches(obj)), "[", close + "]")


def _joined(inners: Iterator[bytes | str], open_: str, close: str) -> Iterator[bytes | str]:
    """``open_`` + the batches' insides joined by ``,`` + ``close``; ``[]`` / ``{}`` when there is none."""
    first = True
    for inner in inners:
        yield open_ if first else ","
        yield inner
        first = False
    yield open_ + open_.translate({ord("["): "]", ord("{"): "}"}) if first else close


def write_json(obj: Any, write_bytes: Callable[[bytes], Any], write_text: Callable[[str], Any]) -> None:
    """Write ``encode(materialize(obj))`` and a newline a piece at a time: ASCII pieces (joined while they
    are small) through ``write_bytes``, the others (non-ASCII kept readable) through ``write_text``."""
    pending: list[bytes] = []
    size = 0
    for piece in itertools.chain(iter_json(obj), ("\n",)):
        if type(piece) is str and piece.isascii():
            piece = piece.encode("ascii")
        if type(piece) is bytes:
            pending.append(piece)
            size += len(piece)
            if size < 1 << 16:
                continue
        if pending:
            write_bytes(b"".join(pending))
            pending.clear()
            size = 0
        if type(piece) is str:
            write_text(piece)
    if pending:
        write_bytes(b"".join(pending))
