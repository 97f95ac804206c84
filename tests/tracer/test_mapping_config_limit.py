"""The recompile limit a log's compiles ran under (``compilation_metrics``' ``dynamo_config``): read once
per distinct config, and still changed when the config changes or names none."""

from __future__ import annotations

import json

from magi_format.torch_mapping import TraceMapper


def _metrics(mapper: TraceMapper, fid: int, config: object) -> None:
    mapper.handle({"compilation_metrics": {"co_name": f"f{fid}", "dynamo_config": config},
                   "frame_id": fid, "frame_compile_id": 0, "attempt": 0}, None)


def test_limit_follows_the_config():
    m = TraceMapper()
    eight, two = json.dumps({"recompile_limit": 8}), json.dumps({"cache_size_limit": 2, "x": 1})
    _metrics(m, 0, eight)
    assert m.config_recompile_limit == 8
    _metrics(m, 1, eight)
    assert m.config_recompile_limit == 8
    _metrics(m, 2, two)
    assert m.config_recompile_limit == 2
    _metrics(m, 3, json.dumps({"limit_of_nothing": "x"}))  # names no int limit: the last one stands
    assert m.config_recompile_limit == 2
    _metrics(m, 4, {"recompile_limit": 5})  # not a JSON string: read as naming none
    assert m.config_recompile_limit == 2
    _metrics(m, 5, eight)
    assert m.config_recompile_limit == 8
    _metrics(m, 6, "not json, but a limit")
    assert m.config_recompile_limit == 8
