"""The same canned queries, the same SQL text, in Apache Spark (pyspark, local mode) over the same Parquet
files: Spark's answers are DuckDB's. Needs a JRE: scripts/test.sh installs Debian's default-jre-headless when
none is there; the test skips, saying so, only when there is still no ``java``."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from decimal import Decimal

import pytest

from tests.support.history_runs import BREAK_ID

pytestmark = pytest.mark.slow


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


@pytest.fixture(scope="module")
def spark():
    if _java() is None:
        pytest.skip("no JRE: scripts/test.sh installs one with apt-get install default-jre-headless; "
                    "it could not be installed here")
    pyspark = pytest.importorskip("pyspark", reason="pyspark is in the test extra (pip install -e '.[test]')")
    del pyspark
    from pyspark.sql import SparkSession

    s = (SparkSession.builder.master("local[1]").appName("magi-tui-history")
         .config("spark.sql.session.timeZone", "UTC").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _norm(v):
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    if isinstance(v, Decimal):
        v = float(v)
    if isinstance(v, float):
        return round(v, 6)
    return v


def _register(spark, index) -> None:
    from magi_tui.history.query import CURRENT_SQL, empty_sql, view_sql
    from magi_tui.history.schema import MANIFEST, TABLES, columns

    for table in (MANIFEST, *TABLES):
        name = "manifest_raw" if table == MANIFEST else f"{table}_raw"
        folder = index / table
        if any(folder.rglob("*.parquet")):
            spark.read.parquet(str(folder)).createOrReplaceTempView(name)
        else:
            spark.sql(empty_sql(columns(table))).createOrReplaceTempView(name)
    spark.sql(CURRENT_SQL).createOrReplaceTempView("current_runs")
    for table in TABLES:
        spark.sql(view_sql(table)).createOrReplaceTempView(table)


def test_spark_answers_as_duckdb(spark, ci_history):
    from magi_tui.history import query as q

    _, index = ci_history
    _register(spark, index)
    h = q.History(index)
    asked = {
        "first-seen": q.first_seen_sql(BREAK_ID), "last-seen": q.last_seen_sql(BREAK_ID), "gone": q.gone_sql(BREAK_ID),
        "trend compile_time": q.trend_sql("compile_time", None, 200), "trend breaks": q.trend_sql("breaks", "ci", 60),
        "top causes": q.top_causes_sql("2026-01-07"), "regressions": q.regressions_sql(200),
    }
    for name, sql in asked.items():
        cols, duck = h.rows(sql)
        sp = spark.sql(sql)
        assert [c.lower() for c in sp.columns] == [c.lower() for c in cols], name
        spark_rows = [tuple(_norm(v) for v in r) for r in sp.collect()]
        duck_rows = [tuple(_norm(v) for v in r) for r in duck]
        assert spark_rows == duck_rows, name
        assert duck_rows, f"{name}: no answer to compare"
    # and the answers are the right ones (test_history.py checks them on DuckDB)
    gone = [tuple(r) for r in spark.sql(q.gone_sql(BREAK_ID)).collect()]
    assert gone[0][0].endswith("dedicated_log_torch_trace_run_00170.log.gz")
    h.close()
