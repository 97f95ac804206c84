"""The index's tables and columns: the one list ``collect`` fills, ``write`` types and docs/HISTORY.md
describes. ``SCHEMA_VERSION`` is written into every Parquet file's metadata; raise it when a column changes
meaning or goes away (a reader refuses an index it cannot read, with one line)."""

from __future__ import annotations

#: the version of the tables below, in each file's key-value metadata under :data:`VERSION_KEY`
SCHEMA_VERSION = 1
VERSION_KEY = "magi_tui.schema_version"

#: every table starts with these: which run (a hash of its path) and which ``index`` pass wrote the row
#: (a run that grew is written again by a later pass; queries read each run's latest), and the run's start
KEY_COLUMNS: tuple[tuple[str, str], ...] = (("run_key", "string"), ("batch", "int64"), ("started", "timestamp"))

#: table -> its own columns (name, type); types: string, int64, double, bool, timestamp
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "runs": (
        ("path", "string"), ("source", "string"), ("program", "string"), ("label", "string"),
        ("job", "string"), ("rank", "int64"), ("topology", "string"), ("torch_version", "string"),
        ("status", "string"), ("error", "string"), ("duration_s", "double"), ("compile_time_s", "double"),
        ("exit_code", "int64"), ("events", "int64"), ("graph_breaks", "int64"), ("graph_break_sites", "int64"),
        ("recompiles", "int64"), ("frames", "int64"), ("ran_eagerly", "int64"), ("failures", "int64"),
        ("unrecovered", "int64"), ("cache_hits", "int64"), ("cache_misses", "int64"),
        ("cache_hit_rate", "double"), ("size_bytes", "int64"),
    ),
    "compiles": (
        ("compile_id", "string"), ("frame", "string"), ("status", "string"), ("compile_s", "double"),
        ("dynamo_s", "double"), ("backend_s", "double"), ("graph_ops", "int64"), ("guards", "int64"),
    ),
    "breaks": (
        ("id", "string"), ("gb_id", "string"), ("gb_type", "string"), ("file", "string"), ("line", "int64"),
        ("function", "string"), ("count", "int64"), ("reason", "string"),
    ),
    "recompiles": (
        ("id", "string"), ("kind", "string"), ("frame", "string"), ("compile_id", "string"),
        ("automatic_dynamic", "bool"), ("reason", "string"),
    ),
    "cache": (
        ("cache", "string"), ("result", "string"), ("reason", "string"), ("compile_id", "string"),
        ("differs", "string"),
    ),
    "checks": (("rule", "string"), ("level", "string"), ("message", "string")),
    "frames": (
        ("frame", "string"), ("key", "string"), ("name", "string"), ("file", "string"), ("line", "int64"), ("compiles", "int64"),
        ("recompiles", "int64"), ("graph_breaks", "int64"), ("calls", "int64"), ("eager_calls", "int64"),
        ("compile_s", "double"),
    ),
}

#: the index's own record of what it read: one row per run per ``index`` pass that wrote it (the latest
#: row of a path is what the index holds of it); written last, so a pass cut short leaves nothing half-read
MANIFEST = "_manifest"
MANIFEST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("path", "string"), ("run_key", "string"), ("batch", "int64"), ("size_bytes", "int64"),
    ("mtime_ns", "int64"), ("date", "string"), ("status", "string"),
)


def columns(table: str) -> tuple[tuple[str, str], ...]:
    """A table's columns in file order (the key columns first; the ``date`` partition is in the folder name)."""
    return KEY_COLUMNS + TABLES[table]
