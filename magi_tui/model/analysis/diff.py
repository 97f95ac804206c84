"""Line diff of two texts, laid out for a side-by-side or unified view.

:func:`opcodes` matches the lines; rows pair removed and added lines of a ``replace`` so
the view can mark the changed tokens inside a line (computed lazily per row, since only visible rows
need them; a unified ``delete`` / ``insert`` row points at its pair). Long unchanged stretches are folded
to ``context`` lines around each change.

The line matching anchors on lines that occur once on each side (patience diff) and runs
``difflib.SequenceMatcher`` only between anchors: on two 20,000-line graphs with scattered edits it is
several times faster than one ``SequenceMatcher`` over the whole files, with the same result there.

``normalise=True`` compares (and shows) each line with per-process noise masked
(:func:`magi_tui.model.analysis.guards.normalise_noise`: addresses, generated names, object ids, source line
numbers), so only real differences remain; the raw lines stay in :attr:`Diff.a` / :attr:`Diff.b` so the
view can switch without reading the files again.

:func:`read_side` reads one side for the diff: opened once, checked (inside the run, a regular file),
read in one read (up to :data:`FAST_READ_BYTES`, else in block reads), each line bounded (a 1 GB
one-line file costs a few KB), at most :data:`MAX_DIFF_LINES` lines; a problem comes back as text,
never raised. Run it in a worker.
"""

from __future__ import annotations

import difflib
import os
import re
from bisect import bisect_left
from collections import Counter
from itertools import compress, islice
from operator import eq, lt
from pathlib import Path
from typing import Iterable, Sequence

from magi_tui.model.analysis.guards import normalise_noise

MAX_DIFF_LINES = 200_000
#: a changed line's tokens are marked only when it is this similar (``SequenceMatcher.ratio`` of the
#: tokens) to the line it replaces; below, the lines are just different and the marker says so
MIN_PAIR_SIMILARITY = 0.4
_minus_one = (1).__rsub__  # x -> x - 1 at C speed


class Row:
    """One row of the view: a line of each side (side by side) or one line (unified)."""

    # a plain class (not a dataclass): this module is imported when ``d`` is first pressed
    __slots__ = ("kind", "left_no", "left", "right_no", "right", "folded", "_spans", "pair")

    def __init__(self, kind: str, left_no: int | None, left: str, right_no: int | None, right: str,
                 folded: int = 0, _spans: tuple | None = None, pair: Row | None = None) -> None:
        self.kind = kind            # equal | replace | delete | insert | fold
        self.left_no = left_no      # 1-based line numbers, None where a side has no line
        self.left = left
        self.right_no = right_no
        self.right = right
        self.folded = folded        # fold rows: how many equal lines are hidden
        self._spans = _spans
        #: unified rows of a changed line: the side-by-side ``replace`` row it belongs to (its spans)
        self.pair = pair

    def __repr__(self) -> str:
        return (f"Row({self.kind!r}, {self.left_no!r}, {self.left!r}, {self.right_no!r}, {self.right!r}"
                + (f", folded={self.folded}" if self.folded else "") + ")")

    def spans(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Changed character ranges within ``left`` and ``right`` (replace rows only)."""
        if self._spans is None:
            if self.kind != "replace":
                self._spans = ([], [])
            else:
                self._spans = intraline(self.left, self.right)
        return self._spans


class Diff:
    """The rows of both layouts, where the hunks start, the counts, and the lines as read."""

    __slots__ = ("rows", "unified", "hunks", "unified_hunks", "added", "removed", "a", "b", "normalised")

    def __init__(self, a: list[str] | None = None, b: list[str] | None = None, normalised: bool = False) -> None:
        self.rows: list[Row] = []             # side by side
        self.unified: list[Row] = []          # one line per row
        self.hunks: list[int] = []            # row index of each hunk start
        self.unified_hunks: list[int] = []
        self.added = 0
        self.removed = 0
        #: the lines as read (before any normalising), for recomputing without reading again
        self.a: list[str] = [] if a is None else a
        self.b: list[str] = [] if b is None else b
        self.normalised = normalised

    @property
    def identical(self) -> bool:
        return self.added == 0 and self.removed == 0

    @property
    def noise_only(self) -> bool:
        """Identical once normalised, though the raw lines differ."""
        return self.normalised and self.identical and self.a != self.b


#: a token of a line: an escape as the view shows it (``\x1b[31m``: a CSI sequence is one token, the
#: text after it another), a word or number, a run of spaces, or one other character
_TOKEN = (r"\\x1b\[[0-?]*[ -/]*[@-~]|\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}"
          r"|\w+|\s+|[^\w\s]")  # compiled on first use (re's cache), not when ``d`` imports this module


def default_normalise(path: str | os.PathLike[str]) -> bool:
    """Whether the noise toggle starts on for this file: guard trees (``guards.txt``) are mostly
    noise between two processes; graphs are shown as they are."""
    return str(path).replace("\\", "/").rsplit("/", 1)[-1] == "guards.txt"


def intraline(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character ranges of the tokens that differ between two versions of a line (whole tokens:
    ``num_users=1`` -> ``num_users=2`` marks ``1`` / ``2``, ``torch.float32`` -> ``torch.float64``
    marks ``float32`` / ``float64``)."""
    if len(a) > 2000 or len(b) > 2000:
        return ([(0, len(a))], [(0, len(b))])
    ta, tb = re.findall(_TOKEN, a), re.findall(_TOKEN, b)
    oa, ob = _offsets(ta), _offsets(tb)
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    left: list[tuple[int, int]] = []
    right: list[tuple[int, int]] = []
    if sm.ratio() < MIN_PAIR_SIMILARITY:  # two different lines side by side: nothing in common to set off
        return left, right
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "equal":
            if i2 > i1:
                left.append((oa[i1], oa[i2]))
            if j2 > j1:
                right.append((ob[j1], ob[j2]))
    return left, right


def _offsets(tokens: list[str]) -> list[int]:
    out = [0]
    for t in tokens:
        out.append(out[-1] + len(t))
    return out


def opcodes(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """``SequenceMatcher.get_opcodes()``-shaped opcodes of two line lists: common head and tail
    trimmed, lines unique on both sides matched as anchors (longest increasing run), and
    ``SequenceMatcher`` only on the gaps between anchors. A run of consecutive anchors becomes one
    ``equal`` op and a one-line-for-one-line gap a ``replace`` without a ``SequenceMatcher``, so the
    Python-level work is one step per anchor; the result is the same op for op."""
    n, m = len(a), len(b)
    if n == m and all(map(eq, a, b)):
        return [("equal", 0, n, 0, m)] if n else []
    lo = 0
    while lo < n and lo < m and a[lo] == b[lo]:
        lo += 1
    hi_a, hi_b = n, m
    while hi_a > lo and hi_b > lo and a[hi_a - 1] == b[hi_b - 1]:
        hi_a -= 1
        hi_b -= 1
    ops: list[tuple[str, int, int, int, int]] = []
    append = ops.append
    if lo:
        append(("equal", 0, lo, 0, lo))

    def gap(i1: int, i2: int, j1: int, j2: int) -> None:
        """The lines between two anchors (never empty on both sides)."""
        if i1 == i2:
            append(("insert", i1, i2, j1, j2))
        elif j1 == j2:
            append(("delete", i1, i2, j1, j2))
        elif i2 - i1 == 1 and j2 - j1 == 1 and a[i1] != b[j1]:
            append(("replace", i1, i2, j1, j2))
        else:
            big = (i2 - i1) + (j2 - j1) > 40000
            sm = difflib.SequenceMatcher(None, a[i1:i2], b[j1:j2], autojunk=big)
            for tag, x1, x2, y1, y2 in sm.get_opcodes():
                if tag == "equal" and ops and ops[-1][0] == "equal":
                    ops[-1] = ("equal", ops[-1][1], i1 + x2, ops[-1][3], j1 + y2)
                else:
                    append((tag, i1 + x1, i1 + x2, j1 + y1, j1 + y2))

    i, j = lo, lo          # where the next gap starts
    run_i = run_j = -1     # start of the current equal run of anchors (-1: none)
    for ai, bj in _anchors(a, b, lo, hi_a, hi_b):
        if ai == i and bj == j:   # right after the previous anchor (or the head): the run goes on
            if run_i < 0:
                run_i, run_j = ai, bj
        else:
            if run_i >= 0:
                _equal(ops, run_i, i, run_j, j)
            gap(i, ai, j, bj)
            run_i, run_j = ai, bj
        i, j = ai + 1, bj + 1
    if run_i >= 0:
        _equal(ops, run_i, i, run_j, j)
    if i < hi_a or j < hi_b:
        gap(i, hi_a, j, hi_b)
    if hi_a < n:
        _equal(ops, hi_a, n, hi_b, m)
    return ops


def _equal(ops: list[tuple[str, int, int, int, int]], i1: int, i2: int, j1: int, j2: int) -> None:
    """Append an ``equal`` op, merged into the previous one when that is ``equal`` too."""
    if ops and ops[-1][0] == "equal":
        ops[-1] = ("equal", ops[-1][1], i2, ops[-1][3], j2)
    else:
        ops.append(("equal", i1, i2, j1, j2))


def _anchors(a: Sequence[str], b: Sequence[str], lo: int, hi_a: int,
             hi_b: int) -> Iterable[tuple[int, int]]:
    """Pairs ``(i, j)`` of lines that occur once in ``a[lo:hi_a]`` and once in ``b[lo:hi_b]``, the
    longest run increasing on both sides (patience sorting), in order. The matching is done with
    dict / map / compress at C speed; the patience step runs only when some anchor moved."""
    if hi_a - lo < 2 or hi_b - lo < 2:
        return []
    sa, sb = a[lo:hi_a], b[lo:hi_b]
    where_a = dict(zip(sa, range(lo + 1, hi_a + 1)))  # 1-based (never falsy): each line's last place
    if len(where_a) != len(sa):  # some lines repeat: only those seen once anchor
        for line, c in Counter(sa).items():
            if c > 1:
                del where_a[line]
    found = list(map(where_a.get, sb))
    xs = list(filter(None, found))
    if len(xs) < 2 or all(map(lt, xs, islice(xs, 1, None))):  # in order (nothing moved, no line twice in b)
        return zip(map(_minus_one, xs), compress(range(lo, hi_b), found))
    if len(set(sb)) != len(sb):  # a line twice in b is no anchor either
        for line, c in Counter(sb).items():
            if c > 1:
                where_a.pop(line, None)
        found = list(map(where_a.get, sb))
        xs = list(filter(None, found))
        if len(xs) < 2 or all(map(lt, xs, islice(xs, 1, None))):
            return zip(map(_minus_one, xs), compress(range(lo, hi_b), found))
    ys = list(compress(range(lo, hi_b), found))
    # longest increasing subsequence of the a-positions (xs are in b order)
    tails: list[int] = []          # a-position ending the best run of each length
    tail_at: list[int] = []        # index into xs of that end
    back = [-1] * len(xs)
    for k, x in enumerate(xs):
        p = bisect_left(tails, x)
        if p == len(tails):
            tails.append(x)
            tail_at.append(k)
        else:
            tails[p] = x
            tail_at[p] = k
        back[k] = tail_at[p - 1] if p else -1
    out = []
    k = tail_at[-1]
    while k >= 0:
        out.append((xs[k] - 1, ys[k]))
        k = back[k]
    out.reverse()
    return out


def compute_diff(a: Sequence[str], b: Sequence[str], context: int = 3, *, normalise: bool = False) -> Diff:
    """The diff of ``a`` and ``b``."""
    return _compute_diff(a, b, context, normalise)


def _compute_diff(a: Sequence[str], b: Sequence[str], context: int, normalise: bool) -> Diff:
    raw_a, raw_b = list(a), list(b)
    if normalise:
        a = [normalise_noise(x) for x in raw_a]
        b = [normalise_noise(x) for x in raw_b]
    else:
        a, b = raw_a, raw_b
    d = Diff(a=raw_a, b=raw_b, normalised=normalise)
    codes = opcodes(a, b)
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
        first = len(d.rows)
        for k in range(pairs):
            li = i1 + k if i1 + k < i2 else None
            rj = j1 + k if j1 + k < j2 else None
            kind = "replace" if li is not None and rj is not None else ("delete" if li is not None else "insert")
            d.rows.append(Row(kind, None if li is None else li + 1, a[li] if li is not None else "",
                              None if rj is None else rj + 1, b[rj] if rj is not None else ""))
        both = min(i2 - i1, j2 - j1)  # the first ``both`` lines of each side are paired in place
        for k, i in enumerate(range(i1, i2)):
            d.unified.append(Row("delete", i + 1, a[i], None, "", pair=d.rows[first + k] if k < both else None))
        for k, j in enumerate(range(j1, j2)):
            d.unified.append(Row("insert", None, "", j + 1, b[j], pair=d.rows[first + k] if k < both else None))
    return d


def _eq(d: Diff, a: list[str], i: int, j: int) -> None:
    row = Row("equal", i + 1, a[i], j + 1, a[i])
    d.rows.append(row)
    d.unified.append(row)


#: a side up to this size is read in one go (decoded and split at C speed); a bigger one through
#: :class:`~magi_tui.model.sources.textfile.TextFile` (indexed, each line read bounded)
FAST_READ_BYTES = 32 << 20


def read_side(path: Path | str, root: Path | str | None = None,
              max_lines: int = MAX_DIFF_LINES) -> tuple[list[str], str | None]:
    """``(lines, problem)``: one side of a diff, read once and bounded (see the module doc)."""
    from magi_tui.model.sources import files as _files
    from magi_tui.model.sources.textfile import MAX_LINE_BYTES, MAX_LINE_CHARS, TextFile, _cut_note

    try:
        fd, st = _files.open_regular(path, root)
    except _files.FileProblem as exc:
        return [], str(exc)
    try:
        if st.st_size <= FAST_READ_BYTES:
            chunks, pos = [], 0
            while pos < st.st_size:
                buf = os.pread(fd, st.st_size - pos, pos)
                if not buf:
                    break  # the file shrank under us
                chunks.append(buf)
                pos += len(buf)
            text = b"".join(chunks).decode("utf-8", "replace")
            lines = text.split("\n")
            last_newline = len(lines) > 1 and lines[-1] == ""
            if last_newline:
                lines.pop()  # a final newline does not start another line
            del lines[max_lines:]
            long = bool(lines) and max(map(len, lines)) > MAX_LINE_CHARS
            if long or "\r" in text:  # as the file view shows them: one \r dropped, over-long lines cut
                last = len(lines) - 1
                for k, ln in enumerate(lines):
                    raw = ln
                    if ln.endswith("\r"):
                        ln = ln[:-1]
                    if len(ln) > MAX_LINE_CHARS:
                        nbytes = len(raw.encode("utf-8", "replace")) + (k < last or last_newline)
                        ln = ln[:MAX_LINE_CHARS] + (_cut_note(nbytes) if nbytes > MAX_LINE_BYTES else "…")
                    lines[k] = ln
            return lines, None
    except OSError as exc:
        return [], f"cannot read {_files.display_name(path)}: {exc.strerror or exc}"
    finally:
        os.close(fd)
    tf = TextFile(path, root=root)
    try:
        if tf.error:
            return [], tf.error
        return tf.all_lines(max_lines), None
    finally:
        tf.close()


def diff_files(left: Path | str, right: Path | str, *, left_root: Path | str | None = None,
               right_root: Path | str | None = None,
               normalise: bool | None = None) -> tuple[Diff | None, str | None]:
    """``(diff, None)`` of two files, or ``(None, problem)`` when a side cannot be read.
    ``normalise=None``: on for guard trees (:func:`default_normalise`)."""
    a, pa = read_side(left, left_root)
    if pa:
        return None, pa
    b, pb = read_side(right, right_root)
    if pb:
        return None, pb
    if normalise is None:
        normalise = default_normalise(left) and default_normalise(right)
    return compute_diff(a, b, normalise=normalise), None
