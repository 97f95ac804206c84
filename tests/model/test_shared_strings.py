"""What a run keeps per event, for the app on 100k compile ids (issue 36): equal strings are one object, and a
skip keeps no copy of its line's attributes.

A line's decoded strings are copies of their own: an event that keeps its attribute map (triage reads a
failure's) repeats its compile id, lifecycle name, frame name and reason in it and in its summary. They are
shared (``events._kept_attrs``, ``events._one_copy``); what an event says is the line's, value for value."""

from __future__ import annotations

import json

from magi_tui.model.events import KeptAttrs
from magi_tui.model.run import RunModel
from magi_tui.model.sources.reader import TimelineReader

REASON = "not completed in this compile"


def _lines(n: int, phase: str = "failed", reason: str = REASON) -> list[dict]:
    out = []
    for i in range(n):
        common = {"scope": "fullgraph", "compile_id": f"{i}/0", "frame": f"fn_{i}", "source": "torch_trace"}
        out += [
            {"name": "fullgraph_before_compile", "attributes": dict(common, lifecycle_name="compile")},
            {"name": "fullgraph_before_dynamo_capture", "attributes": dict(common, lifecycle_name="dynamo_capture")},
            {"name": f"fullgraph_{phase}_dynamo_capture",
             "attributes": dict(common, lifecycle_name="dynamo_capture", reason=reason)},
            {"name": "fullgraph_after_compile", "attributes": dict(common, lifecycle_name="compile", duration_ms=0.2)},
        ]
    for k, line in enumerate(out):
        line.update(index=k, timestamp=1795345959.0 + k / 1000)
    return out


def _write(tmp_path, lines):
    path = tmp_path / "run" / "timeline_events" / "timeline.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_kept_map_and_the_summaries_share_their_strings(tmp_path):
    lines = _lines(5)
    events = TimelineReader(_write(tmp_path, lines)).read().events
    assert len(events) == len(lines)
    failed = [ev for ev in events if ev.phase == "failed"]
    assert len(failed) == 5
    for ev, line in zip(events, lines):  # what an event says is its line's, value for value
        assert ev.compile_id == line["attributes"]["compile_id"]
        assert ev.summary is not None and ev.summary["frame"] == line["attributes"]["frame"]
    for ev in failed:
        kept = ev.attrs
        assert type(kept) is KeptAttrs
        assert kept == {"compile_id": ev.compile_id, "frame": ev.summary["frame"], "lifecycle_name": "dynamo_capture",
                        "reason": REASON}
        assert kept["compile_id"] is ev.compile_id
        assert kept["lifecycle_name"] is ev.lifecycle
        assert kept["frame"] is ev.summary["frame"] and kept["reason"] is ev.summary["reason"]
    # one reason for all the compiles; a compile's frame name one object in all its events' summaries
    assert len({id(ev.attrs["reason"]) for ev in failed}) == 1
    for i in range(5):
        assert len({id(ev.summary["frame"]) for ev in events[4 * i:4 * i + 4]}) == 1


def test_a_long_string_is_kept_by_its_events_alone(tmp_path):
    """A string over 200 characters is not entered in the shared strings: a hostile file's long messages
    stay only as long as the events that hold them (and are still whole)."""
    long = "x" * 5000
    events = TimelineReader(_write(tmp_path, _lines(3, reason=long))).read().events
    reasons = [ev.attrs["reason"] for ev in events if ev.phase == "failed"]
    assert reasons == [long] * 3
    assert len({id(r) for r in reasons}) == 3


def test_a_skip_keeps_no_copy_of_its_attributes_and_still_shows_them(tmp_path):
    """A skip (torch never finished that stage: one in each compile of a big log) keeps no map: its reason
    is in its summary (the tree's label), and its whole attributes are read from its line when shown."""
    lines = _lines(3, phase="skip")
    run = RunModel(_write(tmp_path, lines).parent.parent).load()
    skips = [ev for ev in run.events if ev.phase == "skip"]
    assert len(skips) == 3 and all(ev.kind == "skip" for ev in skips)
    for ev in skips:
        assert ev.attrs is None
        assert ev.summary == {"frame": f"fn_{ev.compile_id.split('/')[0]}", "reason": REASON}
        assert run.attributes(ev) == lines[ev.seq]["attributes"]
        assert run.span_of(ev).status == "skip"
