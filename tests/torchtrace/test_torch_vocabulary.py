"""magi_format's torch vocabulary without torch: the grammar of torch's exception text and the mapping of
torch's trace records (a ``torch._dynamo.reset()`` mid-run). These moved here from folders and modules
that skip without torch; they need none."""

from __future__ import annotations


def test_exception_from_a_real_traceback_keeps_every_line():
    import traceback

    from magi_format.torchtext import exception_from_traceback

    class Boom(Exception):
        pass

    try:
        try:
            raise KeyError("k")
        except KeyError as e:
            raise Boom('first line\nfrom user code:\n  File "x.py", line 3, in f\n    y()\nlast') from e
    except Boom:
        text = traceback.format_exc() + "\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace\n"
    assert exception_from_traceback(text) == (
        "Boom", 'first line\nfrom user code:\n  File "x.py", line 3, in f\n    y()\nlast')


def test_a_user_event_after_a_reset_gets_the_generation():
    from magi_format.torch_mapping import TraceMapper
    from magi_format.torch_records import UserEvent

    m = TraceMapper()
    start = {"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    m.handle(dict(start), None)
    (before,) = m.events(UserEvent("fullgraph_perf_hint", {"compile_id": "0/0"}, {}, 0.0))
    m.handle(dict(start), None)  # the same first attempt again: torch._dynamo.reset() was called
    (after,) = m.events(UserEvent("fullgraph_perf_hint", {"compile_id": "0/0"}, {}, 0.0))
    assert (before[1]["compile_id"], after[1]["compile_id"]) == ("0/0", "R1/0/0")
