"""``RunName`` and ``torchtext.Frame`` are plain classes (``dataclasses`` imports ``inspect``: ~5 ms of every
headless start, issue #21); they keep what the dataclasses gave: constructor, ``repr``, ``==``, ``hash`` /
frozen for ``RunName``, mutable and unhashable for ``Frame``."""

from __future__ import annotations

from pathlib import Path

import pytest

from magi_format.runname import RunName, parse_run_name
from magi_format.torchtext import Frame, parse_traceback_frames


def test_run_name_reads_and_compares_like_the_dataclass():
    n = parse_run_name(Path("/x/run_20261122_111900/model_1_TwoLayer_rank_3"))
    assert (n.run_id, n.model_index, n.tag, n.rank, n.label) == ("run_20261122_111900", 1, "TwoLayer", 3, "TwoLayer")
    same = RunName("run_20261122_111900", 1, "TwoLayer", 3, n.run_time)
    assert n == same and hash(n) == hash(same) and len({n, same}) == 1
    assert n != RunName("run_20261122_111900", 1, "TwoLayer", 4, n.run_time) and n != ("run_20261122_111900",)
    assert repr(RunName(None, None, "t", 0, None)) == \
        "RunName(run_id=None, model_index=None, tag='t', rank=0, run_time=None)"
    with pytest.raises(AttributeError):
        n.rank = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del n.tag


def test_frame_reads_and_compares_like_the_dataclass():
    frames = parse_traceback_frames('  File "a.py", line 3, in f\n    x = 1\n  File "b.py", line 9, in g\n')
    assert frames == [Frame("a.py", 3, "f", "x = 1"), Frame("b.py", 9, "g")]
    assert frames[0].where == "a.py:3" and frames[1].code is None
    frames[1].code = "y()"
    assert frames[1] == Frame("b.py", 9, "g", code="y()") and frames[1] != Frame("b.py", 9, "g")
    assert repr(Frame("a.py", 1)) == "Frame(filename='a.py', line=1, function=None, code=None)"
    with pytest.raises(TypeError):
        hash(frames[0])
