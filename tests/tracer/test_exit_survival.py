"""Issue 32.8: the tracer's last events survive ``os._exit`` -- a compile's closing record is written through
(from the compiling thread, before torch goes on) -- and every file of an event's folder is written whole
(a temporary name, then a rename: a reader never sees a 0-byte ``attributes.json``)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from magi_format.torch_records import UserEvent
from magi_tui.model import RunModel
from magi_tui.model.analysis.checks import analyse
from tests.support import slow
from tracer import writer as writer_mod
from tracer.writer import BackgroundWriter, RunWriter, TracerWarning

ROOT = Path(__file__).resolve().parents[2]

#: a program that compiles (one compile that works, one whose backend raises) and ends with ``os._exit(0)``
#: right after, its tracer's disk slow: each event the writer thread writes takes 50 ms (as on NFS), so
#: without the write-through its queue still holds the compiles' closing events when the process goes
EXIT_PROGRAM = """
import os, threading, time
import torch
import tracer.writer

write = tracer.writer.RunWriter.write
def slow(self, *a, **k):
    if threading.current_thread().name == "magi-tracer-writer":
        time.sleep(0.05)
    return write(self, *a, **k)
tracer.writer.RunWriter.write = slow

def f(x):
    return torch.sin(x) + 1

def broken(gm, example_inputs):
    raise RuntimeError("this backend always fails")

torch.compile(f, backend="eager")(torch.ones(3))
try:
    torch.compile(lambda x: x * 2, backend=broken)(torch.ones(3))
except Exception as exc:
    print("raised", type(exc).__name__, flush=True)
os._exit(0)
"""


@pytest.mark.torch
def test_a_program_that_calls_os_exit_after_its_compiles_keeps_them_closed(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "prog.py"
    script.write_text(EXIT_PROGRAM)
    proc = slow.run([sys.executable, "-m", "tracer", "-o", str(tmp_path / "out"), str(script)], cwd=tmp_path,
                    capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr
    assert "raised BackendCompilerFailed" in proc.stdout
    run_dir = Path(next(ln for ln in proc.stderr.splitlines() if ln.startswith("MAGI_RUN_DIR=")).split("=", 1)[1])
    names = [json.loads(ln)["name"] for ln in (run_dir / "timeline_events" / "timeline.jsonl").read_text().splitlines()]
    assert names.count("fullgraph_after_compile") == 1 and names.count("fullgraph_failed_compile") == 1, names
    assert "fullgraph_after_build_guards" in names
    run = RunModel(run_dir).load()
    assert run.open_spans == []  # every lifecycle torch closed is closed
    # the one reason the run is incomplete: the session record has no end (the program never got there);
    # its status is the failed compile's
    reasons = analyse(run).incomplete_reasons
    assert run.status == "failed"
    assert len(reasons) == 1 and "no end-of-session record" in reasons[0], reasons


def _slow_writer_thread(monkeypatch, delay: float = 0.02) -> None:
    write = RunWriter.write

    def slow(self, *a, **k):
        if threading.current_thread().name == "magi-tracer-writer":
            time.sleep(delay)
        return write(self, *a, **k)

    monkeypatch.setattr(RunWriter, "write", slow)


def _names(run_dir: Path) -> list[str]:
    text = (run_dir / "timeline_events" / "timeline.jsonl").read_text()
    return [json.loads(ln)["name"] for ln in text.splitlines()]


def test_write_through_writes_what_is_queued_before_it_returns(tmp_path, monkeypatch):
    _slow_writer_thread(monkeypatch)
    bw = BackgroundWriter(RunWriter(tmp_path))
    try:
        for i in range(50):
            bw.submit(UserEvent(f"fullgraph_e{i}", {"i": i}, {"a.txt": f"file {i}"} if i % 5 == 0 else {}, None))
        assert bw.write_through()
        assert _names(tmp_path) == [f"fullgraph_e{i}" for i in range(50)]  # all there, in order
    finally:
        bw.close()


def test_records_stay_in_order_whoever_writes_them(tmp_path):
    bw = BackgroundWriter(RunWriter(tmp_path))

    def producer(t: int) -> None:
        for i in range(300):
            bw.submit(UserEvent(f"fullgraph_t{t}", {"i": i}, {}, None))
            if i % 37 == 0:
                bw.write_through()

    threads = [threading.Thread(target=producer, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    bw.close()
    lines = [json.loads(ln) for ln in (tmp_path / "timeline_events" / "timeline.jsonl").read_text().splitlines()]
    assert [x["index"] for x in lines] == list(range(1200))
    for t in range(4):
        assert [x["attributes"]["i"] for x in lines if x["name"] == f"fullgraph_t{t}"] == list(range(300))


def test_a_failing_disk_under_write_through_is_one_warning(tmp_path, monkeypatch):
    bw = BackgroundWriter(RunWriter(tmp_path))

    def full(self, *a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(RunWriter, "write", full)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bw.submit(UserEvent("fullgraph_x", {}, {}, None))
        assert bw.write_through()
        bw.submit(UserEvent("fullgraph_y", {}, {}, None))
        bw.write_through()
    bw.close()
    assert bw.failed and "No space left" in (bw.stop_error or "")
    assert len([w for w in caught if issubclass(w.category, TracerWarning)]) == 1


def test_every_file_of_an_event_is_written_whole_then_renamed(tmp_path, monkeypatch):
    """The writer's code path: each file (``attributes.json`` included) is written under a temporary name in
    its own folder and renamed over its name; none is opened for writing under its own name."""
    renames: list[tuple[Path, Path]] = []
    opened: list[str] = []
    replace, real_open = os.replace, open

    def spy_replace(src, dst):
        renames.append((Path(src), Path(dst)))
        return replace(src, dst)

    def spy_open(file, mode="r", *a, **k):
        if "w" in mode:
            opened.append(Path(file).name)
        return real_open(file, mode, *a, **k)

    monkeypatch.setattr(writer_mod.os, "replace", spy_replace)
    monkeypatch.setattr("builtins.open", spy_open)
    w = RunWriter(tmp_path)
    w.write("fullgraph_after_dynamo_capture", {"subgraph": "g0", "x": 1}, {"graph.py": "x = 1\n", "b.txt": "b"})
    w.close()
    folder = tmp_path / "timeline_events" / "files" / "0000_fullgraph_after_dynamo_capture" / "g0"
    assert sorted(p.name for p in folder.iterdir()) == ["attributes.json", "b.txt", "graph.py"]  # no temp left
    assert sorted(dst.name for _src, dst in renames) == ["attributes.json", "b.txt", "graph.py"]
    assert all(src.parent == dst.parent == folder and src.name.startswith(".") for src, dst in renames)
    assert not {"attributes.json", "b.txt", "graph.py"} & set(opened)
    assert json.loads((folder / "attributes.json").read_text())["x"] == 1


def test_a_reader_never_sees_a_0_byte_or_half_attributes_json(tmp_path):
    """A reader polling the folders while the writer writes 400 events: every attributes.json and file it
    finds is whole."""
    w = RunWriter(tmp_path)
    files_dir = tmp_path / "timeline_events" / "files"
    done = threading.Event()
    seen: list[str] = []
    bad: list[str] = []

    def reader() -> None:
        while not done.is_set():
            try:
                folders = list(os.scandir(files_dir))
            except FileNotFoundError:
                continue
            for d in folders:
                for name in ("attributes.json", "big.txt"):
                    try:
                        with open(os.path.join(d.path, name), "rb") as f:
                            data = f.read()
                    except FileNotFoundError:
                        continue
                    seen.append(name)
                    if name == "attributes.json":
                        try:
                            json.loads(data)
                        except ValueError:
                            bad.append(f"{d.name}/{name}: {len(data)} bytes")
                    elif len(data) != 200_000:
                        bad.append(f"{d.name}/{name}: {len(data)} bytes")

    th = threading.Thread(target=reader)
    th.start()
    try:
        for i in range(400):
            w.write(f"fullgraph_e{i}", {"i": i, "pad": "x" * 5000}, {"big.txt": "y" * 200_000})
    finally:
        done.set()
        th.join()
        w.close()
    assert seen and not bad, bad[:5]
