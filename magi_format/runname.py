"""Run directory naming: ``run_<ts>[_<n>]/model_<idx>[_<tag>]_rank_<r>`` (FORMAT.md §2, B1).

The tracer builds names with :func:`model_dir_name` / :func:`run_id_name`; the viewer reads them back
with :func:`parse_run_name`."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

MODEL_RE = re.compile(r"^model_(\d+)(?:_(.*))?_rank_(\d+)$")
RUN_RE = re.compile(r"^run_(\d{8}_\d{6})(?:_(\d+))?$")


class RunName:
    """What a run directory's name says. A plain frozen class, as ``@dataclass(frozen=True)`` made it
    (the same constructor, ``repr``, ``==`` and ``hash``): ``dataclasses`` imports ``inspect``, ~5 ms of
    every headless command's start (``triage --json`` on a small run is ~35 ms in all)."""

    __slots__ = ("run_id", "model_index", "tag", "rank", "run_time")
    run_id: str | None      # ``run_20261122_111900`` (None for a bare output root)
    model_index: int | None
    tag: str | None
    rank: int | None
    run_time: float | None  # the run id's local time as an epoch (second resolution)

    def __init__(self, run_id: str | None, model_index: int | None, tag: str | None, rank: int | None,
                 run_time: float | None) -> None:
        for k, v in zip(self.__slots__, (run_id, model_index, tag, rank, run_time)):
            object.__setattr__(self, k, v)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def _fields(self) -> tuple:
        return (self.run_id, self.model_index, self.tag, self.rank, self.run_time)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if other.__class__ is self.__class__ else NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (f"RunName(run_id={self.run_id!r}, model_index={self.model_index!r}, tag={self.tag!r}, "
                f"rank={self.rank!r}, run_time={self.run_time!r})")

    @property
    def label(self) -> str:
        """A short human label: the tag, else the dir name."""
        return self.tag or ""


def parse_run_name(path: Path) -> RunName:
    m = MODEL_RE.match(path.name)
    model_index = tag = rank = None
    parent = path
    if m:
        model_index, tag, rank = int(m.group(1)), m.group(2), int(m.group(3))
        parent = path.parent
    rm = RUN_RE.match(parent.name)
    run_id = parent.name if rm else None
    run_time = None
    if rm:
        try:
            t = rm.group(1)  # %Y%m%d_%H%M%S (by hand: strptime's import is ~1 ms of every start)
            run_time = datetime(int(t[0:4]), int(t[4:6]), int(t[6:8]), int(t[9:11]), int(t[11:13]),
                                int(t[13:15])).timestamp()
        except (ValueError, OverflowError):
            run_time = None
    return RunName(run_id, model_index, tag or None, rank, run_time)


def sanitize_label(label: str) -> str:
    """Labels go into directory names: keep ``[A-Za-z0-9_]``."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", label).strip("_") or "run"


def run_id_name(stamp: str, n: int = 0) -> str:
    """``run_20261122_111900`` (``stamp`` is ``%Y%m%d_%H%M%S``), ``run_20261122_111900_2`` for a clash."""
    return f"run_{stamp}" if n == 0 else f"run_{stamp}_{n}"


def model_dir_name(index: int, label: str, rank: int) -> str:
    """``model_1_TwoLayerTransformer_rank_0``."""
    return f"model_{index}_{sanitize_label(label)}_rank_{rank}"
