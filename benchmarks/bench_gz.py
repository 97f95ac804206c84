"""Issue 32.7: ``magi-tui triage --json`` on a ``.log.gz`` against decompressing the same file.

Three gzip'ed logs: ``--blank-mib`` MiB of blank lines, ``--junk-mib`` MiB of lines that are no records,
and a real log (``tests/torchtrace/logs/jit_reset.log`` repeated to ``--real-mib`` MiB, as
``bench_log_triage.py`` makes it; also timed unpacked, the plain ``.log`` path). Each is timed in a fresh
process, as are the anchors: ``gzip -dc FILE > /dev/null`` and Python's ``gzip`` module reading it whole
(1 MiB at a time). Medians of ``--repeat`` runs, interleaved, and their ratios; the peak RSS of each
triage and whether it left anything in its TMPDIR (a private, empty one per run).

    python benchmarks/bench_gz.py [--blank-mib 64] [--junk-mib 64] [--real-mib 64] [--repeat 3]
                                  [--tree PATH]   # time another checkout (e.g. `git archive HEAD`)
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_log_triage import make_log  # noqa: E402

JUNK = b"some junk, not a TORCH_TRACE record\n"


def gzip_lines(path: Path, line: bytes, mib: int) -> Path:
    """``mib`` MiB of ``line`` repeated, gzip'ed (level 6) without holding it whole."""
    block = line * ((1 << 20) // len(line) + 1)
    block = block[: (1 << 20) - (1 << 20) % len(line)]
    c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    with open(path, "wb") as out:
        for _ in range(mib):
            out.write(c.compress(block))
        out.write(c.flush())
    return path


def timed(cmd: list[str] | str, env: dict | None = None, shell: bool = False,
          cwd: Path | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, shell=shell, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({proc.returncode})")
    return dt, usage.ru_maxrss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blank-mib", type=int, default=64)
    ap.add_argument("--junk-mib", type=int, default=64)
    ap.add_argument("--real-mib", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose magi_tui is timed")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-gz-"))
    try:
        logs = {}
        if args.blank_mib:
            logs["blank"] = gzip_lines(work / "dedicated_log_torch_trace_blank.log.gz", b"\n", args.blank_mib)
        if args.junk_mib:
            logs["junk"] = gzip_lines(work / "dedicated_log_torch_trace_junk.log.gz", JUNK, args.junk_mib)
        if args.real_mib:
            plain = make_log(work / "dedicated_log_torch_trace_real.log", args.real_mib)
            gz = work / "dedicated_log_torch_trace_real.log.gz"
            with open(plain, "rb") as src, gzip.open(gz, "wb", 6) as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            logs["real"] = gz
            logs["real_plain"] = plain
        read_py = ("import gzip,sys\nwith gzip.open(sys.argv[1],'rb') as f:\n"
                   "    while f.read(1 << 20): pass\n")
        times: dict[str, list[float]] = {}
        rss: dict[str, int] = {}
        leftovers: dict[str, list[str]] = {}
        for _ in range(args.repeat):
            for name, log in logs.items():
                tmp = work / f"tmp_{name}"
                tmp.mkdir(exist_ok=True)
                env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(args.tree)}
                dt, peak = timed([sys.executable, "-m", "magi_tui", "triage", "--json", str(log)], env=env,
                                 cwd=args.tree)
                times.setdefault(f"{name}: triage", []).append(dt)
                rss[name] = max(rss.get(name, 0), peak)
                leftovers[name] = [str(p.relative_to(tmp)) for p in tmp.rglob("*")]
                if name == "real_plain":
                    continue
                dt, _ = timed(f"gzip -dc {log} > /dev/null", shell=True)
                times.setdefault(f"{name}: gzip -dc", []).append(dt)
                dt, _ = timed([sys.executable, "-c", read_py, str(log)])
                times.setdefault(f"{name}: python gzip", []).append(dt)
        med = {k: round(statistics.median(v), 3) for k, v in times.items()}
        out: dict[str, object] = {"tree": str(args.tree), "sizes_mib": {"blank": args.blank_mib,
                                  "junk": args.junk_mib, "real": args.real_mib},
                                  "gz_bytes": {k: v.stat().st_size for k, v in logs.items()},
                                  "median_s": med, "peak_rss_kib": rss, "tmpdir_left": leftovers}
        ratios = {}
        for name in logs:
            if name == "real_plain":
                continue
            ratios[f"{name}: triage / gzip -dc"] = round(med[f"{name}: triage"] / med[f"{name}: gzip -dc"], 2)
            ratios[f"{name}: triage / python gzip"] = round(med[f"{name}: triage"] / med[f"{name}: python gzip"], 2)
        if "real" in logs:
            ratios["real: triage .log.gz / .log"] = round(med["real: triage"] / med["real_plain: triage"], 2)
        out["ratios"] = ratios
        print(json.dumps(out, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
