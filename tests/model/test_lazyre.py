"""``magi_format.lazyre.lazy_re``: a module-level pattern compiled at its first use (issue #21: the
headless start compiled ~80 patterns and used ~5), answering as ``re.compile`` would."""

from __future__ import annotations

import copy
import re

from magi_format.lazyre import lazy_re


def test_answers_as_the_compiled_pattern():
    src, flags = r"^(?P<k>\w+)=(\d+)$", re.M
    lazy, real = lazy_re(src, flags), re.compile(src, flags)
    text = "a=1\nb=22\nc=x"
    assert "compiled" not in vars(lazy) and "match" not in vars(lazy)  # nothing compiled yet
    assert lazy.search(text).group("k") == real.search(text).group("k") == "a"
    assert "match" in vars(lazy)  # the first use put the compiled pattern's methods on it
    assert lazy.findall(text) == real.findall(text)
    assert lazy.sub(r"\g<k>:\2", text) == real.sub(r"\g<k>:\2", text)
    assert lazy.subn("-", text) == real.subn("-", text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.split(text) == real.split(text) and lazy.fullmatch("a=1").groups() == ("a", "1")
    assert lazy.fullmatch("a=1 ") is None
    assert (lazy.pattern, lazy.flags, lazy.groups, lazy.groupindex) == \
        (real.pattern, real.flags, real.groups, real.groupindex)


def test_bytes_and_errors_at_first_use():
    assert lazy_re(rb"e[-+]?\d").search(b"1e-5").group() == b"e-5"
    bad = lazy_re("(unclosed")  # made, not compiled: the error comes at the first use, as a re.error
    try:
        bad.match("x")
    except re.error as exc:
        assert "missing )" in str(exc)
    else:
        raise AssertionError("an invalid pattern matched")


def test_a_copy_and_an_unknown_attribute():
    lazy = lazy_re(r"\d+")
    assert copy.copy(lazy).match("12").group() == "12"
    try:
        lazy.no_such_thing  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("an unknown attribute answered")
