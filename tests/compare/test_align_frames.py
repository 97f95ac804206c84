"""Frames of two runs are paired one per code object (``compare.sides.align_frames``): by name, file and
line; then by a name unique on both sides; then same-named frames in order. Checked against the rule
written out plainly, on random frame lists with repeated names, lines and files, and on a case by hand."""

from __future__ import annotations

import random
from collections import Counter

from magi_tui.model.analysis.checks.results import FrameRow
from magi_tui.model.outputs.compare.sides import align_frames


def _rows(rng: random.Random, n: int, tag: str) -> list[FrameRow]:
    out = []
    for i in range(n):
        name = rng.choice(["forward", "fn", "step", f"uniq_{tag}_{i}", "loss"])
        file = rng.choice([None, "/a/model.py", "/b/model.py", "train.py"])
        line = rng.choice([None, 10, 20, 30]) if file else None
        out.append(FrameRow(frame=f"{name} {i}", key=str(i), name=name, file=file, line=line))
    return out


def _by_the_rule(a: list[FrameRow], b: list[FrameRow]) -> list[tuple]:
    """The pairing rule, one step at a time, with plain lists (what the function must equal)."""
    left, right, pairs = list(a), list(b), []

    def take(keyf) -> None:
        for fa in list(left):
            k = keyf(fa)
            if k is None:
                continue
            fb = next((r for r in right if keyf(r) == k), None)
            if fb is not None:
                pairs.append((fa, fb))
                left[:] = [x for x in left if x is not fa]
                right[:] = [x for x in right if x is not fb]

    take(lambda r: (r.name, r.file.rsplit("/", 1)[-1], r.line) if r.file and r.line is not None else None)
    na, nb = Counter(r.name for r in left), Counter(r.name for r in right)
    take(lambda r: (r.name,) if na[r.name] == 1 and nb[r.name] == 1 else None)
    take(lambda r: (r.name,))
    pairs += [(fa, None) for fa in left] + [(None, fb) for fb in right]
    pos_a = {id(r): i for i, r in enumerate(a)}
    pos_b = {id(r): i for i, r in enumerate(b)}
    big = len(a) + len(b)
    pairs.sort(key=lambda p: (pos_a.get(id(p[0]), big), pos_b.get(id(p[1]), big)))
    return [(id(x) if x is not None else None, id(y) if y is not None else None) for x, y in pairs]


def _ids(pairs: list[tuple]) -> list[tuple]:
    return [(id(x) if x is not None else None, id(y) if y is not None else None) for x, y in pairs]


def test_pairs_follow_the_rule_on_random_frames():
    rng = random.Random(7)
    for trial in range(200):
        a, b = _rows(rng, rng.randint(0, 25), "a"), _rows(rng, rng.randint(0, 25), "b")
        got = align_frames(a, b)
        assert _ids(got) == _by_the_rule(a, b), trial
        assert sorted(id(x) for x, _ in got if x is not None) == sorted(map(id, a))  # each frame once
        assert sorted(id(y) for _, y in got if y is not None) == sorted(map(id, b))


def test_same_named_frames_pair_in_order_and_the_rest_stay_alone():
    a = [FrameRow("f", "0", "forward", "/x/m.py", 10), FrameRow("g", "1", "forward"), FrameRow("h", "2", "only_a")]
    b = [FrameRow("g", "0", "forward"), FrameRow("f", "1", "forward", "/y/m.py", 10), FrameRow("k", "2", "only_b")]
    got = [(x.key if x else None, y.key if y else None) for x, y in align_frames(a, b)]
    # forward at m.py:10 pairs across folders (file name and line); the other forward pairs by name
    assert got == [("0", "1"), ("1", "0"), ("2", None), (None, "2")]
