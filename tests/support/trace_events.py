"""A checker of Chrome trace-event JSON (the Trace Event Format, JSON Object Format) as Perfetto's and
chrome://tracing's importers read it: every event has ``ph``, ``name``, integer ``pid`` / ``tid``, a finite
``ts`` (µs) unless it is metadata; ``X`` has a ``dur`` ≥ 0; ``B`` / ``E`` balance per thread, last opened
first; complete events of one thread nest (Perfetto drops a slice that overlaps another without nesting);
instants have a scope ``g`` / ``p`` / ``t``. No trace-event parser is installed (Perfetto's
``trace_processor`` downloads a binary), so this one is written out from the format's documentation."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

PHASES = set("BEXiIMCbnesftPOND") | {"(", ")"}
METADATA = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}


def check_trace(doc) -> Counter:
    """Raise AssertionError on the first violation; return ``(pid, ph)`` -> count."""
    assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "JSON Object Format: traceEvents"
    counts: Counter = Counter()
    stacks: dict[tuple, list] = defaultdict(list)
    spans: dict[tuple, list] = defaultdict(list)
    for i, e in enumerate(doc["traceEvents"]):
        where = f"event {i}: {e!r}"[:300]
        assert isinstance(e, dict), where
        ph = e.get("ph")
        assert ph in PHASES, where
        assert isinstance(e.get("name"), str), where
        assert isinstance(e.get("pid"), int) and isinstance(e.get("tid", 0), int), where
        counts[(e["pid"], ph)] += 1
        if ph == "M":
            assert e["name"] in METADATA and isinstance(e.get("args"), dict), where
            continue
        ts = e.get("ts")
        assert isinstance(ts, (int, float)) and not isinstance(ts, bool) and math.isfinite(ts) and ts >= 0, where
        if "args" in e:
            assert isinstance(e["args"], dict), where
        key = (e["pid"], e.get("tid", 0))
        if ph == "X":
            d = e.get("dur")
            assert isinstance(d, (int, float)) and math.isfinite(d) and d >= 0, where
            spans[key].append((ts, ts + d, e["name"]))
        elif ph == "B":
            stacks[key].append(e["name"])
        elif ph == "E":
            assert stacks[key], f"E without B: {where}"
            stacks[key].pop()
        elif ph in ("i", "I"):
            assert e.get("s", "t") in ("g", "p", "t"), where
    assert not any(stacks.values()), f"B without E: {dict(stacks)}"
    for key, items in spans.items():
        open_: list = []
        for start, end, name in sorted(items, key=lambda s: (s[0], -(s[1] - s[0]))):
            while open_ and open_[-1][1] <= start:
                open_.pop()
            assert not open_ or end <= open_[-1][1], f"{key}: {name} [{start}, {end}] overlaps {open_[-1]}"
            open_.append((start, end, name))
    return counts
