"""Multi-rank jobs from TORCH_TRACE logs (issue #19 item 8): the rank from every file-name form torch uses
and from the records' metadata, a folder of per-rank logs as one job, and what differs across its ranks,
each aspect with the groups of ranks that agree — checked against tlparse's ``--all-ranks-html`` report on
the same logs.

The jobs were recorded from a real program (``tests/torchtrace/jobs/record_jobs.py``: torch 2.13, gloo,
Inductor compiling real all_reduces): ``branch2`` (rank 1 takes another branch: a graph break, one all_reduce
run eagerly) and ``shape3`` (rank 2 gets 6 rows instead of 4). Ranks 0 and 1 of ``shape3`` agree.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from magi_tui.cli import main
from magi_tui.model import RunModel
from magi_tui.model.outputs.ranks import find_jobs
from magi_tui.model.sources.discovery import find_runs
from magi_tui.model.sources.torchtrace import is_log_name, log_rank, metadata_rank, name_rank
from tests.support import slow
from tests.torchtrace.jobkit import BRANCH2, SHAPE3
from tests.torchtrace.jobkit import rank_logs as _logs
from tests.torchtrace.oracle import tlparse_bin


def _aspects(job) -> dict[str, tuple[str, list[list[int]]]]:
    return {a.name: (a.status, [ranks for ranks, _ in a.groups]) for a in job.aspects}


def _copy(tmp: Path, logs: dict[int, Path], name=lambda r, p: p.name) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    for r, p in logs.items():
        shutil.copyfile(p, tmp / name(r, p))
    return tmp


# -- the rank of a log -------------------------------------------------------------------------------
@pytest.mark.parametrize("name, rank", [
    ("dedicated_log_torch_trace_rank_3.log", 3),                # renamed by hand / a launcher
    ("dedicated_log_torch_trace_rank_3_abc123.log", 3),         # torch 2.x: mkstemp(prefix="..._rank_3_")
    ("dedicated_log_torch_trace_rank_0__pqub5mr.log", 0),       # mkstemp's random part starts with "_"
    ("dedicated_log_torch_trace_rank_12_k2_x9ab.log", 12),
    ("dedicated_log_torch_trace_abc123xy.log", None),           # not distributed at the first record
    ("dedicated_log_torch_trace_rank_x.log", None),
])
def test_rank_from_every_file_name_form(name, rank):
    assert is_log_name(name)
    assert name_rank(name) == rank


def test_rank_from_the_records_metadata_wins_over_the_name(tmp_path):
    log = _logs(SHAPE3)[2]
    assert metadata_rank(log) == 2
    renamed = tmp_path / "dedicated_log_torch_trace_rank_7.log"  # a copy named for another rank
    shutil.copyfile(log, renamed)
    assert log_rank(renamed) == 2
    anonymous = tmp_path / "dedicated_log_torch_trace_q1w2e3r4.log"  # torch's name without a rank
    shutil.copyfile(log, anonymous)
    assert log_rank(anonymous) == 2 and find_runs(anonymous)[0].name.rank == 2


def test_rank_from_the_name_when_records_carry_none(tmp_path):
    lines = [ln for ln in _logs(SHAPE3)[0].read_text().splitlines(keepends=True)]
    text = "".join(ln.replace('"rank": 0, ', "") for ln in lines)
    p = tmp_path / "dedicated_log_torch_trace_rank_5.log"
    p.write_text(text)
    assert metadata_rank(p) is None and log_rank(p) == 5


# -- jobs ----------------------------------------------------------------------------------------------
def test_a_rank_that_takes_another_branch():
    (job,), loners = find_jobs(BRANCH2)
    assert loners == []
    assert job.folder == str(BRANCH2) and job.label == "branch2" and [r.rank for r in job.ranks] == [0, 1]
    assert job.diverged and job.divergent_ranks == [1]
    assert _aspects(job) == {
        "compile_ids": ("differ", [[0], [1]]),
        "cache": ("differ", [[0], [1]]),
        "collectives": ("differ", [[0], [1]]),
        "tensor_meta": ("differ", [[0], [1]]),
        "execution_order": ("differ", [[0], [1]]),
        "runtime_estimates": ("differ", [[0], [1]]),  # one graph estimated on rank 0, two on rank 1
    }
    by = {a.name: a for a in job.aspects}
    assert by["compile_ids"].groups[1][1] == ["[0/0]", "[0/0_1]", "[1/0]"]  # restarted, then a resume function
    assert by["collectives"].groups[0][1] == ["0/0: all_reduce_, wait_tensor, all_reduce_, wait_tensor"]
    assert by["collectives"].groups[1][1] == ["0/0_1: all_reduce_, wait_tensor"]  # the other one ran eagerly
    assert by["execution_order"].groups[0][1] == ["0/0", "0/0"]
    assert by["execution_order"].groups[1][1] == ["0/0", "1/0", "0/0", "1/0"]
    kinds = {(d.kind, d.compile_id) for d in job.divergences}
    assert ("compile_ids", "1/0") in kinds and ("graphs", "0/0") in kinds


def test_a_rank_with_another_shape():
    (job,), _ = find_jobs(SHAPE3)
    assert [r.rank for r in job.ranks] == [0, 1, 2] and job.divergent_ranks == [2]
    assert _aspects(job) == {
        "compile_ids": ("agree", [[0, 1, 2]]),
        "cache": ("agree", [[0, 1, 2]]),
        "collectives": ("agree", [[0, 1, 2]]),
        "tensor_meta": ("differ", [[0, 1], [2]]),
        "execution_order": ("agree", [[0, 1, 2]]),
        "runtime_estimates": ("agree", [[0, 1, 2]]),  # Inductor estimates 0 ns per op on CPU
    }
    meta = {tuple(ranks): seq for ranks, seq in next(a for a in job.aspects if a.name == "tensor_meta").groups}
    assert "mm -> float32[4, 8]" in meta[(0, 1)][0] and "mm -> float32[6, 8]" in meta[(2,)][0]
    # same compile ids and cache; the graph rank 2 captured holds its other shapes (the same 11 ops): its
    # hash differs, read from the log's dynamo_output_graph as from a run dir's captured graph file
    (d,) = job.divergences
    assert (d.kind, d.compile_id, d.ranks) == ("graphs", "0/0", [2])
    assert {r: g["op_count"] for r, g in d.by_rank.items()} == {0: 11, 1: 11, 2: 11}
    assert d.by_rank[0]["graph_hash"] == d.by_rank[1]["graph_hash"] != d.by_rank[2]["graph_hash"]


def test_ranks_that_agree_say_so(tmp_path, capsys):
    logs = _logs(SHAPE3)
    folder = _copy(tmp_path / "job", {0: logs[0], 1: logs[1]})
    (job,), _ = find_jobs(folder)
    assert not job.diverged and job.divergent_ranks == []
    assert {a.status for a in job.aspects} == {"agree"}
    assert main(["ranks", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "consistent: every rank matches rank 0" in out
    assert "agree: compile-id sequence, cache hit/miss pattern, collective operation sequence, tensor metadata" in out


def test_older_file_names_make_the_same_job(tmp_path):
    """``..._rank_<r>.log`` (no random part) and a stray non-trace log beside them."""
    folder = _copy(tmp_path / "job", _logs(SHAPE3), lambda r, p: f"dedicated_log_torch_trace_rank_{r}.log")
    (folder / "train.log").write_text("epoch 1 loss 0.3\n")
    (job,), loners = find_jobs(folder)
    assert [r.rank for r in job.ranks] == [0, 1, 2] and job.divergent_ranks == [2]
    assert loners == []


def test_a_rerun_into_the_same_folder_keeps_the_newest_log_per_rank(tmp_path):
    logs = _logs(SHAPE3)
    folder = _copy(tmp_path / "job", logs)
    older = (tmp_path / "job" / "dedicated_log_torch_trace_rank_2_old00000.log")
    # an earlier run of rank 2: the same records a day earlier (the glog prefix holds month and day)
    older.write_text(re.sub(r"^V1124", "V1123", logs[1].read_text().replace('"rank": 1,', '"rank": 2,'), flags=re.M))
    (job,), _ = find_jobs(folder)
    assert job.superseded == [str(older)]
    assert job.divergent_ranks == [2]  # the newest rank-2 log (6 rows) is the job's


# -- headless ------------------------------------------------------------------------------------------
def test_ranks_json_and_exit_codes(capsys, tmp_path):
    assert main(["ranks", str(BRANCH2), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["diverged"] is True
    (job,) = doc["jobs"]
    assert job["source"] == "torch_trace" and job["status"] == "diverged" and job["divergent_ranks"] == [1]
    assert [r["rank"] for r in job["ranks"]] == [1, 0]  # divergent ranks first
    assert [a["aspect"] for a in job["aspects"]] == ["compile_ids", "cache", "collectives", "tensor_meta",
                                                     "execution_order", "runtime_estimates"]
    coll = job["aspects"][2]
    assert coll["status"] == "differ" and [g["ranks"] for g in coll["groups"]] == [[0], [1]]
    assert coll["message"].startswith("collective operation sequence: ranks disagree")
    # one log is no job
    single = _copy(tmp_path / "one", {0: _logs(SHAPE3)[0]})
    assert main(["ranks", str(single), "--json"]) == 2
    assert "no job" in capsys.readouterr().err


# -- tlparse, the oracle -------------------------------------------------------------------------------
def tlparse_groups(folder: Path, out: Path) -> dict[str, object]:
    """What ``tlparse --all-ranks-html`` says about a job: divergence flags and groups of ranks."""
    proc = slow.run([tlparse_bin(), str(folder), "--all-ranks-html", "-o", str(out), "--overwrite",
                     "--no-browser"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = (out / "index.html").read_text()
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))

    def groups(after: str) -> set[frozenset[int]] | None:
        i = text.find(after)
        if i < 0:
            return None
        tail = text[i + len(after):]
        stop = re.search(r"Warning:|Collective operation sequence groups:|Multi-Rank TLParse Report|Graph Runtime", tail)
        chunk = tail[:stop.start()] if stop else tail
        return {frozenset(int(x) for x in m.split(",")) for m in re.findall(r"Ranks: ([\d, ]+?)(?= Ranks:|$| [A-Z])",
                                                                                  chunk.strip() + " ")}

    return {
        "compile_ids_differ": "Diverging Compilation IDs detected" in text,
        "cache": groups("Cache hit/miss pattern groups:"),
        "collectives": groups("Collective operation sequence groups:"),
        "tensor_meta": groups("Groups with identical signatures:"),
        "execution_order_differs": "Graph execution order differs across ranks" in text,
    }


def ours(job) -> dict[str, object]:
    by = {a.name: a for a in job.aspects}

    def groups(name: str) -> set[frozenset[int]] | None:
        a = by[name]
        return {frozenset(r) for r, _ in a.groups} if a.status == "differ" else None

    return {
        "compile_ids_differ": by["compile_ids"].status == "differ",
        "cache": groups("cache"),
        "collectives": groups("collectives"),
        "tensor_meta": groups("tensor_meta"),
        "execution_order_differs": by["execution_order"].status == "differ",
    }


@pytest.mark.slow
@pytest.mark.parametrize("folder", [BRANCH2, SHAPE3], ids=lambda p: p.name)
def test_divergence_groups_match_tlparse(folder, tmp_path):
    (job,), _ = find_jobs(folder)
    assert ours(job) == tlparse_groups(folder, tmp_path / "tl")


# -- the app -------------------------------------------------------------------------------------------
async def test_R_on_a_folder_of_logs_shows_the_groups(tmp_path):
    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.ranks import RanksScreen
    from magi_tui.ui.screens.runs import RunsScreen
    from tests.support.pilot import screen_text, wait_for

    app = MagiApp(BRANCH2)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2,
                       what="the runs list")
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, RanksScreen) and app.screen.loaded, what="the ranks view")
        text = screen_text(app)
        assert "DIVERGED: rank(s) 1 differ from rank 0" in text
        assert "compile-id sequence: ranks disagree: rank(s) 0 | rank(s) 1" in text
        assert "1 job(s), 1 diverged" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="back on the runs list")


def test_hostile_artifacts_are_no_traceback(tmp_path, capsys):
    """Rank 1's artifacts rewritten: a schedule that is not a list, runtimes of Infinity / NaN, outputs that
    are not a list, an execution order of numbers, op names with markup and escapes (md5s no longer match:
    the records are kept and counted malformed)."""
    logs = _logs(SHAPE3)
    folder = _copy(tmp_path / "job", {0: logs[0], 1: logs[1]})
    p = next(folder.glob("*rank_1_*.log"))
    text = p.read_text()
    text = text.replace('\t"torch.ops._c10d_functional.all_reduce_.default",', '\t{"op": "[bold]x\\u001b[31m"},', 1)
    text = text.replace('"estimated_runtime_ns": 0,', '"estimated_runtime_ns": Infinity,', 1)
    text = text.replace('"estimated_runtime_ns": 0,', '"estimated_runtime_ns": NaN,', 1)
    text = text.replace('\t"outputs": [', '\t"outputs": {"x": [', 1)
    text = text.replace('\t"name": "extern_kernels.mm",', '\t"name": "[red]mm\\u202e",', 1)
    p.write_text(text)
    assert main(["ranks", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "Traceback" not in out and "\x1b" not in out and "\u202e" not in out
    assert "collective operation sequence: ranks disagree" in out
    assert main(["ranks", str(folder), "--json"]) == 1
    json.loads(capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.parametrize("folder", [BRANCH2, SHAPE3], ids=lambda p: p.name)
def test_each_rank_reads_as_tlparse_reads_it(folder, tmp_path):
    """Per rank, the facts of tlparse's report on that rank's log equal those of the job's rank run:
    compile ids with attempts, graph breaks, restarts, failures, cache, recompiles."""
    from tests.torchtrace.oracle import model_facts, run_tlparse, tlparse_facts

    (job,), _ = find_jobs(folder)
    for r in job.ranks:
        tl = tlparse_facts(run_tlparse(r.run.path, tmp_path / f"rank_{r.rank}"))
        # the job read its ranks streamed (no event list): the facts come from the rank's log read whole
        assert r.run.events == [] and r.run.event_count > 0
        ours = model_facts(RunModel(r.run.path).load())
        assert sorted(ours.compile_ids) == sorted(tl.compile_ids)
        assert (ours.graph_breaks, ours.restarts, ours.failures, ours.cache, ours.recompiles) == \
            (tl.graph_breaks, tl.restarts, tl.failures, tl.cache, tl.recompiles)
