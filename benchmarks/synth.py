"""A synthetic but realistic run directory, for benchmarks (``bench_load.py``, ``bench_ui.py``).

The vocabulary, attribute shapes, file names and nesting are those of the real magi_compile
transformer fixture (FORMAT.md part A §7-8): each *compile block* is one ``magi_backend_call`` with
the full-graph manager and its pass, the graph split, and a ``piecewise_compile`` over several
pieces, each piece going through ``compiler_manager_compile`` → cache load → ``subgraph_<k>``
pass context → ``compiler_compile`` with post-grad passes and an Inductor schedule → cache store.
Some blocks hit the cache; some end in a RestartAnalysis cascade followed by the retry (recovered);
with ``fail_last`` the run ends in an unrecovered ``failed_aot_compile``, like the AOT fixture.

    from synth import write_synthetic_run
    write_synthetic_run(Path("/tmp/run/model_1_Synthetic_rank_0"), 100_000)
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from magi_format.text import relative_time  # noqa: E402  (the writer's own format; no torch needed)

__all__ = ["write_synthetic_run", "synthetic_lines"]

T0 = 1795346341.4607317  # the cold transformer run's first timestamp


class _Writer:
    def __init__(self, n_events: int, rng: random.Random) -> None:
        self.n = n_events
        self.rng = rng
        self.index = 0
        self.t = T0
        self.lines: list[str] = []
        self.with_files: list[tuple[int, str, str | None, list[str], dict]] = []

    @property
    def full(self) -> bool:
        return self.index >= self.n

    def emit(self, name: str, files: list[str], attrs: dict) -> None:
        self.t += self.rng.uniform(0.0002, 0.02)
        dt = self.t - T0
        whole = int(self.t)
        frac = self.t - whole
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(whole)) + f".{int(frac * 1000):03d}"
        obj = {"index": self.index, "name": name, "relative_time": relative_time(dt), "files": files,
               "attributes": attrs, "datetime": stamp, "timestamp": self.t}
        self.lines.append(json.dumps(obj, ensure_ascii=False))
        if files:
            self.with_files.append((self.index, name, attrs.get("subgraph"), files, attrs))
        self.index += 1


def _lc(w: _Writer, phase: str, lifecycle: str, frag: str | None = None, *, sub: int | None = None,
        files: list[str] | None = None, **extra) -> None:
    frag = frag or lifecycle.lower()
    if sub is None:
        name = f"fullgraph_{phase}_{frag}"
        attrs = {"scope": "fullgraph"}
    else:
        name = f"subgraph_{sub}_{phase}_{frag}"
        attrs = {"scope": "subgraph", "subgraph": f"submod_{sub}", "subgraph_index": sub}
    attrs["lifecycle_name"] = lifecycle
    attrs["runtime_shape"] = None
    if phase == "after":
        attrs["duration_ms"] = w.rng.uniform(0.005, 20000.0)
    attrs.update(extra)
    if files is None:
        graph = "graph.txt" if lifecycle[:1].isupper() else "graph_module.py"
        files = {"before": [f"before_{frag}_{graph}"], "after": [f"after_lifecycle_{graph}"],
                 "failed": [f"failed_lifecycle_{graph}"]}.get(phase, [])
    w.emit(name, files, attrs)


def _piece(w: _Writer, k: int, *, hit: bool, restart: bool) -> bool:
    """One compiled piece; returns False when it fails (a RestartAnalysis) so the block unwinds."""
    key = f"artifact_shape_None_subgraph_{k}"
    _lc(w, "before", "compiler_manager_compile")
    _lc(w, "before", "compiler_manager_load", graph_index=k, backend_name="inductor_standalone",
        cache_has_entry=hit)
    if hit:
        _lc(w, "after", "compiler_manager_load", graph_index=k, backend_name="inductor_standalone",
            cache_key=key, remaining_restart_skip_count=0, load_result="hit", reason="cache_hit")
        _lc(w, "after", "compiler_manager_compile", compile_result="hit")
        return True
    _lc(w, "after", "compiler_manager_load", graph_index=k, backend_name="inductor_standalone",
        load_result="miss", reason="entry_not_found")
    _lc(w, "before", "pass_context", sub=k, files=[])
    _lc(w, "before", "compiler_compile", key=key, graph_index=k)
    if restart:
        _lc(w, "failed", "compiler_compile", exception_type="TensorifyScalarRestartAnalysis",
            exception_message="", key=key, graph_index=k, compile_result="failed",
            error_type="TensorifyScalarRestartAnalysis", error_message="", restart_count=1)
        _lc(w, "failed", "pass_context", sub=k, files=[], exception_type="TensorifyScalarRestartAnalysis",
            exception_message="")
        _lc(w, "failed", "compiler_manager_compile", exception_type="TensorifyScalarRestartAnalysis",
            exception_message="")
        return False
    for cls, frag in (("PostCleanupPass", "postcleanuppass"), ("FixFunctionalizationPass", "fixfunctionalizationpass")):
        _lc(w, "before", cls, frag, sub=k, pass_stage="post_grad")
        _lc(w, "after", cls, frag, sub=k, pass_stage="post_grad")
    w.emit("fullgraph_after_inductor_schedule", ["inductor_output.py"],
           {"scope": "fullgraph", "scheduler_node_count": w.rng.randint(1, 40)})
    _lc(w, "after", "compiler_compile", files=["after_lifecycle_graph_module.py", "graph_module.py",
                                                "inductor_output.py"],
        key=key, graph_index=k, compile_result="hit", cache_handle_available=True, compiled_graph_available=True)
    _lc(w, "after", "pass_context", sub=k, files=[])
    _lc(w, "before", "compiler_manager_cache_store", files=[], graph_index=k, key=key, cache_disabled=False,
        cache_handle_available=True)
    _lc(w, "after", "compiler_manager_cache_store", files=[], graph_index=k, key=key, store_result="stored")
    _lc(w, "after", "compiler_manager_compile", compile_result="hit")
    return True


def _block(w: _Writer, *, pieces: int, hit: bool, restart: bool) -> None:
    _lc(w, "before", "magi_backend_call")
    _lc(w, "before", "full_graph_manager")
    _lc(w, "before", "RemoveItemPass", "removeitempass", pass_stage="full_graph")
    _lc(w, "after", "RemoveItemPass", "removeitempass", pass_stage="full_graph")
    _lc(w, "after", "full_graph_manager")
    _lc(w, "before", "graph_split")
    _lc(w, "after", "graph_split", num_subgraphs=2 * pieces - 1)
    _lc(w, "before", "piecewise_compile", files=[], num_submods=pieces)
    for k in range(pieces):
        if not _piece(w, k, hit=hit, restart=restart and k == 0):
            _lc(w, "failed", "piecewise_compile", files=[], exception_type="TensorifyScalarRestartAnalysis",
                exception_message="", num_submods=pieces)
            _lc(w, "failed", "magi_backend_call", exception_type="TensorifyScalarRestartAnalysis",
                exception_message="")
            _block(w, pieces=pieces, hit=hit, restart=False)  # the retry
            return
    _lc(w, "after", "piecewise_compile", files=[], num_submods=pieces)
    _lc(w, "after", "magi_backend_call")
    w.emit("fullgraph_after_dynamo_bytecode_transform", [], {"scope": "fullgraph"})


def synthetic_lines(n_events: int, *, seed: int = 0, restart_every: int = 7, hit_every: int = 3,
                    fail_last: bool = False) -> tuple[list[str], list[tuple]]:
    """The timeline's lines (without newlines), exactly ``n_events`` of them, and the events with files
    ``(index, name, subgraph, files, attributes)``.

    With ``fail_last`` the whole run is wrapped like the AOT fixture: ``before_aot_compile`` first and
    an unrecovered ``failed_aot_compile`` (ValueError) as the very last event. ``restart_every=0``: no
    RestartAnalysis cascade at all (the failure at the end is then the run's only failed event).
    """
    rng = random.Random(seed)
    w = _Writer(n_events - 1 if fail_last else n_events, rng)
    if fail_last and n_events > 1:
        _lc(w, "before", "aot_compile", files=[], max_retries=3, retry_count=0, retried=False)
    b = 0
    while not w.full:
        _block(w, pieces=rng.randint(2, 6), hit=b % hit_every == hit_every - 1,
               restart=bool(restart_every) and b % restart_every == 0)
        b += 1
    del w.lines[w.n:]
    w.index = w.n
    if fail_last:
        _lc(w, "failed", "aot_compile", files=[], exception_type="ValueError",
            exception_message="tuple.index(x): x not in tuple", max_retries=3, retry_count=0, retried=False,
            compile_result="failed")
    return w.lines[:n_events], [x for x in w.with_files if x[0] < n_events]


def write_synthetic_run(path: str | Path, n_events: int, *, seed: int = 0, restart_every: int = 7,
                        hit_every: int = 3, fail_last: bool = False, with_files: int = 200) -> Path:
    """Write ``path/timeline_events/timeline.jsonl`` with ``n_events`` events (and, for the first
    ``with_files`` events that list files, their ``files/NNNN_<name>[/submod_<k>]/`` folders with small
    graph files and ``attributes.json``). Returns ``path``.

    Every block is complete, so the run's status is ``recovered`` (``failed`` with ``fail_last``),
    except that a run cut at ``n_events`` may end inside a block (``incomplete`` lifecycles).
    """
    path = Path(path)
    te = path / "timeline_events"
    te.mkdir(parents=True, exist_ok=True)
    lines, with_files_events = synthetic_lines(n_events, seed=seed, restart_every=restart_every,
                                               hit_every=hit_every, fail_last=fail_last)
    with open(te / "timeline.jsonl", "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
        if lines:
            fh.write("\n")
    for index, name, sub, files, attrs in with_files_events[:with_files]:
        folder = te / "files" / f"{index:04d}_{name}"
        if sub:
            folder = folder / sub
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "attributes.json").write_text(json.dumps(attrs, indent=2, ensure_ascii=False))
        for f in files:
            (folder / f).write_text(_graph_text(f, index))
    return path


def _graph_text(fname: str, index: int) -> str:
    if fname.endswith(".txt"):
        return "\n".join([
            "graph():",
            "    %l_x_ : [num_users=1] = placeholder[target=L_x_]",
            f"    %linear : [num_users=1] = call_function[target=torch._C._nn.linear](args = (%l_x_, %w{index % 7}), kwargs = {{}})",
            "    %relu : [num_users=1] = call_function[target=torch.relu](args = (%linear,), kwargs = {})",
            "    return (relu,)",
        ]) + "\n"
    return "\n".join([
        "from __future__ import annotations",
        "import torch",
        "class GraphModule(torch.nn.Module):",
        '    def forward(self, L_x_: "f32[4, 64][64, 1]cpu"):',
        "        l_x_ = L_x_",
        f'        linear: "f32[4, 64][64, 1]cpu" = torch._C._nn.linear(l_x_, self.w{index % 7}, None);  l_x_ = None',
        '        relu: "f32[4, 64][64, 1]cpu" = torch.relu(linear);  linear = None',
        "        return (relu,)",
    ]) + "\n"


# -- a TORCH_TRACE log with many frames (issue #21: a service recompiling for shapes, a fuzz harness) ------
_GLOG = "V1122 {h:02d}:{m:02d}:{s:02d}.{us:06d} 5512 {src}] "
_USER_FILE = "/home/user/project/fuzz_harness.py"
_FRAME_GRAPH = (
    "class GraphModule(torch.nn.Module):\n"
    '    def forward(self, L_x_: "f32[4, 8][8, 1]cpu"):\n'
    "        l_x_ = L_x_\n"
    '        add: "f32[4, 8][8, 1]cpu" = l_x_ + {k};  l_x_ = None\n'
    "        return (add,)\n")


def _trace_record(t: float, src: str, md: dict, payload: str | None = None) -> str:
    import hashlib

    if payload is not None:
        md = {**md, "has_payload": hashlib.md5(payload.encode()).hexdigest()}
    whole = int(t)
    head = _GLOG.format(h=whole // 3600 % 24, m=whole // 60 % 60, s=whole % 60, us=int((t - whole) * 1e6), src=src)
    out = head + json.dumps(md) + "\n"
    if payload is not None:
        out += "".join("\t" + ln + "\n" for ln in payload.split("\n"))
    return out


def trace_log_records(n_frames: int, *, graph_every: int = 10, fail_every: int = 0):
    """The records (strings, each ending in a newline) of a TORCH_TRACE log in torch 2.13's format where
    ``n_frames`` distinct frames are each compiled once (``frame_id`` i, compile id ``i/0``): the
    ``str`` table, then per frame ``dynamo_start`` (its stack), every ``graph_every``-th frame a
    ``dynamo_output_graph`` with a small graph, and ``compilation_metrics`` (the other frames produced no
    graph, as most frames of a harness calling many small functions do); every ``fail_every``-th frame
    (0: none) fails (``fail_type``). About 650 bytes per frame."""
    t = 11 * 3600 + 12 * 60 + 39.0
    yield _trace_record(t, "torch/_logging/structured.py:28", {"str": [_USER_FILE, 0]})
    for i in range(n_frames):
        t += 0.0003
        ids = {"frame_id": i, "frame_compile_id": 0, "attempt": 0}
        stack = [{"line": 40, "name": "<module>", "filename": 0, "loc": "main()"},
                 {"line": 100 + i % 900, "name": f"fn_{i}", "filename": 0}]
        yield _trace_record(t, "torch/_dynamo/convert_frame.py:303", {"dynamo_start": {"stack": stack}, **ids})
        if graph_every and i % graph_every == 0:
            yield _trace_record(t, "torch/_dynamo/output_graph.py:1689",
                                {"dynamo_output_graph": {"sizes": {"l_x_": [4, 8], "add": [4, 8]}}, **ids},
                                _FRAME_GRAPH.replace("{k}", str(i % 97)))
        failed = bool(fail_every) and i % fail_every == fail_every - 1
        m = {"compile_id": f"{i}/0", "co_name": f"fn_{i}", "co_filename": _USER_FILE,
             "co_firstlineno": 100 + i % 900, "guard_count": None if failed else 3,
             "graph_op_count": int(bool(graph_every) and i % graph_every == 0),
             "entire_frame_compile_time_s": 0.0002, "fail_type": "Unsupported" if failed else None,
             "fail_reason": "Failed to trace builtin operator" if failed else None}
        yield _trace_record(t + 0.0002, "torch/_dynamo/utils.py:2009", {"compilation_metrics": m, **ids})


def write_trace_log(path: str | Path, n_frames: int, **kw) -> Path:
    """Write :func:`trace_log_records` to ``path`` (a ``dedicated_log_torch_trace_*.log`` name)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(trace_log_records(n_frames, **kw))
    return path


def write_run_from_log(log: str | Path, run: str | Path) -> Path:
    """A run directory holding the events the TORCH_TRACE reader makes of ``log`` (the lines the tracer
    writes for the same records, FORMAT.md part B: every event carries its ``compile_id``)."""
    from magi_tui.model.sources.torchtrace.reader import TraceLogReader

    reader = TraceLogReader(log)
    te = Path(run) / "timeline_events"
    te.mkdir(parents=True, exist_ok=True)
    with open(te / "timeline.jsonl", "wb") as fh:
        while (got := reader.read(8 << 20).events):
            fh.writelines(reader.event_line_bytes(ev) + b"\n" for ev in got)
    return Path(run)
