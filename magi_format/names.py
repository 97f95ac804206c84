"""Event names, exactly as FORMAT.md part A §4 and §7 define them: the builders the tracer writes with
and the parser the viewer reads with, side by side so they cannot drift.

``(fullgraph|subgraph_<k>)_(before|after|failed|skip)_<frag>`` is a lifecycle phase (when
``attributes.lifecycle_name`` is present); ``(fullgraph|subgraph_<k>)_<base>`` is a point event.
"""

from __future__ import annotations

import re

from magi_format.lazyre import lazy_re

PHASES = ("before", "after", "failed", "skip")
NAME_RE = re.compile(r"^(fullgraph|subgraph_(\d+))_(before|after|failed|skip)_(.+)$")
SCOPE_RE = lazy_re(r"^(fullgraph|subgraph_(\d+))_(.+)$")
_NON_ALNUM = re.compile(r"[^0-9A-Za-z]+")


def frag(name: str) -> str:
    """``RemoveItemPass`` -> ``removeitempass``; runs of non-alphanumerics -> ``_``; empty -> ``unknown``."""
    out = _NON_ALNUM.sub("_", str(name)).strip("_").lower()
    return out or "unknown"


def scope_prefix(subgraph_index: int | None) -> str:
    return "fullgraph" if subgraph_index is None else f"subgraph_{subgraph_index}"


def lifecycle_event(phase: str, lifecycle: str, subgraph_index: int | None = None) -> str:
    return f"{scope_prefix(subgraph_index)}_{phase}_{frag(lifecycle)}"


def point_event(base: str, subgraph_index: int | None = None) -> str:
    return f"{scope_prefix(subgraph_index)}_{base}"


def scope_attrs(subgraph_index: int | None) -> dict:
    if subgraph_index is None:
        return {"scope": "fullgraph"}
    return {"scope": "subgraph", "subgraph": f"submod_{subgraph_index}", "subgraph_index": subgraph_index}


def parse_name(name: str) -> tuple[str | None, str, int | None]:
    """``(phase or None, fragment, subgraph index from the name or None)``.

    ``fullgraph_after_removeitempass`` -> ``("after", "removeitempass", None)``;
    ``subgraph_2_cache_hit`` -> ``(None, "cache_hit", 2)``; a name outside the grammar -> ``(None, name, None)``.
    """
    m = NAME_RE.match(name)
    if m is not None:
        _scope, sgi, phase, fragment = m.groups()
    else:
        phase = None
        sm = SCOPE_RE.match(name)
        sgi, fragment = (sm.group(2), sm.group(3)) if sm else (None, name)
    try:
        sgi_int = int(sgi) if sgi is not None else None
    except ValueError:  # thousands of digits: not a subgraph number anyone wrote
        sgi_int = None
    return phase, fragment, sgi_int


# -- point events the tracer writes (FORMAT.md part B); the viewer classifies by these ------------
GRAPH_BREAK = "graph_break"        # attrs: reason (torch's whole cause, multi-line), gb_id ("GB0059" or null),
                                   #        gb_type, explanation, hints (list of str), user_file, user_line (int),
                                   #        user_function, source_line (text of that line), user_frame ("file:line");
                                   #        user_* = the innermost frame outside torch / the tracer / runpy
RECOMPILE = "recompile"            # attrs: frame, reason (first line), reasons (all: one per failing cache entry,
                                   #        each "<compile id>: …"), recompile_limit (int, or null if unknown)
RECOMPILE_LIMIT_HIT = "recompile_limit_hit"  # attrs: frame, recompile_limit, reason; also limit_type
                                   #        ("recompile_limit"/…), fallback ("eager", or "error" when torch raised),
                                   #        fail_type; file metrics.json. No compile lifecycle is opened for it.
RESTART = "restart_analysis"       # attrs: restart_reason, reason
CACHE_HIT = "cache_hit"            # attrs: cache, key, reason (bypass: e.g. "No shape env"); backward: true on
CACHE_MISS = "cache_miss"          #        a backward graph's; exception_type on an aotautograd bypass. Three
CACHE_BYPASS = "cache_bypass"      #        states: a bypass is never written as a miss
TRACER_STOPPED = "tracer_stopped"  # attrs: reason, error: the tracer stopped recording before the program ended
                                   #        reason: "disk_full" | "write_error" | "tracer_error"; error: "Type: msg"
COMPILE_WORKER_DIED = "compile_worker_died"  # attrs: pid, returncode, reason (the output's last line); file:
                                   #        worker_output.txt (torch 2.14+'s compile_worker_sidecar_death: its tail)

# -- lifecycle names the tracer opens for torch's own stages (``<scope>_<phase>_<lifecycle>``) --------
COMPILE = "compile"                # one compile id; failed: exception_type, exception_message (whole message),
                                   #   fail_type, fail_reason, fail_user_frame, files traceback.txt + metrics.json
BACKWARD_COMPILE = "backward_compile"  # the lazy backward of a compile (bwd_compilation_metrics); backward: true
DYNAMO_CAPTURE = "dynamo_capture"
PRE_GRAD_PASSES = "pre_grad_passes"
POST_GRAD_PASSES = "post_grad_passes"  # attrs on Inductor events of a backward graph: backward: true
FUSION = "fusion"                  # Inductor's scheduler fusion (tracer --loop-ir): files ir_pre_fusion.txt (before)
                                   #   / ir_post_fusion.txt (after), its loop IR; backward: true on a backward's
# -- point events for torch's artifacts (``fullgraph_<base>``, no lifecycle_name) ------------------------
AFTER_DYNAMO_CAPTURE = "after_dynamo_capture"
AFTER_INDUCTOR_CODEGEN = "after_inductor_codegen"
AFTER_BUILD_GUARDS = "after_build_guards"      # attrs: guard_latency_us, guard_lines, leaf_guard_count
# -- dynamic shapes (torch's ShapeEnv records), one point event each; user_* = the innermost user frame
#    of the record's user_stack (user_file, user_line, user_function, source_line, user_frame "file:line")
SHAPE_SYMBOL = "shape_symbol"                  # attrs: symbol ("s77"), val (hint, "5"), vr (value range
                                               #   "[2, int_oo]"), source ("L['x'].size()[0]"; "" if unbacked),
                                               #   unbacked (bool: create_unbacked_symbol), user_*
SHAPE_SPECIALIZATION = "shape_specialization"  # attrs: symbol, sources (list of str), value, reason, user_*
SHAPE_GUARD = "shape_guard"                    # attrs: expr ("s77 > 3"), user_* (guard_added_fast)
FX_GRAPH_RUNNABLE = "fx_graph_runnable"        # files: fx_graph_runnable.py (torch's standalone reproducer of
                                               #   the graph Inductor compiles); backward: true on a backward's
EXPORT_ISSUE = "export_issue"                  # attrs: issue (data_dependent: torch assumed a data-dependent
                                               #   expression from real tensors; data_dependent_error;
                                               #   guard_added: export specialised an input's shape;
                                               #   missing_fake_kernel / mismatched_fake_kernel), expr, result,
                                               #   op, reason, user_* — torch.export's own issue list (what
                                               #   draft_export reports and `tlparse --export` shows)
INDUCTOR_PROVENANCE = "inductor_provenance"  # files: provenance.json (torch's node mappings: preToPost,
                                               #   postToPre, cppCodeToPost / tritonCodeToPost: kernel "name:line"
                                               #   -> post-grad nodes) and/or kernel_stack_traces.json (kernel ->
                                               #   user stack texts); only with provenance tracking on
# compile phases (chromium_event B/E spans of one compile id) travel as the file ``phases.json`` of the
# event that closes the compile (after_compile / failed_compile): a list of
# {"name", "start_us" (from the compile's first span), "dur_us", "depth"}, in start order


def aot_graph_base(kind: str) -> str:
    """``after_aot_<kind>_graph`` for kind in joint / forward / backward / inference."""
    return f"after_aot_{kind}_graph"
