"""torch's structured-trace records -> timeline events (FORMAT.md part B §B3).

Runs on the writer thread, one record at a time, in the order torch emitted them. A table maps each
record kind (and each ``artifact`` name) to one small handler; event names come from
:mod:`magi_format.names`. A little state per compile (frame name, what is still open, a failure or a
recompile waiting for what torch says next) makes every ``before`` get its ``after``/``failed``/``skip``
with the same lifecycle name and compile id — the viewer pairs on exactly that. Importable without
torch: the golden test feeds it recorded TORCH_TRACE logs.

Waiting for the next record: a recompile is written once the frame is known (``dynamo_start``, torch's
recompile-limit warning, or the metrics); a ``dynamo_error`` is written with the ``compilation_metrics``
that follows it (whole message, ``metrics.json``); what still waits at the end comes out of ``finish()``.

Lives in the contract package (torch-free, tracer-free) because both sides use it: the tracer on its
writer thread, the viewer on every TORCH_TRACE log it opens (:mod:`magi_tui.model.sources.torchtrace.reader`).

Backward: records of a compile that arrive after its ``compilation_metrics`` (with torch's own ids, not
ids the session lent a piece compiled later) are the lazy backward compile, bracketed by
``before/after_backward_compile`` up to ``bwd_compilation_metrics``; inside a forward compile (a cache hit
loads both) an Inductor graph whose inputs are ``tangents_N`` is a backward graph. Both get ``backward: true``.

Compile ids: ``compile_id`` is ``"<frame_id>/<frame_compile_id>"`` and the restart attempt is the
separate ``attempt`` attribute, so the lifecycle opened by attempt 0 (``dynamo_start``) pairs with the
``compilation_metrics`` that closes the compile after a restart (TORCH_TRACE.md §3c).
"""

from __future__ import annotations

import functools
import json
import linecache
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple

from magi_format.names import (
    AFTER_BUILD_GUARDS,
    AFTER_DYNAMO_CAPTURE,
    AFTER_INDUCTOR_CODEGEN,
    BACKWARD_COMPILE,
    CACHE_BYPASS,
    CACHE_HIT,
    CACHE_MISS,
    COMPILE,
    COMPILE_WORKER_DIED,
    DYNAMO_CAPTURE,
    EXPORT_ISSUE,
    FUSION,
    FX_GRAPH_RUNNABLE,
    GRAPH_BREAK,
    INDUCTOR_PROVENANCE,
    POST_GRAD_PASSES,
    PRE_GRAD_PASSES,
    RECOMPILE,
    RECOMPILE_LIMIT_HIT,
    RESTART,
    SHAPE_GUARD,
    SHAPE_SPECIALIZATION,
    SHAPE_SYMBOL,
    aot_graph_base,
    lifecycle_event,
    point_event,
    scope_attrs,
)
from magi_format.text import json_indented  # the stdlib's indent=2 text, without its reference cycles
from magi_format.torch_records import EventSpec, RecompileLimitNote, TraceRecord, UserEvent
from magi_format.torchtext import (
    exception_from_traceback,
    find_gb_registry,
    first_line,
    is_limit_hit,
    is_torch_or_runpy,
    limit_from_message,
    merged_gb_registry,
    parse_graph_break,
    parse_recompile_reasons,
    recompile_limit_of,
)

#: record kinds torch 2.1–2.15 writes (``trace_structured("<kind>", …)`` in its source, TORCH_TRACE.md §3a);
#: a log reader counts the others as unknown, as tlparse does
TORCH_KINDS = frozenset({
    "str", "dynamo_start", "dynamo_output_graph", "dynamo_guards", "dynamo_cpp_guards_str", "compilation_metrics",
    "bwd_compilation_metrics", "compilation_metrics_runtime", "bwd_compilation_metrics_runtime",
    "aot_autograd_backward_compilation_metrics", "aot_joint_graph", "aot_forward_graph", "aot_backward_graph",
    "aot_inference_graph", "inductor_pre_grad_graph", "inductor_input_graph", "inductor_post_grad_graph",
    "inductor_output_code", "graph_dump", "artifact", "chromium_event", "link", "dump_file", "describe_storage",
    "describe_tensor", "describe_source", "create_symbol", "create_unbacked_symbol", "symbolic_shape_specialization",
    "guard_added_fast", "guard_added", "expression_created", "propagate_real_tensors",
    "propagate_real_tensors_provenance", "guard_on_data_dependent_error", "missing_fake_kernel",
    "mismatched_fake_kernel", "exported_program", "export", "compiled_autograd_graph", "optimize_ddp_split_graph",
    "optimize_ddp_split_child",
})
#: ``artifact`` (and ``graph_dump``) names torch 2.1–2.15 writes. Each is shown under its own name; those without a handler
#: become a point event named after the artifact (its payload opens as a file)
TORCH_ARTIFACTS = frozenset({
    "torch_version", "recompile_reasons", "dynamo_graph_break_reason", "dynamo_error", "dynamo_side_effects",
    "dynamo_cache_entries", "dynamo_cache_bypass", "dynamo_cache_exception", "precompile_cache_bypass",
    "before_pre_grad_graph", "after_pre_grad_graph", "before_joint_graph", "after_joint_graph",
    "before_post_grad_graph", "after_post_grad_graph", "after_recompile_post_grad", "inductor_post_grad_graph",
    "fx_graph_runnable", "fx_graph_cache_hit", "fx_graph_cache_miss", "fx_graph_cache_bypass",
    "fx_graph_bundled_cache_hit", "aotautograd_cache_hit", "aotautograd_cache_miss", "aotautograd_cache_bypass",
    "aotautograd_cache_pickle_failure", "aot_forward_graph_fw_metadata", "aot_forward_graph_fw_subclass_metadata",
    "aot_inference_graph_after_hop_passes", "aot_saved_tensors_hooks_graphs", "compiled_function_forward",
    "compiled_function_backward", "compiled_fn_wrapper", "runtime_wrapper_orchestration", "backward_prologue",
    "backward_epilogue", "graph_execution", "inductor_runtime_and_tensor_meta", "triton_kernel_info",
    "fx_compute_nodes_runtime_estimation", "compiled_autograd_compile_reasons",
    "compiled_autograd_graph_pre_reordering", "inductor_provenance_tracking_node_mappings",
    "inductor_provenance_tracking_kernel_stack_traces", "inductor_aot_wrapper_code", "inductor_aot_kernel_code",
    "inductor_aot_header_code", "inductor_collective_schedule", "make_fx_fail_partial", "fx_interpreter_error",
    "eager_compile_backwards_failure", "min_cut_failed_fx_graph", "min_cut_information", "cuda_event",
    "compiler_collective", "get_extra_remote_code_state", "put_local_code_state", "torch._functorch.config",
    "torch._inductor.config", "torch._dynamo.config",
    "after_activation_quantization_bwd_aten_pass", "after_activation_quantization_fwd_aten_pass",
    "aot_joint_graph_sync_decision_cross_ranks", "before_activation_quantization_bwd_aten_pass",
    "before_activation_quantization_fwd_aten_pass", "fx_bucketing_passes_all_gather_buckets",
    "fx_bucketing_passes_reduce_scatter_buckets", "fx_net_acc_splitter_finder_events",
    "inductor_autotune_at_compile_time_code", "inductor_fx_passes_overlap_bucketing",
    "inductor_overlap_cyclic_extra_deps", "inductor_spmd_graph_mismatch", "invoke_subgraph_backward_duplicate",
    "min_cut_failed_edge_list", "min_cut_failed_svg", "overlap_scheduling_graph_after",
    "overlap_scheduling_graph_before", "pge_profile_vs_analytical", "post_decomp_comms",
    "pre_bucketing_collective_sizes", "pre_bucketing_collective_sizes_after", "pre_bucketing_fsdp_collectives",
    "pre_decomp_comms", "reorder_communication_preserving_peak_memory", "scheduler_nodes_before_comm_overlap",
    "sink_waits_iterative_info",
    # named in a constant or by the callers of a helper (torch 2.13): AOT autograd's runtime wrappers, one
    # artifact each (2.15 writes them as one, aot_autograd_runtime_wrappers), collective estimates, PGO
    "backward_subclass_unwrap", "backward_subclass_wrapper", "debug_assert_wrapper", "dedup_wrapper",
    "effect_tokens_wrapper", "functionalized_rng_wrapper", "mutation_epilogue", "output_alias_wrapper",
    "subclass_wrapper", "synthetic_base_wrapper", "fx_collectives_analytical_estimation",
    "fx_collectives_node_runtime_estimation", "put_remote_code_state", "put_extra_remote_code_state",
    # torch 2.14 / 2.15: Inductor's compile-worker pool (a worker's status report; the sidecar process dying,
    # with the tail of its output), native DSL kernels' compiles, AOT autograd's runtime wrappers as one record
    "compile_worker_status", "compile_worker_sidecar_death", "native_dsl_compile", "aot_autograd_runtime_wrappers",
    "inductor_aot_code",  # torch 2.4's graph_dump of AOTInductor's code (later split in wrapper / kernel / header)
})
#: ``artifact`` names torch makes from a prefix (``f"flex_gemm_{phase}"``, torch 2.14; the cache lookups;
#: ``f"get_{ty}_code_state"``): any name with one of these is one of torch's
TORCH_ARTIFACT_PREFIXES = ("aotautograd_cache_", "fx_graph_cache_", "flex_gemm_", "get_")


class Mapped(NamedTuple):
    """What the mapping makes of one record (:meth:`TraceMapper.map`): its events, and what it knows of a record
    it made none of. ``known``: ``mapped`` (a handler took it, into events or into nothing, or there is nothing
    to show), ``shown`` (torch writes it and no handler takes it: a reader shows it as it is, under ``name``,
    its payload as the file ``file``; ``attrs``: what to say of it), ``unknown`` (no torch writes such a
    record: ``name`` is its kind)."""

    specs: list[EventSpec]
    known: str
    name: str = ""
    file: str = ""
    attrs: dict[str, Any] | None = None


def is_torch_artifact(name: str) -> bool:
    """An ``artifact`` name some torch writes (by name or by prefix)."""
    return name in TORCH_ARTIFACTS or name.startswith(TORCH_ARTIFACT_PREFIXES)

IGNORED = frozenset({"describe_storage", "describe_tensor", "describe_source", "link", "dump_file",
                     "compilation_metrics_runtime", "bwd_compilation_metrics_runtime"})
AOT_GRAPHS = ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph", "aot_inference_graph")
CACHE_ARTIFACT = re.compile(r"^(fx_graph|aotautograd)_cache_(hit|miss|bypass)$")
CACHE_EVENTS = {"hit": CACHE_HIT, "miss": CACHE_MISS, "bypass": CACHE_BYPASS}
#: ``graph_dump`` names of AOTInductor's generated code (the rest of graph_dump has no event of ours)
AOT_CODE = ("inductor_aot_wrapper_code", "inductor_aot_kernel_code", "inductor_aot_header_code")
#: kinds whose handler maps only some of their records (a log reader shows the others itself)
PARTIAL_KINDS = frozenset({"graph_dump"})
#: torch's wrappers a ``dynamo_start`` stack of older torch ends at (the call site, never a compiled frame)
CALL_SITES = frozenset({"_call_impl", "_wrapped_call_impl", "_convert_frame", "_convert_frame_assert",
                        "__call__", "catch_errors", "_fn", "compile_wrapper", "_compile", "compile_inner"})
#: compile phases (chromium_event spans) kept per compile id, at most
MAX_PHASES = 400

#: compilation_metrics / bwd_compilation_metrics fields kept in ``metrics.json``
METRICS_KEEP = ("compile_id", "co_name", "co_filename", "co_firstlineno", "frame_key", "cache_size",
                "accumulated_cache_size", "guard_count", "shape_env_guard_count", "graph_op_count",
                "graph_node_count", "graph_input_count", "start_time", "entire_frame_compile_time_s",
                "backend_compile_time_s", "inductor_compile_time_s", "code_gen_time_s",
                "dynamo_time_before_restart_s", "remote_cache_time_saved_s", "structured_logging_overhead_s",
                "fail_type", "fail_reason", "fail_user_frame_filename", "fail_user_frame_lineno",
                "restart_reasons", "has_guarded_code", "recompile_reason", "num_graph_breaks",
                "config_suppress_errors", "is_forward", "cudagraph_skip_reason")

#: the scope attributes of every event the mapping makes (torch's records are of the whole graph)
_FULLGRAPH = scope_attrs(None)
#: ... its one value: an event's attribute map is a dict literal that starts with it (cheaper than ``**``)
_SCOPE = _FULLGRAPH["scope"]
if _FULLGRAPH != {"scope": _SCOPE}:
    raise AssertionError(f"the mapping's attribute maps spell out scope_attrs(None): {_FULLGRAPH}")
#: a lifecycle event's name by (phase, lifecycle): the mapping's lifecycles are its own few constants
_lifecycle_name = functools.lru_cache(maxsize=512)(lifecycle_event)


def metrics_json(m: dict[str, Any]) -> str:
    """A compile's ``metrics.json``: the :data:`METRICS_KEEP` fields of its ``compilation_metrics`` /
    ``bwd_compilation_metrics`` record body ``m``, indented."""
    return json_indented({k: m.get(k) for k in METRICS_KEEP if k in m})


class _Deferred(str):
    """A file's text the mapping leaves to its caller to make when the file is opened (see
    :data:`METRICS_OF_RECORD`); compared by identity."""

    __slots__ = ()


#: ``metrics.json`` given as this (only when ``TraceMapper.defer_files`` is set): the text is
#: :func:`metrics_json` of the body of the record being handled. A log reader keeps where that record
#: is and makes the text when the file is opened, not for every compile of a 100k-frame log.
METRICS_OF_RECORD = _Deferred("<metrics.json of the record>")
#: ``user_stack.txt`` given as this (``TraceMapper.defer_files``): the text is
#: ``TraceMapper.stack_text(body["stack"], strings)`` of the ``dynamo_start`` record being handled, with the
#: string table of that moment (``TraceMapper.strings``: a ``str`` record that redefines an id makes a new
#: one, so the table a deferred stack was given stays as it was)
STACK_OF_RECORD = _Deferred("<user_stack.txt of the record>")


def in_generation(cid: str, resets: int) -> str:
    """A compile id (or frame key) as it is spelled after the ``resets``-th ``torch._dynamo.reset()``:
    ``R<n>/0/1`` (torch counts from 0/0 again); unchanged before any reset. The one spelling for the
    mapping's events and the tracer's runtime counts."""
    return f"R{resets}/{cid}" if resets else cid


class ResetCounter:
    """``torch._dynamo.reset()`` calls seen from compile starts alone (a first attempt of a compile id that
    already started in this generation), for a reader that sees no more than ``dynamo_start`` ids (the
    tracer's runtime counts); the mapper applies the same rule to its own compile states."""

    def __init__(self) -> None:
        self.resets = 0
        self._started: set[str] = set()

    def start(self, ids: dict[str, Any]) -> None:
        fid, fcid = ids.get("frame_id"), ids.get("frame_compile_id")
        if fid is None or fcid is None:
            return
        cid = f"{ids.get('compiled_autograd_id')}/{fid}/{fcid}"
        att = ids.get("attempt")
        if cid in self._started and (att is None or att == 0):
            self.resets += 1
            self._started.clear()
        self._started.add(cid)


# -- the mapper -------------------------------------------------------------------------------------

@dataclass(slots=True)
class CompileState:
    """What the mapping remembers of one compile id (one per compile id of a log: 100k frames, 100k of
    these, so slots, and the chromium span lists only where a compile has spans)."""

    compile_id: str
    frame_key: tuple | None = None
    frame: str | None = None
    attempt: int = 0
    #: lifecycle names still open, in order: a list while any is (:meth:`TraceMapper._before` makes it),
    #: else the empty tuple (100k compiles of a log, closed, kept 100k empty lists)
    open: list[str] | tuple[()] = ()
    started: bool = False                             # dynamo_start seen (a "compile" lifecycle opened)
    closed: bool = False                              # compilation_metrics seen
    failed_written: bool = False
    pending_error: str | None = None                  # dynamo_error traceback, written with the metrics
    #: the graph Dynamo captured in this compile, until it closes: a failed compile shows the graph the backend
    #: rejected beside the error (as tlparse keeps it), not only on the capture event
    captured: str | None = None
    pending_recompile: dict[str, Any] | None = None   # written once the frame name is known
    limit_note: RecompileLimitNote | None = None
    recompile_limit: Any = None
    backward_open: bool = False
    inductor_backward: bool = False                   # the graph Inductor is on is a backward graph
    phases: list[dict[str, Any]] | None = None        # closed chromium spans (phases.json)
    phase_stack: list[tuple[str, float]] | None = None  # open chromium spans: (name, ts µs)


@dataclass(slots=True)
class Rec:
    """One record as a handler sees it."""

    kind: str
    md: dict[str, Any]
    body: Any
    payload: str
    st: CompileState | None
    context: dict[str, Any]
    events: list[EventSpec] = field(default_factory=list)


Handler = Callable[["TraceMapper", Rec], None]
#: a record kind's handler (the one registry: :meth:`TraceMapper.handle` calls it with one look-up, but for
#: ``chromium_event``, a side channel it looks at itself; ``str`` and ``artifact`` have none here)
KIND_HANDLERS: dict[str, Handler] = {}
ARTIFACT_HANDLERS: dict[str, Handler] = {}
#: kinds / artifacts that, arriving after a compile closed (with torch's own ids), are the lazy backward
BACKWARD_KINDS = frozenset({"inductor_post_grad_graph", "inductor_output_code", "aot_backward_graph",
                            "artifact:before_pre_grad_graph", "artifact:after_pre_grad_graph",
                            "artifact:before_post_grad_graph", "artifact:inductor_post_grad_graph",
                            "artifact:after_post_grad_graph", "artifact:after_recompile_post_grad",
                            "artifact:fx_graph_cache_hit", "artifact:fx_graph_cache_miss",
                            "artifact:fx_graph_cache_bypass", "artifact:aotautograd_cache_hit",
                            "artifact:aotautograd_cache_miss", "artifact:aotautograd_cache_bypass",
                            "artifact:fx_graph_runnable", "artifact:inductor_provenance_tracking_node_mappings",
                            "artifact:inductor_provenance_tracking_kernel_stack_traces",
                            "artifact:ir_pre_fusion", "artifact:ir_post_fusion"})
#: the tracer's own frames are never the user's (a path, not an import: this package needs no tracer)
_TRACER_DIR = str(Path(__file__).resolve().parent.parent / "tracer") + os.sep
_TANGENTS = re.compile(r"\btangents_\d+\b")


def on_kind(*kinds: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for k in kinds:
            KIND_HANDLERS[k] = fn
        return fn
    return register


def on_artifact(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for n in names:
            ARTIFACT_HANDLERS[n] = fn
        return fn
    return register


class TraceMapper:
    """Turns typed records (:mod:`magi_format.torch_records`) into :data:`EventSpec` lists.

    ``framework_paths``: path prefixes that are never the user's frame (torch's package, this tracer);
    ``gb_registry``: path of torch's ``graph_break_registry.json`` (found without importing torch when
    not given)."""

    def __init__(self, strings: dict[int, str] | None = None, *, framework_paths: tuple[str, ...] = (),
                 gb_registry: str | None = None) -> None:
        self.strings: dict[int, str] = dict(strings or {})
        self.compiles: dict[str, CompileState] = {}
        self.frame_names: dict[tuple, str] = {}
        self.framework_paths = tuple(p for p in framework_paths if p) + (_TRACER_DIR,)
        self._registry_path = gb_registry
        self._registry: dict[str, Any] | None = None
        self.config_recompile_limit: Any = None  # from the last compilation_metrics' dynamo_config (logs)
        #: ((dynamo_config, the limit before it), the limit it gives) of the last compilation_metrics
        #: whose config is a string
        self._config_seen: tuple = ((None, None), None)
        self.resets = 0  # torch._dynamo.reset() calls seen: compile ids start again from 0/0
        #: lifecycles open outside any compile id (AOTInductor, export: torch writes no compile id)
        self._open_passes: list[str] = []
        #: give each ``metrics.json`` as :data:`METRICS_OF_RECORD` and each ``user_stack.txt`` as
        #: :data:`STACK_OF_RECORD` (a log reader makes them when opened)
        self.defer_files = False
        self._body: Any = None  # the body of the record being handled

    # -- entry points --------------------------------------------------------------------------
    def events(self, record: Any) -> list[EventSpec]:
        """The writer's ``translate``: any record -> events."""
        if isinstance(record, TraceRecord):
            return self.handle(record.metadata, record.payload, record.context)
        if isinstance(record, RecompileLimitNote):
            return self._limit_note(record)
        if isinstance(record, UserEvent):
            return [self._user_event(record)]
        return []

    def map(self, md: dict[str, Any], payload: str | None, specs: list[EventSpec] | None = None) -> Mapped:
        """A log reader's one question: the record's events (``specs`` when :meth:`handle` was asked already),
        and what the mapping knows of a record it made no event of (:class:`Mapped`)."""
        if specs is None:
            specs = self.handle(md, payload)
        if not md:
            return Mapped(specs, "mapped")
        kind = next(iter(md))
        if specs or kind in IGNORED or kind == "str":
            return Mapped(specs, "mapped")
        body = md.get(kind)
        if kind == "artifact":
            name = str(body.get("name", "")) if isinstance(body, dict) else ""
            if name in ARTIFACT_HANDLERS or CACHE_ARTIFACT.match(name) or payload is None:
                return Mapped(specs, "mapped")  # mapped (into nothing, this time) or nothing to show
            enc = body.get("encoding") if isinstance(body, dict) else None
            return Mapped(specs, "shown", name, name + (".json" if enc == "json" else ".txt"),
                          {"artifact": name, "encoding": enc})
        if kind in TORCH_KINDS:
            if (kind in KIND_HANDLERS and kind not in PARTIAL_KINDS) or payload is None:
                return Mapped(specs, "mapped")
            name = kind
            if kind == "graph_dump" and isinstance(body, dict) and body.get("name"):
                name = str(body["name"])  # torch's graph dumps are named: inductor_aot_wrapper_code, ...
            return Mapped(specs, "shown", name, name + ".txt", {"artifact": name})
        return Mapped(specs, "unknown", kind)

    def handle(self, md: dict[str, Any], payload: str | None, context: dict[str, Any] | None = None
               ) -> list[EventSpec]:
        if not md:
            return []
        kind = next(iter(md))
        body = md[kind]
        handler = KIND_HANDLERS.get(kind)
        if handler is not None and kind != "chromium_event":  # (most records: one look-up)
            tag = kind
        elif kind in IGNORED:
            return []
        elif kind == "str":
            if isinstance(body, (list, tuple)) and len(body) == 2:  # live: a tuple (torch's lambda)
                if self.defer_files and self.strings.get(body[1], body[0]) != body[0]:
                    self.strings = dict(self.strings)  # a deferred stack keeps the table it was given
                self.strings[body[1]] = body[0]
            return []
        elif kind == "chromium_event":  # a side channel: never an event of its own, never closes anything
            self._chromium(md, payload)
            return []
        elif kind == "artifact":
            name = str(body.get("name", "")) if isinstance(body, dict) else ""
            handler = ARTIFACT_HANDLERS.get(name)
            if handler is None:
                if CACHE_ARTIFACT.match(name):
                    handler = ARTIFACT_HANDLERS["<cache>"]
                else:
                    return []
            tag = f"artifact:{name}"
        else:
            return []  # (a kind without a handler)
        # compile_id_of, inline: each of the record's ids read once
        fid, fcid = md.get("frame_id"), md.get("frame_compile_id")
        if fid is None or fcid is None:
            st = None
        else:
            ca = md.get("compiled_autograd_id")
            cid = f"{fid}/{fcid}" if ca is None else f"!{ca}/{fid}/{fcid}"
            if self.resets:
                cid = in_generation(cid, self.resets)
            if kind == "dynamo_start" and self._note_reset(md, cid):
                cid = in_generation(f"{fid}/{fcid}" if ca is None else f"!{ca}/{fid}/{fcid}", self.resets)
            st = self._state_of(cid, ca, fid, md.get("attempt"))
        rec = Rec(kind, md, body if isinstance(body, dict) else {}, payload or "", st, dict(context) if context else {})
        self._body = rec.body
        if st is not None:
            if st.pending_recompile is not None and tag not in ("dynamo_start", "artifact:recompile_reasons"):
                self._flush_recompile(rec)
            if (tag in BACKWARD_KINDS or tag == "bwd_compilation_metrics") and self._is_backward(rec, tag):
                rec.context["backward"] = True
                if st.closed and not st.backward_open and tag != "bwd_compilation_metrics":
                    st.backward_open = True
                    rec.events.append(self._before(st, BACKWARD_COMPILE, backward=True))
        handler(self, rec)
        return rec.events

    def finish(self) -> list[EventSpec]:
        """At the end of the session: what is still waiting for a record that will not come."""
        out: list[EventSpec] = []
        for st in self.compiles.values():
            rec = Rec("finish", {}, {}, "", st, {}, out)
            if st.pending_recompile is not None:
                self._flush_recompile(rec)
            if st.limit_note is not None:
                self._emit_limit_hit(rec, {})
            if st.pending_error is not None:
                self._close_failed(rec, {})
        return out

    # -- state and event helpers ---------------------------------------------------------------
    def compile_id_of(self, md: dict[str, Any]) -> str | None:
        """A record's compile id as events carry it: ``0/1``, ``!2/0/1`` (compiled autograd), and after the
        n-th ``torch._dynamo.reset()`` seen, ``R<n>/0/1`` (torch counts from 0/0 again)."""
        fid, fcid = md.get("frame_id"), md.get("frame_compile_id")
        if fid is None or fcid is None:
            return None
        cid = f"{fid}/{fcid}"
        ca = md.get("compiled_autograd_id")
        if ca is not None:
            cid = f"!{ca}/{cid}"
        return in_generation(cid, self.resets) if self.resets else cid

    def _note_reset(self, md: dict[str, Any], cid: str) -> bool:
        """A first attempt (``dynamo_start``) of a compile id (``cid``, its id as events carry it) that
        already started: torch's counters were reset (``torch._dynamo.reset()``), so this and what follows
        is a new compilation (as tlparse's stack trie keeps them apart). Whether it was one."""
        st = self.compiles.get(cid)
        if st is not None and st.started:
            att = md.get("attempt")
            if att is None or att == 0:
                self.resets += 1
                return True
        return False

    def _state(self, md: dict[str, Any], cid: Any = False) -> CompileState | None:
        """The state of the record's compile (``cid``: its :meth:`compile_id_of`, when known)."""
        if cid is False:
            cid = self.compile_id_of(md)
        if cid is None:
            return None
        return self._state_of(cid, md.get("compiled_autograd_id"), md.get("frame_id"), md.get("attempt"))

    def _state_of(self, cid: str, ca: Any, fid: Any, att: Any) -> CompileState:
        """Compile ``cid``'s state, made at its first record (``ca``, ``fid``: its compiled-autograd and
        frame ids, the key of its frame); ``att``, the record's attempt, kept when it is one."""
        st = self.compiles.get(cid)
        if st is None:
            key = (self.resets, ca, fid)
            cid = sys.intern(cid)  # once: its events' readers intern it again at no cost (an interned str)
            st = self.compiles[cid] = CompileState(cid, frame_key=key)
            st.frame = self.frame_names.get(key)
        if isinstance(att, int):
            st.attempt = att
        return st

    def _set_frame(self, st: CompileState | None, name: Any) -> None:
        if st is not None and name:
            cur = st.frame
            if cur is not None and type(name) is str and cur == name and (
                    st.frame_key is None or self.frame_names.get(st.frame_key) is cur):
                return  # (already this name, interned, and the frame's: the usual second record of a compile)
            st.frame = sys.intern(str(name))  # one string per frame name, however many records give it
            if st.frame_key is not None:
                self.frame_names[st.frame_key] = st.frame

    def _attrs(self, st: CompileState | None, **extra: Any) -> dict[str, Any]:
        if st is not None:  # (a new map each call)
            a: dict[str, Any] = {"scope": _SCOPE, "compile_id": st.compile_id, "frame": st.frame,
                                 "attempt": st.attempt, "source": "torch_trace"}
        else:
            a = {"scope": _SCOPE, "source": "torch_trace"}
        if extra:
            a.update(extra)
        return a

    def _lc_attrs(self, st: CompileState | None, lc: str, extra: dict[str, Any]) -> dict[str, Any]:
        """:meth:`_attrs` of a lifecycle event: ``lifecycle_name``, then ``extra``."""
        if st is not None:
            a: dict[str, Any] = {"scope": _SCOPE, "compile_id": st.compile_id, "frame": st.frame,
                                 "attempt": st.attempt, "source": "torch_trace", "lifecycle_name": lc}
        else:
            a = {"scope": _SCOPE, "source": "torch_trace", "lifecycle_name": lc}
        if extra:
            a.update(extra)
        return a

    def _before(self, st: CompileState | None, lc: str, files: dict[str, str] | None = None,
                **extra: Any) -> EventSpec:
        if st is None:
            open_ = self._open_passes
        else:
            if not isinstance(st.open, list):
                st.open = []
            open_ = st.open
        open_.append(lc)
        if len(open_) > 256:  # a log that never closes what it opens does not grow this without end
            del open_[0]
        return EventSpec(_lifecycle_name("before", lc), self._lc_attrs(st, lc, extra), files or {})

    def _end(self, st: CompileState | None, phase: str, lc: str, files: dict[str, str] | None = None,
             **extra: Any) -> EventSpec:
        return self._end_with(st, phase, lc, files, extra)

    def _end_with(self, st: CompileState | None, phase: str, lc: str, files: dict[str, str] | None,
                  extra: dict[str, Any]) -> EventSpec:
        """:meth:`_end` with its extra attributes as a map (a handler that has them as one passes it on)."""
        open_ = st.open if st is not None else self._open_passes
        if open_ and open_[-1] == lc:  # (the usual: the innermost open one closes)
            del open_[-1]
            if not open_ and st is not None:
                st.open = ()
        elif lc in open_:
            idx = len(open_) - 1 - open_[::-1].index(lc)
            if isinstance(open_, list):  # (it holds lc: a list)
                del open_[idx]
            if not open_ and st is not None:
                st.open = ()
        return EventSpec(_lifecycle_name(phase, lc), self._lc_attrs(st, lc, extra), files or {})

    def _point(self, st: CompileState | None, base: str, files: dict[str, str] | None = None,
               **extra: Any) -> EventSpec:
        return EventSpec(point_event(base), self._attrs(st, **extra), files or {})

    def _chromium(self, md: dict[str, Any], payload: str | None) -> None:
        """A compile-phase span (``ph`` B / E) of a compile id, kept for that compile's ``phases.json``."""
        if not payload:
            return
        try:
            ev = json.loads(payload)
        except ValueError:
            return
        if not isinstance(ev, dict) or ev.get("ph") not in ("B", "E"):
            return
        args = a if isinstance(a := ev.get("args"), dict) else {}
        ids = dict(md)
        if ids.get("frame_id") is None and isinstance(args.get("compile_id"), str):
            m = re.match(r"^(?:!(\d+)/)?(\d+)/(\d+)", args["compile_id"])
            if m:
                ids.update(frame_id=int(m.group(2)), frame_compile_id=int(m.group(3)),
                           compiled_autograd_id=int(m.group(1)) if m.group(1) else None)
        st = self._state({k: v for k, v in ids.items() if k != "attempt"})
        name, ts = str(ev.get("name", "?"))[:200], ev.get("ts")
        if st is None or not isinstance(ts, (int, float)) or isinstance(ts, bool):
            return
        if st.phase_stack is None:
            st.phase_stack = []
        if ev["ph"] == "B":
            if len(st.phase_stack) < 64:
                st.phase_stack.append((name, float(ts)))
            return
        for i in range(len(st.phase_stack) - 1, -1, -1):
            if st.phase_stack[i][0] == name:
                _, start = st.phase_stack.pop(i)
                del st.phase_stack[i:]
                if st.phases is None:
                    st.phases = []
                if len(st.phases) < MAX_PHASES:
                    st.phases.append({"name": name, "start_us": start, "dur_us": max(0.0, float(ts) - start),
                                      "depth": i})
                return

    def _phases_file(self, st: CompileState | None) -> dict[str, str]:
        """``phases.json`` of a compile closing now (its spans from the compile's first start), once."""
        if st is None or not st.phases:
            return {}
        spans = sorted(st.phases, key=lambda p: p["start_us"])
        t0 = spans[0]["start_us"]
        st.phases = None
        return {"phases.json": json.dumps([{**p, "start_us": round(p["start_us"] - t0, 1),
                                            "dur_us": round(p["dur_us"], 1)} for p in spans])}

    def user_site(self, *stacks: Any) -> dict[str, Any]:
        """``user_file``, ``user_line``, ``user_function``, ``source_line``, ``user_frame``: the innermost
        frame outside torch / the tracer of the first of ``stacks`` (interned structured stacks) that has one."""
        for generated_ok in (False, True):  # "<string>" / "<eval_with_key>" frames only if nothing else
            for stack in stacks:
                for fr in reversed(stack) if isinstance(stack, list) else ():
                    if not isinstance(fr, dict):
                        continue
                    fn = fr.get("filename")
                    fname = self.strings.get(fn, str(fn)) if isinstance(fn, int) else str(fn)
                    if self.is_framework(fname) or (fname.startswith("<") and not generated_ok):
                        continue
                    line = fr.get("line") if isinstance(fr.get("line"), int) else None
                    src = fr.get("loc") or (linecache.getline(fname, line).strip() if line else "") or None
                    return {"user_file": fname, "user_line": line, "user_function": fr.get("name"),
                            "source_line": src, "user_frame": f"{fname}:{line}"}
        return {}

    def _bw(self, rec: Rec) -> dict[str, Any]:
        return {"backward": True} if rec.context.get("backward") else {}

    def _is_backward(self, rec: Rec, tag: str) -> bool:
        if tag == "bwd_compilation_metrics":
            return True
        if tag not in BACKWARD_KINDS or rec.st is None:
            return False
        st = rec.st
        if tag == "aot_backward_graph" or (st.closed and not rec.context.get("ids_from_hint")):
            return True  # the lazy backward compile, after the forward's compile closed
        if rec.kind in ("inductor_post_grad_graph", "inductor_output_code") or tag in (
                "artifact:before_post_grad_graph", "artifact:inductor_post_grad_graph"):
            # inside the forward's compile (a cache hit loads both): a backward graph's inputs are tangents
            # a graph's head names its inputs; output code unpacks them in call(), after the kernels' source
            text = rec.payload if rec.kind == "inductor_output_code" else rec.payload[:4000]
            st.inductor_backward = "tangents_" in text and bool(_TANGENTS.search(text))
            return st.inductor_backward
        if tag.startswith(("artifact:fx_graph_cache_", "artifact:inductor_provenance_", "artifact:ir_p")):
            return st.inductor_backward  # it follows the output code of the graph it is about
        return False

    def _stack_text(self, stack: Any) -> tuple[str, str | None]:
        """Format an interned stack; returns (text, innermost function name)."""
        if self.defer_files:
            if not isinstance(stack, list):
                return "", None
            for fr in reversed(stack):
                if isinstance(fr, dict):
                    return STACK_OF_RECORD, fr.get("name")
            return "", None
        return self.stack_text(stack, self.strings)

    @staticmethod
    def stack_text(stack: Any, strings: dict[int, str]) -> tuple[str, str | None]:
        """An interned stack formatted with the string table ``strings``: (text, innermost function name)."""
        if not isinstance(stack, list):
            return "", None
        lines, last = [], None
        for fr in stack:
            if not isinstance(fr, dict):
                continue
            fn = fr.get("filename")
            fname = strings.get(fn, str(fn)) if isinstance(fn, int) else str(fn)
            last = fr.get("name")
            lines.append(f'  File "{fname}", line {fr.get("line")}, in {fr.get("name")}')
            if fr.get("loc"):
                lines.append(f"    {fr.get('loc')}")
        return "\n".join(lines) + ("\n" if lines else ""), last

    def _ends_at_call_site(self, stack: Any) -> bool:
        """Older torch's ``dynamo_start`` stack ends at the call site (a torch wrapper Dynamo never
        compiles: ``_call_impl``, ``_convert_frame``, …), not at the frame it compiled."""
        last = stack[-1] if isinstance(stack, list) and stack else None
        if not isinstance(last, dict) or last.get("name") not in CALL_SITES:
            return False
        fn = last.get("filename")
        return is_torch_or_runpy(self.strings.get(fn, str(fn)) if isinstance(fn, int) else str(fn))

    def is_framework(self, filename: str) -> bool:
        return filename.startswith(self.framework_paths) or is_torch_or_runpy(filename)

    def registry(self) -> dict[str, Any]:
        if self._registry is None:
            self._registry = merged_gb_registry(self._registry_path or find_gb_registry())
        return self._registry

    # -- records that are not torch's trace ----------------------------------------------------
    def _user_event(self, ev: UserEvent) -> EventSpec:
        attrs = ev.attributes
        cid = attrs.get("compile_id")
        if self.resets and isinstance(cid, str) and cid[:1] != "R" and re.match(r"^(?:!\d+/)?\d+/\d+$", cid):
            attrs = {**attrs, "compile_id": in_generation(cid, self.resets)}  # the tracer's ids: torch's counters
        if attrs.get("compile_id") and "frame" not in attrs:
            st = self.compiles.get(attrs["compile_id"])
            if st is not None and st.frame:
                attrs = {**attrs, "frame": st.frame}
        return EventSpec(ev.name, attrs, ev.files)

    def _limit_note(self, note: RecompileLimitNote) -> list[EventSpec]:
        st = self._state(note.ids or {})
        if st is None:
            rec = Rec("note", {}, {}, "", None, {})
            self._emit_limit_hit(rec, {}, note)
            return rec.events
        if not st.frame and note.function:
            self._set_frame(st, note.function)
        st.limit_note = note
        rec = Rec("note", {}, {}, "", st, {})
        if st.pending_recompile is not None:
            self._flush_recompile(rec)
        return rec.events

    # -- recompiles ----------------------------------------------------------------------------
    def _flush_recompile(self, rec: Rec) -> None:
        st = rec.st
        if st is None or st.pending_recompile is None:
            return
        pending, st.pending_recompile = st.pending_recompile, None
        attrs = {**pending["attrs"], "frame": st.frame}
        rec.events.append(EventSpec(point_event(RECOMPILE), {**self._attrs(st), **attrs}, pending["files"]))

    def _emit_limit_hit(self, rec: Rec, metrics: dict[str, Any], note: RecompileLimitNote | None = None) -> None:
        st = rec.st
        note = note or (st.limit_note if st is not None else None)
        if st is not None:
            st.limit_note = None
        text = str(metrics.get("fail_reason") or "")
        limit_type, limit = limit_from_message(text)
        if note is not None:
            limit_type, limit = note.limit_type, note.limit
        if limit is None and st is not None:
            limit = st.recompile_limit
        frame = (st.frame if st is not None else None) or (note.function if note else None)
        reason = (note.reason if note and note.reason else None) or metrics.get("recompile_reason") or ""
        files = {"metrics.json": self._metrics_file(metrics)} if metrics else {}
        attrs: dict[str, Any] = {
            "frame": frame, "recompile_limit": limit,
            "limit_type": limit_type,
            "reason": first_line(reason, 2000), "fallback": "eager",
        }
        if note is not None and note.filename:
            attrs["co_filename"], attrs["co_firstlineno"] = note.filename, note.lineno
        fail = metrics.get("fail_type")
        if fail:
            attrs["fail_type"] = fail
            if "FailOnRecompileLimitHit" in str(fail) or "Hard failure" in text:
                attrs["fallback"] = "error"
        rec.events.append(self._point(st, RECOMPILE_LIMIT_HIT, files, **attrs))

    # -- closing a compile ---------------------------------------------------------------------
    def _close_failed(self, rec: Rec, metrics: dict[str, Any]) -> None:
        st = rec.st
        tb = st.pending_error if st is not None else None
        if st is not None:
            st.pending_error = None
            st.failed_written = True
        files: dict[str, str] = {}
        if tb:
            files["traceback.txt"] = tb
        if st is not None and st.captured:
            files["captured_graph.py"] = st.captured  # the graph the backend (or what came after) rejected
            st.captured = None
        if metrics:
            files["metrics.json"] = self._metrics_file(metrics)
        etype, msg = exception_from_traceback(tb) if tb else ("", "")
        fail = metrics.get("fail_type")
        fail_reason = metrics.get("fail_reason")
        if not etype or etype == "Error":
            etype = str(fail or "Error").rsplit(".", 1)[-1]
        if fail_reason:
            msg = str(fail_reason)  # torch's str(exception): the whole message, every line
        files.update(self._phases_file(st))
        extra = self._metric_attrs(metrics)
        if st is not None and DYNAMO_CAPTURE in st.open:
            rec.events.append(self._end(st, "skip", DYNAMO_CAPTURE, reason="compile failed"))
        if st is not None:
            for lc in reversed([x for x in st.open if x not in (COMPILE, DYNAMO_CAPTURE)]):
                rec.events.append(self._end(st, "skip", lc, reason="compile failed"))
        rec.events.append(self._end(st, "failed", COMPILE, files, exception_type=etype,
                                    exception_message=msg, **extra))

    def _metrics_file(self, m: dict[str, Any]) -> str:
        """``metrics.json`` of metrics ``m``: deferred (:data:`METRICS_OF_RECORD`) when asked to and ``m`` is
        the body of the record being handled, else the text."""
        if self.defer_files and m is self._body:
            return METRICS_OF_RECORD
        return metrics_json(m)

    @staticmethod
    def _metric_attrs(m: dict[str, Any]) -> dict[str, Any]:
        if not m:
            return {}
        secs = m.get("entire_frame_compile_time_s")
        extra: dict[str, Any] = {
            "duration_ms": float(secs) * 1000 if isinstance(secs, (int, float)) else None,
            "guard_count": m.get("guard_count"), "graph_op_count": m.get("graph_op_count"),
            "recompile_reason": m.get("recompile_reason"),
        }
        if m.get("fail_type"):
            extra["fail_type"] = m.get("fail_type")
            extra["fail_reason"] = m.get("fail_reason")
            fn, ln = m.get("fail_user_frame_filename"), m.get("fail_user_frame_lineno")
            extra["fail_user_frame"] = f"{fn}:{ln}" if fn else None
        return extra


# -- handlers, one per record kind -------------------------------------------------------------------

@on_kind("dynamo_start")
def _dynamo_start(self: TraceMapper, r: Rec) -> None:
    st = r.st
    stack = r.body.get("stack")
    stack_text, fn = self._stack_text(stack)
    if fn is not None and self._ends_at_call_site(stack):
        fn = None  # older torch: the stack ends at the call site (_call_impl, _convert_frame); the metrics name it
    if st is not None:
        self._set_frame(st, fn)
        st.closed = st.failed_written = st.backward_open = False
        st.started = True
        if st.pending_recompile is not None:
            self._flush_recompile(r)
    r.events.append(self._before(st, COMPILE, {"user_stack.txt": stack_text} if stack_text else None))
    r.events.append(self._before(st, DYNAMO_CAPTURE))


@on_kind("dynamo_output_graph")
def _dynamo_output_graph(self: TraceMapper, r: Rec) -> None:
    sizes = r.body.get("sizes")
    extra = {"graph_node_count": len(sizes)} if isinstance(sizes, dict) else {}
    files = {"captured_graph.py": r.payload}
    if r.st is not None:
        r.st.captured = r.payload
    if r.st is not None and DYNAMO_CAPTURE in r.st.open:
        r.events.append(self._end(r.st, "after", DYNAMO_CAPTURE, files, **extra))
    else:
        r.events.append(self._point(r.st, AFTER_DYNAMO_CAPTURE, files, **extra))


@on_kind(*AOT_GRAPHS)
def _aot_graph(self: TraceMapper, r: Rec) -> None:
    kind = r.kind[len("aot_"):-len("_graph")]
    r.events.append(self._point(r.st, aot_graph_base(kind), {f"aot_{kind}_graph.py": r.payload},
                                **self._bw(r)))


@on_kind("inductor_post_grad_graph")
def _post_grad_cache_hit(self: TraceMapper, r: Rec) -> None:
    """The top-level form: torch 2.13 writes it on an FX-graph cache hit (the passes did not run); older
    torch wrote it at the end of the passes it opened with ``before_post_grad_graph``, which it closes."""
    open_ = self._open_passes if r.st is None else r.st.open
    if POST_GRAD_PASSES in open_:
        r.events.append(self._end(r.st, "after", POST_GRAD_PASSES, {"post_grad_graph.py": r.payload},
                                  **self._bw(r)))
        return
    r.events.append(self._before(r.st, POST_GRAD_PASSES, cache="hit", **self._bw(r)))
    r.events.append(self._end(r.st, "after", POST_GRAD_PASSES, {"post_grad_graph.py": r.payload},
                              cache="hit", **self._bw(r)))


@on_kind("inductor_output_code")
def _inductor_output_code(self: TraceMapper, r: Rec) -> None:
    fn = r.body.get("filename")
    r.events.append(self._point(r.st, AFTER_INDUCTOR_CODEGEN, {"inductor_output.py": r.payload},
                                filename=str(fn) if fn else None, **self._bw(r)))


@on_kind("dynamo_cpp_guards_str")
def _guards(self: TraceMapper, r: Rec) -> None:
    from magi_format.guards import count_leaf_guards

    m = re.search(r"Guard latency = ([\d.]+) us", r.payload)
    extra: dict[str, Any] = {"guard_latency_us": float(m.group(1))} if m else {}
    extra["guard_lines"] = r.payload.count("\n")
    extra["leaf_guard_count"] = count_leaf_guards(r.payload)
    r.events.append(self._point(r.st, AFTER_BUILD_GUARDS, {"guards.txt": r.payload}, **extra))


@on_kind("compilation_metrics")
def _metrics(self: TraceMapper, r: Rec) -> None:
    st, m = r.st, r.body
    cfg = m.get("dynamo_config")
    if type(cfg) is str:  # (anything else names no limit: the last one stands)
        key = (cfg, self.config_recompile_limit)
        if key != self._config_seen[0]:  # a log's compiles repeat one config (a long JSON string): read once
            self._config_seen = (key, recompile_limit_of(*key))
        self.config_recompile_limit = self._config_seen[1]
    co_name = m.get("co_name")
    if st is not None and co_name:
        self._set_frame(st, co_name)  # torch's name for the code object it compiled: it wins
    if st is not None and st.pending_recompile is not None:
        self._flush_recompile(r)
    restarts = m.get("restart_reasons")
    if restarts:  # (most compiles had no restart)
        if isinstance(restarts, str):  # one reason, not a list of characters
            restarts = [restarts]
        for reason in restarts if isinstance(restarts, (list, tuple)) else []:
            r.events.append(self._point(st, RESTART, restart_reason=str(reason)[:2000],
                                        reason=first_line(str(reason))))
    fail = m.get("fail_type")
    limit_hit = bool(fail) and (is_limit_hit(fail, m.get("fail_reason"))
                                or (st is not None and st.limit_note is not None))
    if limit_hit:
        self._emit_limit_hit(r, m)
        if st is None or not st.started:
            if st is not None:
                st.closed = True
            return  # torch gave up before dynamo_start: no compile lifecycle was opened
    if fail or (st is not None and st.pending_error is not None):
        if st is None or not st.failed_written:
            self._close_failed(r, m)
    else:
        if st is not None and st.open:
            for lc in reversed(list(st.open)):
                if lc not in (COMPILE, BACKWARD_COMPILE):  # e.g. an empty graph never closes capture
                    r.events.append(self._end_with(st, "skip", lc, None,
                                                   {"reason": "not completed in this compile"}))
        if st is None or not st.failed_written:
            files = {"metrics.json": self._metrics_file(m)}
            if st is not None and st.phases:
                files.update(self._phases_file(st))
            r.events.append(self._end_with(st, "after", COMPILE, files, self._metric_attrs(m)))
    if st is not None:
        st.closed = True
        st.captured = None


@on_kind("bwd_compilation_metrics")
def _bwd_metrics(self: TraceMapper, r: Rec) -> None:
    st, m = r.st, r.body
    if st is not None and not st.backward_open:
        r.events.append(self._before(st, BACKWARD_COMPILE, backward=True))
    if st is not None:
        for lc in reversed(list(st.open)):
            if lc not in (COMPILE, BACKWARD_COMPILE):
                r.events.append(self._end(st, "skip", lc, reason="not completed in this compile", backward=True))
        st.backward_open = False
    files = {"metrics.json": self._metrics_file(m)}
    secs = m.get("inductor_compile_time_s")
    extra: dict[str, Any] = {"backward": True,
                             "duration_ms": float(secs) * 1000 if isinstance(secs, (int, float)) else None}
    if m.get("fail_type"):
        r.events.append(self._end(st, "failed", BACKWARD_COMPILE, files,
                                  exception_type=str(m["fail_type"]).rsplit(".", 1)[-1],
                                  exception_message=str(m.get("fail_reason") or ""),
                                  fail_type=m["fail_type"], fail_reason=m.get("fail_reason"), **extra))
    else:
        r.events.append(self._end(st, "after", BACKWARD_COMPILE, files, **extra))


@on_artifact("dynamo_graph_break_reason")
def _graph_break(self: TraceMapper, r: Rec) -> None:
    gb = parse_graph_break(r.payload)
    frame = next((f for f in reversed(gb["frames"]) if not self.is_framework(f.filename)), None)
    if frame is None and gb.get("header_frame") is not None:
        hf = gb["header_frame"]
        frame = next((f for f in gb["frames"] if (f.filename, f.line) == (hf.filename, hf.line)), hf)
    gb_id, gb_type = gb.get("gb_id"), gb.get("gb_type")
    explanation, hints = gb.get("explanation"), gb.get("hints")
    if gb_id is None and gb_type:
        gb_id = next((k for k, versions in self.registry().items()
                      if any(v.get("Gb_type") == gb_type for v in versions)), None)
    if gb_id is not None and (gb_type is None or explanation is None):
        versions = self.registry().get(gb_id) or [{}]
        gb_type = gb_type or versions[0].get("Gb_type")
        explanation = explanation or versions[0].get("Explanation")
        hints = hints if hints else versions[0].get("Hints")
    source_line = None
    if frame is not None:
        source_line = linecache.getline(frame.filename, frame.line).strip() or frame.code
    reason = gb.get("reason") or ""
    r.events.append(self._point(
        r.st, GRAPH_BREAK, {"graph_break.txt": r.payload},
        reason=reason, gb_id=gb_id, gb_type=gb_type, explanation=explanation, hints=list(hints or []),
        user_frame=frame.where if frame else None, user_file=frame.filename if frame else None,
        user_line=frame.line if frame else None, user_function=frame.function if frame else None,
        source_line=source_line))


@on_artifact("compile_worker_sidecar_death")
def _worker_died(self: TraceMapper, r: Rec) -> None:
    """Inductor's compile-worker sidecar died (torch 2.14+): ``sidecar pid=<p> returncode=<r>``, then the tail
    of its output; the compiles waiting on it fail."""
    head, _, tail = r.payload.partition("\n")
    m = re.match(r"sidecar pid=(\d+) returncode=(-?\d+)", head)
    last = next((ln.strip() for ln in reversed(tail.splitlines()) if ln.strip()), "")
    r.events.append(self._point(r.st, COMPILE_WORKER_DIED, {"worker_output.txt": r.payload},
                                pid=int(m.group(1)) if m else None, returncode=int(m.group(2)) if m else None,
                                reason=first_line(last or head, 2000)))


@on_artifact("recompile_reasons")
def _recompile(self: TraceMapper, r: Rec) -> None:
    reasons = parse_recompile_reasons(r.payload)
    # live: read from torch._dynamo.config on the compiling thread; from a log: the config of the last compile
    limit = r.context.get("recompile_limit", self.config_recompile_limit)
    if r.st is not None:
        r.st.recompile_limit = limit
    attrs = {"reason": first_line(reasons[0] if reasons else "", 2000), "reasons": reasons,
             "recompile_limit": limit}
    pending = {"attrs": attrs, "files": {"recompile_reasons.txt": "\n".join(reasons) + "\n"}}
    if r.st is None:
        r.events.append(self._point(None, RECOMPILE, pending["files"], **attrs))
    else:
        r.st.pending_recompile = pending  # written when the frame is known (dynamo_start / metrics)


@on_artifact("<cache>")
def _cache(self: TraceMapper, r: Rec) -> None:
    m = CACHE_ARTIFACT.match(str(r.body.get("name", "")))
    assert m is not None
    cache, result = m.groups()
    info: Any
    try:
        info = json.loads(r.payload) if r.payload else {}
    except ValueError:
        info = {"raw": r.payload}
    reason, key = "", None
    if isinstance(info, dict):
        key = info.get("key") or info.get("cache_key")
        reason = str(info.get("cache_bypass_reason") or info.get("reason") or info.get("bypass_reason")
                     or (info.get("cache_status_detailed") if result != "hit" else "") or "")
    if not reason:
        reason = {"hit": "cache hit", "miss": "no entry", "bypass": "bypassed"}[result]
    extra: dict[str, Any] = {"cache": cache, "key": str(key) if key else None, "reason": reason[:2000]}
    if isinstance(info, dict) and info.get("cache_bypass_exception_type"):
        extra["exception_type"] = info["cache_bypass_exception_type"]
    r.events.append(self._point(r.st, CACHE_EVENTS[result],
                                {"cache_info.json": json_indented(info)},
                                **extra, **self._bw(r)))


@on_artifact("dynamo_error")
def _dynamo_error(self: TraceMapper, r: Rec) -> None:
    if r.st is None:
        r.events.append(self._end(None, "failed", COMPILE, {"traceback.txt": r.payload},
                                  **dict(zip(("exception_type", "exception_message"),
                                             exception_from_traceback(r.payload)))))
        return
    r.st.pending_error = r.payload  # written with compilation_metrics (fail_type, times, metrics.json)


@on_artifact("before_pre_grad_graph")
def _before_pre_grad(self: TraceMapper, r: Rec) -> None:
    r.events.append(self._before(r.st, PRE_GRAD_PASSES, {"pre_grad_graph.py": r.payload}, **self._bw(r)))


@on_artifact("after_pre_grad_graph")
def _after_pre_grad(self: TraceMapper, r: Rec) -> None:
    r.events.append(self._end(r.st, "after", PRE_GRAD_PASSES, {"pre_grad_graph.py": r.payload}, **self._bw(r)))


@on_artifact("before_post_grad_graph")
def _before_post_grad(self: TraceMapper, r: Rec) -> None:
    r.events.append(self._before(r.st, POST_GRAD_PASSES, {"post_grad_graph.py": r.payload}, **self._bw(r)))


@on_artifact("inductor_post_grad_graph", "after_post_grad_graph", "after_recompile_post_grad")  # (older torch)
def _after_post_grad(self: TraceMapper, r: Rec) -> None:
    r.events.append(self._end(r.st, "after", POST_GRAD_PASSES, {"post_grad_graph.py": r.payload},
                              **self._bw(r)))


# -- dynamic shapes: torch's ShapeEnv records (symbolic_shapes.py) --------------------------------------

@on_kind("create_symbol", "create_unbacked_symbol")
def _shape_symbol(self: TraceMapper, r: Rec) -> None:
    b = r.body
    r.events.append(self._point(
        r.st, SHAPE_SYMBOL, symbol=str(b.get("symbol", "")), val=b.get("val"), vr=b.get("vr"),
        source=str(b.get("source") or ""), unbacked=r.kind == "create_unbacked_symbol",
        **self.user_site(b.get("user_stack"), b.get("stack"))))


@on_kind("symbolic_shape_specialization")
def _shape_specialization(self: TraceMapper, r: Rec) -> None:
    b = r.body
    sources = b.get("sources")
    r.events.append(self._point(
        r.st, SHAPE_SPECIALIZATION, symbol=str(b.get("symbol", "")),
        sources=[str(x) for x in sources] if isinstance(sources, list) else [],
        value=b.get("value"), reason=first_line(str(b.get("reason") or ""), 2000),
        **self.user_site(b.get("user_stack"), b.get("stack"))))


@on_kind("guard_added_fast")
def _shape_guard(self: TraceMapper, r: Rec) -> None:
    b = r.body
    r.events.append(self._point(r.st, SHAPE_GUARD, expr=str(b.get("expr", "")),
                                **self.user_site(b.get("user_stack"), b.get("stack"))))


# -- torch.export's issues (symbolic_shapes.py, _draft_export.py): what draft_export reports ----------

def _export_issue(self: TraceMapper, r: Rec, issue: str, **extra: Any) -> None:
    b = r.body
    frame_locals = fl if isinstance(fl := b.get("frame_locals"), dict) else {}
    local_vals = lv if isinstance(lv := frame_locals.get("locals"), dict) else {}
    r.events.append(self._point(
        r.st, EXPORT_ISSUE, issue=issue, expr=str(b["expr"]) if b.get("expr") is not None else None,
        result=str(b["result"]) if b.get("result") is not None else None,
        locals={str(k): str(v)[:200] for k, v in list(local_vals.items())[:20]} or None,
        **extra, **self.user_site(b.get("user_stack"), b.get("stack"))))


@on_kind("propagate_real_tensors_provenance")
def _data_dependent(self: TraceMapper, r: Rec) -> None:
    _export_issue(self, r, "data_dependent")


@on_kind("guard_on_data_dependent_error")
def _data_dependent_error(self: TraceMapper, r: Rec) -> None:
    _export_issue(self, r, "data_dependent_error")


@on_kind("guard_added")
def _guard_added(self: TraceMapper, r: Rec) -> None:
    # as draft_export counts them: guards on an input's shape (it has sources), not runtime asserts
    if r.body.get("symbol_to_sources") and r.body.get("prefix") != "runtime_assert":
        _export_issue(self, r, "guard_added", reason=str(r.body.get("prefix") or "") or None)


@on_kind("missing_fake_kernel", "mismatched_fake_kernel")
def _fake_kernel(self: TraceMapper, r: Rec) -> None:
    _export_issue(self, r, r.kind, op=str(r.body.get("op") or "") or None,
                  reason=first_line(str(r.body.get("reason") or ""), 2000) or None)


@on_kind("graph_dump")
def _graph_dump(self: TraceMapper, r: Rec) -> None:
    """AOTInductor's generated code (C++ wrapper, kernels, header): the output code of an AOT compile."""
    name = str(r.body.get("name") or "")
    if name not in AOT_CODE:
        return  # other dumps: a log reader shows them under their own name
    r.events.append(self._point(r.st, AFTER_INDUCTOR_CODEGEN, {f"{name}.cpp": r.payload}, aot=True,
                                **self._bw(r)))


@on_artifact("fx_graph_runnable")
def _fx_graph_runnable(self: TraceMapper, r: Rec) -> None:
    bw = self._bw(r) or ({"backward": True} if _TANGENTS.search(r.payload[:20000]) else {})
    r.events.append(self._point(r.st, FX_GRAPH_RUNNABLE, {"fx_graph_runnable.py": r.payload}, **bw))


@on_artifact("inductor_provenance_tracking_node_mappings", "inductor_provenance_tracking_kernel_stack_traces")
def _provenance(self: TraceMapper, r: Rec) -> None:
    name = str(r.body.get("name", ""))
    fname = "provenance.json" if name.endswith("node_mappings") else "kernel_stack_traces.json"
    if not r.payload.strip() or r.payload.strip() in ("{}", "null"):
        return  # tracking was on but found nothing to map
    r.events.append(self._point(r.st, INDUCTOR_PROVENANCE, {fname: r.payload}, **self._bw(r)))


@on_artifact("ir_pre_fusion")  # not torch's trace: the tracer's --loop-ir (capture.LoopIRHandler)
def _before_fusion(self: TraceMapper, r: Rec) -> None:
    r.events.append(self._before(r.st, FUSION, {"ir_pre_fusion.txt": r.payload}, **self._bw(r)))


@on_artifact("ir_post_fusion")
def _after_fusion(self: TraceMapper, r: Rec) -> None:
    r.events.append(self._end(r.st, "after", FUSION, {"ir_post_fusion.txt": r.payload}, **self._bw(r)))


@on_kind("chromium_event")  # handled before the table (TraceMapper._chromium); listed so logs know it
def _chromium_event(self: TraceMapper, r: Rec) -> None:
    pass
