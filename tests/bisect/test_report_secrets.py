"""``magi-tui report`` never carries secrets (issue 32, item 1): a bisect whose program was given an API key,
a token, a password and a URL with credentials, run in an environment holding tokens, with a key written
into the files torch left beside the run, makes a bundle in which none of them appears (REPORT.md, its
``files/bisect.json`` and every copied file); REPORT.md says what was redacted and how much, the torch
settings are shown, the other variables by name, the home folder as ``~``. No torch: the run is a real
one kept in the repository (tests/torchtrace/logs/cuda_2_11)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from magi_tui.cli import main

RUN = (Path(__file__).resolve().parents[1] / "torchtrace" / "logs" / "cuda_2_11" / "runs" / "magi_depyf"
       / "run_20261124_205439")

API_KEY = "XYZ-very-secret-api-key-4242"
TOKEN = "tok3n-Value-on-the-command-line"
PASSWORD = "hunter2-correct-horse"
URL_PASSWORD = "urlPassw0rd"
HF = "hf_" + "QwErTy7UiOp3AsDf5GhJk9LzXc1VbNm2Pq"
ENV_SECRET = "env-only-secret-9f8e7d"
FILE_KEY = "sk-proj-" + "Fa1Ke2Ke3Y4" * 4
RANDOM = "q8Zr3Lm7Xv2Nb5Kt9Wc4Hs6Jd1"
SECRETS = [API_KEY, TOKEN, PASSWORD, URL_PASSWORD, HF, ENV_SECRET, FILE_KEY, RANDOM]


def _bisect_folder(tmp: Path, home: Path) -> Path:
    folder = tmp / "bisect_20261124_205500"
    shutil.copytree(RUN, folder / "magi_depyf" / RUN.name)
    run = folder / "magi_depyf" / RUN.name / "model_1_prog_rank_0"
    # what a program and torch may have written: a key in the reproducer's environment lines and traceback
    for f in run.rglob("*"):
        if f.name in ("fx_graph_runnable.py", "traceback.txt"):
            f.write_text(f.read_text() + f"\nos.environ['OPENAI_API_KEY'] = '{FILE_KEY}'\n"
                         f"# fetched from https://alice:{URL_PASSWORD}@data.example/set --token {TOKEN}\n")
    command = ["python", str(home / "proj" / "train.py"), "--api-key", API_KEY, f"--token={TOKEN}",
               f"password={PASSWORD}", f"https://alice:{URL_PASSWORD}@data.example/set", "--hf-token", HF,
               RANDOM, "--lr", "0.001", "--max-tokens", "128", "TORCH_LOGS=+dynamo"]
    bisect = {
        "reproduced": True, "mode": "exit", "command": command, "runs": 1, "graph_runs": 0,
        "torch_bisector_runs": None, "directory": str(folder), "notes": [f"saw {HF} in the output"],
        "error": None, "versions": {"python": "3.11.9"},
        "culprit": {"backend": "inductor", "layer": "Inductor", "subsystem": None,
                    "graph": {"run": str(run), "compile_id": "1/0", "found_by": "failed compile"}},
        "steps": [{"backend": None, "subsystem": None, "limit": None, "verdict": "reproduces", "seconds": 2.5,
                   "run": str(run), "change": "the program as it is",
                   "why": f"exited with code 1: 401 for https://alice:{URL_PASSWORD}@data.example/set"}],
    }
    (folder / "bisect.json").write_text(json.dumps(bisect))
    return folder


def test_report_bundle_holds_no_secret(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home" / "alice"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MY_SERVICE_TOKEN", ENV_SECRET)
    monkeypatch.setenv("TORCH_LOGS", "+dynamo")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(home / ".cache" / "inductor"))
    folder = _bisect_folder(tmp_path, home)
    out = tmp_path / "bug"
    assert main(["report", str(folder), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "wrote" in printed and "Replaced by [redacted]:" in printed

    files = [p for p in out.rglob("*") if p.is_file()]
    names = sorted(p.relative_to(out).as_posix() for p in files)
    assert "REPORT.md" in names and "files/bisect.json" in names and any(n.startswith("files/repro_") for n in names)
    for p in [*files]:
        data = p.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in data, (p.name, secret)
        assert str(home).encode() not in data, p.name  # the home folder is ~
    for secret in SECRETS:
        assert secret not in printed

    text = (out / "REPORT.md").read_text()
    # the line under the title: what was redacted, by kind and count, never a value
    head = text.splitlines()[2]
    assert head.startswith("> **Redaction:** Replaced by [redacted]:"), head
    for kind in ("secret option value", "secret setting value", "URL credential", "known token",
                 "random-looking value", "environment variable(s) listed by name only", "home folder written as ~"):
        assert kind in head, kind
    # the command keeps what is no secret
    assert "python ~/proj/train.py --api-key [redacted] --token=[redacted] password=[redacted] " \
           "https://[redacted]@data.example/set --hf-token [redacted] [redacted] --lr 0.001 --max-tokens 128 " \
           "TORCH_LOGS=+dynamo" in text
    # the environment: torch settings with values, the rest by name
    assert "TORCH_LOGS=+dynamo" in text and "TORCHINDUCTOR_CACHE_DIR=~/.cache/inductor" in text
    assert "`MY_SERVICE_TOKEN`" in text
    saved = json.loads((out / "files" / "bisect.json").read_text())
    assert saved["command"][2:4] == ["--api-key", "[redacted]"] and saved["directory"] == "."
    assert saved["steps"][0]["run"].startswith("magi_depyf/") and "[redacted]@data.example" in saved["steps"][0]["why"]
    repro = next(p for p in files if p.name.startswith("repro_")).read_text()
    assert "os.environ['OPENAI_API_KEY'] = '[redacted]'" in repro and "--token [redacted]" in repro
    assert "import torch" in repro  # the reproducer is otherwise the file torch wrote
