"""Property tests (hypothesis) for the TORCH_TRACE reader on the shapes logs come in: a real log's
records in any order, each with CRLF or not, blank lines, a byte-order mark, cut at any byte, read in
any slices. No bug of ours surfaces (``cannot map record``), and the same bytes read in slices give
the same events as read at once."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magi_tui.model.sources.torchtrace.reader import TraceLogReader
from tests.torchtrace.logkit import RECORDED, records

RECS = records(RECORDED / "jit_reset.log")[:60] + records(RECORDED / "export.log")[-6:]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _shape(rec: bytes, crlf: bool, blank: bool) -> bytes:
    if blank:
        rec = rec.replace(b"\n\t\n", b"\n\n", 1)  # an editor stripped a blank payload line's tab
    return rec.replace(b"\n", b"\r\n") if crlf else rec


logs = st.lists(st.tuples(st.sampled_from(RECS), st.booleans(), st.booleans()), min_size=1, max_size=25).map(
    lambda xs: b"".join(_shape(*x) for x in xs))


def _read(path: Path, slices: list[int]) -> tuple[list, list[str]]:
    r = TraceLogReader(path)
    events, problems = [], []
    for n in slices + [None]:
        res = r.read(n)
        events += [(e.name, e.line_no) for e in res.events]
        problems += [m.reason for m in res.malformed]
    while r.more:
        res = r.read()
        events += [(e.name, e.line_no) for e in res.events]
        problems += [m.reason for m in res.malformed]
    return events, problems


@SETTINGS
@given(data=logs, bom=st.booleans(), cut=st.integers(0, 100), slices=st.lists(st.integers(1, 5000), max_size=6))
def test_any_shape_reads_without_a_bug_and_slices_agree(data, bom, cut, slices):
    data = (b"\xef\xbb\xbf" if bom else b"") + data
    data = data[: max(1, len(data) * cut // 100)] if cut < 100 else data
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.log"
        path.write_bytes(data)
        old = time.time() - 60
        os.utime(path, (old, old))
        whole, problems = _read(path, [])
        assert not [p for p in problems if "cannot map" in p or "cannot read" in p], problems
        assert _read(path, slices)[0] == whole
