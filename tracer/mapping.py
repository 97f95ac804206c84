"""torch's structured-trace records -> timeline events (FORMAT.md part B §B3).

Runs on the writer thread, one record at a time, in the order torch emitted them. Keeps a little
state per compile (frame name, whether its failure was already written, what is still open) so that
every ``before`` it writes gets its ``after``/``failed``/``skip`` with the same lifecycle name and
compile id — the viewer pairs on exactly that. Importable without torch.

Compile ids: ``compile_id`` is ``"<frame_id>/<frame_compile_id>"`` and the restart attempt is the
separate ``attempt`` attribute, so the lifecycle opened by attempt 0 (``dynamo_start``) pairs with the
``compilation_metrics`` that closes the compile after a restart (TORCH_TRACE.md §3c).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from magi_format.names import lifecycle_event, point_event, scope_attrs
from tracer.writer import EventSpec

IGNORED = frozenset({"chromium_event", "describe_storage", "describe_tensor", "describe_source",
                     "create_symbol", "guard_added_fast", "link", "dump_file", "symbolic_shape_specialization",
                     "compilation_metrics_runtime", "bwd_compilation_metrics_runtime"})
AOT_GRAPHS = ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph", "aot_inference_graph")
CACHE_ARTIFACT = re.compile(r"^(fx_graph|aotautograd)_cache_(hit|miss|bypass)$")
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Failed|Exit|Interrupt|Analysis|Boom|Warning)\w*): ?(.*)$")


@dataclass
class CompileState:
    compile_id: str
    frame: str | None = None
    attempt: int = 0
    open: list[str] = field(default_factory=list)   # lifecycle names still open, in order
    failed_written: bool = False
    closed: bool = False


def _first_line(text: str, limit: int = 300) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:limit]
    return ""


def _exception_from_traceback(text: str) -> tuple[str, str]:
    """The last ``Type: message`` line of a traceback (the exception that ended the compile)."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    for line in reversed(lines):
        s = line.strip()
        m = _EXC_LINE.match(s)
        if m and not s.startswith(("File ", "During handling", "The above exception")):
            return m.group(1).rsplit(".", 1)[-1], m.group(2)[:2000]
    return ("Error", _first_line(text))


class TraceMapper:
    """Turns ``(metadata, payload)`` records into :data:`EventSpec` lists."""

    def __init__(self, strings: dict[int, str] | None = None) -> None:
        self.strings: dict[int, str] = dict(strings or {})
        self.compiles: dict[str, CompileState] = {}

    # -- helpers ---------------------------------------------------------------------------------
    def _state(self, md: dict[str, Any]) -> CompileState | None:
        fid, fcid = md.get("frame_id"), md.get("frame_compile_id")
        if fid is None or fcid is None:
            return None
        cid = f"{fid}/{fcid}"
        if md.get("compiled_autograd_id") is not None:
            cid = f"!{md['compiled_autograd_id']}/{cid}"
        st = self.compiles.get(cid)
        if st is None:
            st = self.compiles[cid] = CompileState(cid)
        att = md.get("attempt")
        if isinstance(att, int):
            st.attempt = att
        return st

    def _attrs(self, st: CompileState | None, **extra: Any) -> dict[str, Any]:
        a: dict[str, Any] = dict(scope_attrs(None))
        if st is not None:
            a["compile_id"] = st.compile_id
            a["frame"] = st.frame
            a["attempt"] = st.attempt
        a["source"] = "torch_trace"
        a.update(extra)
        return a

    def _before(self, st: CompileState | None, lc: str, files: dict[str, str] | None = None,
                **extra: Any) -> EventSpec:
        if st is not None:
            st.open.append(lc)
        return (lifecycle_event("before", lc), self._attrs(st, lifecycle_name=lc, **extra), files or {})

    def _end(self, st: CompileState | None, phase: str, lc: str, files: dict[str, str] | None = None,
             **extra: Any) -> EventSpec:
        if st is not None and lc in st.open:
            st.open.reverse()
            st.open.remove(lc)
            st.open.reverse()
        return (lifecycle_event(phase, lc), self._attrs(st, lifecycle_name=lc, **extra), files or {})

    def _point(self, st: CompileState | None, base: str, files: dict[str, str] | None = None,
               **extra: Any) -> EventSpec:
        return (point_event(base), self._attrs(st, **extra), files or {})

    def _stack_text(self, stack: Any) -> tuple[str, str | None]:
        """Format an interned stack; returns (text, innermost function name)."""
        if not isinstance(stack, list):
            return "", None
        lines, last = [], None
        for fr in stack:
            if not isinstance(fr, dict):
                continue
            fn = fr.get("filename")
            fname = self.strings.get(fn, str(fn)) if isinstance(fn, int) else str(fn)
            last = fr.get("name")
            lines.append(f'  File "{fname}", line {fr.get("line")}, in {fr.get("name")}')
            if fr.get("loc"):
                lines.append(f"    {fr.get('loc')}")
        return "\n".join(lines) + ("\n" if lines else ""), last

    # -- the mapping -----------------------------------------------------------------------------
    def handle(self, md: dict[str, Any], payload: str | None) -> list[EventSpec]:
        if not md:
            return []
        key = next(iter(md))
        if key in IGNORED:
            return []
        body = md.get(key)
        if key == "str":
            if isinstance(body, list) and len(body) == 2:
                self.strings[body[1]] = body[0]
            return []
        st = self._state(md)
        payload = payload or ""
        if key == "dynamo_start":
            stack_text, fn = self._stack_text((body or {}).get("stack"))
            if st is not None:
                st.frame = fn or st.frame
                st.closed = False
                st.failed_written = False
            out = [self._before(st, "compile", {"user_stack.txt": stack_text} if stack_text else None)]
            out.append(self._before(st, "dynamo_capture"))
            return out
        if key == "dynamo_output_graph":
            sizes = (body or {}).get("sizes") if isinstance(body, dict) else None
            extra = {"graph_node_count": len(sizes)} if isinstance(sizes, dict) else {}
            if st is not None and "dynamo_capture" in st.open:
                return [self._end(st, "after", "dynamo_capture", {"captured_graph.py": payload}, **extra)]
            return [self._point(st, "after_dynamo_capture", {"captured_graph.py": payload}, **extra)]
        if key in AOT_GRAPHS:
            kind = key[len("aot_"):-len("_graph")]
            return [self._point(st, f"after_aot_{kind}_graph", {f"aot_{kind}_graph.py": payload})]
        if key == "inductor_post_grad_graph":  # top-level form: FX-graph cache hit
            return [self._end(st, "after", "post_grad_passes", {"post_grad_graph.py": payload}, cache="hit")]
        if key == "inductor_output_code":
            fn = (body or {}).get("filename") if isinstance(body, dict) else None
            return [self._point(st, "after_inductor_codegen", {"inductor_output.py": payload},
                                filename=str(fn) if fn else None)]
        if key == "dynamo_cpp_guards_str":
            m = re.search(r"Guard latency = ([\d.]+) us", payload)
            extra = {"guard_latency_us": float(m.group(1))} if m else {}
            extra["guard_lines"] = payload.count("\n")
            return [self._point(st, "after_build_guards", {"guards.txt": payload}, **extra)]
        if key == "artifact":
            return self._artifact(st, body if isinstance(body, dict) else {}, payload)
        if key == "compilation_metrics":
            return self._metrics(st, body if isinstance(body, dict) else {})
        return []

    def _artifact(self, st: CompileState | None, body: dict[str, Any], payload: str) -> list[EventSpec]:
        name = str(body.get("name", ""))
        if name == "dynamo_graph_break_reason":
            reason = ""
            m = re.search(r"Graph Break Reason: (.+)", payload)
            if m:
                reason = m.group(1).strip()
                if reason.endswith(":"):  # the specific cause is on the next non-empty line
                    rest = payload[m.end():]
                    nxt = _first_line(rest.split("User code traceback")[0])
                    if nxt:
                        reason = nxt
            if not reason:
                reason = _first_line(payload)
            user = re.search(r'File "([^"]+)", line (\d+)', payload)
            return [self._point(st, "graph_break", {"graph_break.txt": payload}, reason=reason[:500],
                                user_frame=f"{user.group(1)}:{user.group(2)}" if user else None)]
        if name == "recompile_reasons":
            try:
                reasons = json.loads(payload)
            except ValueError:
                reasons = payload
            if isinstance(reasons, str):
                reasons = [reasons]
            reasons = [str(r) for r in reasons] if isinstance(reasons, list) else [str(reasons)]
            return [self._point(st, "recompile", {"recompile_reasons.txt": "\n".join(reasons) + "\n"},
                                reason=_first_line(reasons[0] if reasons else ""), reasons=reasons)]
        m = CACHE_ARTIFACT.match(name)
        if m:
            cache, result = m.groups()
            info: Any
            try:
                info = json.loads(payload) if payload else {}
            except ValueError:
                info = {"raw": payload}
            reason = ""
            key = None
            if isinstance(info, dict):
                key = info.get("key") or info.get("cache_key")
                reason = str(info.get("reason") or info.get("cache_bypass_reason") or info.get("bypass_reason") or "")
            if not reason:
                reason = {"hit": "cache hit", "miss": "no entry", "bypass": "bypassed"}[result]
            return [self._point(st, f"cache_{result}", {"cache_info.json": json.dumps(info, indent=2, default=str)},
                                cache=cache, key=str(key) if key else None, reason=reason[:500])]
        if name == "dynamo_error":
            etype, msg = _exception_from_traceback(payload)
            if st is not None:
                st.failed_written = True
            out = []
            if st is not None and "dynamo_capture" in st.open:
                out.append(self._end(st, "skip", "dynamo_capture", reason="compile failed"))
            out.append(self._end(st, "failed", "compile", {"traceback.txt": payload},
                                 exception_type=etype, exception_message=msg))
            return out
        if name == "before_pre_grad_graph":
            return [self._before(st, "pre_grad_passes", {"pre_grad_graph.py": payload})]
        if name == "after_pre_grad_graph":
            return [self._end(st, "after", "pre_grad_passes", {"pre_grad_graph.py": payload})]
        if name == "before_post_grad_graph":
            return [self._before(st, "post_grad_passes", {"post_grad_graph.py": payload})]
        if name == "inductor_post_grad_graph":
            return [self._end(st, "after", "post_grad_passes", {"post_grad_graph.py": payload})]
        return []

    def _metrics(self, st: CompileState | None, m: dict[str, Any]) -> list[EventSpec]:
        out: list[EventSpec] = []
        if st is not None and not st.frame:
            st.frame = m.get("co_name")
        for reason in m.get("restart_reasons") or []:
            out.append(self._point(st, "restart_analysis", restart_reason=str(reason)[:2000],
                                   reason=_first_line(str(reason))))
        if st is not None:
            for lc in reversed(list(st.open)):
                if lc != "compile":  # whatever the compile never closed (e.g. an empty graph)
                    out.append(self._end(st, "skip", lc, reason="not completed in this compile"))
        keep = ("compile_id", "co_name", "co_filename", "co_firstlineno", "guard_count", "graph_op_count",
                "graph_node_count", "graph_input_count", "entire_frame_compile_time_s", "backend_compile_time_s",
                "inductor_compile_time_s", "code_gen_time_s", "fail_type", "fail_reason", "fail_user_frame_filename",
                "fail_user_frame_lineno", "restart_reasons", "dynamo_time_before_restart_s", "has_guarded_code",
                "recompile_reason", "cache_size", "accumulated_cache_size", "num_graph_breaks",
                "structured_logging_overhead_s")
        metrics = {k: m.get(k) for k in keep if k in m}
        files = {"metrics.json": json.dumps(metrics, indent=2, default=str)}
        secs = m.get("entire_frame_compile_time_s")
        extra: dict[str, Any] = {
            "duration_ms": float(secs) * 1000 if isinstance(secs, (int, float)) else None,
            "guard_count": m.get("guard_count"), "graph_op_count": m.get("graph_op_count"),
            "recompile_reason": m.get("recompile_reason"),
        }
        fail = m.get("fail_type")
        if fail:
            extra.update(fail_type=fail, fail_reason=m.get("fail_reason"))
        if st is not None and st.failed_written:
            return out  # the dynamo_error already closed it; nothing more to say
        if fail:
            out.append(self._end(st, "failed", "compile", files, exception_type=str(fail).rsplit(".", 1)[-1],
                                 exception_message=str(m.get("fail_reason") or ""), **extra))
        else:
            out.append(self._end(st, "after", "compile", files, **extra))
        if st is not None:
            st.closed = True
        return out
