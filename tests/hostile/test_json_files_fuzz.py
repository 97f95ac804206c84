"""Issue 32.6: every JSON file a run holds, damaged or hostile, read through the real entry points.

``fix.json``, ``bisect.json``, ``metrics.json``, ``runtime.json`` and ``session.json``: each case is a real
valid file (a traced run's, or written by the real result classes) mutated — cut short, values swapped for
other types, nested tens of thousands deep, numbers too big for a float or for ``str``, control / bidi
characters, NaN, a wrong top-level type, duplicate keys, bytes damaged — and read the way a user reads it:

* ``magi-tui triage [--json]`` / ``metrics [--json]`` in-process through the CLI's ``main`` (with
  ``MAGI_TUI_DEBUG`` set, so its last-line-of-defence handler re-raises instead of hiding a bug) on a small run
  holding the damaged ``metrics.json`` / ``runtime.json`` / ``session.json``, or whose root holds the damaged
  ``fix.json`` (triage says what a fix proved);
* :func:`magi_tui.model.sources.fix_file.find_fix` and the lines the fix screen shows; the bisect view's loader
  (:func:`magi_tui.model.outputs.bisect_view.load_bisect`) and everything the bisect screen asks of its result;
* a sample of both on the real screens (Pilot): a notice, never a traceback, nothing unsafe on screen.

Held: no exception escapes, no case takes long against the valid file read the same way (an anchor measured
here), no escape byte (nor any other control, C1, bidi or surrogate character) reaches the text output, and a
file that cannot be read is said in one line. Seeded; ~20 s of CPU on two shared cores. Before these files were
read typed and bounded, 297 of the 5,000 cases raised (RecursionError, TypeError / AttributeError on a value of
another type, OverflowError on a huge number) and the fix screen's app exited with a traceback.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import random
import shutil
import signal
import statistics
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import pytest

from magi_format.text import UNSAFE_CHARS
from tests.hostile.hostile_run import BIDI, ESC, HOSTILE, LONG
from tests.support.paths import ROOT

#: a small run of our tracer (torch 2.13, CUDA): metrics.json on its compiles, runtime.json, session.json
SOURCE_RUN = ROOT / "tests/torchtrace/logs/cuda_2_11/runs/magi_depyf/run_20261124_205439/model_1_prog_rank_0"
SOURCE_FIX = ROOT / "tests/ui/data/fix/fix.json"
#: cases per file kind: 5,000 in all
CASES = {"fix": 1500, "bisect": 1400, "metrics": 800, "runtime": 650, "session": 650}
#: a case may take at most this many times the valid file's time through the same entry point (plus a floor
#: for a shared machine's hiccups): a hang, or work that grows with what an attacker writes, fails it
SLOWER = 40
FLOOR_S = 0.25
#: one case is stopped (and failed) after this long, so a real hang fails the test instead of stalling it
ALARM_S = 10

WEIRD: list[Any] = [None, True, False, 0, -1, 2**63, -(2**70), 1.5, -0.0, float("nan"), float("inf"),
                    float("-inf"), "", "x" * 5000, [], {}, ["a", 1, None], {"a": 1}, {"": [{}]}, HOSTILE, ESC,
                    BIDI, "\x00", "\ud800", "\u2028", "../../../etc/passwd", "/dev/zero", LONG, "nan", "1e999",
                    [[[[]]]], {"type": "x"}]
#: placeholders a value can be replaced with, substituted in the text after it is written
_DEEP, _BIG = "\ue000DEEP\ue000", "\ue000BIG\ue000"
BIG_NUMBERS = ["1e400", "-1e400", "1e-400", "1" * 400, "9" * 4300, "-" + "9" * 4299, "1" * 5000,
               "123456789012345678901234567890", "0.0000000000000000000000000001e-330", "-0", "1E+999999999"]


def _paths(obj: Any, at: tuple = ()) -> list[tuple]:
    """Every place in ``obj`` a value sits at (dict keys and list indices), the root included."""
    out = [at]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*at, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*at, i))
    return out


def _set(obj: Any, at: tuple, value: Any) -> Any:
    if not at:
        return value
    parent = obj
    for k in at[:-1]:
        parent = parent[k]
    parent[at[-1]] = value
    return obj


def _get(obj: Any, at: tuple) -> Any:
    for k in at:
        obj = obj[k]
    return obj


def _deep(rng: random.Random) -> str:
    n = rng.choice([65, 200, 999, 1000, 3000, 50_000, 200_000])
    kind = rng.random()
    if kind < 0.4:
        return "[" * n + "]" * n
    if kind < 0.7:
        return '{"a":' * n + "1" + "}" * n
    if kind < 0.85:
        return "[" * n  # and never closed
    return '[{"x":' * (n // 2) + "null" + "}]" * (n // 2)


def mutate(rng: random.Random, base: Any) -> bytes:
    """One damaged file made of ``base`` (a valid file's JSON value)."""
    obj = json.loads(json.dumps(base))
    for _ in range(rng.randint(1, 3)):
        paths = _paths(obj)
        at = rng.choice(paths)
        r = rng.random()
        if r < 0.30:
            obj = _set(obj, at, copy.deepcopy(rng.choice(WEIRD)))
        elif r < 0.42 and at:
            parent = _get(obj, at[:-1])
            if isinstance(parent, dict):
                parent.pop(at[-1], None)
            else:
                parent.pop(at[-1])
        elif r < 0.52:
            obj = _set(obj, at, _DEEP)
        elif r < 0.62:
            obj = _set(obj, at, _BIG)
        elif r < 0.77:  # control / bidi characters into a string where there is one
            strings = [p for p in paths if isinstance(_get(obj, p), str)]
            if strings:
                p = rng.choice(strings)
                s = _get(obj, p)
                cut = rng.randint(0, len(s))
                obj = _set(obj, p, s[:cut] + rng.choice([ESC, BIDI, HOSTILE, "\x1b[31m", "\x9b2J", "\u202e",
                                                         "\x00", "\r", "\x7f", "\ud800", "\n" * 3]) + s[cut:])
        elif r < 0.85:  # a number as a string, a string as a number, a list for an object
            v = _get(obj, at)
            swap = {int: str, float: str, bool: str, str: lambda s: len(s), dict: lambda d: list(d.values()),
                    list: lambda v: {str(i): x for i, x in enumerate(v)}, type(None): lambda _: 0}
            obj = _set(obj, at, swap[type(v)](v))
        elif r < 0.92:
            obj = rng.choice([[], [obj], "fix", 1, None, True, 1.5])  # the wrong top-level type
        else:
            # a key repeated with another type (the last one wins in every decoder)
            if isinstance(obj, dict) and obj:
                obj = {**obj, "\ue001dup": None}
    text = json.dumps(obj, ensure_ascii=rng.random() < 0.5, allow_nan=True, indent=rng.choice([None, 1, 2]))
    while f'"{_DEEP}"' in text:
        text = text.replace(f'"{_DEEP}"', _deep(rng), 1)
    while f'"{_BIG}"' in text:
        text = text.replace(f'"{_BIG}"', rng.choice(BIG_NUMBERS), 1)
    if "\ue001dup" in text:
        key = rng.choice([k for k in base if isinstance(k, str)] or ["x"]) if isinstance(base, dict) else "x"
        text = text.replace('"\ue001dup": null', f'{json.dumps(key)}: {json.dumps(rng.choice(WEIRD))}')
        text = text.replace('"\\ue001dup": null', f'{json.dumps(key)}: {json.dumps(rng.choice(WEIRD))}')
    data = text.encode("utf-8", "surrogatepass")
    r = rng.random()
    if r < 0.12:
        data = data[: rng.randint(0, len(data))]  # cut short
    elif r < 0.2:  # byte damage: invalid UTF-8, NUL, ESC, quotes and braces
        b = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            if b:
                b[rng.randrange(len(b))] = rng.choice([0, 0x0D, 0x80, 0xFF, 0x1B, 0x22, 0x7B, 0x5D, 0xC0])
        data = bytes(b)
    elif r < 0.23:
        data = rng.choice([b"", b" \n", b"\xef\xbb\xbf" + data, data + b"\n{}", b"null", b"\x00" * 64])
    return data


# -- the real files the cases are made of ----------------------------------------------------------------------
def _bisect_bases(run: Path) -> list[dict]:
    """Two bisect.json of the real result classes: a culprit pass with its graphs and its own diff; and a
    --compare-output bisect whose reference disagreed with itself."""
    from magi_tui.live.bisect import BisectResult, Step

    graph = {"compile_id": "1/0", "frame_id": 1, "frame": "forward", "run": str(run), "found_by":
             "the compile of application #3", "before": "timeline_events/files/0017_fullgraph_after_build_guards/guards.txt",
             "after": "timeline_events/files/0018_fullgraph_after_compile/metrics.json",
             "pass_diff": {"application": 3, "event": "post_grad_passes", "file": "post_grad_graph.py",
                           "before": {"run": str(run), "file": "timeline_events/files/0017_fullgraph_after_build_guards/guards.txt",
                                      "limit": 2},
                           "after": {"run": str(run), "file": "timeline_events/files/0039_fullgraph_after_compile/metrics.json",
                                     "limit": 3},
                           "added": 2, "removed": 1, "lines": ["- a", "+ b", "+ c"]}}
    culprit = BisectResult(["python", "prog.py"], "exit", reproduced=True, torch_runs=9, directory=str(run.parent),
                           versions={"torch": "2.13.0", "python": "3.11.7"}, trial_timeout_s=63.2,
                           as_reported={"reproduces": True, "why": "exit code 1", "run": str(run)},
                           advice=["seed the RNGs"], notes=["torch's bisector has aot_eager_decomp_partition_crossref"],
                           culprit={"backend": "inductor", "layer": "inductor", "subsystem": "post_grad_passes",
                                    "bisect_number": 3, "applications": 7, "debug_info": "pattern_matcher #3",
                                    "graph": graph, "run": str(run)})
    culprit.steps = [Step("program", None, None, "reproduces", 1.25, str(run), "as it is", "ValueError: boom"),
                     Step("eager", None, None, "passes", 0.8, None, "every graph on eager"),
                     Step("inductor", "post_grad_passes", 3, "reproduces", 2.5, str(run), "applications 0..3",
                          "exit code 1", graphs=[0, 1])]
    nondet = BisectResult(["python", "prog.py"], "output", directory=str(run.parent),
                          reference={"deterministic": False, "why": "number 3 moved", "moved": ["- 1.0", "+ 1.5"],
                                     "numbers_moved": [{"index": 3, "first": 1.0, "second": "nan"}],
                                     "numbers_changed": 1, "max_abs_diff": 0.5, "max_rel_diff": None,
                                     "exit_codes": [0, 0], "runs": [str(run), None], "rtol": 1e-5, "atol": 1e-8},
                          advice=["widen the tolerances"])
    nondet.steps = [Step(None, None, None, "reference", 1.0, str(run), "torch.compile disabled"),
                    Step(None, None, None, "nondeterministic", 1.1, None, "torch.compile disabled", "number 3 moved")]
    return [json.loads(json.dumps(b.as_json())) for b in (culprit, nondet)]


def _fix_base(run: Path) -> dict:
    """The fix view's real fix.json, its baseline this run (so triage says what it proved), with a reference
    and a rejected change added."""
    obj = json.loads(SOURCE_FIX.read_text())
    obj["baseline"]["run"] = str(run)
    obj["command"] = ["python", "prog.py"]
    obj["reference"] = {"deterministic": True, "why": None, "moved": [], "numbers_moved": [],
                        "numbers_changed": 2, "max_abs_diff": 1e-7}
    rejected = dict(obj["candidates"][0], change="compile x dynamic", kept=False, tried=True,
                    why="recompiles 1→1", outputs_equal=False, env={"TORCH_COMPILE_DYNAMIC_SOURCES": "L['x']"},
                    patch_proven=False)
    obj["candidates"].append(rejected)
    obj["advice"] = ["seed the RNGs"]
    obj["notes"] = ["one note"]
    return obj


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Any]:
    """A root holding the small run (its events cut to the compiles and what reads metrics.json, so a triage
    is ~6 ms), a ``fix_1/fix.json`` beside it, and a bisect folder."""
    tmp = tmp_path_factory.mktemp("jsonfuzz")
    root = tmp / "root"
    run = root / "magi_depyf" / "run_20261124_205439" / SOURCE_RUN.name
    shutil.copytree(SOURCE_RUN, run)
    shutil.rmtree(run / "compiled_functions")
    for p in run.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    tl = run / "timeline_events" / "timeline.jsonl"
    drop = ("cache_miss", "pre_grad", "post_grad", "aot_", "fx_graph_runnable", "inductor_codegen",
            "dynamo_capture", "shape_")
    tl.write_text("".join(ln for ln in tl.read_text().splitlines(keepends=True)
                          if not any(d in json.loads(ln)["name"] for d in drop)))
    session = json.loads((run / "timeline_events" / "session.json").read_text())
    session["outcome"] = {"ended_by": "program", "exit_code": 1, "interrupted": False, "script": "/tmp/w/prog.py",
                          "exception": {"type": "torch._dynamo.exc.Unsupported", "message": "boom", "origin": "compile",
                                        "compile_id": "0/0", "in_graph": False, "file": "/tmp/w/prog.py", "line": 35,
                                        "call_file": "/tmp/w/prog.py", "call_line": 70,
                                        "traceback": "Traceback (most recent call last):\n  boom\n"}}
    (run / "timeline_events" / "session.json").write_text(json.dumps(session))
    (root / "fix_1").mkdir()
    fix = _fix_base(run)
    (root / "fix_1" / "fix.json").write_text(json.dumps(fix, indent=2))
    bdir = tmp / "bisect_1"
    bdir.mkdir()
    bisects = _bisect_bases(run)
    (bdir / "bisect.json").write_text(json.dumps(bisects[0], indent=2))
    valid = [run / "runtime.json", run / "timeline_events" / "session.json",
             *sorted(run.glob("timeline_events/files/*/metrics.json"))]
    runtime, session, *metrics = [(f, json.loads(f.read_text())) for f in valid]
    return {"root": root, "run": run, "fix": fix, "bisects": bisects, "bdir": bdir, "metrics": metrics,
            "runtime": runtime, "session": session}


# -- the entry points --------------------------------------------------------------------------------------------
class Hang(Exception):
    pass


def _alarm(_sig, _frame):
    raise Hang(f"no answer in {ALARM_S} s")


def _unsafe(text: str) -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in text if ord(c) in UNSAFE_CHARS and c not in "\n"})


def _cli(argv: list[str]) -> str:
    """``magi-tui ARGV`` in this process (stdout and stderr), its exit code checked."""
    from magi_tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    text = out.getvalue() + err.getvalue()
    assert rc in (0, 1), f"exit {rc}: {text[-300:]}"
    return text


def _triage(world: dict, rng: random.Random) -> str:
    run = str(world["run"])
    argv = rng.choice([["triage", "--json", run], ["triage", run], ["triage", "--all", run]])
    text = _cli(argv)
    if "--json" in argv:
        json.loads(text)
    return text


def _metrics_cli(world: dict, rng: random.Random) -> str:
    run = str(world["run"])
    if rng.random() < 0.5:
        return _triage(world, rng)
    return _cli(rng.choice([["metrics", run], ["metrics", "--json", run]]))


def _one_line(problem: str | None) -> str:
    if problem is None:
        return ""
    assert problem and "\n" not in problem and len(problem) <= 2000, f"not one line: {problem[:300]!r}"
    return problem


def _fix_reader(world: dict, rng: random.Random) -> str:
    """find_fix, the lines the fix view shows of the result (at its width and the CLI's), and what the view
    reads of a change (its run, the baseline's run); every tenth case also through triage (what fix proved)."""
    from magi_tui.model.outputs.fixes import fix_lines
    from magi_tui.model.sources.fix_file import find_fix

    path, obj, problem = find_fix(world["root"])
    assert (obj is None) == (problem is not None) == (path is None)
    out = [_one_line(problem)]
    if obj is not None:
        for width in (44, 60):
            fix_lines(obj, width=width)
        for c in obj.get("candidates") or []:
            if isinstance(c, dict) and c.get("run"):
                Path(c["run"])
        base = (obj.get("baseline") or {}).get("run")
        if base:
            Path(base)
        # (the lines themselves are shown through literal(): the problem line is what is checked raw)
    if rng.random() < 0.1:
        out.append(_triage(world, rng))
    return "\n".join(out)


def _bisect_reader(world: dict, rng: random.Random) -> str:
    """The bisect view's loader (from the folder, or from a run three levels below it) and everything the bisect
    screen asks of what it loaded: each step's line and style, the culprit's lines, its run, both diffs."""
    from magi_tui.model.outputs.bisect_view import (
        culprit_diff,
        culprit_lines,
        culprit_pass_diff,
        load_bisect,
        outcome_line,
        step_line,
    )
    from magi_tui.ui.screens.bisect import _VERDICT_STYLE

    where = world["bdir"] if rng.random() < 0.8 else world["bdir"] / "a" / "b"
    obj, problem = load_bisect(where)
    assert (obj is None) != (problem is None)
    if obj is not None:
        for i, s in enumerate(obj.get("steps") or []):
            if isinstance(s, dict):
                step_line(i + 1, s)
                _VERDICT_STYLE.get(s.get("verdict"), "")
                if s.get("run"):
                    Path(s["run"])
        culprit_lines(obj)
        outcome_line(obj)
        c = obj.get("culprit") or {}
        if isinstance(c, dict):
            run = (c.get("graph") or {}).get("run") or c.get("run")
            if run:
                Path(run)
        for found in (culprit_pass_diff(obj), culprit_diff(obj)):
            assert isinstance(found, (str, tuple))
        if obj.get("directory"):
            str(obj["directory"])
    return _one_line(problem)


KINDS: dict[str, tuple[str, Callable]] = {
    # kind: (the file in world, the reader)
    "fix": ("fix", _fix_reader),
    "bisect": ("bisect", _bisect_reader),
    "metrics": ("metrics", _metrics_cli),
    "runtime": ("runtime", _triage),
    "session": ("session", _triage),
}


def _target(world: dict, kind: str, rng: random.Random) -> tuple[Path, Any]:
    """Which file a case damages, and the valid value it is made of."""
    if kind == "fix":
        return world["root"] / "fix_1" / "fix.json", world["fix"]
    if kind == "bisect":
        return world["bdir"] / "bisect.json", rng.choice(world["bisects"])
    if kind == "metrics":
        return rng.choice(world["metrics"])
    return world[kind]


def _time_again(world: dict, reader: Callable, path: Path, data: bytes, original: bytes,
                rng: random.Random) -> float:
    """The same damaged bytes read once more: how long a case takes when the machine did not pause."""
    path.write_bytes(data)
    t = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, ALARM_S)
    try:
        reader(world, rng)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        dt = time.perf_counter() - t
        path.write_bytes(original)
    return dt


def fuzz(world: dict, kind: str, n: int, seed: int) -> tuple[list[str], dict[str, float]]:
    """``n`` cases of ``kind``: the failures (one line each), and the timings."""
    os.environ["MAGI_TUI_DEBUG"] = "1"  # the CLI's last line of defence re-raises: a bug is seen as one
    reader = KINDS[kind][1]
    rng = random.Random(seed)
    # the anchor: the valid files, read the same way, a few times each
    originals: dict[Path, bytes] = {}
    anchor_times = []
    for _ in range(6):
        path, base = _target(world, kind, rng)
        originals.setdefault(path, path.read_bytes())
        t = time.perf_counter()
        text = reader(world, random.Random(len(anchor_times)))
        anchor_times.append(time.perf_counter() - t)
        assert not _unsafe(text), f"{kind}: the valid file gives unsafe output"
    anchor = statistics.median(anchor_times)
    bound = max(FLOOR_S, SLOWER * anchor)
    failures: list[str] = []
    worst = 0.0
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for i in range(n):
            path, base = _target(world, kind, rng)
            originals.setdefault(path, path.read_bytes())
            data = mutate(rng, base)
            path.write_bytes(data)
            t = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, ALARM_S)
            try:
                text = reader(world, rng)
            except BaseException as exc:  # noqa: BLE001  # every escape is a finding, KeyboardInterrupt aside
                if isinstance(exc, KeyboardInterrupt):
                    raise
                where = " < ".join(f"{Path(f.filename).name}:{f.lineno}"
                                   for f in reversed(traceback.extract_tb(exc.__traceback__)[-3:]))
                failures.append(f"{kind}#{i} {path.name}: {type(exc).__name__}: {str(exc)[:160]!r} at {where} "
                                f"(data {data[:80]!r}…)")
                continue
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                dt = time.perf_counter() - t
                worst = max(worst, dt)
                path.write_bytes(originals[path])  # one damaged file per case
            if dt > bound:  # slow again on the same bytes, or a pause of the shared machine's scheduler
                dt = _time_again(world, reader, path, data, originals[path], random.Random(i))
            if dt > bound:
                failures.append(f"{kind}#{i} {path.name}: {dt:.2f} s, the valid file {anchor * 1000:.1f} ms "
                                f"(data {data[:80]!r}…)")
            bad = _unsafe(text)
            if bad:
                failures.append(f"{kind}#{i} {path.name}: unsafe characters in the output {bad[:6]} "
                                f"(data {data[:80]!r}…)")
    finally:
        signal.signal(signal.SIGALRM, old)
        os.environ.pop("MAGI_TUI_DEBUG", None)
        for path, data in originals.items():
            path.write_bytes(data)
    return failures, {"anchor_s": anchor, "worst_s": worst, "bound_s": bound}


@pytest.mark.parametrize("kind", list(CASES))
def test_damaged_json_files_never_raise_hang_or_reach_the_terminal(world, kind):
    failures, times = fuzz(world, kind, CASES[kind], seed=sum(map(ord, kind)))
    assert not failures, f"{len(failures)} of {CASES[kind]} {kind} cases failed ({times}):\n" + "\n".join(failures[:12])


def test_the_cases_total_at_least_5000():
    assert sum(CASES.values()) >= 5000


# -- the screens ---------------------------------------------------------------------------------------------------
SCREEN_CASES = 6


async def test_damaged_fix_and_bisect_files_on_the_screens(world):
    """A sample of the damaged files on the real fix and bisect screens: a notice or the lines, never a traceback,
    nothing unsafe on screen; Enter / c / d on whatever loaded."""
    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.bisect import BisectScreen
    from magi_tui.ui.screens.fix import FixScreen
    from tests.support.pilot import unsafe_on_screen, wait_for

    rng = random.Random(32)
    fix_file = world["root"] / "fix_1" / "fix.json"
    bisect_file = world["bdir"] / "bisect.json"
    saved = fix_file.read_bytes(), bisect_file.read_bytes()
    shown = {"a notice": 0, "the result": 0}
    app = MagiApp(world["run"])
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            for i in range(2 * SCREEN_CASES):
                is_fix = i % 2 == 0
                path, base = (fix_file, world["fix"]) if is_fix else (bisect_file, rng.choice(world["bisects"]))
                # every other case a hostile value in a file that still has the right shape
                data = mutate(rng, base) if i % 4 < 2 else json.dumps(
                    _set(json.loads(json.dumps(base)), rng.choice([p for p in _paths(base) if p]), HOSTILE)).encode()
                path.write_bytes(data)
                screen = FixScreen(world["root"]) if is_fix else BisectScreen(world["bdir"])
                await app.push_screen(screen)
                if is_fix:
                    await wait_for(pilot, lambda: screen.loaded, what="the fix view")
                else:
                    await wait_for(pilot, lambda: "reading" not in str(screen.query_one("#bisect-status").render()),
                                   what="the bisect view")
                await pilot.pause()
                assert not unsafe_on_screen(app), (i, data[:200])
                shown["a notice" if screen.result is None else "the result"] += 1
                for key in (("enter", "c") if is_fix else ("enter", "c", "d")):
                    await pilot.press(key)
                    await pilot.pause()
                    while app.screen is not screen:  # a run or a diff opened: back to the screen
                        app.pop_screen()
                        await pilot.pause()
                assert not unsafe_on_screen(app), (i, data[:200])
                app.pop_screen()
                await pilot.pause()
            assert app.is_running
    finally:
        fix_file.write_bytes(saved[0])
        bisect_file.write_bytes(saved[1])
    assert all(shown.values()), shown  # both ways were seen


def test_the_cases_cover_every_kind_of_damage(world):
    """What :func:`mutate` makes of a valid file: each kind of damage the issue names, often enough."""
    from magi_tui.model.sources.safejson import too_deep

    rng = random.Random(7)
    seen: dict[str, int] = dict.fromkeys(["not JSON", "nested deep", "huge number", "NaN", "control or bidi",
                                          "wrong top-level type", "a wrong type inside"], 0)
    for _ in range(1000):
        data = mutate(rng, world["fix"])
        text = data.decode("utf-8", "replace")
        if too_deep(text, 64):
            seen["nested deep"] += 1
        if any(n in text for n in ("1e400", "9" * 4299, "1" * 400)):
            seen["huge number"] += 1
        if "NaN" in text or "Infinity" in text:
            seen["NaN"] += 1
        if any(c in text for c in ("\u001b", "\u202e", "\u009b", "\x1b", "\u0000", "\ud800")) \
                or any(c in text for c in "\x1b\u202e\x9b\x00"):
            seen["control or bidi"] += 1
        try:
            v = json.loads(text)
        except (ValueError, RecursionError):
            seen["not JSON"] += 1
            continue
        if not isinstance(v, dict):
            seen["wrong top-level type"] += 1
        elif any(not isinstance(v.get(k), type(world["fix"][k])) for k in world["fix"] if k in v):
            seen["a wrong type inside"] += 1
    assert all(n >= 30 for n in seen.values()), seen


# -- named cases: what a user sees ------------------------------------------------------------------------------
def test_a_deeply_nested_metrics_json_is_no_metrics_not_a_crash(world, monkeypatch):
    monkeypatch.setenv("MAGI_TUI_DEBUG", "1")
    f, _base = world["metrics"][1]
    saved = f.read_bytes()
    try:
        f.write_text('{"co_name": ' + "[" * 100_000 + "]" * 100_000 + "}")
        doc = json.loads(_cli(["triage", "--json", str(world["run"])]))
        assert doc["status"] in ("ok", "degraded", "failed")
        table = _cli(["metrics", str(world["run"])])
        assert "no metrics" in table  # that compile's metrics are not read; the others are
        assert table.count(" ok ") >= 2
    finally:
        f.write_bytes(saved)


@pytest.mark.parametrize("text, said", [
    ('{"baseline": [1]}', "is damaged: Expected `object | null`, got `array` - at `$.baseline`"),
    ('{"candidates": [{"graph_breaks": "1"}]}', "at `$.candidates[0].graph_breaks`"),
    ('{"runs": 1e400}', "is damaged"),
    ('{"runs": "\\ud800"}', "is damaged: a value of another type"),
    ("[" * 70 + "]" * 70, "nests deeper than 64 levels"),
    ('{"error": "\x1b[2J"', "is not valid JSON"),
    ("", "is empty"),
])
def test_a_damaged_fix_json_is_said_in_one_line(tmp_path, text, said):
    from magi_tui.model.sources.fix_file import find_fix

    (tmp_path / "fix.json").write_text(text, encoding="utf-8", errors="surrogatepass")
    path, obj, problem = find_fix(tmp_path)
    assert path is None and obj is None and problem is not None
    assert said in problem and str(tmp_path) in problem and not _unsafe(problem), problem


def test_an_oversized_fix_json_is_not_read(tmp_path, monkeypatch):
    from magi_tui.model.sources import fix_file

    monkeypatch.setattr(fix_file, "MAX_FIX_JSON", 1000)
    (tmp_path / "fix.json").write_text(json.dumps({"notes": ["x" * 2000]}))
    assert "is over 1,000 bytes: not read" in fix_file.find_fix(tmp_path)[2]


def test_nan_and_infinity_in_a_bisect_json_are_read(world, tmp_path):
    """Python's json writes NaN and Infinity (msgspec refuses them): read through the stdlib, then typed."""
    from magi_tui.model.outputs.bisect_view import culprit_lines, load_bisect, step_line

    obj = json.loads(json.dumps(world["bisects"][1]))
    obj["steps"][0]["seconds"] = float("nan")
    obj["steps"][1]["seconds"] = float("inf")
    (tmp_path / "bisect.json").write_text(json.dumps(obj))
    got, problem = load_bisect(tmp_path / "magi_depyf" / "run_1")  # found from a run below it, too
    assert problem is None and got is not None
    assert "nan" in step_line(1, got["steps"][0]) and "inf" in step_line(2, got["steps"][1])
    assert culprit_lines(got) == culprit_lines(obj)


def test_the_valid_files_read_as_before(world):
    """Typed, a valid file gives its readers what the raw JSON gave them."""
    from magi_tui.model.outputs.bisect_view import culprit_lines, load_bisect, step_line
    from magi_tui.model.outputs.fixes import fix_lines
    from magi_tui.model.sources.fix_file import find_fix
    from magi_tui.model.sources.safejson import metrics_or_none

    _path, fix, problem = find_fix(world["root"])
    assert problem is None and fix_lines(fix) == fix_lines(world["fix"])
    for base in world["bisects"]:
        (world["bdir"] / "bisect.json").write_text(json.dumps(base))
        got, problem = load_bisect(world["bdir"])
        assert problem is None and culprit_lines(got) == culprit_lines(base)
        assert [step_line(i, s) for i, s in enumerate(got["steps"])] == \
            [step_line(i, s) for i, s in enumerate(base["steps"])]
    for f, base in world["metrics"]:
        assert metrics_or_none(f.read_text()) == {k: v for k, v in base.items() if v is not None}


def test_a_file_name_that_is_not_utf8_is_read_and_shown_escaped(world, monkeypatch):
    """A lone surrogate is what Python's json writes for such a name (``\\udcff``): read, never printed raw."""
    monkeypatch.setenv("MAGI_TUI_DEBUG", "1")
    f, base = world["metrics"][0]
    saved = f.read_bytes()
    try:
        f.write_text(json.dumps(dict(base, co_filename="/tmp/w/pr\udcffog.py", fail_user_frame_filename=None)))
        out = _cli(["triage", str(world["run"])]) + _cli(["triage", "--json", str(world["run"])])
        assert "pr\\udcffog.py" in out and not _unsafe(out)
    finally:
        f.write_bytes(saved)
