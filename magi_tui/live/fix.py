"""``magi-tui fix``: try the changes triage suggests, re-run the program with each, keep what is proven.

1. The program runs once, traced (the baseline).
2. Its analysis gives candidates (:mod:`magi_tui.model.outputs.fixes`): environment variables and config lines
   for its recompiles and graph breaks, each with a patch for the user's script. When there is one, the
   baseline runs again, alone, before any of them (:func:`magi_tui.live.trial.check_determinism`): a program
   whose two runs print other numbers (random numbers without a seed, timestamps, pids) is
   ``nondeterministic``: no change can be proven by comparing its outputs with the baseline's, so every
   candidate is rejected, untried, saying so, with what moved and what to do.
3. Each candidate is one more traced run (:func:`magi_tui.live.trial.run_trial`, the bisect's runner, with
   the candidate's variables set from outside). A dynamic-sources candidate whose run still recompiles on
   another source is grown by it and run again. Then the kept candidates together, once.
4. A candidate is *kept* when the run exits as the baseline did, prints the same numbers (within
   rtol/atol) and has fewer graph breaks or recompiles and more of neither. Compile time is measured and
   shown, but not a reason to keep: two runs of the same program on a busy machine differ by more than most
   changes save.

The best change is the kept one (or the kept ones together, when that run is kept and no worse) with the
fewest breaks + recompiles, then the shortest compile. Every run is a run directory under the fix's
folder, so any two can be compared with ``magi-tui compare``. Nothing here imports Textual or torch.
"""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from magi_tui.live.result_file import write_json_whole
from magi_tui.live.trial import (
    DEFAULT_ATOL,
    DEFAULT_RTOL,
    Overrides,
    TrialResult,
    check_determinism,
    compare_printed,
    default_timeout,
    determinism_advice,
    kill_running_trials,
    new_trials_dir,
    run_trial,
)
from magi_tui.model.outputs.fixes import Candidate, combine, config_patch, derive, patched, refine
from magi_tui.model.sources.fix_file import FIX_FILE

DEFAULT_MAX_RUNS = 8


@dataclass
class Measure:
    graph_breaks: int | None = None
    recompiles: int | None = None
    compile_s: float | None = None
    worklist: list[str] = field(default_factory=list)
    run: str | None = None
    exit_code: int | None = None
    problem: str | None = None   # why the run could not be measured
    analysis: Any = field(default=None, repr=False)  # the run's analysis (to refine a candidate), not in JSON

    def as_json(self) -> dict[str, Any]:
        return {"graph_breaks": self.graph_breaks, "recompiles": self.recompiles,
                "compile_s": None if self.compile_s is None else round(self.compile_s, 4),
                "exit_code": self.exit_code, "run": self.run, "worklist": self.worklist}


@dataclass
class Tried:
    candidate: Candidate
    measure: Measure
    outputs_equal: bool | None    # None: not run (a nondeterministic baseline)
    kept: bool
    why: str
    seconds: float = 0.0
    #: False: not run (the baseline's two runs disagree: nothing could prove it)
    tried: bool = True
    #: the patch applied to a copy of the script and run without the candidate's variables: True when that
    #: run is kept by the same rule, False when not, None when not tried
    patch_proven: bool | None = None
    patch_why: str | None = None
    patch_run: str | None = None

    def as_json(self) -> dict[str, Any]:
        c = self.candidate
        return {"change": c.change, "env": dict(c.env), "config": list(c.config), "patch": c.patch, "code": c.code,
                "graph_breaks": self.measure.graph_breaks, "recompiles": self.measure.recompiles,
                "compile_s": None if self.measure.compile_s is None else round(self.measure.compile_s, 4),
                "outputs_equal": self.outputs_equal, "kept": self.kept,
                "key": c.key, "targets": list(c.targets), "why": self.why,
                "exit_code": self.measure.exit_code, "run": self.measure.run,
                "resolved": [i for i in c.targets if i not in self.measure.worklist] if self.tried else [],
                "patch_proven": self.patch_proven, "patch_why": self.patch_why, "patch_run": self.patch_run,
                "tried": self.tried}


@dataclass
class FixResult:
    command: list[str]
    directory: Path | None
    baseline: Measure | None = None
    tried: list[Tried] = field(default_factory=list)
    best: Tried | None = None
    runs: int = 0
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False             # stopped by a signal before it finished
    signal: str | None = None             # which ("SIGTERM", "SIGHUP", "SIGINT")
    trial_timeout_s: float | None = None  # each run's time limit (--timeout, else from the baseline run)
    #: the baseline run twice (:func:`magi_tui.live.trial.check_determinism`); None when not checked (nothing
    #: to try, or the baseline could not be read)
    reference: dict | None = None
    #: what to do next, in words (seed the RNGs, widen the tolerances)
    advice: list[str] = field(default_factory=list)

    @property
    def nondeterministic(self) -> bool:
        return self.reference is not None and self.reference.get("deterministic") is False

    @property
    def verdict(self) -> str:
        """``proven`` (a best change), ``no_proven_change``, ``nondeterministic`` (the baseline disagreed with
        itself: nothing tried), ``error`` (it could not run) or ``interrupted``."""
        if self.error:
            return "interrupted" if self.interrupted else "error"
        if self.nondeterministic:
            return "nondeterministic"
        return "proven" if self.best is not None else "no_proven_change"

    def as_json(self) -> dict[str, Any]:
        b = self.baseline
        return {"verdict": self.verdict, "reference": self.reference, "advice": self.advice,
                "command": self.command, "directory": None if self.directory is None else str(self.directory),
                "baseline": None if b is None else b.as_json(),
                "candidates": [t.as_json() for t in self.ordered()],
                "best": None if self.best is None else self.best.as_json(),
                "runs": self.runs, "error": self.error, "notes": self.notes,
                "interrupted": self.interrupted, "signal": self.signal,
                "trial_timeout_s": None if self.trial_timeout_s is None else round(self.trial_timeout_s, 3)}

    def partial_json(self) -> dict[str, Any]:
        """What ``fix.json`` holds while the fix runs (rewritten before every run): interrupted, as it stays
        if the fix is killed outright (SIGKILL) and never writes its result."""
        out = self.as_json()
        out["interrupted"] = True
        if out["error"] is None:
            out["error"] = "the fix did not finish (it was still running when this was written)"
        return out

    def ordered(self) -> list[Tried]:
        """The best first, then kept ones by score, then the rest in the order tried."""
        kept = sorted((t for t in self.tried if t.kept and t is not self.best), key=_score)
        rest = [t for t in self.tried if not t.kept and t is not self.best]
        return ([self.best] if self.best is not None else []) + kept + rest


def _score(t: Tried) -> tuple:
    """Fewest breaks + recompiles, then the narrowest change (fewest settings: a combination last)."""
    m = t.measure
    return ((m.graph_breaks or 0) + (m.recompiles or 0), t.candidate.key.count("+"))


def measure(result: TrialResult) -> Measure:
    """Breaks, recompiles and compile time of a trial's run directory."""
    from magi_tui.model.analysis.checks import analyse
    from magi_tui.model.analysis.worklist import worklist
    from magi_tui.model.run import RunModel

    m = Measure(exit_code=result.returncode, run=None if result.run_dir is None else str(result.run_dir))
    if result.run_dir is None or not Path(result.run_dir).is_dir():
        m.problem = result.error or "the program wrote no run directory (is it a python script.py command?)"
        return m
    run = RunModel(Path(result.run_dir)).load()
    if run.error:
        m.problem = run.error
        return m
    a = analyse(run)
    m.graph_breaks, m.recompiles = a.graph_break_total, len(a.recompiles)
    m.compile_s = a.compile_time.get("total_s")
    m.worklist = [e["id"] for e in worklist(a)]
    m.analysis = a
    return m


def run_guards(run_dir: str | None, limit: int = 64) -> list[list[str]]:
    """The guard lines of every cache entry a trial's run recorded (``compiled_functions/*/entry_*/guards.txt``)."""
    from magi_tui.model.analysis.guards import read_guards

    if not run_dir:
        return []
    base = Path(run_dir)
    out: list[list[str]] = []
    for p in sorted(base.glob("compiled_functions/*/entry_*/guards.txt"))[:limit]:
        if p.is_symlink():
            continue
        lines = read_guards(p, base)
        if lines:
            out.append(lines)
    return out


def new_fix_dir(root: str | Path) -> Path:
    """A fresh ``ROOT/fix_<YYYYmmdd_HHMMSS>[_<n>]`` (:func:`magi_tui.live.trial.new_trials_dir`)."""
    return new_trials_dir(root, "fix")


def script_of(command: list[str]) -> str | None:
    """The script of a ``python [flags] script.py args`` command (the file a patch is against)."""
    from magi_tui.live.runner import tracer_command

    argv = tracer_command(command, "runs")
    if argv == list(command):
        return None
    return argv[argv.index("-o") + 2]


class Cancelled(Exception):
    """The fix was stopped (:meth:`Fixer.interrupt`): no other run starts."""


class Fixer:
    def __init__(self, command: list[str], directory: Path, *, max_runs: int = DEFAULT_MAX_RUNS,
                 rtol: float | None = None, atol: float | None = None, timeout: float | None = None,
                 cwd: str | None = None, on_step: Callable[[str], None] | None = None,
                 cancel: threading.Event | None = None) -> None:
        self.command = list(command)
        self.directory = Path(directory)
        self.max_runs = max(2, max_runs)
        self.rtol = DEFAULT_RTOL if rtol is None else rtol
        self.atol = DEFAULT_ATOL if atol is None else atol
        #: each run's time limit (``--timeout``); None: none on the baseline, then
        #: :func:`~magi_tui.live.trial.default_timeout` of the baseline on the others
        self.timeout = timeout
        self.cwd = cwd
        self.on_step = on_step or (lambda _line: None)
        self.result = FixResult(self.command, self.directory, trial_timeout_s=timeout)
        self._reference: TrialResult | None = None
        #: set by :meth:`interrupt` (or from another thread): the running trial is killed, no other starts
        self.cancel = cancel if cancel is not None else threading.Event()
        self.signal: str | None = None
        #: runs made outside ``--max-runs`` (the baseline's second run, the determinism check)
        self._uncounted = 0

    def interrupt(self, signo: int) -> None:
        """A signal stops the fix (:func:`magi_tui.live.trial.stop_on_signals` calls this): the running
        trial is killed, no other starts, and ``fix.json`` says ``interrupted`` and which signal."""
        if self.signal is None:
            try:
                self.signal = signal.Signals(signo).name
            except ValueError:
                self.signal = f"signal {signo}"
        self.cancel.set()
        kill_running_trials()

    def _run(self, overrides: Overrides, command: list[str] | None = None,
             env: dict[str, str] | None = None) -> TrialResult:
        if self.cancel.is_set():
            raise Cancelled
        write_fix_json(self.result, partial=True)  # what is left if the fix is killed outright during the run
        self.result.runs += 1
        trial = run_trial(command or self.command, overrides, root=self.directory,
                          timeout=self.result.trial_timeout_s, cwd=self.cwd, env=env, cancel=self.cancel)
        if self.cancel.is_set():
            raise Cancelled  # killed half way: its verdict means nothing
        if self.result.trial_timeout_s is None and trial.error is None:
            self.result.trial_timeout_s = default_timeout(trial.seconds)  # the baseline sets the others' limit
        return trial

    def _left(self) -> int:
        return self.max_runs - (self.result.runs - self._uncounted)

    def _judge(self, c: Candidate, trial: TrialResult, m: Measure) -> Tried:
        ref, base = self._reference, self.result.baseline
        assert ref is not None and base is not None
        diff = compare_printed(ref, trial, self.rtol, self.atol)
        same_exit = trial.returncode == ref.returncode
        outputs_equal = diff is None and same_exit
        if m.problem:
            return Tried(c, m, outputs_equal, False, m.problem, trial.seconds)
        if not same_exit:
            return Tried(c, m, False, False, f"exit code {trial.returncode} where the baseline exited "
                                             f"{ref.returncode}", trial.seconds)
        if diff is not None:
            return Tried(c, m, False, False, f"output changed: {diff}", trial.seconds)
        db = (m.graph_breaks or 0) - (base.graph_breaks or 0)
        dr = (m.recompiles or 0) - (base.recompiles or 0)
        if db > 0 or dr > 0:
            return Tried(c, m, True, False, f"more {'graph breaks' if db > 0 else 'recompiles'} than the baseline",
                         trial.seconds)
        if db == 0 and dr == 0:
            return Tried(c, m, True, False, "no fewer graph breaks or recompiles", trial.seconds)
        parts = []
        if db:
            parts.append(f"graph breaks {base.graph_breaks}→{m.graph_breaks}")
        if dr:
            parts.append(f"recompiles {base.recompiles}→{m.recompiles}")
        return Tried(c, m, True, True, ", ".join(parts) + ", same exit code and numbers", trial.seconds)

    def _try(self, c: Candidate) -> Tried:
        ov = Overrides(env=tuple(c.env.items()),
                       logging_functions=tuple(c.hooks.get("reorderable_logging_functions", ())))
        self.on_step(f"trying: {c.change}")
        trial = self._run(ov)
        m = measure(trial)
        t = self._judge(c, trial, m)
        self.on_step(f"  {'kept' if t.kept else 'rejected'}: {t.why}")
        return t

    def run(self) -> FixResult:
        """The fix; a signal (:meth:`interrupt`) stops it before its next run, with the result so far."""
        res = self.result
        try:
            self._fix()
        except Cancelled:
            res.error = f"interrupted by {self.signal}" if self.signal else "cancelled"
        if self.signal is not None or self.cancel.is_set():
            res.interrupted, res.signal = True, self.signal
        return res

    def _fix(self) -> FixResult:
        res = self.result
        script = script_of(self.command)
        if script is None:
            res.error = "magi-tui fix runs python script.py commands (the tracer runs the script)"
            return res
        self.on_step("baseline: the program as it is, traced")
        ref = self._run(Overrides())
        self._reference = ref
        res.baseline = measure(ref)
        if res.baseline.problem:
            res.error = f"the baseline run cannot be read: {res.baseline.problem}"
            if ref.stderr:
                res.notes.append("its stderr ends: " + " | ".join(ref.stderr.strip().splitlines()[-3:]))
            return res
        if ref.returncode not in (0,):
            res.notes.append(f"the baseline exited {ref.returncode}: candidates must exit the same way")
        cands = derive(res.baseline.analysis)
        for c in cands:
            c.patch = config_patch(script, c.config)
        if not cands:
            res.notes.append("nothing to try: no recompile or graph break with a change that needs no code edit")
        elif not self._reproducible(ref, cands):
            return res
        for c in cands:
            if c.not_run:  # a code edit: shown with its reason, never run nor called proven here
                res.tried.append(Tried(c, Measure(), None, False, c.not_run, tried=False))
                continue
            if self._left() < 1:
                res.notes.append(f"--max-runs reached: {c.change} not tried")
                continue
            t = self._try(c)
            while not t.kept and t.outputs_equal and self._left() > 0:
                grown = refine(c, t.measure.analysis, run_guards(t.measure.run)) \
                    if t.measure.analysis is not None else None
                if grown is None:
                    break
                grown.patch = config_patch(script, grown.config)
                res.tried.append(t)
                c, t = grown, self._try(grown)
            res.tried.append(t)
        kept = sorted((t for t in res.tried if t.kept), key=_score)
        best = kept[0] if kept else None
        if len(kept) > 1 and _score(kept[0])[0] > 0:  # the best alone leaves something: try them together
            # with the best, each kept change that removed something the ones before it left (a greedy cover)
            left = set(kept[0].measure.worklist)
            chosen = [kept[0]]
            for t in kept[1:]:
                gain = left - set(t.measure.worklist)
                if gain:
                    chosen.append(t)
                    left -= gain
            if len(chosen) > 1 and self._left() > 0:
                combo = combine([t.candidate for t in chosen])
                combo.patch = config_patch(script, combo.config)
                t = self._try(combo)
                res.tried.append(t)
                if t.kept and _score(t)[0] < _score(kept[0])[0]:  # together only when it removes more than the best
                    best = t
            elif len(chosen) > 1:
                res.notes.append("--max-runs reached: the kept changes were not tried together")
        res.best = best
        if best is not None and best.candidate.config:
            if self._left() > 0:
                self._prove_patch(best, script)
            else:
                res.notes.append("--max-runs reached: the best change's patch was not run")
        return res

    def _reproducible(self, ref: TrialResult, cands: list[Candidate]) -> bool:
        """The baseline once more, alone, before any candidate (outside ``--max-runs``): True when its two runs
        agree (the same exit code and numbers within the tolerances); else every candidate is rejected untried,
        saying why, and the result says what moved and what to do."""
        res = self.result
        self.on_step("baseline again: does the program print the same numbers twice?")
        again = self._run(Overrides())
        self._uncounted += 1
        facts = check_determinism(ref, again, self.rtol, self.atol)
        res.reference = facts
        if facts["deterministic"]:
            self.on_step("  the same exit code and numbers" + (
                f" within the tolerances ({facts['numbers_changed']} number(s) moved)" if facts["numbers_changed"] else ""))
            return True
        self.on_step(f"  nondeterministic: {facts['why']}")
        why = ("not tried: the baseline is not reproducible (two runs of the program as it is disagree: "
               f"{facts['why']}), so no change can be proven by comparing its output with the baseline's")
        for c in cands:
            res.tried.append(Tried(c, Measure(), None, False, why, tried=False))
        res.advice.extend(determinism_advice(facts))
        return False

    def _prove_patch(self, best: Tried, script: str) -> None:
        """Run a copy of the script with the best change's config lines in it (no variables set from outside),
        from the fix's folder under the script's own name, with the script's folder first on PYTHONPATH (its
        sibling modules import as before). A program that reads files next to its ``__file__`` fails here:
        then the patch is not proven, though the setting is."""
        both = patched(script, best.candidate.config)
        if both is None:
            best.patch_why = "the script cannot be read"
            return
        folder = self.directory / "patched"
        copy = folder / Path(script).name
        try:
            folder.mkdir(exist_ok=True)
            copy.write_text("".join(both[1]), encoding="utf-8")
        except OSError as exc:
            best.patch_why = f"cannot write the patched copy: {exc.strerror or exc}"
            return
        command = [str(copy) if a == script else a for a in self.command]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(script).resolve().parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        self.on_step(f"proving the patch: {copy}")
        trial = self._run(Overrides(), command, env)
        m = measure(trial)
        t = self._judge(best.candidate, trial, m)
        best.patch_proven, best.patch_why, best.patch_run = t.kept, t.why, m.run
        self.on_step(f"  patch {'proven' if t.kept else 'not proven'}: {best.patch_why}")


def write_fix_json(result: FixResult, partial: bool = False) -> str | None:
    """``fix.json`` in the fix's folder (what the app's fix screen reads), whole, through a temporary file (a
    reader never sees half of it); None, or why not. ``partial``: the result so far, marked interrupted
    (:meth:`FixResult.partial_json`)."""
    if result.directory is None:
        return None
    return write_json_whole(result.directory / FIX_FILE, result.partial_json() if partial else result.as_json())
