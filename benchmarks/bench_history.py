"""Issue 35's history numbers, from one run (ratios, not timed tests): ``magi-tui index`` of N generated
runs (tests/support/history_runs.py: a real TORCH_TRACE log, varied) in runs/s, re-indexing 100 new runs,
peak RSS, each canned query, the index's size against the runs' .log.gz, and the anchor a user would write:
``magi-tui triage --json`` per run plus a Python aggregation (timed on a sample, scaled to N).

    .venv/bin/python benchmarks/bench_history.py [N]   (default 2000)
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from magi_tui.history import query as q  # noqa: E402
from magi_tui.history.write import index_runs  # noqa: E402
from tests.support.history_runs import BREAK_ID, Plan, make_history, run_path  # noqa: E402


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    plan = Plan(n + 100, every_s=600, break_from=n // 2, break_until=n * 3 // 4, jump_at=n - 10, jump=1.5)
    with tempfile.TemporaryDirectory() as d:
        root, index = Path(d) / "runs", Path(d) / "index"
        make_history(root, plan, range(n))
        t = time.perf_counter()
        index_runs([root], index)
        full = time.perf_counter() - t
        print(f"index {n} runs: {full:.2f} s, {n / full:.0f} runs/s (goal >= 100)")
        make_history(root, plan, range(n, n + 100))
        t = time.perf_counter()
        index_runs([root], index)
        print(f"re-index with 100 new: {time.perf_counter() - t:.2f} s (goal <= 2)")
        rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        print(f"peak RSS (this process / a worker): {rss / 1024:.0f} MB (goal <= 500)")
        h = q.History(index)
        for name, fn in (("first-seen", lambda: q.first_seen(h, BREAK_ID)), ("gone", lambda: q.gone(h, BREAK_ID)),
                         ("trend", lambda: q.trend(h, "compile_time", None, 50)), ("top causes", lambda: q.top_causes(h)),
                         ("regressions", lambda: q.regressions(h, 20))):
            t = time.perf_counter()
            fn()
            print(f"  {name}: {time.perf_counter() - t:.3f} s (goal <= 1)")
        logs = sum(p.stat().st_size for p in root.rglob("*.log.gz"))
        idx = sum(p.stat().st_size for p in index.rglob("*.parquet"))
        print(f"index {idx / 1e6:.1f} MB vs .log.gz {logs / 1e6:.1f} MB: 1/{logs / idx:.0f} (goal <= 1/5)")
        sample = [run_path(root, plan, i) for i in range(0, n, max(1, n // 40))]
        t = time.perf_counter()
        docs = [json.loads(subprocess.run([sys.executable, "-m", "magi_tui", "triage", "--json", str(p)],
                                          capture_output=True, text=True).stdout) for p in sample]
        seen = {}
        for p, doc in zip(sample, docs):
            for b in doc["graph_breaks"]:
                seen.setdefault(b["id"], str(p))
        anchor = (time.perf_counter() - t) / len(sample) * (n + 100)
        print(f"anchor (triage --json per run + Python, {len(sample)} sampled, scaled to {n + 100}): {anchor:.1f} s; "
              f"index + a query is {anchor / full:.1f}x faster, the query alone "
              f"{anchor / 0.05:.0f}x")


if __name__ == "__main__":
    main()
