"""``magi-tui bisect``: which layer, stage and graph of a compile makes the program wrong or crash.

0. **Premises**, before any run is spent on layers: with ``--compare-output`` the reference (the program
   with ``torch.compile`` disabled) runs twice, and two runs that disagree (random numbers without a seed,
   timestamps, pids) stop the bisect as ``nondeterministic``: no run can be judged against such a
   reference, so no layer is blamed (:func:`magi_tui.live.trial.check_determinism`). Then the program as it
   is runs once: the failure must reproduce as reported, else the bisect stops, "the failure did not
   reproduce" (by exit code, with the advice to try ``--compare-output``). That run is also the last
   layer's.
1. **Layer**, outside in: every graph on ``eager`` (Dynamo only), ``aot_eager`` (AOTAutograd),
   ``aot_eager_decomp_partition`` (decompositions and the partitioner), then the program as it is (its
   own backend, usually Inductor). The first that shows the bug names the layer.
2. **Stage**, inside that layer, in the order of ``torch._inductor.compiler_bisector.BACKENDS``: each
   subsystem is switched off (as ``TORCH_BISECT_MAX=-1`` does) or each config change tried; the first
   that makes the bug go away is then bisected to the one application that matters (as
   ``TORCH_BISECT_MAX=N``; the tracer's hook, not torch's environment, see ``tracer/trial_hooks.py``). The
   number of applications and what each one was (the pass, the node, the op, with its compile id)
   come from one run's probe (``tracer/trial_hooks.py``), so torch's extra ``find_max_bounds`` run is
   not needed and a subsystem never applied costs no run.
3. **Graph**: the compile id of the culprit application; else the compile that failed in the trace;
   else a bisection over frame ids with ``TORCH_COMPILE_OVERRIDE_BACKENDS`` (the other graphs on the
   last layer that passed), assuming one culprit graph.

The culprit application's own diff (``culprit.graph.pass_diff``): the runs with applications ``0..N-1`` and
``0..N`` (both made by the bisection) differ by that application alone; the first graph of its compile that
differs between them (``post_grad_graph.py`` after the post-grad passes, the AOT graph for a decomposition,
the output code for a lowering) is what it changed, not the whole stage's before/after.

Every trial is a traced run (:mod:`magi_tui.live.trial`), so each step links to its run directory.
A step that cannot run says so in the result's ``notes``; the bisect never raises for the program's
sake. Nothing here imports Textual or torch.
"""

from __future__ import annotations

import math
import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from magi_tui.live.result_file import write_json_whole
from magi_tui.live.trial import (
    MAX_KEEP,
    Judge,
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

__all__ = ["Cancelled", "LAYERS", "SUBSYSTEMS", "Step", "BisectResult", "Bisector", "new_bisect_dir", "BISECT_FILE"]

BISECT_FILE = "bisect.json"

#: (backend forced on every graph, None: the program's own; the layer it names when it is the first
#: to show the bug)
LAYERS: tuple[tuple[str | None, str], ...] = (
    ("eager", "Dynamo front end (graph capture, guards, bytecode)"),
    ("aot_eager", "AOTAutograd (functionalization, joint graph tracing)"),
    ("aot_eager_decomp_partition", "decompositions and the partitioner"),
    (None, "the backend"),
)


@dataclass(frozen=True)
class Subsystem:
    """A stage torch's bisector knows: ``config`` set (a config change) or applications counted."""

    name: str
    config: tuple[str, object] | None = None   # (setting, value) for a config change
    inductor: bool = False                    # the setting is Inductor's (per graph override)


#: torch 2.13's ``compiler_bisector.BACKENDS`` (in its order), for the layers that have stages
SUBSYSTEMS: dict[str, tuple[Subsystem, ...]] = {
    "aot_eager_decomp_partition": (
        Subsystem("aot_eager_decomp_partition_cse", ("torch._functorch.config.cse", False)),
        Subsystem("decomposition"),
    ),
    "inductor": (
        Subsystem("pre_grad_passes"),
        Subsystem("joint_graph_passes"),
        Subsystem("post_grad_passes"),
        Subsystem("inductor_fallback_random", ("fallback_random", True), inductor=True),
        Subsystem("inductor_emulate_precision_casts", ("emulate_precision_casts", True), inductor=True),
        Subsystem("inductor_layout_optimization", ("layout_optimization", False), inductor=True),
        Subsystem("inductor_comprehensive_padding", ("comprehensive_padding", False), inductor=True),
        Subsystem("cudagraphs"),
        Subsystem("lowerings"),
    ),
}
#: torch's bisector tries this backend too (between the partitioner and Inductor); we do not (notes)
_TORCH_ONLY_LAYER = "aot_eager_decomp_partition_crossref"


@dataclass
class Step:
    """One trial of the bisect, as the JSON lists it."""

    backend: str | None
    subsystem: str | None
    limit: int | None
    #: "reproduces" | "passes" | "reference" | "fails" (the reference failed) | "nondeterministic" (the second
    #: reference run disagreed with the first)
    verdict: str
    seconds: float
    run: str | None
    change: str = ""
    why: str = ""
    graphs: list[int] | None = None   # graph step: the frame ids left on the culprit backend

    def as_json(self) -> dict:
        out: dict[str, object] = {"backend": self.backend, "subsystem": self.subsystem, "limit": self.limit,
               "verdict": self.verdict, "seconds": round(self.seconds, 3), "run": self.run,
               "change": self.change, "why": self.why}
        if self.graphs is not None:
            out["graphs"] = self.graphs
        return out


@dataclass
class BisectResult:
    command: list[str]
    mode: str
    reproduced: bool = False
    culprit: dict | None = None
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None          # the bisect could not run (exit 1)
    torch_runs: int | None = None     # what torch's bisector would make for the same answer
    versions: dict = field(default_factory=dict)
    directory: str | None = None
    graph_runs: int = 0               # runs of the graph step (torch's bisector has none)
    interrupted: bool = False         # stopped before it finished: a signal, or cancelled in the app
    signal: str | None = None         # the signal that stopped it ("SIGTERM", "SIGHUP", "SIGINT")
    trial_timeout_s: float | None = None  # each run's time limit (--timeout, else from the first run)
    #: --compare-output: the reference run twice (:func:`magi_tui.live.trial.check_determinism`); None by exit code
    reference: dict | None = None
    #: the program as it is, run first: ``{"reproduces", "why", "run"}`` (None: not run, the bisect stopped before)
    as_reported: dict | None = None
    #: what to do next, in words (seed the RNGs, widen the tolerances, bisect by output)
    advice: list[str] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return len(self.steps)

    @property
    def nondeterministic(self) -> bool:
        return self.reference is not None and self.reference.get("deterministic") is False

    @property
    def verdict(self) -> str:
        """``culprit``, ``not_reproduced``, ``nondeterministic`` (the reference disagreed with itself),
        ``error`` (it could not run) or ``interrupted`` (stopped before it finished)."""
        if self.error:
            return "interrupted" if self.interrupted else "error"
        if self.nondeterministic:
            return "nondeterministic"
        return "culprit" if self.reproduced else "not_reproduced"

    def as_json(self) -> dict:
        return {"verdict": self.verdict, "reproduced": self.reproduced, "culprit": self.culprit,
                "reference": self.reference, "as_reported": self.as_reported, "advice": self.advice,
                "steps": [s.as_json() for s in self.steps], "runs": self.runs,
                "graph_runs": self.graph_runs, "torch_bisector_runs": self.torch_runs, "mode": self.mode, "command": self.command,
                "notes": self.notes, "error": self.error, "versions": self.versions,
                "directory": self.directory, "interrupted": self.interrupted, "signal": self.signal,
                "trial_timeout_s": None if self.trial_timeout_s is None else round(self.trial_timeout_s, 3)}

    def partial_json(self) -> dict:
        """What ``bisect.json`` holds while the bisect runs (rewritten before every run): interrupted, as it
        stays if the bisect is killed outright (SIGKILL, its machine down) and never writes its result."""
        out = self.as_json()
        out["interrupted"] = True
        if out["error"] is None:
            out["error"] = "the bisect did not finish (it was still running when this was written)"
        return out

    def summary(self) -> str:
        if self.error:
            return f"could not bisect: {self.error}"
        if not self.reproduced:
            from magi_tui.model.outputs.bisect_view import outcome_line

            return f"{outcome_line(self.as_json())} ({self.runs} run(s))"
        c = self.culprit or {}
        parts = [f"culprit: {c.get('layer') or c.get('backend')}"]
        if c.get("subsystem"):
            parts.append(f"stage {c['subsystem']}" + (f" #{c['bisect_number']}" if c.get("bisect_number") is not None
                                                       and not c.get("config") else ""))
        if c.get("debug_info"):
            parts.append(f"({c['debug_info']})")
        g = c.get("graph")
        if g:
            parts.append(f"graph {g.get('compile_id')}" + (f" ({g['frame']})" if g.get("frame") else ""))
        torch = "" if self.torch_runs is None else f"; torch's bisector: {self.torch_runs}"
        return " ".join(parts) + f" — {self.runs} run(s){torch}"


def new_bisect_dir(root: str | Path) -> Path:
    """A fresh ``ROOT/bisect_<YYYYmmdd_HHMMSS>[_<n>]`` (:func:`magi_tui.live.trial.new_trials_dir`)."""
    return new_trials_dir(root, "bisect")


@dataclass
class RunFacts:
    """What a trial's run directory says: the frames compiled, the compile that failed, the files of a
    stage's before/after graphs per compile id."""

    frames: list[int] = field(default_factory=list)
    frame_names: dict[str, str] = field(default_factory=dict)   # compile id -> frame name
    failed_compile: str | None = None
    stage_files: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (cid, stage, before|after)
    #: compile id -> its graph files in event order: (event name, file name, path relative to the run)
    graphs: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)


#: the files of a compile's events that are graphs or code (what a compiler subsystem changes); the runnable
#: reproducer is left out (a copy of a graph with a header of settings)
def _is_graph_file(name: str) -> bool:
    return name.endswith(".py") and name != "fx_graph_runnable.py"


def run_facts(run_dir: Path | None) -> RunFacts:
    facts = RunFacts()
    if run_dir is None or not Path(run_dir).is_dir():
        return facts
    from magi_tui.model import RunModel
    from magi_tui.model.analysis.checks import analyse

    run = RunModel(run_dir).load()
    frames = set()
    for ev in run.events:
        cid = ev.compile_id
        if not cid:
            continue
        head = str(cid).split("/")[0].lstrip("[!")
        if head.isdigit():
            frames.add(int(head))
        frame = (ev.summary or {}).get("frame") if isinstance(ev.summary, dict) else None
        if frame and cid not in facts.frame_names:
            facts.frame_names[str(cid)] = str(frame)
        if not run.has_event_folders or not ev.files:
            continue
        named = [(n, os.path.relpath(p.resolve(), Path(run.path).resolve())) for n, p, _why in run.files(ev)
                 if p is not None and n != "attributes.json"]
        for when in ("before", "after"):
            prefix = f"fullgraph_{when}_"
            if ev.name.startswith(prefix) and ev.name.endswith("_passes"):
                stage = ev.name[len(prefix):]
                if named:
                    facts.stage_files.setdefault((str(cid), stage, when), named[0][1])
        facts.graphs.setdefault(str(cid), []).extend((ev.name, n, rel) for n, rel in named if _is_graph_file(n))
    facts.frames = sorted(frames)
    try:
        problems = [c for c in analyse(run).problems if not c.recovered]
    except Exception:
        problems = []
    if problems:
        facts.failed_compile = problems[0].head.event.compile_id
    return facts


Listener = Callable[[Step], None]


class Cancelled(Exception):
    """The bisect's ``cancel`` event was set: it stops before the next trial (the current one is killed)."""


class Bisector:
    """One bisect of ``command``. ``memo`` (trials already made, keyed by command and overrides) lets a
    second bisect of the same program with another judge reuse the runs of the first."""

    def __init__(self, command: list[str], directory: str | Path, *, compare_output: bool = False,
                 rtol: float | None = None, atol: float | None = None, timeout: float | None = None,
                 on_step: Listener | None = None, memo: dict | None = None, env: dict | None = None,
                 cancel: threading.Event | None = None) -> None:
        self.command = list(command)
        self.directory = Path(directory)
        self.judge = Judge("output" if compare_output else "exit")
        if rtol is not None:
            self.judge.rtol = rtol
        if atol is not None:
            self.judge.atol = atol
        #: each run's time limit (``--timeout``); None: no limit on the first run, then
        #: :func:`~magi_tui.live.trial.default_timeout` of it on the others
        self.timeout = timeout
        self.on_step = on_step
        self.memo = memo if memo is not None else {}
        self.env = env
        #: set from another thread (the app's q / ctrl+c) or by :meth:`interrupt`: the running trial is
        #: killed, no other starts
        self.cancel = cancel
        #: the signal that stopped it (:meth:`interrupt`)
        self.signal: str | None = None
        self.started = False
        self.done = threading.Event()  # set when run() has returned (bisect.json written)
        self.result = BisectResult(self.command, self.judge.mode, directory=str(self.directory),
                                   trial_timeout_s=timeout)

    def interrupt(self, signo: int) -> None:
        """A signal stops the bisect (:func:`magi_tui.live.trial.stop_on_signals` calls this): the running
        trial is killed, no other starts, and ``bisect.json`` says ``interrupted`` and which signal."""
        if self.signal is None:
            try:
                self.signal = signal.Signals(signo).name
            except ValueError:
                self.signal = f"signal {signo}"
        if self.cancel is None:
            self.cancel = threading.Event()
        self.cancel.set()
        kill_running_trials()

    # -- trials ----------------------------------------------------------------------------------
    def _trial(self, ov: Overrides, again: int = 0) -> TrialResult:
        """The trial of ``ov`` (made once: the memo's); ``again``: its ``again``-th repeat, a run of its own
        (the second reference run)."""
        key: tuple = (tuple(self.command), ov) + ((again,) if again else ())
        r = self.memo.get(key)
        if r is not None and self.judge.mode == "output" and r.printed is None and r.output_bytes[0] > MAX_KEEP:
            r = None  # made by a bisect by exit code, which reads no numbers, and its tail is not all it printed
        if r is None:
            if self.cancel is not None and self.cancel.is_set():
                raise Cancelled
            self._save(partial=True)  # what is left if this bisect is killed outright during the run
            r = run_trial(self.command, ov, root=self.directory, timeout=self.result.trial_timeout_s,
                          env=self.env, cancel=self.cancel, numbers=self.judge.mode == "output")
            if self.cancel is not None and self.cancel.is_set():
                raise Cancelled  # the trial was killed half way: its verdict means nothing
            self.memo[key] = r
        if self.result.trial_timeout_s is None and r.error is None:
            self.result.trial_timeout_s = default_timeout(r.seconds)  # the first run sets the others' limit
        if r.versions and not self.result.versions:
            self.result.versions = r.versions
        return r

    def _step(self, ov: Overrides, backend: str | None, subsystem: str | None = None, limit: int | None = None,
              graphs: list[int] | None = None) -> tuple[bool, TrialResult]:
        r = self._trial(ov)
        bad, why = self.judge(r)
        step = Step(backend, subsystem, limit, "reproduces" if bad else "passes", r.seconds,
                    str(r.run_dir) if r.run_dir else None, ov.describe(), why, graphs)
        self._record(step)
        return bad, r

    def _record(self, step: Step) -> None:
        self.result.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)

    # -- the bisect ------------------------------------------------------------------------------
    def run(self) -> BisectResult:
        """Bisect, then write ``bisect.json`` (the result's JSON) into the bisect's folder."""
        self.started = True
        try:
            try:
                res = self._run()
                if self.signal is not None:  # a signal after the last run: the result stands, marked
                    res.interrupted, res.signal = True, self.signal
            except Cancelled:
                res = self.result
                res.interrupted, res.signal = True, self.signal
                res.error = f"interrupted by {self.signal}" if self.signal else "cancelled"
                res.reproduced, res.culprit = False, None
            problem = self._save()
            if problem:
                res.notes.append(problem)
            return res
        finally:
            self.done.set()

    def _save(self, partial: bool = False) -> str | None:
        """Write ``bisect.json`` (whole, through a temporary file: a reader never sees half of it); None, or
        why it could not. ``partial``: the result so far, marked interrupted (:meth:`BisectResult.partial_json`)."""
        res = self.result
        return write_json_whole(self.directory / BISECT_FILE, res.partial_json() if partial else res.as_json())

    def _run(self) -> BisectResult:
        res = self.result
        if self.judge.mode == "output" and not self._reference():
            return res
        # the failure as reported: the program as it is (its own backend); also the last layer's run
        as_is = self._trial(Overrides())
        if as_is.returncode == 127 and as_is.error:
            res.error = as_is.error
            return res
        bad, why = self.judge(as_is)
        self._record(Step("program", None, None, "reproduces" if bad else "passes", as_is.seconds,
                          str(as_is.run_dir) if as_is.run_dir else None, Overrides().describe(), why))
        res.as_reported = {"reproduces": bad, "why": self._as_reported_why(as_is, bad, why),
                           "run": str(as_is.run_dir) if as_is.run_dir else None}
        if not bad:
            return self._not_reproduced(as_is)
        good: str | None = None
        for i, (backend, layer) in enumerate(LAYERS[:-1]):
            ov = Overrides(backend=backend)
            bad, r = self._step(ov, backend)
            if r.returncode == 127 and r.error:
                res.error = r.error
                return res
            if bad:
                return self._inside(i, backend, layer, r, good)
            good = backend or good
        return self._inside(len(LAYERS) - 1, None, LAYERS[-1][1], as_is, good)

    def _reference(self) -> bool:
        """``--compare-output``: the program with torch.compile disabled, twice. True when it ran and the two
        runs agree (``result.reference``); else the bisect stops (an error, or ``nondeterministic``)."""
        res = self.result
        off = Overrides(no_compile=True)
        ref = self._trial(off)
        self._record(Step(None, None, None, "reference" if ref.ok else "fails", ref.seconds,
                          str(ref.run_dir) if ref.run_dir else None, off.describe(),
                          f"{ref.number_count} number(s)" if ref.ok else ref.status_text()))
        if not ref.ok:
            res.error = f"the reference run (torch.compile disabled) {ref.status_text()}"
            line = ref.last_error_line()
            if line:
                res.error += f": {line}"
            return False
        if not ref.number_count:
            res.notes.append("the reference run printed no numbers: only a run that prints some differs")
        # the same run again, alone (nothing else runs beside it): does the reference reproduce itself?
        again = self._trial(off, again=1)
        facts = check_determinism(ref, again, self.judge.rtol, self.judge.atol)
        res.reference = facts
        if facts["deterministic"]:
            why = f"the same {again.number_count} number(s) as the first"
            if facts["numbers_changed"]:
                why += (f" within the tolerances ({facts['numbers_changed']} moved, at most "
                        f"{facts['max_abs_diff']:.3g})")
        else:
            why = f"differs from the first: {facts['why']}"
        self._record(Step(None, None, None, "reference" if facts["deterministic"] else "nondeterministic",
                          again.seconds, str(again.run_dir) if again.run_dir else None,
                          off.describe() + ", again", why))
        if not facts["deterministic"]:
            res.advice.extend(determinism_advice(facts))
            res.torch_runs = None  # torch's bisector would compare every run with this moving reference
            return False
        self.judge.reference = ref
        return True

    def _as_reported_why(self, as_is: TrialResult, bad: bool, why: str) -> str:
        """What the program as it is did, in words (``the failure did not reproduce: …``)."""
        if self.judge.mode == "exit":
            return f"the program as it is {why}"
        if bad:
            return f"the program as it is printed other numbers than with torch.compile disabled: {why}"
        text = (f"the program as it is printed the same {as_is.number_count} number(s) as with torch.compile "
                "disabled")
        if self.judge.reference is not None and compare_printed(self.judge.reference, as_is, 0.0, 0.0):
            text += " (within the tolerances)"
        return text + ("" if as_is.ok else f", then {as_is.status_text()}")

    def _not_reproduced(self, as_is: TrialResult) -> BisectResult:
        res = self.result
        res.reproduced = False
        res.torch_runs = len(LAYERS) + 1  # torch tries every layer and crossref, then says "no issue found"
        if self.judge.mode == "exit":
            res.advice.append(
                "the program exits 0 as it is: if it prints wrong numbers rather than failing, bisect by "
                "them: magi-tui bisect --compare-output -- " + " ".join(self.command))
        elif not as_is.ok:
            res.advice.append(f"it {as_is.status_text()}: to bisect that failure, bisect by exit code (without "
                              "--compare-output)")
        if not any(s.run for s in res.steps):
            res.notes.append("the command is not `python script.py`: its runs are not traced")
        return res

    def _inside(self, i: int, backend: str | None, layer: str, bad_run: TrialResult, good: str | None) -> BisectResult:
        res = self.result
        res.reproduced = True
        if backend is not None:
            name = backend
        else:
            name = "inductor" if any(a.backend == "inductor" for a in bad_run.applications) else "program"
        culprit = {"backend": name, "layer": layer, "subsystem": None, "bisect_number": None, "debug_info": None,
                   "graph": None, "run": str(bad_run.run_dir) if bad_run.run_dir else None}
        res.culprit = culprit
        torch_layers = i + 1 + (1 if backend is None else 0)  # torch's list has crossref before inductor
        extra = 0   # torch's runs inside the layer
        if backend == "eager" and self.judge.mode == "exit":
            # a program that fails without torch.compile is no compile bug: one run torch does not make
            bad2, r = self._step(Overrides(no_compile=True), None)
            if bad2:
                culprit.update(backend=None, layer="the program itself (it fails with torch.compile disabled)")
                res.notes.append("the program fails without torch.compile too: not a compile bug")
                res.torch_runs = torch_layers
                return res
        stage = None
        subsystems = SUBSYSTEMS.get(name or "", ())
        if backend is None and name == "inductor":
            culprit["layer"] = "the backend (Inductor)"
        if backend is None and name != "inductor":
            culprit["layer"] = "the program's own backend (it never ran Inductor: no stages to bisect)"
        elif subsystems and not bad_run.run_dir:
            res.notes.append("stages not bisected: the command is not `python script.py`, so the "
                             "applications of each stage could not be counted (run the script with python)")
            subsystems = ()
        for sub in subsystems:
            found, runs_torch = self._subsystem(backend, name, sub, bad_run)
            extra += runs_torch
            if found is None:
                continue
            stage = found
            break
        if subsystems and stage is None:
            res.notes.append(f"no stage of {name} makes the bug go away when switched off")
        if stage is not None:
            culprit.update(stage)
        res.torch_runs = torch_layers + extra
        if name == "program":
            res.torch_runs = None
            res.notes.append("torch's bisector cannot bisect this: it replaces the program's own backend with "
                             "inductor (TORCH_BISECT_BACKEND)")
        if backend == "eager":
            res.notes.append("Dynamo itself: every graph goes through it, so no graph can be swapped out")
            return res
        before = len(res.steps)
        self._graph(name, bad_run, good, culprit)
        res.graph_runs = len(res.steps) - before
        return res

    def _subsystem(self, backend: str | None, name: str, sub: Subsystem,
                   bad_run: TrialResult) -> tuple[dict | None, int]:
        """Switch ``sub`` off; bisect its applications when that fixes it. (culprit fields | None, the
        runs torch's bisector makes for the same)."""
        if sub.config is not None:
            key, value = sub.config
            ov = (Overrides(backend=backend, inductor_config=((key, value),)) if sub.inductor
                  else Overrides(backend=backend, config=((key, value),)))
            bad, _r = self._step(ov, name, sub.name)
            if bad:
                return None, 1
            return {"subsystem": sub.name, "bisect_number": 0, "config": {key: value},
                    "debug_info": f"{key}={value} makes the bug go away"}, 1
        count = bad_run.count(name, sub.name)
        if count == 0:
            return None, 1  # never applied: nothing to switch off (torch's bisector still runs it once)
        def limited(limit: int) -> Overrides:
            return Overrides(backend=backend, bisect=(name, sub.name, limit))
        bad, _r = self._step(limited(-1), name, sub.name, -1)
        if bad:
            return None, 1
        low, high = 0, count - 1
        torch_runs = 2  # its test_disable and find_max_bounds runs
        while low < high:
            mid = (low + high) // 2
            bad, _r = self._step(limited(mid), name, sub.name, mid)
            torch_runs += 1
            if bad:
                high = mid
            else:
                low = mid + 1
        app = bad_run.application(name, sub.name, low)
        out: dict[str, object] = {"subsystem": sub.name, "bisect_number": low, "applications": count,
                                  "debug_info": app.info if app else None}
        if app is not None and app.compile_id:
            graph = out["graph"] = self._graph_json(bad_run, app.compile_id, f"the compile of application #{low}",
                                                    sub.name)
            # the bisection ran 0..low-1 (it passed) and 0..low (it reproduced), or low is the last application
            # and the run that found the layer applied them all
            own = self._pass_diff(limited(low - 1), limited(low), bad_run, app.compile_id, low)
            if isinstance(own, dict):
                graph["pass_diff"] = own
            else:
                self.result.notes.append(f"application #{low}'s own diff: {own}")
        return out, torch_runs

    def _pass_diff(self, before_ov: Overrides, after_ov: Overrides, bad_run: TrialResult, compile_id: str,
                   n: int) -> dict | str:
        """What application ``n`` alone changed: the first graph of ``compile_id`` that differs between the
        run with applications ``0..n-1`` and the run with ``0..n`` (both already made: none is run here); or
        why there is none, in words."""
        from magi_tui.model.outputs.bisect_view import graph_diff_lines

        before = self.memo.get((tuple(self.command), before_ov))
        after = self.memo.get((tuple(self.command), after_ov)) or bad_run
        if before is None or before.run_dir is None or after.run_dir is None:
            return "its runs wrote no run directory"
        cid = str(compile_id)
        theirs: dict[tuple[str, str, int], str] = {}
        seen: dict[tuple[str, str], int] = {}
        for event, fname, rel in run_facts(after.run_dir).graphs.get(cid, []):
            k = seen[(event, fname)] = seen.get((event, fname), -1) + 1
            theirs[(event, fname, k)] = rel
        seen = {}
        for event, fname, rel in run_facts(before.run_dir).graphs.get(cid, []):
            k = seen[(event, fname)] = seen.get((event, fname), -1) + 1
            other = theirs.get((event, fname, k))
            if other is None:
                continue
            found = graph_diff_lines(Path(before.run_dir), rel, Path(after.run_dir), other)
            if isinstance(found, str) or not (found[1] or found[2]):
                continue
            lines, added, removed = found
            limit = before_ov.bisect[2] if before_ov.bisect is not None else None
            return {"application": n, "event": event, "file": fname,
                    "before": {"run": str(before.run_dir), "file": rel, "limit": limit},
                    "after": {"run": str(after.run_dir), "file": other, "limit": n},
                    "added": added, "removed": removed, "lines": lines}
        return f"no graph of compile {cid} that the trace recorded differs with and without it"

    def _graph_json(self, run: TrialResult, compile_id: str, how: str, stage: str | None = None) -> dict:
        facts = run_facts(run.run_dir)
        head = str(compile_id).split("/")[0].lstrip("[!")
        g = {"compile_id": compile_id, "frame_id": int(head) if head.isdigit() else None,
             "frame": facts.frame_names.get(str(compile_id)), "run": str(run.run_dir) if run.run_dir else None,
             "found_by": how}
        if stage:
            before = facts.stage_files.get((str(compile_id), stage, "before"))
            after = facts.stage_files.get((str(compile_id), stage, "after"))
            if before and after:
                g["before"], g["after"] = before, after
        return g

    def _graph(self, name: str | None, bad_run: TrialResult, good: str | None, culprit: dict) -> None:
        res = self.result
        if culprit.get("graph"):
            return
        facts = run_facts(bad_run.run_dir)
        if facts.failed_compile:
            culprit["graph"] = self._graph_json(bad_run, facts.failed_compile, "the compile that failed in the trace")
            return
        frames = facts.frames
        if not frames:
            res.notes.append("no compiled graph in the trace: the graph is not named")
            return
        if len(frames) == 1:
            culprit["graph"] = self._graph_json(bad_run, f"{frames[0]}/0", "the only graph compiled")
            return
        swap = good or "eager"
        cand = list(frames)
        while len(cand) > 1:
            half = cand[: len(cand) // 2]
            others = tuple(f for f in frames if f not in half)
            ov = Overrides(graph_backends=((others, swap),)) if others else Overrides()
            bad, _r = self._step(ov, name, None, graphs=list(half))
            cand = half if bad else cand[len(cand) // 2:]
        cid = next((c for c in facts.frame_names if c.split("/")[0] == str(cand[0])), f"{cand[0]}/0")
        culprit["graph"] = self._graph_json(bad_run, cid, f"frames bisected with the others on {swap}")
        res.notes.append("the graph step assumes one culprit graph (the others ran on " + swap + ")")


def torch_runs_note(result: BisectResult) -> str:
    if result.torch_runs is None:
        return ""
    return (f"torch's bisector: {result.torch_runs} run(s) for the same layer and stage "
            f"(it also tries {_TORCH_ONLY_LAYER}, needs a find_max_bounds run per bisected stage, and cannot "
            "name a graph)")


def log2_runs(n: int) -> int:
    return max(0, math.ceil(math.log2(n))) if n > 0 else 0
