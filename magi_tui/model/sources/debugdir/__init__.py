"""``TORCH_COMPILE_DEBUG=1`` output as runs.

torch writes ``torch_compile_debug/run_<date>-pid_<pid>/`` with ``torchdynamo/debug.log`` and
``torchinductor/<model>__<aot id>_<inference|forward|backward>_<n>.<k>/`` — one folder per graph Inductor
compiled, holding ``fx_graph_readable.py``, ``fx_graph_runnable.py``, ``fx_graph_transformed.py``,
``ir_pre_fusion.txt``, ``ir_post_fusion.txt``, ``output_code.py`` (torch 2.13; ``.py`` for the IR files
is accepted too). Such a ``run_*`` directory is one run; each model folder is one compile, its files the
events of that compile in pipeline order (:mod:`magi_tui.model.sources.debugdir.reader`).

This module only *recognises* debug dirs (cheap, stat-only, never follows a link).
"""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

from magi_format.lazyre import lazy_re
from magi_format.runname import RunName

DYNAMO_DIR = "torchdynamo"
INDUCTOR_DIR = "torchinductor"
MARKERS = (DYNAMO_DIR, INDUCTOR_DIR)
#: torch's run folder name (``torch._dynamo.utils.get_debug_dir``)
RUN_RE = lazy_re(r"^run_(\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d_\d+)-pid_(\d+)$")
#: the label ``runs`` shows for a debug dir
LABEL = "TORCH_COMPILE_DEBUG"

#: what a debug dir cannot know (it holds Inductor's files, not Dynamo's decisions): shown as "not recorded
#: here", never as a zero
NOT_RECORDED = frozenset({"graph_breaks", "recompiles", "restarts", "cache"})
_LOG_PID = lazy_re(rb"^[VIWEC]\d{4} [\d:.]+ (\d+) ")

__all__ = ["MARKERS", "NOT_RECORDED", "is_debug_run", "debug_run_root", "debug_run_name", "trace_log_of"]


def trace_log_of(run_root: Path) -> Path | None:
    """The TORCH_TRACE log torch wrote beside a debug run (``torch_compile_debug/tlparse/*.log``, the same
    process: its records carry the run folder's pid), which records what the folder cannot (graph breaks,
    recompiles, cache hits); None when there is none. Regular files only, first line only."""
    m = RUN_RE.match(run_root.name)
    folder = run_root.parent / "tlparse"
    if not m or not _is_real_dir(folder):
        return None
    pid = m.group(2).encode()
    try:
        names = sorted(os.listdir(folder))[:200]
    except OSError:
        return None
    for name in names:
        f = folder / name
        try:
            if not name.endswith(".log") or not stat.S_ISREG(os.lstat(f).st_mode):
                continue
            with open(f, "rb") as fh:
                head = fh.readline(4096)
        except OSError:
            continue
        lm = _LOG_PID.match(head)
        if lm and lm.group(1) == pid:
            return f
    return None


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_debug_run(path: str | os.PathLike[str]) -> bool:
    """A directory holding ``torchinductor/`` or ``torchdynamo/`` (real folders, not links; the directory
    itself may be a link a user typed — the walk in discovery never follows one)."""
    p = Path(path)
    try:
        if not stat.S_ISDIR(os.stat(p).st_mode):
            return False
    except (OSError, ValueError):
        return False
    return any(_is_real_dir(p / m) for m in MARKERS)


def debug_run_root(path: Path) -> Path | None:
    """The debug run a path is in or under (``run_*/torchinductor/<model>/output_code.py`` -> ``run_*``),
    else None."""
    for cand in [path, *list(path.parents)[:3]]:
        if cand.name in MARKERS and is_debug_run(cand.parent):
            return cand.parent
    return path if is_debug_run(path) else None


def debug_run_name(path: Path) -> RunName:
    """``run_2026_11_23_07_28_03_907733-pid_4939``: the run id and its local time; labelled as a debug dir."""
    m = RUN_RE.match(path.name)
    when = None
    if m:
        try:
            when = datetime.strptime(m.group(1), "%Y_%m_%d_%H_%M_%S_%f").timestamp()
        except ValueError:
            when = None
    return RunName(path.name if m else None, None, LABEL, None, when)
