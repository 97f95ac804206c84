"""AOTInductor provenance logs map kernels to FX nodes as JIT logs do (issue 19.7). The log is a real
``aoti_compile_and_package`` with provenance tracking on: torch writes it outside any compile id
(tlparse's ``[-/-]``), its output code is the C++ wrapper (``graph_dump``), and its mapping is the same
``inductor_provenance_tracking_node_mappings`` a JIT compile writes. The reference is torch's mapping as
the log holds it."""

from __future__ import annotations

import json
import re
import sys

from magi_tui.model import RunModel
from magi_tui.model.analysis import provenance as pv
from tests.support import slow
from tests.support.paths import ROOT
from tests.torchtrace.logkit import RECORDED, records

AOT = RECORDED / "aot_provenance.log"
WRAPPER = "inductor_aot_wrapper_code.cpp"


def torch_mapping() -> dict:
    rec = next(r for r in records(AOT) if b'"inductor_provenance_tracking_node_mappings"' in r.split(b"\n", 1)[0])
    return json.loads(b"\n".join(ln[1:] for ln in rec.split(b"\n")[1:] if ln.startswith(b"\t")))


def test_metrics_lists_each_kernel_with_its_nodes_and_user_line():
    out = slow.run([sys.executable, "-m", "magi_tui", "metrics", str(AOT), "--json"], cwd=ROOT,
                   capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    [aot] = json.loads(out.stdout)["compiles"]
    assert aot["tlparse_id"] == "[-/-]" and aot["status"] == "ok"
    ours = {k["kernel"]: k for k in aot["provenance"]}
    want = torch_mapping()
    assert {k: v["post_grad"] for k, v in ours.items()} == want["cppCodeToPost"]
    fused = ours["cpp_fused_add_relu_1:3"]
    assert fused["pre_grad"] == ["add", "relu"]
    assert [re.sub(r"\s+", " ", u) for u in fused["user_lines"]] == \
        ["aot_provenance.py:15 return torch.relu(self.lin(x)) + 1"]


def test_p_and_k_walk_the_cpp_wrapper():
    run = RunModel(AOT).load()
    assert run.status == "ok" and not run.open_spans
    ev = next(e for e in run.events if WRAPPER in e.files)
    lines = pv.read_lines(run, ev, WRAPPER)
    call = next(i for i, s in enumerate(lines) if s.strip().startswith("cpp_fused_add_relu_1("))
    jump = pv.follow(run, ev, WRAPPER, call)
    assert not isinstance(jump, str), jump
    post = pv.read_lines(run, jump.event, jump.file)
    assert {pv.node_at(post, i) for i in jump.lines} == {"add", "relu"}
    back = pv.reverse(run, jump.event, jump.file, jump.lines[-1])
    assert not isinstance(back, str), back
    assert back.file == WRAPPER and "cpp_fused_add_relu_1" in back.note


def test_a_jit_log_has_no_compile_outside_its_ids():
    out = slow.run([sys.executable, "-m", "magi_tui", "metrics", str(RECORDED / "jit_reset.log"), "--json"],
                   cwd=ROOT, capture_output=True, text=True, timeout=120)
    ids = [(c["compile_id"], c["tlparse_id"]) for c in json.loads(out.stdout)["compiles"]]
    assert ids == [("0/0", "[0/0]"), ("0/1", "[0/1]"), ("R1/0/0", "[0/0_1]"), ("R1/1/0", "[1/0]")]
