"""Issue 19 "Speed": ``magi-tui triage LOG --json`` on a ~100 MiB TORCH_TRACE log against
``tlparse LOG --no-browser`` on the same file, and the reader's peak memory on one huge record.

The log is made of a real recorded log (``tests/torchtrace/logs/jit_reset.log``) repeated with its frame
ids shifted, so every copy is new compiles of a new frame (a long-running service's log). Each side runs
in a fresh process, interleaved, ``--repeat`` times; medians are printed with their ratio.

    python benchmarks/bench_log_triage.py [--mib 100] [--repeat 3] [--big-mib 200]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "tests" / "torchtrace" / "logs" / "jit_reset.log"
_FID = re.compile(rb'("frame_id": )(\d+)')


def make_log(path: Path, mib: int) -> Path:
    data = SEED.read_bytes()
    heads = [m.start() for m in re.finditer(rb"(?m)^[VIWEC]\d{4} ", data)]
    recs = [data[a:b] for a, b in zip(heads, heads[1:] + [len(data)])]
    with open(path, "wb") as out:
        k = 0
        while out.tell() < mib << 20:
            for r in recs:
                head, nl, rest = r.partition(b"\n")
                head = _FID.sub(lambda m: m.group(1) + str(int(m.group(2)) + 10 * k).encode(), head)
                out.write(head + nl + rest)
            k += 1
    return path


def big_record_log(path: Path, mib: int) -> Path:
    """One record whose payload is ``mib`` MiB of graph-like lines (an inductor_output_code)."""
    line = "    buf0 = empty_strided_cpu((64, 64), (64, 1), torch.float32)  # a line of generated code"
    n = (mib << 20) // (len(line) + 2)
    payload = "\n".join([line] * n)
    md5 = hashlib.md5(payload.encode()).hexdigest()
    with open(path, "w") as out:
        out.write('V1124 06:53:43.739000 1 torch/_inductor/graph.py:1] {"inductor_output_code": {"filename": "x.py"}, '
                  f'"frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "{md5}"}}\n')
        out.write("".join(f"\t{ln}\n" for ln in payload.split("\n")))
    return path


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def peak_rss_mib(code: str) -> float:
    """The process's peak resident set (VmHWM: ru_maxrss would carry this process's peak across exec)."""
    probe = "\nprint(next(ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')))"
    out = subprocess.run([sys.executable, "-c", code + probe], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return int(out.stdout.split()[-1]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big-mib", type=int, default=200, help="size of the one-record log (memory)")
    args = ap.parse_args()
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse"))
    with tempfile.TemporaryDirectory() as d:
        log = make_log(Path(d) / "dedicated_log_torch_trace_big.log", args.mib)
        t = (time.time() - 60,) * 2
        os.utime(log, t)
        ours_cmd = [sys.executable, "-m", "magi_tui", "triage", str(log), "--json"]
        tl_cmd = [tlparse, str(log), "--no-browser", "--overwrite", "-o", str(Path(d) / "tl")]
        ours, theirs = [], []
        for _ in range(args.repeat):
            ours.append(timed(ours_cmd))
            theirs.append(timed(tl_cmd))
        a, b = statistics.median(ours), statistics.median(theirs)
        print(json.dumps({"log_mib": round(log.stat().st_size / 2**20, 1), "magi_triage_s": round(a, 2),
                          "tlparse_s": round(b, 2), "ratio_magi_over_tlparse": round(a / b, 2)}))
        big = big_record_log(Path(d) / "dedicated_log_torch_trace_one.log", args.big_mib)
        os.utime(big, t)
        base = peak_rss_mib("import magi_tui.model")
        rss = peak_rss_mib(f"from magi_tui.model import RunModel\nr = RunModel({str(big)!r}).load()\n"
                           "assert len(r.events) == 1, r.events")
        print(json.dumps({"record_mib": args.big_mib, "peak_rss_mib": round(rss), "baseline_rss_mib": round(base),
                          "x_record_size": round((rss - base) / args.big_mib, 2)}))


if __name__ == "__main__":
    main()
