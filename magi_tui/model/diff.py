"""Line diff of two texts, laid out for a side-by-side or unified view.

``difflib.SequenceMatcher`` gives the opcodes; rows pair removed and added lines of a ``replace`` so
the view can mark the changed parts inside a line (computed lazily per row, since only visible rows
need them). Long unchanged stretches are folded to ``context`` lines around each change.

:func:`read_side` reads one side for the diff: opened once, checked (inside the run, a regular file),
read in a few block reads, each line bounded (a 1 GB one-line file costs a few KB), at most
:data:`MAX_DIFF_LINES` lines; a problem comes back as text, never raised. Run it in a worker.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

MAX_DIFF_LINES = 200_000


@dataclass
class Row:
    kind: str                 # equal | replace | delete | insert | fold
    left_no: int | None       # 1-based line numbers, None where a side has no line
    left: str
    right_no: int | None
    right: str
    folded: int = 0           # fold rows: how many equal lines are hidden
    _spans: tuple | None = None

    def spans(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Changed character ranges within ``left`` and ``right`` (replace rows only)."""
        if self._spans is None:
            if self.kind != "replace":
                self._spans = ([], [])
            else:
                self._spans = intraline(self.left, self.right)
        return self._spans


@dataclass
class Diff:
    rows: list[Row] = field(default_factory=list)            # side by side
    unified: list[Row] = field(default_factory=list)         # one line per row
    hunks: list[int] = field(default_factory=list)           # row index of each hunk start
    unified_hunks: list[int] = field(default_factory=list)
    added: int = 0
    removed: int = 0

    @property
    def identical(self) -> bool:
        return self.added == 0 and self.removed == 0


def intraline(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character ranges that differ between two versions of a line."""
    if len(a) > 2000 or len(b) > 2000:
        return ([(0, len(a))], [(0, len(b))])
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    left, right = [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "equal":
            if i2 > i1:
                left.append((i1, i2))
            if j2 > j1:
                right.append((j1, j2))
    return left, right


def compute_diff(a: Sequence[str], b: Sequence[str], context: int = 3) -> Diff:
    a = list(a)
    b = list(b)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=len(a) + len(b) > 40000)
    d = Diff()
    codes = sm.get_opcodes()
    if all(c[0] == "equal" for c in codes):  # identical: show it all, nothing to fold around
        for i in range(len(a)):
            _eq(d, a, i, i)
        return d
    for n, (tag, i1, i2, j1, j2) in enumerate(codes):
        if tag == "equal":
            size = i2 - i1
            head = context if n > 0 else 0
            tail = context if n < len(codes) - 1 else 0
            if size > head + tail + 1:
                for k in range(head):
                    _eq(d, a, i1 + k, j1 + k)
                fold = Row("fold", None, "", None, "", folded=size - head - tail)
                d.rows.append(fold)
                d.unified.append(fold)
                for k in range(size - tail, size):
                    _eq(d, a, i1 + k, j1 + k)
            else:
                for k in range(size):
                    _eq(d, a, i1 + k, j1 + k)
            continue
        d.hunks.append(len(d.rows))
        d.unified_hunks.append(len(d.unified))
        d.removed += i2 - i1
        d.added += j2 - j1
        pairs = max(i2 - i1, j2 - j1)
        for k in range(pairs):
            li = i1 + k if i1 + k < i2 else None
            rj = j1 + k if j1 + k < j2 else None
            kind = "replace" if li is not None and rj is not None else ("delete" if li is not None else "insert")
            d.rows.append(Row(kind, None if li is None else li + 1, a[li] if li is not None else "",
                              None if rj is None else rj + 1, b[rj] if rj is not None else ""))
        for i in range(i1, i2):
            d.unified.append(Row("delete", i + 1, a[i], None, ""))
        for j in range(j1, j2):
            d.unified.append(Row("insert", None, "", j + 1, b[j]))
    return d


def _eq(d: Diff, a: list[str], i: int, j: int) -> None:
    row = Row("equal", i + 1, a[i], j + 1, a[i])
    d.rows.append(row)
    d.unified.append(row)


def read_side(path: Path | str, root: Path | str | None = None,
              max_lines: int = MAX_DIFF_LINES) -> tuple[list[str], str | None]:
    """``(lines, problem)``: one side of a diff, read once and bounded (see the module doc)."""
    from magi_tui.model.textfile import TextFile

    tf = TextFile(path, root=root)
    try:
        if tf.error:
            return [], tf.error
        return tf.all_lines(max_lines), None
    finally:
        tf.close()


def diff_files(left: Path | str, right: Path | str, *, left_root: Path | str | None = None,
               right_root: Path | str | None = None) -> tuple[Diff | None, str | None]:
    """``(diff, None)`` of two files, or ``(None, problem)`` when a side cannot be read."""
    a, pa = read_side(left, left_root)
    if pa:
        return None, pa
    b, pb = read_side(right, right_root)
    if pb:
        return None, pb
    return compute_diff(a, b), None
