"""``magi-tui index``: runs -> Parquet files (pyarrow), partitioned by the day a run started, appended.

Layout (docs/HISTORY.md): ``INDEX/<table>/date=YYYY-MM-DD/part-<batch>.parquet`` for each table of
:mod:`magi_tui.history.schema`, and ``INDEX/_manifest/part-<batch>.parquet``: the path, size and mtime of
every run a pass read. A pass reads only runs the manifest does not hold at their present size and mtime
(new, or grown since: a live run), writes new files and never rewrites an old one; the manifest part is
written last, so a pass cut short leaves files no query reads (each table is read through the manifest's
latest ``(run_key, batch)`` per run).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from magi_tui.history.collect import Rows, collect, error_rows, run_size
from magi_tui.history.schema import MANIFEST, MANIFEST_COLUMNS, SCHEMA_VERSION, TABLES, VERSION_KEY, columns


class IndexError_(Exception):
    """The index cannot be written or read (one line for the user)."""


class IndexResult:
    """What a pass did: runs found, read (new or grown), skipped (unchanged), and which were errors."""

    def __init__(self) -> None:
        self.found = 0
        self.read: list[str] = []
        self.unchanged = 0
        self.errors: list[tuple[str, str]] = []
        self.batch: int | None = None
        self.seconds = 0.0

    def as_json(self) -> dict[str, Any]:
        return {"found": self.found, "indexed": len(self.read), "unchanged": self.unchanged,
                "errors": [{"path": p, "error": e} for p, e in self.errors], "batch": self.batch,
                "seconds": round(self.seconds, 3)}


def _arrow_type(name: str) -> Any:
    import pyarrow as pa  # type: ignore[import-untyped]

    return {"string": pa.string(), "int64": pa.int64(), "double": pa.float64(), "bool": pa.bool_(),
            "timestamp": pa.timestamp("us")}[name]


def _schema(cols: Iterable[tuple[str, str]]) -> Any:
    import pyarrow as pa

    return pa.schema([(n, _arrow_type(t)) for n, t in cols],
                     metadata={VERSION_KEY: str(SCHEMA_VERSION)})


def run_key(path: Path) -> str:
    """A run's identity in the index: its absolute path, hashed (16 hex digits)."""
    return hashlib.sha1(str(path.absolute()).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def file_version(path: Path) -> int | None:
    """The schema version a Parquet file of the index was written with (None: not one of ours)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    try:
        md = pq.read_schema(path).metadata or {}
    except Exception:
        return None
    v = md.get(VERSION_KEY.encode())
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def check_version(out: Path) -> None:
    """Refuse, in one line, an index this magi-tui cannot read (written by a newer one, or not an index)."""
    parts = sorted((out / MANIFEST).glob("part-*.parquet"))
    if not parts:
        return
    v = file_version(parts[-1])
    if v is None:
        raise IndexError_(f"{out}: {parts[-1].name} is not a magi-tui index file (no {VERSION_KEY})")
    if v != SCHEMA_VERSION:
        newer = "a newer" if v > SCHEMA_VERSION else "an older"
        raise IndexError_(f"{out}: index schema version {v}, written by {newer} magi-tui; this one reads version "
                          f"{SCHEMA_VERSION} (index the runs again into a new folder)")


def read_manifest(out: Path) -> dict[str, dict[str, Any]]:
    """The latest manifest row of each path the index holds."""
    import pyarrow.parquet as pq

    latest: dict[str, dict[str, Any]] = {}
    for part in sorted((out / MANIFEST).glob("part-*.parquet")):
        for row in pq.read_table(part).to_pylist():
            prev = latest.get(row["path"])
            if prev is None or row["batch"] >= prev["batch"]:
                latest[row["path"]] = row
    return latest


def _discover(roots: list[Path]) -> tuple[list[Path], list[tuple[str, str]]]:
    from magi_tui.model import find_runs

    found: list[Path] = []
    problems: list[tuple[str, str]] = []
    seen: set[str] = set()
    for root in roots:
        if not os.path.lexists(root):
            problems.append((str(root), "no such file or directory"))
            continue
        for r in find_runs(root, log_ranks=False):  # paths only: a new run is read whole later
            key = str(Path(r.path).absolute())
            if key not in seen:
                seen.add(key)
                found.append(Path(r.path))
    return found, problems


def _collect_one(path: str) -> Rows:
    """A worker's job: one run's rows; never raises (a surprise is the run's error row)."""
    from magi_tui.model import collector

    try:
        with collector.held():
            return collect(Path(path))
    except Exception as exc:  # pragma: no cover - collect catches the reader's; this is the last line
        return error_rows(Path(path), f"{type(exc).__name__}: {exc}")


def _collect_all(paths: list[Path], jobs: int, progress: Callable[[int, int], None] | None) -> list[Rows]:
    if jobs <= 1 or len(paths) < 16:
        out = []
        for i, p in enumerate(paths):
            out.append(_collect_one(str(p)))
            if progress:
                progress(i + 1, len(paths))
        return out
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    results: list[Rows] = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        for i, rows in enumerate(pool.map(_collect_one, [str(p) for p in paths], chunksize=8)):
            results.append(rows)
            if progress:
                progress(i + 1, len(paths))
    return results


def _utc(ts: float | None) -> datetime | None:
    if ts is None:
        return None
    try:
        return datetime.fromtimestamp(ts, timezone.utc).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        return None


def index_runs(roots: list[Path], out: Path, *, jobs: int | None = None,
               progress: Callable[[int, int], None] | None = None) -> IndexResult:
    """Add the runs under ``roots`` that ``out`` does not hold at their present size to the index ``out``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    res = IndexResult()
    if out.exists() and not out.is_dir():
        raise IndexError_(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_dir():
        raise IndexError_(f"{out}: a folder that is not a magi-tui index (no {MANIFEST}/); give an empty or new folder")
    check_version(out)
    known = read_manifest(out) if out.is_dir() else {}
    found, problems = _discover(roots)
    res.errors.extend(problems)
    res.found = len(found)
    todo: list[tuple[Path, int, int]] = []
    for p in found:
        size, mtime = run_size(p)
        prev = known.get(str(p.absolute()))
        if prev is not None and prev["size_bytes"] == size and prev["mtime_ns"] == mtime:
            res.unchanged += 1
            continue
        todo.append((p, size, mtime))
    if not todo:
        res.seconds = time.perf_counter() - t0
        return res
    batch = max((r["batch"] for r in known.values()), default=0) + 1
    res.batch = batch
    collected = _collect_all([p for p, _, _ in todo], jobs if jobs is not None else (os.cpu_count() or 1), progress)
    by_part: dict[tuple[str, str], list[dict[str, Any]]] = {}
    manifest: list[dict[str, Any]] = []
    for (p, size, mtime), rows in zip(todo, collected):
        key = run_key(p)
        run_row = rows["runs"][0]
        started_ts = run_row.pop("_started", None)
        started = _utc(started_ts)
        date = (started or _utc(mtime / 1e9) or datetime(1970, 1, 1)).strftime("%Y-%m-%d")
        run_row["path"] = str(p.absolute())
        run_row["size_bytes"] = size
        if run_row.get("status") == "error":
            res.errors.append((str(p), str(run_row.get("error"))))
        for table, items in rows.items():
            for item in items:
                item["run_key"], item["batch"], item["started"] = key, batch, started
            by_part.setdefault((table, date), []).extend(items)
        res.read.append(str(p))
        manifest.append({"path": str(p.absolute()), "run_key": key, "batch": batch, "size_bytes": size,
                         "mtime_ns": mtime, "date": date, "status": run_row.get("status")})
    try:
        for (table, date), items in sorted(by_part.items()):
            if table not in TABLES:
                continue
            folder = out / table / f"date={date}"
            folder.mkdir(parents=True, exist_ok=True)
            schema = _schema(columns(table))
            pq.write_table(pa.Table.from_pylist(items, schema=schema), folder / f"part-{batch:06d}.parquet",
                           compression="zstd")
        (out / MANIFEST).mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(manifest, schema=_schema(MANIFEST_COLUMNS)),
                       out / MANIFEST / f"part-{batch:06d}.parquet", compression="zstd")
    except OSError as exc:
        raise IndexError_(f"{out}: cannot write the index: {exc.strerror or exc}") from None
    res.seconds = time.perf_counter() - t0
    return res
