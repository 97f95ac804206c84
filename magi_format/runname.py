"""Run directory naming: ``run_<ts>[_<n>]/model_<idx>[_<tag>]_rank_<r>[_<topology>]`` (FORMAT.md §2, B1).

MagiCompiler after April 2026 ends a model's folder with its parallel topology (``config.py``'s
``model_rank_dir_name``): ``MAGI_COMPILE_TOPOLOGY_KEY`` when the host framework sets it (``ep6_cp2_dp1``),
else ``ws<world size>`` (``model_0_rank_0_ws1``). The older ``…_rank_<r>`` form has none. Tags are verbatim
(``_`` and digits allowed, even ``_rank_<n>``), so a name is parsed from the right: the last ``_rank_<r>``
is the rank, what follows it the topology.

The tracer builds names with :func:`model_dir_name` / :func:`run_id_name`; the viewer reads them back
with :func:`parse_run_name`."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

#: the tag is greedy: the rank is the last ``_rank_<digits>`` that the end of the name or ``_<topology>`` follows
MODEL_RE = re.compile(r"^model_(\d+)(?:_(.*))?_rank_(\d+)(?:_([^/\n]+))?$")
RUN_RE = re.compile(r"^run_(\d{8}_\d{6})(?:_(\d+))?$")


class RunName:
    """What a run directory's name says. A plain frozen class, as ``@dataclass(frozen=True)`` made it
    (the same constructor, ``repr``, ``==`` and ``hash``): ``dataclasses`` imports ``inspect``, paid
    by every headless command's start."""

    __slots__ = ("run_id", "model_index", "tag", "rank", "run_time", "topology")
    run_id: str | None      # ``run_20261122_111900`` (None for a bare output root)
    model_index: int | None
    tag: str | None
    rank: int | None
    run_time: float | None  # the run id's local time as an epoch (second resolution)
    topology: str | None    # ``ws2``, ``ep6_cp2_dp1`` (MagiCompiler 2026 folders); None in the older form

    def __init__(self, run_id: str | None, model_index: int | None, tag: str | None, rank: int | None,
                 run_time: float | None, topology: str | None = None) -> None:
        for k, v in zip(self.__slots__, (run_id, model_index, tag, rank, run_time, topology)):
            object.__setattr__(self, k, v)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def _fields(self) -> tuple:
        return (self.run_id, self.model_index, self.tag, self.rank, self.run_time, self.topology)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if other.__class__ is self.__class__ else NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        topo = "" if self.topology is None else f", topology={self.topology!r}"
        return (f"RunName(run_id={self.run_id!r}, model_index={self.model_index!r}, tag={self.tag!r}, "
                f"rank={self.rank!r}, run_time={self.run_time!r}{topo})")

    @property
    def label(self) -> str:
        """A short human label: the tag, else the dir name."""
        return self.tag or ""


def parse_run_name(path: Path) -> RunName:
    m = MODEL_RE.match(path.name)
    model_index = tag = rank = topology = None
    parent = path
    if m:
        try:
            model_index, tag, rank, topology = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)
        except ValueError:  # thousands of digits: no index nor rank anyone wrote
            model_index = tag = rank = topology = None
        else:
            parent = path.parent
    rm = RUN_RE.match(parent.name)
    run_id = parent.name if rm else None
    run_time = None
    if rm:
        try:
            t = rm.group(1)  # %Y%m%d_%H%M%S (by hand: strptime's import is paid by every start)
            run_time = datetime(int(t[0:4]), int(t[4:6]), int(t[6:8]), int(t[9:11]), int(t[11:13]),
                                int(t[13:15])).timestamp()
        except (ValueError, OverflowError):
            run_time = None
    return RunName(run_id, model_index, tag or None, rank, run_time, topology or None)


def sanitize_label(label: str) -> str:
    """Labels go into directory names: keep ``[A-Za-z0-9_]``."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", label).strip("_") or "run"


def run_id_name(stamp: str, n: int = 0) -> str:
    """``run_20261122_111900`` (``stamp`` is ``%Y%m%d_%H%M%S``), ``run_20261122_111900_2`` for a clash."""
    return f"run_{stamp}" if n == 0 else f"run_{stamp}_{n}"


def model_dir_name(index: int, label: str, rank: int, topology: str | None = None) -> str:
    """``model_1_TwoLayerTransformer_rank_0`` (``…_rank_0_ws2`` with a topology, MagiCompiler's 2026 form)."""
    name = f"model_{index}_{sanitize_label(label)}_rank_{rank}"
    return f"{name}_{topology}" if topology else name
