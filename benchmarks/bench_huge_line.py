"""Issue 14, hole 4: showing a sparse one-line artifact of SIZE bytes in the run screen's file pane.

Measures, in the real app (headless Pilot): the time from selecting the file's tab to the file being on
screen, the longest the event loop went without turning meanwhile, and the process's peak RSS (VmHWM).

    python benchmarks/bench_huge_line.py [SIZE_GB=1]

Run it from a checkout (it imports ``magi_tui`` from the current directory), e.g. to compare with the
code before the fix: ``git archive <commit> | tar -x -C /tmp/old && cd /tmp/old && python
/path/to/bench_huge_line.py``. The old code reads the whole line on the UI thread: cap its memory
(``ulimit -v``) on a shared machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.getcwd())


def _status(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) // 1024
    return 0


def build(tmp: Path, size: int) -> Path:
    run = tmp / "run"
    te = run / "timeline_events"
    folder = te / "files" / "0000_fullgraph_after_x"
    folder.mkdir(parents=True)
    line = {"index": 0, "name": "fullgraph_after_x", "relative_time": "0.0ms", "files": ["g.py", "huge.txt"],
            "attributes": {"scope": "fullgraph", "lifecycle_name": "x"}, "datetime": "2026-11-22 11:19:01.460",
            "timestamp": 1795346341.0}
    (te / "timeline.jsonl").write_text(json.dumps(line) + "\n")
    (folder / "g.py").write_text("x = 1\ny = 2\nz = 3\n")
    (folder / "attributes.json").write_text("{}")
    with open(folder / "huge.txt", "wb") as fh:
        fh.write(b"x = '")
        fh.truncate(size)
    return run


async def measure(run: Path) -> dict:
    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.run import RunScreen
    from magi_tui.ui.widgets.detail import EventDetail
    from magi_tui.ui.widgets.file_view import FileLines

    app = MagiApp(run)
    stall = [0.0]
    out: dict = {}

    async def ticker():
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.005)
            stall[0] = max(stall[0], time.perf_counter() - t - 0.005)

    async with app.run_test(size=(120, 40)) as pilot:
        while not (isinstance(app.screen, RunScreen) and app.screen.loaded):
            await pilot.pause(0.05)
        screen = app.screen
        screen.jump_to(screen.run.events[0])
        detail = screen.query_one(EventDetail)
        lines = detail.query_one(FileLines)
        while lines.file is None or lines.file.line_count != 3:  # g.py shown
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        rss0 = _status("VmRSS:")
        task = asyncio.get_running_loop().create_task(ticker())
        t0 = time.perf_counter()
        detail.action_next_file()  # g.py -> huge.txt
        while lines.file is None or lines.file.line_count != 1:
            await pilot.pause(0.01)
        out["first_line_chars"] = len(lines.file.line(0))
        await pilot.pause(0.2)  # painted
        out["shown_s"] = time.perf_counter() - t0 - 0.2
        task.cancel()
        out["max_loop_stall_ms"] = stall[0] * 1000
        out["rss_before_mb"] = rss0
        out["rss_after_mb"] = _status("VmRSS:")
        out["peak_rss_mb"] = _status("VmHWM:")
    return out


def main() -> None:
    size = int(float(sys.argv[1] if len(sys.argv) > 1 else 1) * (1 << 30))
    with tempfile.TemporaryDirectory() as tmp:
        run = build(Path(tmp), size)
        res = asyncio.run(measure(run))
    res["size_bytes"] = size
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
