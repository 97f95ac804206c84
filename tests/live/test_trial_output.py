"""Issue 32 (4, 5, 3): a trial's memory is bounded whatever the program prints (its pipes read as they are
written: a tail and the numbers kept, not the whole output), a child left holding stdout does not stall it
(the trial waits on the process, not its pipes), and a trial's default time limit comes from the first run.
Real processes, no torch."""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

import pytest

from magi_tui.cli import main
from magi_tui.live import bisect as bisect_module
from magi_tui.live.trial import (
    MAX_KEEP,
    _NumberScanner,
    compare_printed,
    default_timeout,
    parse_numbers,
    run_trial,
)
from tests.support import slow

REPO = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _gone(pid: int, within: float = 5.0) -> bool:
    end = time.monotonic() + within
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return not _alive(pid)


# -- numbers read as they arrive ---------------------------------------------------------------------------

def test_numbers_read_piece_by_piece_are_those_of_the_whole_text():
    rng = random.Random(32)
    words = ["1.5", "-2e-3", "nan", "inf", "x_2", "step10", "tensor([1., 2.5])", "é", "€3", "+.5", "a-5",
             "1,2;3", "v1.2.3", "", "\n", "\t", " ", "-", "+", ".", "1e", "0.1\n", "(4)"]
    for _ in range(100):
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(1, 60)))
        if rng.random() < 0.2:  # a line far longer than the scanner's carry, no newline in it
            text += " ".join(["9.25", "abc", "(7,", "8)"] * 5_000)
        data = text.encode()
        scanner = _NumberScanner(cap=10 ** 9)
        i = 0
        while i < len(data):
            n = rng.choice([1, 2, 3, 7, 100, 65536])
            scanner.feed(data[i:i + n])  # multi-byte characters cut between pieces too
            i += n
        scanner.feed(b"", final=True)
        expected = parse_numbers(data.decode())
        assert scanner.total == len(expected)
        assert scanner.values.tolist() == pytest.approx(expected, nan_ok=True)


def test_numbers_past_the_cap_are_counted_and_compared_by_count(tmp_path):
    prog = "import sys\nfor i in range(int(sys.argv[1])): print(i)\n"
    a = run_trial([sys.executable, "-c", prog, "3000"], root=tmp_path)
    b = run_trial([sys.executable, "-c", prog, "3001"], root=tmp_path)
    assert a.number_count == 3000 and a.numbers == [float(i) for i in range(3000)]
    assert len(a.stdout) <= MAX_KEEP
    assert compare_printed(a, b) == "printed 3001 number(s), the reference 3000"
    assert compare_printed(a, a) is None


# -- bounded memory --------------------------------------------------------------------------------------

BIG = """\
import sys
line = b"x" * 99 + b"\\n"
chunk = line * 16384                      # 1.6 MB
w = sys.stdout.buffer
for _ in range(int(sys.argv[1]) * (1 << 20) // len(chunk)):
    w.write(chunk)
w.write(b"loss 1.5 2.5\\n")
w.flush()
sys.stderr.write("ValueError: boom\\n")
sys.exit(1)
"""

MEASURE = """\
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], capture_output=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)
sys.stdout.write(p.stdout.decode())
"""


def test_a_program_printing_200_mb_keeps_the_bisect_small(tmp_path):
    """magi-tui's peak RSS (with its trials': each program here stays small) for a bisect whose trials print
    200 MB each: bounded (it held every byte, 640 MB for one such trial, before issue 32)."""
    big = tmp_path / "big.py"
    big.write_text(BIG)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t0 = time.monotonic()
    out = slow.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "magi_tui", "bisect", "-o",
                    str(tmp_path / "runs"), "--json", "--", sys.executable, "-c", BIG, "200"],
                   capture_output=True, env=env, timeout=120)
    seconds = time.monotonic() - t0
    first, _, rest = out.stdout.decode().partition("\n")
    peak_kb, rc = (int(x) for x in first.split())
    res = json.loads(rest)
    assert rc == 0 and res["reproduced"] is True
    # the program as it is reproduces (exit 1), eager too, then the run without torch.compile: the program itself
    assert [s["verdict"] for s in res["steps"]] == ["reproduces", "reproduces", "reproduces"]
    assert res["steps"][0]["why"] == "exited with code 1: ValueError: boom"
    assert peak_kb < 150 * 1024, f"peak RSS {peak_kb / 1024:.0f} MiB for 2 x 200 MB printed"
    assert seconds < 60


def test_the_tail_and_the_numbers_of_a_big_output(tmp_path):
    r = run_trial([sys.executable, "-c", BIG, "20"], root=tmp_path)
    assert r.returncode == 1 and r.output_bytes[0] > 19 * 10 ** 6
    assert len(r.stdout) == MAX_KEEP and r.stdout.endswith("loss 1.5 2.5\n")
    assert r.numbers == [1.5, 2.5] and r.last_error_line() == "ValueError: boom"


# -- a child left holding stdout --------------------------------------------------------------------------

DAEMON = """\
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session={new_session})
open(sys.argv[1], "w").write(str(child.pid))
print("1.5 done", flush=True)
"""


@pytest.mark.parametrize("new_session", [False, True], ids=["same-group", "own-session"])
def test_a_child_left_holding_stdout_does_not_stall_the_trial(tmp_path, new_session):
    """It ends with its program, keeps its output and exit code, and the child (in the program's group, or
    in a session of its own but holding the pipe) is killed."""
    pid_file = tmp_path / "pid"
    t0 = time.monotonic()
    r = run_trial([sys.executable, "-c", DAEMON.format(new_session=new_session), str(pid_file)], root=tmp_path)
    assert time.monotonic() - t0 < slow.limit(5)
    assert r.returncode == 0 and r.error is None and r.numbers == [1.5]
    assert _gone(int(pid_file.read_text()))


def test_a_bisect_of_a_program_leaving_a_child_finishes_promptly(tmp_path, capsys):
    pid_file = tmp_path / "pid"
    t0 = time.monotonic()
    code = main(["bisect", "-o", str(tmp_path / "runs"), "--json", "--", sys.executable, "-c",
                 DAEMON.format(new_session=False), str(pid_file)])
    assert code == 0 and time.monotonic() - t0 < slow.limit(15)
    out = json.loads(capsys.readouterr().out)
    # the program as it is exits 0: the failure did not reproduce, no layer is run
    assert out["reproduced"] is False and out["runs"] == 1 and out["interrupted"] is False
    assert _gone(int(pid_file.read_text()))


# -- the default time limit ------------------------------------------------------------------------------

def test_the_default_limit_is_three_times_the_first_run_plus_a_minute():
    assert default_timeout(10.0) == 90.0


def test_runs_after_the_first_get_a_limit_from_it(tmp_path, capsys, monkeypatch):
    """The first run sets the others' limit (here 3x + 1 s, not + 60 s, to keep the test short); a later run
    that hangs is stopped there and reproduces, as with ``--timeout``. (The first run, the program as it is,
    fails: the failure reproduces as reported, so the bisect goes on to the layers.)"""
    monkeypatch.setattr(bisect_module, "default_timeout", lambda s: 3 * s + 1)
    count = tmp_path / "count"
    prog = (f"import os, sys, time\np = {str(count)!r}\nn = len(open(p).read()) if os.path.exists(p) else 0\n"
            "open(p, 'a').write('x')\nif n:\n    time.sleep(120)\nsys.exit(1)\n")
    t0 = time.monotonic()
    assert main(["bisect", "-o", str(tmp_path / "runs"), "--json", "--", sys.executable, "-c", prog]) == 0
    assert time.monotonic() - t0 < slow.limit(20)
    out = json.loads(capsys.readouterr().out)
    first = out["steps"][0]["seconds"]
    assert out["trial_timeout_s"] == pytest.approx(3 * first + 1, abs=0.01)
    assert out["steps"][0]["verdict"] == "reproduces" and out["steps"][0]["why"] == "exited with code 1"
    assert out["steps"][1]["verdict"] == "reproduces" and "ran past the time limit" in out["steps"][1]["why"]
    assert out["interrupted"] is False and out["signal"] is None
    # --timeout overrides it
    assert main(["bisect", "-o", str(tmp_path / "runs2"), "--timeout", "0.5", "--json", "--", sys.executable, "-c",
                 "print(1)"]) == 0
    assert json.loads(capsys.readouterr().out)["trial_timeout_s"] == 0.5
