"""``magi-tui history``: the index's questions answered by DuckDB, embedded (no server).

The canned queries are plain SQL over views named as the tables (``runs``, ``breaks``, ...), written in
what DuckDB and Spark SQL share (CTEs, window functions, ``UNION ALL``), so the same text runs on Spark
over the same files (tests/history/test_spark.py) and in any engine that reads Parquet (docs/HISTORY.md).
A view reads each run's latest pass only (``current``: the manifest's latest batch per run).

``--sql`` is read-only: DuckDB's parser must find SELECT statements only (no COPY, ATTACH, INSTALL, LOAD,
PRAGMA, SET, EXPORT, IMPORT, CREATE), and the connection is locked before it runs (external access off
except the index folder, extensions neither installed nor loaded, configuration locked), so a table
function cannot read another file either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from magi_tui.history.schema import MANIFEST, MANIFEST_COLUMNS, TABLES, columns

METRICS = {"compile_time": "compile_time_s", "breaks": "graph_breaks", "recompiles": "recompiles",
           "cache_hit_rate": "cache_hit_rate"}
#: the noise band: the previous BAND_RUNS runs' mean +- max(3 standard deviations, the metric's tolerance)
BAND_RUNS = 10
MIN_HISTORY = 5
TOLERANCE = {"compile_time": "0.1 * abs(mean)", "breaks": "0.5", "recompiles": "0.5", "cache_hit_rate": "0.05"}
#: a metric that grows is worse, except the cache hit rate
WORSE_UP = {"compile_time": True, "breaks": True, "recompiles": True, "cache_hit_rate": False}

_SQL_TYPES = {"string": "STRING", "int64": "BIGINT", "double": "DOUBLE", "bool": "BOOLEAN", "timestamp": "TIMESTAMP"}


class QueryError(Exception):
    """A question the index cannot answer, or a refused ``--sql`` (one line for the user)."""


def lit(value: str) -> str:
    """A SQL string literal (both engines: quotes doubled; a backslash is literal in DuckDB, escaped for Spark
    by refusing it)."""
    if "\\" in value or "\n" in value:
        raise QueryError("an id or label with a backslash or a newline is not one the index holds")
    return "'" + value.replace("'", "''") + "'"


def empty_sql(cols: tuple[tuple[str, str], ...]) -> str:
    """A typed empty table (a table no run has rows in yet)."""
    return "SELECT " + ", ".join(f"CAST(NULL AS {_SQL_TYPES[t]}) AS {n}" for n, t in cols) + \
        ", CAST(NULL AS DATE) AS date WHERE 1 = 0"


def view_sql(table: str) -> str:
    """``table`` as the queries see it: the rows of each run's latest pass (``<table>_raw``: the files)."""
    return (f"SELECT t.* FROM {table}_raw t JOIN current_runs c "
            "ON t.run_key = c.run_key AND t.batch = c.batch")


CURRENT_SQL = "SELECT run_key, max(batch) AS batch FROM manifest_raw GROUP BY run_key"


# -- the canned queries ---------------------------------------------------------------------------------
def _runs(label: str | None) -> str:
    where = "status <> 'error'"
    if label is not None:
        where += f" AND (label = {lit(label)} OR program = {lit(label)})"
    return f"SELECT * FROM runs WHERE {where}"


def _having(ident: str) -> str:
    """Per run, how often ``ident`` (a break id, a recompile cause id, a failing rule id) is in it."""
    i = lit(ident)
    return ("SELECT run_key, sum(n) AS n FROM ("
            f"SELECT run_key, count AS n FROM breaks WHERE id = {i} "
            f"UNION ALL SELECT run_key, 1 AS n FROM recompiles WHERE id = {i} "
            f"UNION ALL SELECT run_key, 1 AS n FROM checks WHERE rule = {i} AND level <> 'ok'"
            ") h GROUP BY run_key")


def first_seen_sql(ident: str, label: str | None = None) -> str:
    return (f"WITH h AS ({_having(ident)}), r AS ({_runs(label)}) "
            "SELECT r.path, r.label, r.started, h.n AS count, "
            "(SELECT count(*) FROM r JOIN h ON r.run_key = h.run_key) AS runs_with_it "
            "FROM r JOIN h ON r.run_key = h.run_key ORDER BY r.started, r.path LIMIT 1")


def last_seen_sql(ident: str, label: str | None = None) -> str:
    return (f"WITH h AS ({_having(ident)}), r AS ({_runs(label)}) "
            "SELECT r.path, r.label, r.started, h.n AS count "
            "FROM r JOIN h ON r.run_key = h.run_key ORDER BY r.started DESC, r.path DESC LIMIT 1")


def gone_sql(ident: str, label: str | None = None) -> str:
    """The first run after the last run that had ``ident`` (none: still there, or never seen)."""
    return (f"WITH h AS ({_having(ident)}), r AS ({_runs(label)}), "
            "last AS (SELECT max(r.started) AS t FROM r JOIN h ON r.run_key = h.run_key) "
            "SELECT r.path, r.label, r.started FROM r WHERE r.started > (SELECT t FROM last) "
            "ORDER BY r.started, r.path LIMIT 1")


def trend_sql(metric: str, label: str | None = None, last: int = 50) -> str:
    col = METRICS[metric]
    return (f"SELECT started, path, label, {col} AS value FROM ({_runs(label)}) r "
            f"ORDER BY started DESC, path DESC LIMIT {int(last)}")


def top_causes_sql(since: str | None = None, limit: int = 20) -> str:
    cond = f" WHERE CAST(started AS DATE) >= DATE {lit(since)}" if since else ""
    return ("WITH c AS ("
            f"SELECT run_key, id, 'graph_break' AS kind, count AS n, started FROM breaks{cond} "
            f"UNION ALL SELECT run_key, id, 'recompile' AS kind, 1 AS n, started FROM recompiles{cond}) "
            "SELECT c.id, c.kind, count(DISTINCT c.run_key) AS runs, sum(c.n) AS total, min(c.started) AS first_seen, "
            "max(c.started) AS last_seen FROM c JOIN runs r ON c.run_key = r.run_key "
            f"GROUP BY c.id, c.kind ORDER BY runs DESC, total DESC, c.id LIMIT {int(limit)}")


def regressions_sql(last: int = 20, label: str | None = None) -> str:
    """Each of the last ``last`` runs against the noise band of the BAND_RUNS runs before it, per metric; a
    compile-time regression names the frame whose compile time grew most against its own previous runs."""
    win = f"ROWS BETWEEN {BAND_RUNS} PRECEDING AND 1 PRECEDING"
    metrics = " UNION ALL ".join(
        f"SELECT run_key, started, path, label, seq, '{m}' AS metric, CAST({col} AS DOUBLE) AS value FROM r"
        for m, col in METRICS.items())
    tol = " ".join(f"WHEN '{m}' THEN {t}" for m, t in TOLERANCE.items())
    up = ", ".join(f"'{m}'" for m, w in WORSE_UP.items() if w)
    return (
        f"WITH r AS (SELECT *, row_number() OVER (ORDER BY started, path) AS seq FROM ({_runs(label)}) x), "
        f"m AS ({metrics}), "
        "b AS (SELECT m.*, "
        f"avg(value) OVER (PARTITION BY metric ORDER BY seq {win}) AS mean, "
        f"stddev_samp(value) OVER (PARTITION BY metric ORDER BY seq {win}) AS sd, "
        f"count(value) OVER (PARTITION BY metric ORDER BY seq {win}) AS n FROM m), "
        f"w AS (SELECT b.*, greatest(3 * coalesce(sd, 0), CASE metric {tol} END) AS half FROM b "
        f"WHERE value IS NOT NULL AND n >= {MIN_HISTORY}), "
        "reg AS (SELECT * FROM w WHERE seq > (SELECT max(seq) FROM r) - " + str(int(last)) + " AND "
        f"((metric IN ({up}) AND value > mean + half) OR (metric NOT IN ({up}) AND value < mean - half))), "
        "fr AS (SELECT f.run_key, f.frame, f.key, f.compile_s, r.seq FROM frames f JOIN r ON f.run_key = r.run_key "
        "WHERE f.compile_s IS NOT NULL), "
        f"fb AS (SELECT fr.*, avg(compile_s) OVER (PARTITION BY frame, key ORDER BY seq {win}) AS prev FROM fr), "
        "tf AS (SELECT run_key, frame, compile_s - prev AS grew, "
        "row_number() OVER (PARTITION BY run_key ORDER BY compile_s - prev DESC, frame, key) AS k "
        "FROM fb WHERE prev IS NOT NULL) "
        "SELECT reg.started, reg.path, reg.label, reg.metric, reg.value, reg.mean - reg.half AS band_low, "
        "reg.mean + reg.half AS band_high, reg.n AS previous_runs, "
        "CASE WHEN reg.metric = 'compile_time' THEN tf.frame END AS frame, "
        "CASE WHEN reg.metric = 'compile_time' THEN tf.grew END AS frame_grew_s "
        "FROM reg LEFT JOIN tf ON reg.run_key = tf.run_key AND tf.k = 1 "
        "ORDER BY reg.started, reg.path, reg.metric")


# -- DuckDB ---------------------------------------------------------------------------------------------
def _files(index: Path, table: str) -> list[Path]:
    folder = index / table
    if table == MANIFEST:
        return sorted(folder.glob("part-*.parquet"))
    return sorted(folder.glob("date=*/part-*.parquet"))


def _duck_str(p: Path) -> str:
    return "'" + str(p).replace("'", "''") + "'"


class History:
    """An index opened read-only in an in-memory DuckDB: views over its Parquet files, then locked."""

    def __init__(self, index: str | Path) -> None:
        from magi_tui.history.write import IndexError_, check_version

        self.index = Path(index).absolute()
        if not (self.index / MANIFEST).is_dir():
            raise QueryError(f"{index}: not a magi-tui index (no {MANIFEST}/ folder; make one with magi-tui index)")
        try:
            check_version(self.index)
        except IndexError_ as exc:
            raise QueryError(str(exc)) from None
        import duckdb

        con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                                 "autoload_known_extensions": False})
        for table in (MANIFEST, *TABLES):
            files = _files(self.index, table)
            name = "manifest_raw" if table == MANIFEST else f"{table}_raw"
            if files:
                glob = self.index / table / ("part-*.parquet" if table == MANIFEST else "date=*/part-*.parquet")
                hive = "false" if table == MANIFEST else "true"
                con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet({_duck_str(glob)}, "
                            f"hive_partitioning = {hive}, union_by_name = true)")
            else:
                cols = MANIFEST_COLUMNS if table == MANIFEST else columns(table)
                con.execute(f"CREATE VIEW {name} AS {empty_sql(cols)}")
        con.execute(f"CREATE VIEW current_runs AS {CURRENT_SQL}")
        for table in TABLES:
            con.execute(f"CREATE VIEW {table} AS {view_sql(table)}")
        # from here on: no file outside the index, no extension, no setting changed
        con.execute(f"SET allowed_directories = [{_duck_str(self.index)}]")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        self.con = con

    def rows(self, sql: str) -> tuple[list[str], list[tuple]]:
        cur = self.con.execute(sql)
        cols = [d[0] for d in cur.description or []]
        return cols, cur.fetchall()

    def dicts(self, sql: str) -> list[dict[str, Any]]:
        cols, rows = self.rows(sql)
        return [dict(zip(cols, r)) for r in rows]

    def user_sql(self, sql: str) -> tuple[list[str], list[tuple]]:
        """``--sql``: SELECT statements only (DuckDB's own parser decides), one clear line otherwise."""
        import duckdb

        try:
            statements = self.con.extract_statements(sql)
        except duckdb.Error as exc:
            raise QueryError(_one_line(exc)) from None
        if not statements:
            raise QueryError("--sql: no statement")
        if len(statements) > 1:
            raise QueryError("--sql: one statement at a time")
        st = statements[0]
        if st.type != duckdb.StatementType.SELECT:
            kind = str(st.type).rsplit(".", 1)[-1]
            raise QueryError(f"--sql is read-only: {kind} refused (SELECT statements only)")
        try:
            return self.rows(sql)
        except duckdb.Error as exc:
            raise QueryError(_one_line(exc)) from None

    def close(self) -> None:
        self.con.close()


def _one_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return " ".join(text[0].split()) if text else type(exc).__name__


# -- answers, as the CLI and the History screen use them ------------------------------------------------
def first_seen(h: History, ident: str, label: str | None = None) -> dict[str, Any]:
    first = h.dicts(first_seen_sql(ident, label))
    last = h.dicts(last_seen_sql(ident, label))
    return {"id": ident, "first_seen": _run(first[0]) if first else None,
            "last_seen": _run(last[0]) if last else None,
            "runs_with_it": first[0]["runs_with_it"] if first else 0}


def gone(h: History, ident: str, label: str | None = None) -> dict[str, Any]:
    last = h.dicts(last_seen_sql(ident, label))
    after = h.dicts(gone_sql(ident, label)) if last else []
    state = "never seen" if not last else ("gone" if after else "present")
    return {"id": ident, "state": state, "last_seen": _run(last[0]) if last else None,
            "gone_in": _run(after[0]) if after else None}


def trend(h: History, metric: str, label: str | None = None, last: int = 50) -> dict[str, Any]:
    if metric not in METRICS:
        raise QueryError(f"unknown metric {metric!r} (one of {', '.join(METRICS)})")
    rows = list(reversed(h.dicts(trend_sql(metric, label, last))))
    return {"metric": metric, "label": label, "runs": [dict(_run(r), value=r["value"]) for r in rows]}


def top_causes(h: History, since: str | None = None, limit: int = 20) -> dict[str, Any]:
    if since is not None:
        import re

        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", since):
            raise QueryError(f"--since {since!r}: a date is YYYY-MM-DD")
    rows = h.dicts(top_causes_sql(since, limit))
    return {"since": since, "causes": [dict(r, first_seen=_iso(r["first_seen"]), last_seen=_iso(r["last_seen"]))
                                       for r in rows]}


def regressions(h: History, last: int = 20, label: str | None = None) -> dict[str, Any]:
    rows = h.dicts(regressions_sql(last, label))
    return {"last": last, "band_runs": BAND_RUNS,
            "regressions": [dict(_run(r), metric=r["metric"], value=r["value"], band_low=r["band_low"],
                                 band_high=r["band_high"], previous_runs=r["previous_runs"], frame=r["frame"],
                                 frame_grew_s=r["frame_grew_s"]) for r in rows]}


def _iso(v: Any) -> Any:
    return v.isoformat(sep=" ") if hasattr(v, "isoformat") else v


def _run(r: dict[str, Any]) -> dict[str, Any]:
    out = {"path": r["path"], "label": r["label"], "started": _iso(r["started"])}
    if "count" in r:
        out["count"] = r["count"]
    return out
