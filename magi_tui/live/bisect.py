"""``magi-tui bisect``: which layer, stage and graph of a compile makes the program wrong or crash.

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

Every trial is a traced run (:mod:`magi_tui.live.trial`), so each step links to its run directory.
A step that cannot run says so in the result's ``notes``; the bisect never raises for the program's
sake. Nothing here imports Textual or torch.
"""

from __future__ import annotations

import json
import math
import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from magi_tui.live.trial import (
    MAX_KEEP,
    Judge,
    Overrides,
    TrialResult,
    default_timeout,
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
    verdict: str            # "reproduces" | "passes" | "reference" | "fails" (the reference failed)
    seconds: float
    run: str | None
    change: str = ""
    why: str = ""
    graphs: list[int] | None = None   # graph step: the frame ids left on the culprit backend

    def as_json(self) -> dict:
        out = {"backend": self.backend, "subsystem": self.subsystem, "limit": self.limit,
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

    @property
    def runs(self) -> int:
        return len(self.steps)

    def as_json(self) -> dict:
        return {"reproduced": self.reproduced, "culprit": self.culprit,
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
            return f"not reproduced ({self.runs} run(s))"
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


def run_facts(run_dir: Path | None) -> RunFacts:
    facts = RunFacts()
    if run_dir is None or not Path(run_dir).is_dir():
        return facts
    from magi_tui.model import RunModel
    from magi_tui.model.checks import analyse

    run = RunModel(run_dir).load(keep=True)
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
        for when in ("before", "after"):
            prefix = f"fullgraph_{when}_"
            if ev.name.startswith(prefix) and ev.name.endswith("_passes"):
                stage = ev.name[len(prefix):]
                files = [os.path.relpath(p.resolve(), Path(run.path).resolve()) for n, p, _why in run.files(ev)
                         if p is not None and n != "attributes.json"] if run.has_event_folders else []
                if files:
                    facts.stage_files.setdefault((str(cid), stage, when), files[0])
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
    def _trial(self, ov: Overrides) -> TrialResult:
        key = (tuple(self.command), ov)
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
        data = json.dumps(res.partial_json() if partial else res.as_json(), indent=2, ensure_ascii=False) + "\n"
        path = self.directory / BISECT_FILE
        tmp = path.with_name(f".{BISECT_FILE}.{os.getpid()}.tmp")
        try:
            tmp.write_text(data, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            try:
                tmp.unlink()
            except OSError:
                pass
            return f"cannot write {BISECT_FILE}: {exc.strerror or exc}"
        return None

    def _run(self) -> BisectResult:
        res = self.result
        if self.judge.mode == "output":
            ref = self._trial(Overrides(no_compile=True))
            self._record(Step(None, None, None, "reference" if ref.ok else "fails", ref.seconds,
                              str(ref.run_dir) if ref.run_dir else None, "torch.compile disabled",
                              f"{ref.number_count} number(s)" if ref.ok else ref.status_text()))
            if not ref.ok:
                res.error = f"the reference run (torch.compile disabled) {ref.status_text()}"
                line = ref.last_error_line()
                if line:
                    res.error += f": {line}"
                return res
            if not ref.number_count:
                res.notes.append("the reference run printed no numbers: only a run that prints some differs")
            self.judge.reference = ref
        good: str | None = None
        for i, (backend, layer) in enumerate(LAYERS):
            ov = Overrides(backend=backend)
            bad, r = self._step(ov, backend or "program")
            if r.returncode == 127 and r.error:
                res.error = r.error
                return res
            if bad:
                return self._inside(i, backend, layer, r, good)
            good = backend or good
        res.reproduced = False
        res.torch_runs = len(LAYERS) + 1  # torch tries crossref too, then says "no issue found"
        if not any(s.run for s in res.steps):
            res.notes.append("the command is not `python script.py`: its runs are not traced")
        return res

    def _inside(self, i: int, backend: str | None, layer: str, bad_run: TrialResult, good: str | None) -> BisectResult:
        res = self.result
        res.reproduced = True
        name = backend
        if backend is None:
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
        def ov(limit: int) -> Overrides:
            return Overrides(backend=backend, bisect=(name, sub.name, limit))
        bad, _r = self._step(ov(-1), name, sub.name, -1)
        if bad:
            return None, 1
        low, high = 0, count - 1
        torch_runs = 2  # its test_disable and find_max_bounds runs
        while low < high:
            mid = (low + high) // 2
            bad, _r = self._step(ov(mid), name, sub.name, mid)
            torch_runs += 1
            if bad:
                high = mid
            else:
                low = mid + 1
        app = bad_run.application(name, sub.name, low)
        out = {"subsystem": sub.name, "bisect_number": low, "applications": count,
               "debug_info": app.info if app else None}
        if app is not None and app.compile_id:
            out["graph"] = self._graph_json(bad_run, app.compile_id, f"the compile of application #{low}",
                                            sub.name)
        return out, torch_runs

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
