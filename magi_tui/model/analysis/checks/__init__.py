"""One analysis of a run, shared by ``magi-tui triage`` and the triage panel: status, restarts,
failures, the graph-break worklist, recompiles explained, frames, cache, compile time, and the
checks (``ok`` / ``warn`` / ``fail`` sentences) a compiler engineer makes first.

Evidence comes from the timeline (our tracer's events carry compile ids, frames, reasons) and, when
the timeline has none of a kind (upstream runs), from ``compiled_functions/``: recompiles from cache
entries, graph breaks from resume functions, guard differences between consecutive entries.

:func:`analyse` is memoised per run on what it has read, so a live view may call it often.

The package, by concern: :mod:`.results` (the data), :mod:`.fold` (the one pass over the events),
:mod:`.evidence` (what is read about single events), :mod:`.analyser` (the analysis) and
:mod:`.rules` (the checks: a registry of rules with stable ids).
"""

from magi_tui.model.analysis.checks.analyser import LOG_NAMES, analyse
from magi_tui.model.analysis.checks.evidence import (
    MAX_FILE_READS,
    event_attrs,
    export_issue_json,
    failure_source,
    fallback_reason,
    frame_events,
    not_recorded,
    run_status,
)
from magi_tui.model.analysis.checks.fold import TimelineFold, timeline_fold
from magi_tui.model.analysis.checks.results import (
    AUTO_DYNAMIC_KINDS,
    STATUSES,
    Analysis,
    BreakEntry,
    Check,
    EagerFrame,
    FrameRow,
    RecompileInfo,
)
from magi_tui.model.analysis.checks.rules import (
    EXPORT_ISSUE_WORDS,
    FAIL_ON_KINDS,
    RULE_IDS,
    RULES,
    Rule,
    UnknownRule,
    export_issues_check,
    failing,
    parse_fail_on,
)
from magi_tui.model.analysis.checks.state import compiled_index

__all__ = ["AUTO_DYNAMIC_KINDS", "EXPORT_ISSUE_WORDS", "FAIL_ON_KINDS", "LOG_NAMES", "MAX_FILE_READS", "RULES",
           "RULE_IDS", "STATUSES", "Analysis", "BreakEntry", "Check", "EagerFrame", "FrameRow", "RecompileInfo",
           "Rule", "TimelineFold", "UnknownRule", "analyse", "compiled_index", "event_attrs", "export_issue_json",
           "export_issues_check", "failing", "failure_source", "fallback_reason", "frame_events", "not_recorded",
           "parse_fail_on", "run_status", "timeline_fold"]
