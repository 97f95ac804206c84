"""The analysis of one run (:func:`analyse`, memoised per run on what it has read): frames, the
graph-break worklist, recompiles explained, recompile limits, cache, compile time, status, and what
ran eagerly; the checks are then made by the rules (:mod:`magi_tui.model.checks.rules`)."""

from __future__ import annotations

import json
import os
import re
import stat
import weakref
from collections import Counter
from typing import Any

from magi_format.torchtext import graph_break_report, is_library
from magi_tui.model.checks.evidence import (
    _first_line,
    _hints,
    _int,
    _read_event_file,
    _s,
    event_attrs,
    failure_source,
    fallback_reason,
    not_recorded,
    run_status,
)
from magi_tui.model.checks.fold import timeline_fold
from magi_tui.model.checks.results import (
    AUTO_DYNAMIC_KINDS,
    Analysis,
    BreakEntry,
    EagerFrame,
    FrameRow,
    RecompileInfo,
)
from magi_tui.model.checks.rules import run_rules
from magi_tui.model.events import Event
from magi_tui.model.fallbacks import fallbacks
from magi_tui.model.files import FileProblem, open_regular
from magi_tui.model.frames import CfFrame, CfIndex, CodeId, analyse_compiled_functions, parse_compile_id
from magi_tui.model.guards import (
    GuardDiff,
    diff_guards,
    parse_reason,
    read_guards,
    reason_from_diff,
)
from magi_tui.model.run import RunModel
from magi_tui.model.runtime import runtime_info, runtime_stamp

LOG_NAMES = ("run.log", "stderr.log", "stderr.txt", "output.log")
MAX_FILE_READS = 1000        # graph_break.txt / metrics.json read per analysis, at most
_SYMBOL_SOURCE = re.compile(r"^(?P<src>.+?)\.size\(\)\[(?P<dim>\d+)\]$")


_MEMO: "weakref.WeakKeyDictionary[RunModel, tuple[tuple, Analysis]]" = weakref.WeakKeyDictionary()
_CF_MEMO: "weakref.WeakKeyDictionary[RunModel, tuple[tuple, CfIndex]]" = weakref.WeakKeyDictionary()


def _cf_stamp(run: RunModel) -> tuple:
    try:
        st = os.stat(run.path / "compiled_functions")
        return (st.st_mtime_ns, st.st_ino)
    except OSError:
        return (None,)


def compiled_index(run: RunModel) -> CfIndex:
    stamp = _cf_stamp(run)
    got = _CF_MEMO.get(run)
    if got is not None and got[0] == stamp:
        return got[1]
    idx = analyse_compiled_functions(run.path) if stamp != (None,) else CfIndex()
    _CF_MEMO[run] = (stamp, idx)
    return idx


def analyse(run: RunModel) -> Analysis:
    """The run's analysis (memoised on the events read so far and ``compiled_functions/``)."""
    stamp = (run.event_count, len(run.malformed), run.partial_line, run.error, _cf_stamp(run),
             runtime_stamp(run.path),
             len(run.triage.failures) and sum(1 for f in run.triage.failures if f.recovered))
    got = _MEMO.get(run)
    if got is not None and got[0] == stamp:
        return got[1]
    a = _Analyser(run).build()
    _MEMO[run] = (stamp, a)
    return a


class _Analyser:
    def __init__(self, run: RunModel) -> None:
        self.run = run
        self.t = run.triage
        self.cf = compiled_index(run)
        self.budget = [MAX_FILE_READS]
        #: (compile end event, its metrics.json) of the compiles that left no guarded code
        self.unguarded: list[tuple[Event, dict]] = []
        #: (compile end event, its metrics.json) of the compiles whose metrics carry a cudagraph skip reason
        self.cudagraph_skips: list[tuple[Event, dict]] = []
        self.frames: dict[str, FrameRow] = {}
        self.cid_frame: dict[str, str] = {}
        self.fold = timeline_fold(run)

    # frames ------------------------------------------------------------------------------------
    def _timeline_frames(self) -> None:
        run = self.run
        for fkey, f in self.fold.frames.items():
            row = self.frames[fkey] = FrameRow(frame="", key=fkey, name=f.name, first_event=f.first_event,
                                              compile_s=f.compile_s, compile_ids=set(f.compile_ids),
                                              any_ids=set(f.any_ids))
            if f.first_before is not None:  # once per frame: the attributes are re-read from the file
                row.asked = True
                a = event_attrs(run, f.first_before)
                row.file = _s(a.get("co_filename"))
                row.line = _int(a.get("co_firstlineno"))
        for row in self.frames.values():
            # compiles that ran (a ``compile`` lifecycle); a recompile or limit-hit event names the next
            # compile id even when that compile never happens (the frame fell back to eager)
            row.compiles = len(row.compile_ids) if row.compile_ids else len(row.any_ids)
            if not row.name:
                row.name = "?"
        # where the code object is: from metrics.json of its first compile when no attribute said
        for row in self.frames.values():
            ev = self.fold.frames[row.key].first_closer
            if row.file is None and ev is not None:
                text = _read_event_file(run, ev, "metrics.json", self.budget)
                if text:
                    try:
                        m = json.loads(text)
                    except ValueError:
                        m = {}
                    if isinstance(m, dict):
                        row.file = _s(m.get("co_filename"))
                        row.line = _int(m.get("co_firstlineno"))
        for row in self.frames.values():
            code = CodeId(row.name, row.file, row.line)
            row.frame = code.label
            same = self.cf.by_name(row.name)
            if len(same) == 1:
                row.cf_rel = same[0].rel

    def _cf_frames(self) -> None:
        for f in self.cf.frames:
            if f.compiles == 0:
                continue
            key = "cf:" + f.rel
            row = FrameRow(frame=f.code.label, key=key, name=f.code.name, file=f.code.file, line=f.code.line,
                           compiles=f.compiles, cf_rel=f.rel)
            self.frames[key] = row

    # graph breaks ------------------------------------------------------------------------------
    def _worklist(self) -> list[BreakEntry]:
        run = self.run
        entries: dict[tuple, BreakEntry] = {}
        for item in self.t.graph_breaks:
            ev = item.event
            a = event_attrs(run, ev)
            info: dict[str, Any] = {}
            hints = _hints(a.get("hints"))
            attr_file = _s(a.get("user_file"))
            if not (a.get("gb_id") and attr_file and a.get("explanation") and hints) or (
                    attr_file and is_library(attr_file)):
                # torch's own report is the whole truth (runs recorded before hints were kept whole, a
                # break inside a library whose caller is wanted): one grammar, magi_format.torchtext
                text = _read_event_file(run, ev, "graph_break.txt", self.budget)
                if text:
                    info = graph_break_report(text)
            gb_id = _s(a.get("gb_id")) or info.get("gb_id")
            uf = a.get("user_frame")
            file = attr_file or info.get("break_file")
            line = _int(a.get("user_line"))
            if line is None:
                line = info.get("break_line")
            if file is None and isinstance(uf, str) and ":" in uf:
                f0, _, l0 = uf.rpartition(":")
                file, line = f0, _int(l0)
            gb_type = _s(a.get("gb_type")) or info.get("gb_type")
            # the specific cause: torch's gb_type ("Unsupported Tensor.item() call ..."), else its reason
            reason = gb_type or _s(a.get("reason")) or info.get("reason") or item.reason or "graph break"
            key = (gb_id or _first_line(reason), file, line)
            be = entries.get(key)
            if be is None:
                expl = info.get("explanation") or _s(a.get("explanation"))
                be = entries[key] = BreakEntry(
                    gb_id, gb_type, _first_line(reason), expl, info.get("hints") or hints, file, line,
                    _s(a.get("user_function")) or info.get("break_function"),
                    _s(a.get("source_line")) or info.get("break_source"))
                if file is not None:
                    be.in_user_code = not is_library(file)
                    if be.in_user_code:
                        be.call_site = (file, line, be.function, be.source_line)
                    elif info.get("user_file") and not is_library(info["user_file"]):
                        be.call_site = (info["user_file"], info.get("user_line"), info.get("user_function"),
                                        info.get("source_line"))
            be.count += 1
            if ev.compile_id and ev.compile_id not in be.compile_ids:
                be.compile_ids.append(ev.compile_id)
            fr = self.frames.get((parse_compile_id(ev.compile_id) or ("",))[0])
            if fr is not None:
                fr.graph_breaks += 1
                if fr.frame not in be.frames:
                    be.frames.append(fr.frame)
            if len(be.events) < 1000:
                be.events.append(ev)
        if not entries:  # upstream runs: the resume functions are the evidence
            for bs in self.cf.breaks:
                be = BreakEntry(None, None, "graph break (a resume function continues after it)", None, [],
                                bs.file, bs.line, bs.function, None, count=bs.count, resume_fns=bs.resume_fns)
                entries[(bs.file, bs.line, bs.function)] = be
                for rel in bs.parents:
                    row = self.frames.get("cf:" + rel)
                    if row is not None:
                        row.graph_breaks += bs.count
                        be.frames.append(row.frame)
        out = list(entries.values())
        out.sort(key=lambda b: (-b.count, b.file or "", b.line or 0))
        return out

    # recompiles --------------------------------------------------------------------------------
    def _diff_for(self, name: str, compile_index: int, total: int | None) -> tuple[GuardDiff | None, tuple | None]:
        """Guards of compile ``compile_index`` (0-based per frame) vs the one before, when the frame's
        cache entries can be matched (one folder of that name; entries newest first)."""
        same = [f for f in self.cf.by_name(name) if f.compiles]
        if len(same) != 1 or compile_index < 1:
            return None, None
        cf = same[0]
        n = cf.compiles
        if total is not None and total != n:
            return None, None  # entries missing (evicted, failed compiles): no safe match
        newer_i, older_i = n - 1 - compile_index, n - compile_index
        if newer_i < 0 or older_i >= n:
            return None, None
        return self._diff_entries(cf, older_i, newer_i)

    def _diff_compiles(self, older_cid: str, newer_cid: str) -> tuple[GuardDiff | None, tuple | None]:
        """The guards ``after_build_guards`` recorded for two compile ids, compared (logs and our runs)."""
        g = self.fold.guards
        a_ev, b_ev = g.get(older_cid), g.get(newer_cid)
        if a_ev is None or b_ev is None:
            return None, None
        a = _read_event_file(self.run, a_ev, "guards.txt", self.budget)
        b = _read_event_file(self.run, b_ev, "guards.txt", self.budget)
        if a is None or b is None:
            return None, None
        names = (f"compile {older_cid}", f"compile {newer_cid}")
        return diff_guards(a.splitlines(), b.splitlines(), names[0] + " guards", names[1] + " guards"), names

    def _diff_entries(self, cf: CfFrame, older_i: int, newer_i: int):
        ent = {e.index: e for e in cf.entries}
        older, newer = ent.get(older_i), ent.get(newer_i)
        if older is None or newer is None:
            return None, None
        base = self.run.path
        a, b = read_guards(older.guards, base), read_guards(newer.guards, base)
        names = (f"{cf.rel}/entry_{older_i}", f"{cf.rel}/entry_{newer_i}")
        if a is None or b is None:
            return None, names
        return diff_guards(a, b, names[0] + "/guards.txt", names[1] + "/guards.txt"), names

    def _recompiles(self) -> list[RecompileInfo]:
        run = self.run
        out: list[RecompileInfo] = []
        for item in self.t.recompiles:
            ev = item.event
            a = event_attrs(run, ev)
            raw = a.get("reasons")
            reasons = [str(r) for r in raw] if isinstance(raw, list) else []
            if not reasons:
                r0 = _s(a.get("reason")) or item.reason
                if r0:
                    reasons = [r0]
            parsed = [parse_reason(r) for r in reasons]
            p = parse_compile_id(ev.compile_id)
            row = self.frames.get(p[0]) if p else None
            name = (row.name if row else None) or _s(a.get("frame")) or "?"
            lim = _int(a.get("recompile_limit"))
            if row is not None and lim is not None:
                row.recompile_limit, row.limit_recorded = lim, True
            info = RecompileInfo(row.frame if row else name, row.key if row else None, ev.compile_id, parsed,
                                 event=ev)
            if ev.compile_id and parsed:
                info.dynamic_sources = self._dynamic_sources(ev.compile_id)
                pr = parsed[0]
                if info.dynamic_sources and pr.kind in AUTO_DYNAMIC_KINDS and not (
                        pr.subject or "").startswith("___stack"):
                    # everything torch made dynamic together: one entry alone can be specialised back by
                    # another input of the same length (input_ids and attention_mask)
                    env = ",".join(info.dynamic_sources)
                    pr.suggestion = ((pr.suggestion or "").split(" To compile it dynamic")[0].rstrip(".")
                                     + f". Torch's automatic dynamic shapes made {len(info.dynamic_sources)} "
                                     "source(s) dynamic in this recompile, so new sizes run without compiling "
                                     f'(the normal path); to start dynamic: TORCH_COMPILE_DYNAMIC_SOURCES="{env}"')
            if p is not None and name != "?":
                info.guard_diff, info.entries = self._diff_for(name, p[1], row.compiles if row else None)
            if info.guard_diff is None and parsed and parsed[0].entry_compile_id and ev.compile_id:
                # no compiled_functions/ (a TORCH_TRACE log): the guards each compile built, the failed
                # entry's against the new compile's
                info.guard_diff, _names = self._diff_compiles(parsed[0].entry_compile_id, ev.compile_id)
            if p is not None:
                pr = info.primary
                d = info.guard_diff
                if pr is not None and pr.actual is None and pr.expected is not None and d is not None:
                    # torch names the expected value only (``n == 3``): the newer entry's guard has the actual
                    act = next((b for x, b in d.changes if x == pr.expected), None)
                    if act is not None:
                        pr.actual = act
            out.append(info)
        if not out:
            for f in self.cf.frames:
                for k in range(1, f.compiles):
                    # entry_<n-1> is the first compile: recompile k compares entry_{n-k} with entry_{n-1-k}
                    d, names = self._diff_entries(f, f.compiles - k, f.compiles - 1 - k)
                    reasons = []
                    if d is not None:
                        r = reason_from_diff(d)
                        if r is not None:
                            reasons.append(r)
                    out.append(RecompileInfo(f.code.label, "cf:" + f.rel, None, reasons, d, None, names))
        return out

    def _dynamic_sources(self, compile_id: str) -> list[str]:
        """``TORCH_COMPILE_DYNAMIC_SOURCES`` entries for the backed symbols compile ``compile_id`` created."""
        out: list[str] = []
        for sev in self.fold.symbols.get(compile_id, ())[:200]:
            a = event_attrs(self.run, sev)
            src = _s(a.get("source"))
            if not src or a.get("unbacked"):
                continue
            m = _SYMBOL_SOURCE.match(src)
            entry = f"{m.group('src')}:{m.group('dim')}" if m else (src if "(" not in src else None)
            if entry and "," not in entry and entry not in out:
                out.append(entry)
        return sorted(out)

    def _limits(self) -> None:
        run = self.run
        for item in self.t.recompile_limit_hits:
            ev = item.event
            a = event_attrs(run, ev)
            p = parse_compile_id(ev.compile_id)
            row = self.frames.get(p[0]) if p else None
            if row is None:
                fname = _s(a.get("frame"))
                row = next((r for r in self.frames.values() if fname and r.name == fname), None)
            for rc in self._recompile_list:
                if rc.event is not None and ev.compile_id and rc.compile_id == ev.compile_id \
                        and rc.event.session == ev.session:
                    rc.refused = True
            if row is not None:
                row.limit_hit = True
                row.limit_event = ev
                lim = _int(a.get("recompile_limit"))
                if lim is not None:
                    row.recompile_limit, row.limit_recorded = lim, True

    # cache -------------------------------------------------------------------------------------
    def _cache(self) -> dict[str, Any]:
        t = self.t
        reasons: dict[str, Counter] = {k: Counter() for k in ("hit", "miss", "bypass", "skipped_store")}
        for state, items in (("hit", t.cache_hits), ("miss", t.cache_misses), ("bypass", t.cache_bypasses),
                             ("skipped_store", t.cache_skipped_stores)):
            for it in items:
                reasons[state][_first_line(it.reason) or "-"] += 1
                if state in ("hit", "miss", "bypass"):
                    row = self.frames.get((parse_compile_id(it.event.compile_id) or ("",))[0])
                    if row is not None:
                        if state == "hit":
                            row.cache_hits += 1
                        elif state == "miss":
                            row.cache_misses += 1
                        else:
                            row.cache_bypasses += 1
                            row.bypass_reasons[_first_line(it.reason) or "-"] += 1
        by_cache: dict[str, Counter] = {}
        for state, items in (("hit", t.cache_hits), ("miss", t.cache_misses), ("bypass", t.cache_bypasses)):
            for it in items:
                c = (it.event.summary or {}).get("cache") or (
                    "magi" if it.event.lifecycle == "compiler_manager_load" else "-")
                by_cache.setdefault(c, Counter())[state] += 1
        h, m, b = len(t.cache_hits), len(t.cache_misses), len(t.cache_bypasses)
        if not (h or m or b):
            state = "none"
        elif b and not (h or m):
            state = "bypassed"
        elif h and not m:
            state = "warm"
        elif m and not h:
            state = "cold"
        else:
            state = "mixed"
        return {
            "state": state,
            "counts": {"hits": h, "misses": m, "bypasses": b, "stores": len(t.cache_stores),
                       "skipped_stores": len(t.cache_skipped_stores)},
            "reasons": {k: dict(v.most_common()) for k, v in reasons.items()},
            "by_cache": {k: dict(v) for k, v in by_cache.items()},
            "hits": [i.as_json() for i in t.cache_hits],
            "misses": [i.as_json() for i in t.cache_misses],
            "bypasses": [i.as_json() for i in t.cache_bypasses],
            "stores": [i.as_json() for i in t.cache_stores],
            "skipped_stores": [i.as_json() for i in t.cache_skipped_stores],
        }

    # compile time ------------------------------------------------------------------------------
    def _compile_time(self) -> dict[str, Any]:
        run = self.run
        fold = self.fold
        spans, pieces, top, top_n = fold.spans, fold.pieces, fold.top, fold.top_n
        metrics = {"Dynamo tracing (frame minus backend)": 0.0, "backend compile (AOT + Inductor)": 0.0,
                   "Inductor compile": 0.0, "Inductor codegen": 0.0}
        seen_metrics = False
        for ev in fold.metrics_events:
            text = _read_event_file(run, ev, "metrics.json", self.budget)
            try:
                m = json.loads(text) if text else None
            except ValueError:
                m = None
            if isinstance(m, dict):
                seen_metrics = True
                if m.get("has_guarded_code") is False:  # for the silent fallbacks: read once, here
                    self.unguarded.append((ev, m))
                if m.get("cudagraph_skip_reason"):
                    self.cudagraph_skips.append((ev, m))
                ent = m.get("entire_frame_compile_time_s")
                be = m.get("backend_compile_time_s")
                num = (int, float)
                if isinstance(ent, num) and not isinstance(ent, bool):
                    metrics["Dynamo tracing (frame minus backend)"] += ent - (be if isinstance(be, num) else 0)
                if isinstance(be, num) and not isinstance(be, bool):
                    metrics["backend compile (AOT + Inductor)"] += be
                for k, label in (("inductor_compile_time_s", "Inductor compile"),
                                 ("code_gen_time_s", "Inductor codegen")):
                    v = m.get(k)
                    if isinstance(v, num) and not isinstance(v, bool):
                        metrics[label] += v
        phases = [{"phase": name, "seconds": round(v[0], 6), "count": v[1], "source": "spans"}
                  for name, v in spans.items()]
        if seen_metrics:
            phases += [{"phase": k, "seconds": round(v, 6), "count": None, "source": "metrics"}
                       for k, v in metrics.items() if v > 0]
        phases.sort(key=lambda p: -p["seconds"])
        frames = {r.frame: round(r.compile_s, 6) for r in self.frames.values() if r.compile_s is not None}
        # top-level time no frame owns (no compile id): so the frames and it add up to the total
        unattributed = round(max(0.0, top - sum(frames.values())), 6) if top_n and frames else None
        per_piece = [{"piece": k, "seconds": round(v[1], 6), "lifecycle": "+".join(v[2]), "count": v[3]}
                     for k, v in sorted(pieces.items())]
        return {"total_s": round(top, 6) if top_n else None, "phases": phases, "per_frame": frames,
                "unattributed_s": unattributed,
                "per_piece": per_piece,
                "note": "lifecycles nest (a pass runs inside its backend call): phase seconds are inclusive "
                        "and do not add up to the total"}

    # status ------------------------------------------------------------------------------------
    def _status(self) -> tuple[str, list[str]]:
        return run_status(self.run)

    def _log_tail(self) -> tuple[str | None, list[str] | None]:
        """A run.log / captured stderr beside the run (the run dir, or up to the cache root's parent)."""
        p = self.run.path
        dirs = [p, p / "timeline_events"]
        cur = p
        for _ in range(4):
            cur = cur.parent
            dirs.append(cur)
            if (cur / "magi_depyf").is_dir() or cur == cur.parent:
                dirs.append(cur.parent)
                break
        for d in dirs:
            for name in LOG_NAMES:
                f = d / name
                try:
                    if not stat.S_ISREG(os.lstat(f).st_mode):  # not a link (it could lead anywhere), FIFO, dir
                        continue
                    fd, st = open_regular(f)
                except (OSError, ValueError, FileProblem):
                    continue
                try:
                    size = st.st_size
                    data = os.pread(fd, 4096, max(0, size - 4096)).decode("utf-8", errors="replace")
                except OSError:
                    continue
                finally:
                    os.close(fd)
                lines = [ln for ln in data.splitlines() if ln.strip()]
                if size > 4096 and lines:
                    lines = lines[1:]
                return str(f), lines[-12:]
        return None, None


    def build(self) -> Analysis:
        run = self.run
        has_cids = self.fold.has_cids
        if has_cids:
            self._timeline_frames()
        else:
            self._cf_frames()
        worklist = self._worklist()
        recompiles = self._recompile_list = self._recompiles()
        self._limits()
        cache = self._cache()
        status, why = self._status()
        frames = sorted(self.frames.values(), key=lambda r: -r.compiles)  # stable: discovery order on ties
        compile_time = self._compile_time()
        if not has_cids and len(frames) == 1 and run.event_count:
            # an upstream run (no compile ids) that compiled one frame: all it recorded is that frame's
            only = frames[0]
            c = cache["counts"]
            only.cache_hits, only.cache_misses, only.cache_bypasses = c["hits"], c["misses"], c["bypasses"]
            only.bypass_reasons.update(cache["reasons"]["bypass"])
            only.compile_s = compile_time["total_s"]
            if only.compile_s is not None:
                compile_time["per_frame"] = {only.frame: only.compile_s}
        a = Analysis(status, list(self.t.restarts), self.t.problems, worklist, recompiles, frames, cache,
                     compile_time, [], incomplete_reasons=why,
                     graph_break_total=sum(b.count for b in worklist), recompile_total=len(recompiles))
        a.runtime = runtime_info(run, self.fold.exec_events)
        if a.runtime is not None:
            for row in frames:
                row.entries = a.runtime.frame_entries(row.key)
                row.eager_calls = a.runtime.eager_calls(row.key)
        a.fallbacks = fallbacks(run, a, self.unguarded, self.fold.hint_events, self.cudagraph_skips)
        a.not_recorded = not_recorded(run)
        if a.not_recorded:
            from magi_tui.model.debugdir import trace_log_of

            log = trace_log_of(run.path)
            a.companion_log = str(log) if log is not None else None
        if status == "empty" and a.not_recorded:
            a.empty_note = ("Nothing in this TORCH_COMPILE_DEBUG folder: torch writes a model folder per graph "
                            "Inductor compiles, and a graph served from a warm cache (FX graph / AOT autograd "
                            "cache hit) is not compiled, so it writes none. Set TORCHINDUCTOR_FORCE_DISABLE_"
                            "CACHES=1 to see every graph, or read the TORCH_TRACE log of the same run.")
        elif status == "empty":
            where = "timeline_events/" if self.run.source_name == "timeline.jsonl" else self.run.source_name
            a.empty_note = (f"Nothing was recorded in {where}. Either Dynamo failed before the backend "
                            "ran (the error is in the program's output, not here), or every compile was served "
                            "from a warm cache, so no hook fired.")
            a.log_path, a.log_tail = self._log_tail()
        a.ran_eagerly = self._ran_eagerly(worklist)
        for c in self.t.problems[:200]:  # the compile's failed event carries it (a cascade's outer member)
            for m in c.members[:16]:
                src = failure_source(run, m.event)
                if src[0]:
                    a.failure_sources[id(c)] = src
                    break
        a.checks = run_rules(run, a, self.cf)
        return a

    def _ran_eagerly(self, worklist: list[BreakEntry]) -> list[EagerFrame]:
        out: list[EagerFrame] = []
        for c in self.t.fallbacks:
            ev = c.head.event
            p = parse_compile_id(ev.compile_id)
            row = self.frames.get(p[0]) if p else None
            file, line, _what = failure_source(self.run, ev)
            if file is None or _what == "frame":  # where it broke: the graph break of that compile
                be = next((b for b in worklist if ev.compile_id in b.compile_ids), None)
                if be is not None:
                    file, line = be.file, be.line
            out.append(EagerFrame(row.frame if row else (_s((ev.summary or {}).get("frame")) or "?"),
                                  row.key if row else None, ev.compile_id, "unsupported",
                                  fallback_reason(c.head.message), file, line, ev))
        for row in self.frames.values():
            if row.limit_hit:
                out.append(EagerFrame(row.frame, row.key, row.limit_event.compile_id if row.limit_event else None,
                                      "recompile_limit", f"reached the recompile limit ({row.recompile_limit}): "
                                      "later calls with new guards run uncompiled", row.file, row.line,
                                      row.limit_event))
        return out
