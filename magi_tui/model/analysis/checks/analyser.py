"""The analysis of one run (:func:`analyse`, memoised per run on what it has read): frames, the
graph-break worklist, recompiles explained, recompile limits, cache, compile time, status, and what
ran eagerly; the checks are then made by the rules (:mod:`magi_tui.model.analysis.checks.rules`)."""

from __future__ import annotations

import os
import stat
import weakref
from typing import Any

from magi_format.lazyre import lazy_re
from magi_tui.model.analysis.checks.breaks import worklist as breaks_worklist
from magi_tui.model.analysis.checks.compiled_nothing import compiled_nothing
from magi_tui.model.analysis.checks.evidence import (
    _int,
    _read_event_file,
    _s,
    event_attrs,
    failure_source,
    fallback_reason,
    not_recorded,
    run_status,
)
from magi_tui.model.analysis.checks.fold import n_ids
from magi_tui.model.analysis.checks.recompiles import limits as recompile_limits
from magi_tui.model.analysis.checks.recompiles import recompiles as explain_recompiles
from magi_tui.model.analysis.checks.results import (
    Analysis,
    BreakEntry,
    EagerFrame,
    FrameRow,
)
from magi_tui.model.analysis.checks.rules import run_rules
from magi_tui.model.analysis.checks.state import AnalyserState, cf_stamp
from magi_tui.model.analysis.checks.tallies import cache as cache_tallies
from magi_tui.model.analysis.checks.tallies import compile_time as compile_time_tallies
from magi_tui.model.analysis.fallbacks import fallbacks
from magi_tui.model.analysis.frames import CodeId, parse_compile_id
from magi_tui.model.analysis.runtime import runtime_info, runtime_stamp
from magi_tui.model.run import RunModel
from magi_tui.model.sources.files import FileProblem, open_regular
from magi_tui.model.sources.safejson import metrics_or_none
from magi_tui.model.triage import raised_into_program

#: a compiled-autograd graph's frame key (``!0/1``, ``R1/!0/1`` after a reset): its capture, ``!0``
_CA_KEY = lazy_re(r"^(?:R\d+/)?(!\d+)/")

LOG_NAMES = ("run.log", "stderr.log", "stderr.txt", "output.log")


_MEMO: "weakref.WeakKeyDictionary[RunModel, tuple[tuple, Analysis]]" = weakref.WeakKeyDictionary()
def analyse(run: RunModel) -> Analysis:
    """The run's analysis (memoised on the events read so far and ``compiled_functions/``)."""
    stamp = (run.event_count, len(run.malformed), run.partial_line, run.error, cf_stamp(run),
             runtime_stamp(run.path),
             len(run.triage.failures) and sum(1 for f in run.triage.failures if f.recovered))
    got = _MEMO.get(run)
    if got is not None and got[0] == stamp:
        return got[1]
    a = _Analyser(run).build()
    _MEMO[run] = (stamp, a)
    return a


class _Analyser(AnalyserState):
    """The analysis of one run: the gathered state (:class:`~.state.AnalyserState`) and the steps that turn it
    into an :class:`~.results.Analysis` (the walks over it are functions: breaks, recompiles, tallies)."""

    # frames ------------------------------------------------------------------------------------
    def _timeline_frames(self) -> None:
        """A row per frame of the fold, made frame by frame in the fold's own table when the analysis made
        the fold (each frame's fold dropped as its row is made, one table for both), in a copy of it when
        it is the run's (a headless load's, which a later analysis reads again)."""
        run = self.run
        fold = self.fold
        table: dict[str, Any] = dict(fold.frames) if fold is getattr(run, "fold", None) else fold.frames
        for fkey, f in table.items():
            # compiles that ran (a ``compile`` lifecycle); a recompile or limit-hit event names the next
            # compile id even when that compile never happens (the frame fell back to eager)
            row = FrameRow(frame="", key=fkey, name=f.name or "?", first_event=f.first_event,
                           compile_s=f.compile_s, compiles=n_ids(f.compile_ids) or n_ids(f.any_ids))
            if f.asked:  # read by a bound fold (TimelineFold.bind) as it came
                row.file, row.line = f.file, f.line
            elif f.first_before is not None:  # once per frame: the attributes are re-read from the file
                a = event_attrs(run, f.first_before)
                row.file = _s(a.get("co_filename"))
                row.line = _int(a.get("co_firstlineno"))
            # where the code object is: from metrics.json of its first compile when no attribute said
            ev = f.first_closer
            if row.file is None and ev is not None:
                m = metrics_or_none(_read_event_file(run, ev, "metrics.json", self.budget))  # typed, or None
                if m is not None:
                    row.file = _s(m.get("co_filename"))
                    row.line = _int(m.get("co_firstlineno"))
            row.frame = CodeId(row.name, row.file, row.line).label
            ca = _CA_KEY.match(fkey)
            if ca is not None:  # the graph compiled autograd captured: named so, never as a user's "forward"
                row.compiled_autograd = True
                row.frame = f"compiled autograd graph {ca.group(1)}"
            same = self.cf.by_name(row.name)
            if len(same) == 1:
                row.cf_rel = same[0].rel
            table[fkey] = row  # (a value replaced: the table keeps its size while it is walked)
        self.frames = table

    def _cf_frames(self) -> None:
        for f in self.cf.frames:
            if f.compiles == 0:
                continue
            key = "cf:" + f.rel
            row = FrameRow(frame=f.code.label, key=key, name=f.code.name, file=f.code.file, line=f.code.line,
                           compiles=f.compiles)
            row.cf_rel = f.rel
            self.frames[key] = row


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
        worklist = breaks_worklist(self)
        recompiles = self._recompile_list = explain_recompiles(self)
        recompile_limits(self)
        for item in self.t.recompile_limit_hits:
            if raised_into_program(item):
                for row in self.frames.values():
                    if row.limit_event is item.event:
                        row.limit_raised = True
        cache = cache_tallies(self)
        status, why = self._status()
        frames = sorted(self.frames.values(), key=lambda r: -r.compiles)  # stable: discovery order on ties
        compile_time = compile_time_tallies(self)
        if not has_cids and len(frames) == 1 and run.event_count:
            # an upstream run (no compile ids) that compiled one frame: all it recorded is that frame's
            only = frames[0]
            c = cache["counts"]
            only.cache_hits, only.cache_misses, only.cache_bypasses = c["hits"], c["misses"], c["bypasses"]
            for reason, n in cache["reasons"]["bypass"].items():
                only.add_bypass_reason(reason, n)
            only.compile_s = compile_time["total_s"]
        a = Analysis(status, list(self.t.restarts), self.t.problems, worklist, recompiles, frames, cache,
                     compile_time, [], incomplete_reasons=why,
                     graph_break_total=sum(b.count for b in worklist), recompile_total=len(recompiles),
                     frames_found=list(self.frames.values()))
        a.runtime = runtime_info(run, self.fold.exec_events)
        if a.runtime is not None:
            for row in frames:
                row.entries = a.runtime.frame_entries(row.key)
                row.eager_calls = a.runtime.eager_calls(row.key)
        a.outcome = run.outcome
        a.outcome_unknown = run.outcome_unknown()
        if self.t.compiled_nothing:
            a.compiled_nothing = compiled_nothing(run, frames, worklist)
        if recompiles or worklist:  # what magi-tui fix proved for this program (only a fix's folder is read)
            from magi_tui.model.analysis.fix_proofs import fix_proofs

            a.fix_proofs = fix_proofs(run.path, a.outcome.script if a.outcome is not None else None)
        a.fallbacks = fallbacks(run, a, self.frames, self.unguarded, self.fold.hint_events, self.cudagraph_skips)
        a.not_recorded = not_recorded(run)
        if a.not_recorded:
            from magi_tui.model.sources.debugdir import trace_log_of

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
        a.evidence = self.fold.evidence()
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
            if row.limit_hit and not row.limit_raised:  # a raise is a failure: the frame did not go on eagerly
                out.append(EagerFrame(row.frame, row.key, row.limit_event.compile_id if row.limit_event else None,
                                      "recompile_limit", f"reached the recompile limit ({row.recompile_limit}): "
                                      "later calls with new guards run uncompiled", row.file, row.line,
                                      row.limit_event))
        return out
