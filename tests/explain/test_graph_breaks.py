"""Graph breaks keep torch's whole explanation and every hint, and say whether the break is in the user's
code or in a library (then with the user's call site), from the tracer and from a TORCH_TRACE log alike
(issue 20.4, 20.5)."""

from __future__ import annotations

import pytest

from tests.explain.realrun import PROGRAMS, triage
from tests.explain.realrun import both as run_both

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.slow]
PROGRAM = PROGRAMS / "breaks.py"


def line_of(needle: str) -> int:
    return next(i for i, ln in enumerate(PROGRAM.read_text().splitlines(), 1) if needle in ln)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    base = tmp_path_factory.mktemp("breaks")
    run, log = run_both("breaks.py", base)
    return triage(run)[1], triage(log)[1]


def by_id(j: dict, gb_id: str) -> dict:
    return next(b for b in j["graph_breaks"] if b["gb_id"] == gb_id)


def test_data_dependent_branch_keeps_the_whole_explanation_and_every_hint(both):
    for j in both:
        b = by_id(j, "GB0170")
        assert b["explanation"].startswith("Detected data-dependent branching")
        assert "The branch condition involves a tensor computed as follows:" in b["explanation"]
        assert "\n\n" in b["explanation"]  # torch's blank line kept
        assert len(b["hints"]) == 3 and b["hints"][-1] == "Use `torch.cond` to express dynamic control flow."
        assert b["in_user_code"] is True
        assert b["call_site"]["line"] == b["user_frame"]["line"] == line_of("if x.sum() > 0:")
    assert by_id(both[0], "GB0170")["hints"] == by_id(both[1], "GB0170")["hints"]
    assert by_id(both[0], "GB0170")["explanation"] == by_id(both[1], "GB0170")["explanation"]


def test_break_inside_a_library_names_the_library_frame_and_the_users_call_site(both):
    for j in both:
        b = by_id(j, "GB0059")  # print
        assert b["in_user_code"] is False
        assert b["user_frame"]["file"].endswith("normlib.py") and b["user_frame"]["function"] == "normalize"
        site = b["call_site"]
        assert (site["file"], site["line"], site["function"]) == (str(PROGRAM), line_of("return normalize(x)"),
                                                                   "step")
        assert site["source_line"].startswith("return normalize(x) + 1")
