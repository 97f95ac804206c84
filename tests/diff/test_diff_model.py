"""The diff's model: line matching (valid opcodes, same counts as one ``SequenceMatcher``), one read
per side equal to the file view's lines, token-level change spans, and one noise rule for graphs and
guards (``model.guards.normalise_noise``)."""

from __future__ import annotations

import difflib
import random

import pytest

from magi_tui.model.analysis.diff import compute_diff, default_normalise, diff_files, intraline, opcodes, read_side
from magi_tui.model.analysis.guards import diff_guards, normalise_guard_line, normalise_noise
from magi_tui.model.sources.textfile import MAX_LINE_CHARS, TextFile
from tests.support.paths import COLD, FIXTURES

CF = FIXTURES / "recompile_explain" / "compiled_functions"


def _valid(a, b, ops) -> None:
    i = j = 0
    for tag, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (i, j)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))


def test_opcodes_cover_both_sides_and_match_only_equal_lines():
    rng = random.Random(7)
    for _ in range(2000):
        a = [rng.choice("abcdefgh") + str(rng.randrange(3)) for _ in range(rng.randrange(0, 25))]
        b = list(a)
        for _ in range(rng.randrange(0, 6)):
            r = rng.random()
            if r < 0.3 and b:
                del b[rng.randrange(len(b))]
            elif r < 0.6:
                b.insert(rng.randrange(len(b) + 1), rng.choice("abxyz") + "1")
            elif r < 0.8 and len(b) > 3:  # a block moved: anchors out of order on one side
                k = rng.randrange(len(b))
                block = b[k:k + 3]
                del b[k:k + 3]
                at = rng.randrange(len(b) + 1)
                b[at:at] = block
            elif b:
                b[rng.randrange(len(b))] = "changed"
        _valid(a, b, opcodes(a, b))


def test_a_moved_block_keeps_the_longest_run_in_order():
    """Unique lines anchor the match; when a block moved, the longest run in order on both sides
    stays equal and the moved block is removed on one side and added on the other."""
    a = [f"line {k}" for k in range(20)]
    b = a[5:15] + a[:5] + a[15:]  # lines 0-4 moved after line 14
    ops = opcodes(a, b)
    _valid(a, b, ops)
    equal = sum(i2 - i1 for t, i1, i2, _j1, _j2 in ops if t == "equal")
    assert equal == 15  # lines 5-19 (the longer run), not lines 0-4
    assert sum(i2 - i1 for t, i1, i2, _j1, _j2 in ops if t != "equal") == 5
    assert opcodes(a, a) == [("equal", 0, 20, 0, 20)] and opcodes([], []) == []


@pytest.mark.usefixtures("fixtures_dir")
def test_real_graph_pairs_count_as_one_sequence_matcher():
    graphs = sorted(COLD.glob("timeline_events/files/*/**/*graph*"))
    assert len(graphs) > 10
    for a_path, b_path in zip(graphs, graphs[1:]):
        a, _ = read_side(a_path)
        b, _ = read_side(b_path)
        ref = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        d = compute_diff(a, b)
        assert d.removed == sum(i2 - i1 for t, i1, i2, _j1, _j2 in ref if t != "equal")
        assert d.added == sum(j2 - j1 for t, _i1, _i2, j1, j2 in ref if t != "equal")


@pytest.mark.parametrize("text", ["", "x", "a\nb\n", "a\r\nb", "\n\n", "é\xff\nz\n",
                                  "short\n" + "y" * (MAX_LINE_CHARS + 5) + "\n" + "é" * 3000 + "\nend",
                                  "w" * 9000 + "\r\n" + "v" * 9000, "x\n" + "u" * 9000 + "\n"])
def test_one_read_gives_the_file_views_lines(tmp_path, text):
    p = tmp_path / "f.txt"
    p.write_bytes(text.encode("utf-8", "surrogateescape") if "\xff" not in text else
                  text.replace("\xff", "").encode() + b"\xff")
    lines, problem = read_side(p, tmp_path)
    tf = TextFile(p, root=tmp_path)
    assert problem is None and lines == tf.all_lines()


def test_changed_tokens_not_characters():
    a = "    %q : [num_users=1] = call_method[target=transpose](args = (%view, 1, 2), kwargs = {})"
    b = a.replace("num_users=1", "num_users=2")
    (la,), (rb,) = intraline(a, b)
    assert a[la[0]:la[1]] == "1" and b[rb[0]:rb[1]] == "2"
    a = "LEAF: check_tensor(L['a'], Tensor, torch.float32, device=None, requires_grad=False)"
    b = a.replace("float32", "float64")
    (la,), (rb,) = intraline(a, b)
    assert a[la[0]:la[1]] == "float32" and b[rb[0]:rb[1]] == "float64"
    # two unrelated lines paired in a hunk: nothing in common, nothing set off inside them
    assert intraline("        # File: /m/model.py:83 in forward, code: x = x + 1",
                     "        submod_0 = self.submod_0(l_x_, s77);  l_x_ = None") == ([], [])


def test_one_noise_rule_for_graphs_and_guards():
    guard = "LEAF: ___check_obj_id(G['__builtins_dict___31']['getattr'], 139698252714032), type=<class 'x'>"
    assert normalise_noise(guard) == "LEAF: ___check_obj_id(G['__builtins_dict___N']['getattr'], <id>), type=<class 'x'>"
    # triage compares entries of one process: an object id that changed is a real difference there
    assert "139698252714032" in normalise_guard_line(guard)
    graph = "        # File: /home/u/model.py:83 in forward, code: x = x + self.attn(self.norm1(x))"
    assert normalise_noise(graph) == graph.replace(":83 in", ":N in")
    assert normalise_noise("<built-in method check of GlobalStateGuard object at 0x7f0ddfc46270>").endswith("0x…>")
    assert normalise_noise("y: \"f32[s77, 128]\" = torch.float32") == "y: \"f32[s77, 128]\" = torch.float32"


@pytest.mark.usefixtures("fixtures_dir")
def test_noise_masked_leaves_the_dtype_change_of_a_recompile():
    a, b = CF / "toy_with_break" / "entry_0" / "guards.txt", CF / "toy_with_break" / "entry_1" / "guards.txt"
    assert default_normalise(a) and not default_normalise(COLD / "x" / "after_lifecycle_graph.txt")
    raw, _ = diff_files(a, b, normalise=False)
    masked, _ = diff_files(a, b)  # guards: masked by default
    assert masked.normalised and (masked.removed, masked.added) == (1, 1) and raw.removed == 4
    row = masked.rows[masked.hunks[0]]
    assert "torch.float64" in row.left and "torch.float32" in row.right
    # the same finding as triage's guard diff (one source of truth for the noise)
    gd = diff_guards(a.read_text().splitlines(), b.read_text().splitlines())
    assert ("torch.float64", "torch.float32") in gd.changes
    noise, _ = diff_files(CF / "forward" / "entry_0" / "guards.txt", CF / "forward" / "entry_1" / "guards.txt")
    assert noise.identical and noise.noise_only
