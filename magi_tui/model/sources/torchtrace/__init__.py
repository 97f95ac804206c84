"""TORCH_TRACE logs (``TORCH_TRACE=<dir>``: ``dedicated_log_torch_trace_[rank_<N>_]<random>.log``) as runs.

The rank of a log: torch names the file ``dedicated_log_torch_trace_rank_<N>_<random>.log`` when
``torch.distributed`` is initialised at its first record (``LazyTraceHandler``: ``tempfile.mkstemp``, whose
random part may itself hold ``_``), and writes ``"rank": N`` into every record's metadata; a log renamed
by hand or by a launcher is often ``..._rank_<N>.log``. The metadata wins where a record carries it (a copied
or renamed file keeps its true rank), else the file name (tlparse's ``--all-ranks-html`` reads the name only).
A process that compiled before ``init_process_group`` has a log named without a rank whose first records
carry none either: such a log is searched past its head (:func:`log_rank`).

A log is read like a run directory's ``timeline.jsonl`` — incrementally, tolerantly — and its records go
through the mapping the tracer uses too (``magi_format.torch_mapping.TraceMapper``), so a log and a
live-traced run of the same program give the same events. See :mod:`magi_tui.model.sources.torchtrace.reader`.

This module only *recognises* logs (cheap, imports nothing heavy): the reader imports the
mapping when a log is opened.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from magi_format.lazyre import lazy_re
from magi_format.runname import RunName

#: torch's file name (``LazyTraceHandler``: ``mkstemp`` with this prefix and ``.log``)
LOG_NAME_RE = lazy_re(r"^dedicated_log_torch_trace_(?:rank_(\d+)(?=[_.])|(?!rank_\d+[_.])).*\.log(?:\.gz)?$")
#: ``"rank": N`` in a record's metadata line (torch writes it on every record of a distributed run)
_META_RANK_RE = lazy_re(rb'[,{] *"rank": *(\d{1,9}) *[,}]')
#: bytes read from the head of a log for a rank in its metadata
_RANK_SNIFF_BYTES = 1 << 16
#: how a log compressed with gzip ends (opened directly: read as a stream, ``torchtrace.gzstream``)
GZ_SUFFIX = ".gz"
#: the glog prefix of a record line (TORCH_TRACE.md §1 "Line format")
GLOG_RE = re.compile(rb"^([VIWEC])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+) +(\d+) ([^\]\n]*):(\d+)\] ")
_SNIFF_BYTES = 4096

__all__ = ["LOG_NAME_RE", "GLOG_RE", "GZ_SUFFIX", "is_log_name", "is_trace_log", "log_rank", "log_run_name",
           "metadata_rank", "name_rank"]


def is_log_name(name: str) -> bool:
    """A file name torch gives a trace log."""
    return bool(LOG_NAME_RE.match(name))


def name_rank(name: str) -> int | None:
    """The rank in a trace log's file name (``..._rank_3.log``, ``..._rank_3_k2_x9.log``), else None."""
    m = LOG_NAME_RE.match(name)
    return int(m.group(1)) if m and m.group(1) is not None else None


def _open_regular(path: str | os.PathLike[str]) -> int | None:
    """A file descriptor of a regular file (a FIFO is not opened, so nothing blocks), else None."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        return None
    return os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))


def _line_rank(buf: bytes, start: int, end: int) -> int | None:
    """The ``rank`` of the record line ``buf[start:end]`` (a payload line, tab-indented, is none)."""
    line = buf[start:end]  # a slice: ``GLOG_RE``'s ``^`` holds at a string's start only
    m = GLOG_RE.match(line)
    if m is None:
        return None
    r = _META_RANK_RE.search(line, m.end())
    return int(r.group(1)) if r is not None else None


def _chunk_rank(buf: bytes) -> int | None:
    """The first record's ``rank`` among the whole lines of ``buf`` (found by its key, not line by line)."""
    i = buf.find(b'"rank":')
    while i >= 0:
        start = buf.rfind(b"\n", 0, i) + 1
        end = buf.find(b"\n", i)
        end = len(buf) if end < 0 else end
        r = _line_rank(buf, start, end)
        if r is not None:
            return r
        i = buf.find(b'"rank":', end)
    return None


def metadata_rank(path: str | os.PathLike[str], *, whole: bool = False,
                  limit: int = _RANK_SNIFF_BYTES) -> int | None:
    """The ``rank`` the records of a log carry in their metadata (a non-distributed run has none), searched
    in its first ``limit`` bytes (a ``.log.gz``: its first 64 KiB decompressed), or with ``whole`` in the
    whole log (a ``.log.gz`` decompressed as it is read). A process whose first record came before
    ``torch.distributed`` was initialised has a log named without a rank and its rank only in the records
    after ``init_process_group``, past the head when it compiled much before (a key search per MiB read).
    Never raises, never blocks (a FIFO is not opened)."""
    import zlib

    try:
        fd = _open_regular(path)
        if fd is None:
            return None
        try:
            gz = None
            carry = b""
            offset = 0
            while True:
                raw = os.pread(fd, _RANK_SNIFF_BYTES if offset == 0 else 1 << 20, offset)
                if offset == 0 and os.fspath(path).endswith(GZ_SUFFIX) and raw[:2] == b"\x1f\x8b":
                    gz = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    if not whole:  # the head alone: a gzip'ed log is decompressed only when it is read
                        return _chunk_rank(gz.decompress(raw, _RANK_SNIFF_BYTES))
                offset += len(raw)
                data = gz.decompress(raw) if gz is not None and raw else raw
                buf = carry + data
                more = bool(raw) and (whole or offset < limit)
                cut = buf.rfind(b"\n") + 1 if more else len(buf)
                r = _chunk_rank(buf[:cut])
                if r is not None or not more:
                    return r
                carry = buf[cut:]
        finally:
            os.close(fd)
    except (OSError, ValueError, TypeError, zlib.error):
        return None


#: bytes of a log named without a rank searched for one when it is found or opened (:func:`log_rank`)
NAMELESS_RANK_BYTES = 4 << 20


def log_rank(path: Path, *, whole: bool = False) -> int | None:
    """The rank of a log: from its records' metadata where they carry one (:func:`metadata_rank`), else
    from its file name. A log named with a rank has it in its first records (torch opened the file after
    ``init_process_group``): its head is read; one named without a rank is searched further (its first
    4 MiB, or ``whole``), since its process may have compiled before the group existed."""
    named = name_rank(path.name)
    r = metadata_rank(path, whole=whole, limit=_RANK_SNIFF_BYTES if named is not None else NAMELESS_RANK_BYTES)
    return r if r is not None else named


def log_run_name(path: Path) -> RunName:
    """A log's run name: no run id nor model index; the rank (:func:`log_rank`)."""
    return RunName(None, None, None, log_rank(path), None)


def _gunzip_head(data: bytes) -> bytes:
    """The first bytes a gzip stream's start decompresses to (as much as ``data`` holds)."""
    import zlib

    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, _SNIFF_BYTES)
    except zlib.error:
        return b""


def is_trace_log(path: str | os.PathLike[str]) -> bool:
    """A regular file named like a trace log (``.log`` or ``.log.gz``), or any regular file (gzip'ed or
    not) whose first line is a TORCH_TRACE
    record (``V1122 11:12:39.772000 5512 torch/...:2350] {...``), a byte-order mark before it allowed. Never raises, never blocks (a FIFO is
    not opened)."""
    try:
        p = Path(path)
        st = os.stat(p)
        if not stat.S_ISREG(st.st_mode):
            return False
        if is_log_name(p.name):
            return True
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            head = os.pread(fd, _SNIFF_BYTES, 0)
        finally:
            os.close(fd)
        if p.name.endswith(GZ_SUFFIX) and head[:2] == b"\x1f\x8b":
            head = _gunzip_head(head)
    except (OSError, ValueError, TypeError):
        return False
    head = head.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark, as an editor on Windows leaves it
    m = GLOG_RE.match(head)
    return m is not None and head[m.end():m.end() + 1] == b"{"
