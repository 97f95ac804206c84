"""The rank of each log of a multi-rank folder, in every file-name form torch and launchers write, and a
folder whose logs carry different ranks always a job (issue 33 item 5).

Real logs, renamed as torch, a launcher or a person would (README.md beside the jobs): ``late2`` (2 ranks on
gloo that compiled before ``init_process_group``: torch named each log without a rank and put ``"rank"``
into the later records only, past the first 64 KiB) and ``shape3`` (3 ranks, torch's own names). The records'
rank wins over the name, and a disagreement is said once per log; several logs of one rank are one rank.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from magi_tui.cli import main
from magi_tui.model.outputs.ranks import find_jobs
from magi_tui.model.sources.discovery import find_runs
from magi_tui.model.sources.torchtrace import log_rank, metadata_rank
from tests.torchtrace.jobkit import BRANCH2, JOBS, SHAPE3
from tests.torchtrace.jobkit import rank_logs as _logs

LATE2 = JOBS / "late2"


def _late2() -> dict[int, Path]:
    """rank -> its log in ``late2`` (named without a rank: by the records)."""
    return {metadata_rank(p, whole=True): p for p in sorted(LATE2.glob("*.log"))}


def _place(folder: Path, logs: dict[int, Path], name, gz: bool = False) -> dict[int, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    placed = {}
    for r, src in logs.items():
        dst = folder / (name(r) + (".gz" if gz else ""))
        if gz:
            with open(src, "rb") as i, gzip.open(dst, "wb") as o:
                shutil.copyfileobj(i, o)
        else:
            shutil.copyfile(src, dst)
        placed[r] = dst
    return placed


def _ranks(job) -> dict[int, str]:
    return {r.rank: Path(r.run.path).name for r in job.ranks}


def _aspect(job, name: str) -> str:
    return next(a.status for a in job.aspects if a.name == name)


def test_a_log_opened_before_init_process_group_has_its_rank_in_later_records_only():
    logs = sorted(LATE2.glob("*.log"))
    assert len(logs) == 2
    for p in logs:
        assert "rank" not in p.name
        assert metadata_rank(p) is None  # not in the first 64 KiB: the warm-up compiled before the group
        head = p.read_bytes()[:1 << 16]
        assert b'"rank":' not in head and p.stat().st_size > 1 << 16
    assert sorted(metadata_rank(p, whole=True) for p in logs) == [0, 1]
    # the runs list and a log opened alone label them as the job does (a log named without a rank is searched
    # past its head)
    assert sorted(f.name.rank for f in find_runs(LATE2)) == [0, 1]
    assert sorted(log_rank(p) for p in logs) == [0, 1]


FORMS = {
    "torch": lambda r: f"dedicated_log_torch_trace_rank_{r}_k2x9ab{r}q.log",    # mkstemp's random part
    "underscore": lambda r: f"dedicated_log_torch_trace_rank_{r}__pqub5m{r}.log",  # random part starting "_"
    "split": lambda r: f"dedicated_log_torch_trace_rank_{r}_k2_x9a{r}.log",      # random part holding "_"
    "launcher": lambda r: f"dedicated_log_torch_trace_rank_{r}.log",             # no random part
    "no_rank": lambda r: f"dedicated_log_torch_trace_q1w2e{r}r4.log",            # opened before the group
}


@pytest.mark.parametrize("gz", [False, True], ids=["log", "log.gz"])
@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("job", ["late2", "shape3"])
def test_every_name_form_makes_the_job(tmp_path, job, form, gz):
    logs = _late2() if job == "late2" else _logs(SHAPE3)
    placed = _place(tmp_path / job, logs, FORMS[form], gz)
    for r, p in placed.items():
        assert log_rank(p, whole=True) == r
    (j,), loners = find_jobs(tmp_path / job)
    assert loners == []
    assert _ranks(j) == {r: p.name for r, p in placed.items()}
    assert j.rank_notes == [] and j.superseded == []
    # the collective schedules were read and compared (not "not recorded")
    assert _aspect(j, "collectives") == "agree"
    assert j.divergent_ranks == ([] if job == "late2" else [2])


def test_names_that_disagree_with_the_records_the_records_win_said_once(tmp_path, capsys):
    """Rank 0's log named rank 1 and rank 1's named rank 0 (a launcher that renamed them wrongly)."""
    logs = _logs(SHAPE3)
    folder = tmp_path / "job"
    _place(folder, {0: logs[1], 1: logs[0]}, lambda r: f"dedicated_log_torch_trace_rank_{r}.log")
    (job,), _ = find_jobs(folder)
    assert _ranks(job) == {0: "dedicated_log_torch_trace_rank_1.log", 1: "dedicated_log_torch_trace_rank_0.log"}
    assert job.rank_notes == [
        "dedicated_log_torch_trace_rank_0.log: named rank 0, its records say rank 1 (the records' rank is used)",
        "dedicated_log_torch_trace_rank_1.log: named rank 1, its records say rank 0 (the records' rank is used)",
    ]
    # the runs list labels them as the job does
    assert {f.path.name: f.name.rank for f in find_runs(folder)} == {
        "dedicated_log_torch_trace_rank_0.log": 1, "dedicated_log_torch_trace_rank_1.log": 0}
    assert main(["ranks", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.count("named rank 0, its records say rank 1") == 1
    assert out.count("named rank 1, its records say rank 0") == 1
    assert main(["ranks", str(folder), "--json"]) == 0
    (doc,) = json.loads(capsys.readouterr().out)["jobs"]
    assert doc["rank_notes"] == job.rank_notes


def test_two_logs_named_one_rank_are_two_ranks_when_the_records_say_so(tmp_path):
    logs = _logs(SHAPE3)
    folder = tmp_path / "job"
    folder.mkdir()
    shutil.copyfile(logs[0], folder / "dedicated_log_torch_trace_rank_0_aaaa1111.log")
    shutil.copyfile(logs[1], folder / "dedicated_log_torch_trace_rank_0_bbbb2222.log")  # rank 1's, misnamed
    (job,), loners = find_jobs(folder)
    assert loners == [] and job.superseded == []
    assert _ranks(job) == {0: "dedicated_log_torch_trace_rank_0_aaaa1111.log",
                           1: "dedicated_log_torch_trace_rank_0_bbbb2222.log"}
    assert job.rank_notes == ["dedicated_log_torch_trace_rank_0_bbbb2222.log: named rank 0, its records say "
                              "rank 1 (the records' rank is used)"]


def test_several_logs_of_one_rank_are_one_rank_with_both_logs(tmp_path, capsys):
    """Rank 1 ran twice into the same folder (``branch2``'s rank 1, then ``shape3``'s, recorded 20 s later):
    one rank 1, its newest log compared, the other one listed once."""
    folder = tmp_path / "job"
    folder.mkdir()
    old = BRANCH2 / _logs(BRANCH2)[1].name
    new = _logs(SHAPE3)[1]
    for p in (_logs(SHAPE3)[0], old, new):
        shutil.copyfile(p, folder / p.name)
    (job,), loners = find_jobs(folder)
    assert loners == []
    assert _ranks(job) == {0: _logs(SHAPE3)[0].name, 1: new.name}
    assert job.superseded == [str(folder / old.name)]
    assert not job.diverged  # shape3's ranks 0 and 1 agree: the older log is not compared
    assert main(["ranks", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.count(old.name) == 1 and "each rank's newest is compared" in out


def test_a_folder_of_logs_with_different_ranks_is_always_a_job(tmp_path):
    """Different programs, each name form, a rank only in the records: different ranks are a job, and
    what differs says so."""
    late = _late2()
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copyfile(late[0], folder / late[0].name)  # no rank in its name nor in its head
    shutil.copyfile(_logs(BRANCH2)[1], folder / "dedicated_log_torch_trace_rank_1.log")
    with open(_logs(SHAPE3)[2], "rb") as i, gzip.open(folder / "dedicated_log_torch_trace_rank_2_zz9.log.gz", "wb") as o:
        shutil.copyfileobj(i, o)
    (folder / "notes.log").write_text("not a trace\n")
    (job,), loners = find_jobs(folder)
    assert loners == []
    assert sorted(_ranks(job)) == [0, 1, 2]
    assert job.diverged and _aspect(job, "collectives") == "differ"
    assert _aspect(job, "compile_ids") == "differ"  # late2's warm-up frame is on rank 0 only


def test_logs_without_any_rank_are_no_job(tmp_path):
    """Two single-process logs (no ``"rank"`` in any record, no rank in the name): not a job."""
    src = JOBS.parent / "logs" / "jit_reset.log"
    folder = tmp_path / "two"
    folder.mkdir()
    for n in ("dedicated_log_torch_trace_a1.log", "dedicated_log_torch_trace_b2.log"):
        shutil.copyfile(src, folder / n)
    assert metadata_rank(folder / "dedicated_log_torch_trace_a1.log", whole=True) is None
    jobs, loners = find_jobs(folder)
    assert jobs == [] and len(loners) == 2


def test_a_trace_folder_per_rank_is_one_job(tmp_path):
    """``TORCH_TRACE=<dir>/rank_<r>`` (a launcher's): each rank's folder holds its one log, under torch's name
    without a rank; beside them, a folder of another job keeps its own."""
    root = tmp_path / "trace"
    for r, p in _late2().items():
        _place(root / f"rank_{r}", {r: p}, lambda _r, p=p: p.name)
    _place(root / "other", {0: _logs(SHAPE3)[0], 1: _logs(SHAPE3)[1]}, FORMS["torch"])
    jobs, loners = find_jobs(root)
    assert loners == []
    by = {j.label: j for j in jobs}
    assert sorted(by) == ["other", "trace"]
    assert sorted(_ranks(by["trace"])) == [0, 1] and by["trace"].folder == str(root)
    assert _aspect(by["trace"], "collectives") == "agree" and not by["trace"].diverged
    assert sorted(_ranks(by["other"])) == [0, 1] and not by["other"].diverged
