"""Make a CI-like history of many runs out of real recorded TORCH_TRACE logs (``magi-tui index``'s tests and
``benchmarks/bench_history.py``).

Each generated run is a real log recorded by torch 2.13 (``tests/torchtrace/logs/reset_same_function.log``:
one function compiled, ``torch._dynamo.reset()``, compiled again; ``tests/torchtrace/logs/README.md`` says
how it was recorded), edited mechanically, as the fixtures' path rewrite was:

* its start moved: every glog prefix (``V1128 08:27:14.108000``) and every chromium event's ``ts`` shifted
  to the run's start, and the time from the log's first record stretched by ``scale`` (compile time that
  drifts, or jumps), each payload's ``has_payload`` md5 recomputed after the edit;
* a real graph-break record (torch's ``dynamo_graph_break_reason`` artifact of
  ``tests/fixtures/torch_trace/graph_breaks_recompiles_failure.log``: ``Tensor.item()``, GB0124, at
  ``capture_demo.py:149``) copied, byte for byte, into the first compile of the runs that should have it.

Runs are written as ``ROOT/<label>/dedicated_log_torch_trace_run_<n>.log.gz`` (gzip, as CI keeps them,
named as torch names its logs): the folder is the program a
TORCH_TRACE directory stands for (``program`` in the index).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASE_LOG = ROOT / "tests" / "torchtrace" / "logs" / "reset_same_function.log"
BREAK_SOURCE = ROOT / "tests" / "fixtures" / "torch_trace" / "graph_breaks_recompiles_failure.log"
#: the stable id (magi_tui/model/analysis/worklist.py ``break_id``) of the injected break
BREAK_ID = "GB0124@capture_demo.py:149"

_GLOG = re.compile(r"^([VIWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})( .*)$")
_TS = re.compile(r'^("ts": )([0-9.]+)(,?)$')


def _records(text: str) -> list[tuple[str, list[str]]]:
    """(header line, payload lines without their tab) per record."""
    out: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        if line.startswith("\t") and out:
            out[-1][1].append(line[1:])
        elif line:
            out.append((line, []))
    return out


def _break_record() -> tuple[str, list[str]]:
    for header, payload in _records(BREAK_SOURCE.read_text(encoding="utf-8")):
        if '"dynamo_graph_break_reason"' in header:
            return header, payload
    raise RuntimeError(f"no graph-break record in {BREAK_SOURCE}")


def _glog_epoch(header: str, year: int) -> float:
    m = _GLOG.match(header)
    assert m is not None, header
    _, mon, day, hh, mm, ss, us, _ = m.groups()
    return time.mktime((year, int(mon), int(day), int(hh), int(mm), int(ss), 0, 0, -1)) + int(us) / 1e6


class LogTemplate:
    """The base log, parsed once; :meth:`render` makes one run's log text."""

    def __init__(self) -> None:
        self.records = _records(BASE_LOG.read_text(encoding="utf-8"))
        self.year = 2026  # the log's own epoch times (chromium ts) are in Nov 2026
        self.t0 = _glog_epoch(self.records[0][0], self.year)
        self.brk = _break_record()
        # after the first dynamo_start of frame 0: where torch writes a break of the first compile
        self.break_at = next(i for i, (h, _) in enumerate(self.records) if '"dynamo_start"' in h) + 1

    def render(self, start: float, scale: float = 1.0, graph_break: bool = False) -> str:
        """The log of a run that started at ``start`` (epoch seconds), its record times stretched by ``scale``
        from its first record, with the real graph-break record in its first compile when ``graph_break``."""
        recs = list(self.records)
        if graph_break:
            recs.insert(self.break_at, self.brk)
        out: list[str] = []
        last = start
        for header, payload in recs:
            m = _GLOG.match(header)
            if m is not None:
                t = _glog_epoch(header, self.year)
                t = start + max(0.0, t - self.t0) * scale
                if header is self.brk[0]:
                    t = last  # copied from another log: at the time of the record before it
                last = t
                lt = time.localtime(t)
                us = int(round((t - int(t)) * 1e6)) % 1_000_000
                header = (f"{m.group(1)}{lt.tm_mon:02d}{lt.tm_mday:02d} {lt.tm_hour:02d}:{lt.tm_min:02d}:"
                          f"{lt.tm_sec:02d}.{us:06d}{m.group(8)}")
            if '{"compilation_metrics"' in header:
                header = self._metrics(header, start, scale)
            if payload and '"chromium_event"' in header:
                payload = [self._shift_ts(p, start, scale) for p in payload]
                header = self._md5(header, payload)
            out.append(header)
            out.extend("\t" + p for p in payload)
        return "\n".join(out) + "\n"

    def _shift_ts(self, line: str, start: float, scale: float) -> str:
        m = _TS.match(line)
        if m is None:
            return line
        us = float(m.group(2))
        new = start * 1e6 + max(0.0, us - self.t0 * 1e6) * scale
        return f"{m.group(1)}{new:.1f}{m.group(3)}"

    def _metrics(self, header: str, start: float, scale: float) -> str:
        """torch's compilation_metrics record of the moved, stretched run: its start and end times moved, its
        durations (``*_time_s``, ``*_time_us``, ``duration_us``) stretched by ``scale``."""
        prefix, _, body = header.partition("] ")
        rec = json.loads(body)
        m = rec["compilation_metrics"]
        for k, v in m.items():
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                continue
            if k == "start_time":
                m[k] = round(start + max(0.0, v - self.t0) * scale, 6)
            elif k in ("start_time_us", "end_time_us"):
                m[k] = int(start * 1e6 + max(0.0, v - self.t0 * 1e6) * scale)
            elif k.endswith(("_time_s",)):
                m[k] = round(v * scale, 6)
            elif k.endswith(("_time_us",)) or k == "duration_us":
                m[k] = int(v * scale)
        return f"{prefix}] {json.dumps(rec)}"

    @staticmethod
    def _md5(header: str, payload: list[str]) -> str:
        md5 = hashlib.md5("\n".join(payload).encode("utf-8")).hexdigest()
        return re.sub(r'"has_payload": "[0-9a-f]{32}"', f'"has_payload": "{md5}"', header)


class Plan:
    """What run ``i`` of a history is: its start, its compile-time scale, whether it has the break."""

    def __init__(self, n: int, *, start: float = 1_767_261_600.0, every_s: float = 3600.0,
                 break_from: int | None = None, break_until: int | None = None, drift: float = 0.002,
                 jump_at: int | None = None, jump: float = 1.0, labels: tuple[str, ...] = ("ci",)) -> None:
        self.n, self.start, self.every_s = n, start, every_s
        self.break_from, self.break_until = break_from, break_until
        self.drift, self.jump_at, self.jump, self.labels = drift, jump_at, jump, labels

    def start_of(self, i: int) -> float:
        return self.start + i * self.every_s

    def scale_of(self, i: int) -> float:
        s = 1.0 + self.drift * i
        if self.jump_at is not None and i >= self.jump_at:
            s *= self.jump
        return s

    def has_break(self, i: int) -> bool:
        if self.break_from is None:
            return False
        return self.break_from <= i < (self.break_until if self.break_until is not None else self.n)

    def label_of(self, i: int) -> str:
        return self.labels[i % len(self.labels)]

    def as_json(self) -> dict[str, object]:
        return {"n": self.n, "start": self.start, "every_s": self.every_s, "break_from": self.break_from,
                "break_until": self.break_until, "drift": self.drift, "jump_at": self.jump_at, "jump": self.jump,
                "labels": list(self.labels)}


def run_path(root: Path, plan: Plan, i: int) -> Path:
    # torch's own name for its log (discovery opens at most 200 logs of other names to sniff them)
    return root / plan.label_of(i) / f"dedicated_log_torch_trace_run_{i:05d}.log.gz"


def make_history(root: Path, plan: Plan, indices: range | None = None, template: LogTemplate | None = None
                 ) -> list[Path]:
    """Write runs ``indices`` (default all) of ``plan`` under ``root``; returns their paths, in run order."""
    tpl = template or LogTemplate()
    paths = []
    for i in indices if indices is not None else range(plan.n):
        p = run_path(root, plan, i)
        p.parent.mkdir(parents=True, exist_ok=True)
        text = tpl.render(plan.start_of(i), plan.scale_of(i), plan.has_break(i))
        p.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0))
        paths.append(p)
    (root / "plan.json").write_text(json.dumps(plan.as_json()), encoding="utf-8")
    return paths
