"""``parse_compile_id`` reads a plain ``fid/fcid`` without its regex (most ids of a big log); every id,
plain or not, is read as the regex reads it: the fast way changes no answer."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from magi_tui.model.analysis import frames as F


def _by_regex(cid: str) -> tuple[str, int, int] | None:
    if not cid:
        return None
    m = F._CID.match(cid.strip())
    if not m:
        return None
    return ((m.group("gen") or "") + (m.group("ca") or "") + m.group("fid"), int(m.group("fcid")),
            int(m.group("attempt") or 0))


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0129/_[]!R \n\u0663\u00b2x")), max_size=10))
def test_parse_compile_id_is_the_regexs(cid):
    assert F.parse_compile_id.__wrapped__(cid) == _by_regex(cid)


def test_plain_and_other_ids():
    assert F.parse_compile_id("12/3") == ("12", 3, 0)
    assert F.parse_compile_id("!2/0/1_1") == ("!2/0", 1, 1)
    assert F.parse_compile_id("R1/0/0") == ("R1/0", 0, 0)
    assert F.parse_compile_id("1/\u00b2") is None  # a superscript is a digit, not a decimal: \d refuses it
