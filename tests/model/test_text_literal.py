"""``literal`` answers an all-printable text at once, without its pattern (issue #21: compiling that
pattern, with the surrogate range in its class, was ~0.4 ms of every start). That is the same answer only
because every character it rewrites is unprintable to ``str.isprintable``: held here for every code point."""

from __future__ import annotations

import sys

from magi_format.text import UNSAFE_CHARS, is_literal, literal


def test_every_rewritten_character_is_unprintable():
    assert all(not chr(c).isprintable() for c in UNSAFE_CHARS)
    # and the other way: what literal leaves alone (single-line form) is exactly the rest
    for c in range(sys.maxunicode + 1):
        ch = chr(c)
        if ch.isprintable():
            assert literal(ch) == ch and is_literal(ch) and is_literal(ch, multiline=True)
        elif c in UNSAFE_CHARS:
            assert literal(ch) != ch and not is_literal(ch)


def test_unprintable_but_safe_and_mixed_texts():
    assert literal("a\u00a0b\u200bc") == "a\u00a0b\u200bc"  # NBSP, zero-width space: unprintable, not rewritten
    assert literal("x\u202ey\n", multiline=True) == "x\\u202ey\n"
    assert literal("tab\there") == "tab\\x09here" and literal("tab\there", multiline=True) == "tab\there"
    assert literal("é中文 ok") == "é中文 ok"
