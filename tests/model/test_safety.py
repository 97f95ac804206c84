"""Names come from the run and are data: they never lead outside the run directory, and never reach
the terminal as markup or escape sequences (FORMAT.md: names never carry paths)."""

from __future__ import annotations

import json
import os

import pytest

from magi_format.safepath import UnsafePath, is_inside, safe_join
from magi_format.text import literal
from magi_tui.cli import main
from magi_tui.model import RunModel, index_compiled_functions
from magi_tui.model.sources.layout import event_files, event_folder
from tests.support.timeline import ev_line, write_run


@pytest.fixture
def run_dir(tmp_path):
    d = tmp_path / "run"
    (d / "timeline_events" / "files").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("outside the run")
    return d


@pytest.mark.parametrize("parts", [
    ("..",), ("../secret.txt",), ("timeline_events", "..", "..", "secret.txt"), ("/etc/passwd",),
    ("timeline_events/../../secret.txt",), ("",), (".",), ("a\x00b",),
])
def test_safe_join_refuses_escapes(run_dir, parts):
    with pytest.raises(UnsafePath):
        safe_join(run_dir, *parts)


def test_safe_join_accepts_names_inside(run_dir):
    p = safe_join(run_dir, "timeline_events", "files")
    assert p == (run_dir / "timeline_events" / "files").resolve()
    assert safe_join(run_dir, "odd..name") == (run_dir / "odd..name").resolve()


def _reference(root, parts):
    """What safe_join / is_inside answered before they walked only below the root: everything resolved
    from ``/`` (the rule; the walk is a shortcut that must agree with it)."""
    base = root.resolve()
    try:
        target = base.joinpath(*parts).resolve()
    except (OSError, ValueError, RuntimeError):
        return "refused"
    return target if target == base or base in target.parents else "refused"


def _joined(root, parts):
    try:
        return safe_join(root, *parts)
    except UnsafePath:
        return "refused"


def test_resolving_below_the_root_agrees_with_resolving_it_all(run_dir, tmp_path):
    """Every short path through a tree of files, folders, links inside and outside, a dangling link, a
    loop, a missing name and a file used as a folder: ``safe_join`` and ``is_inside`` answer as resolving
    the whole path does (the shortcut lstat-s only the components below the root)."""
    files = run_dir / "timeline_events" / "files"
    (files / "0001_a").mkdir()
    (files / "0001_a" / "g.txt").write_text("graph")
    (files / "0001_a" / "sub").mkdir()
    (files / "0001_a" / "sub" / "x.py").write_text("x")
    (files / "0002_in").symlink_to(files / "0001_a")  # a link inside the run
    (files / "0003_out").symlink_to(tmp_path)  # a link leaving it
    (files / "0001_a" / "up").symlink_to("..")  # relative, inside
    (files / "0001_a" / "away").symlink_to("../../../..")  # relative, leaving
    (files / "0001_a" / "dangling").symlink_to(files / "nowhere")
    (files / "0001_a" / "loop").symlink_to(files / "0001_a" / "loop")
    names = ["timeline_events", "files", "0001_a", "0002_in", "0003_out", "g.txt", "sub", "x.py", "up", "away",
             "dangling", "loop", "missing", "secret.txt", "run"]
    import itertools

    checked = 0
    for n in range(1, 5):
        for parts in itertools.product(names, repeat=n):
            if n == 4 and parts[:2] != ("timeline_events", "files"):
                continue
            want = _reference(run_dir, parts)
            assert _joined(run_dir, parts) == want, parts
            # is_inside: the same path written out, below the root, as the readers pass it
            assert is_inside(run_dir, run_dir.resolve().joinpath(*parts)) == (want != "refused"), parts
            checked += 1
    # the joined forms (``a/b`` in one part) walk the same components
    for parts in (("timeline_events/files/0003_out/secret.txt",), ("timeline_events/files", "0002_in/g.txt")):
        assert _joined(run_dir, parts) == _reference(run_dir, parts), parts
    assert checked > 3000
    # a path given to is_inside may spell ``..`` after a link: resolved through the link, not by spelling
    deep = ("timeline_events", "files", "0001_a")
    for tail in itertools.product(["away", "up", "0003_out", "sub", ".."], repeat=3):
        path = run_dir.resolve().joinpath(*deep, *tail)
        assert is_inside(run_dir, path) == (_reference(run_dir, (*deep, *tail)) != "refused"), tail


def test_symlink_leaving_the_run_is_refused(run_dir, tmp_path):
    (run_dir / "timeline_events" / "files" / "link").symlink_to(tmp_path / "secret.txt")
    (run_dir / "inside.txt").write_text("x")
    (run_dir / "ok_link").symlink_to(run_dir / "inside.txt")
    with pytest.raises(UnsafePath):
        safe_join(run_dir, "timeline_events", "files", "link")
    assert safe_join(run_dir, "ok_link") == (run_dir / "inside.txt").resolve()
    assert not is_inside(run_dir, run_dir / "timeline_events" / "files" / "link")


def test_layout_refuses_event_and_file_names_that_leave_the_run(run_dir, tmp_path):
    lines = [
        ev_line(0, "../../../secret", files=["x.py"]),
        ev_line(1, "fullgraph_after_x", files=["../../../../secret.txt", "/etc/passwd", "sub/dir.py", "ok.py"]),
        ev_line(2, "subgraph_0_after_y", files=["g.txt"], subgraph="../../..", subgraph_index=0),
        ev_line(3, "fullgraph_after_link", files=["leak.txt"]),
    ]
    write_run(run_dir, lines)
    f1 = run_dir / "timeline_events" / "files" / "0001_fullgraph_after_x"
    f1.mkdir()
    (f1 / "ok.py").write_text("x")
    f3 = run_dir / "timeline_events" / "files" / "0003_fullgraph_after_link"
    f3.mkdir()
    (f3 / "leak.txt").symlink_to(tmp_path / "secret.txt")
    run = RunModel(run_dir).load()
    e0, e1, e2, e3 = run.events
    assert event_folder(run.path, e0) is None
    assert all(p is None and problem.startswith("refused") for _, p, problem in event_files(run.path, e0))
    got = {name: (p, problem) for name, p, problem in event_files(run.path, e1)}
    for bad in ("../../../../secret.txt", "/etc/passwd", "sub/dir.py"):
        assert got[bad][0] is None and got[bad][1].startswith("refused"), bad
    assert got["ok.py"][0] == (f1 / "ok.py").resolve()
    assert event_folder(run.path, e2) is None
    ((name, p, problem), _attrs) = event_files(run.path, e3)
    assert name == "leak.txt" and p is None and problem.startswith("refused")


def test_compiled_functions_index_leaves_out_links_outside_the_run(run_dir, tmp_path):
    outside = tmp_path / "elsewhere"
    (outside / "entry_0").mkdir(parents=True)
    (outside / "entry_0" / "guards.txt").write_text("LEAF: secret\n")
    cf = run_dir / "compiled_functions"
    (cf / "forward" / "entry_0" / "compiled_fns").mkdir(parents=True)
    (cf / "forward" / "entry_0" / "compiled_fns" / "__compiled_fn_1.py").write_text("# stub\n")
    (cf / "evil").symlink_to(outside, target_is_directory=True)
    (cf / "forward" / "entry_1").symlink_to(outside / "entry_0", target_is_directory=True)
    fns = index_compiled_functions(run_dir)
    assert [f.name for f in fns] == ["forward"]
    assert [e.index for e in fns[0].entries] == [0]


MARKUP = "[bold red]boom[/] \x1b[31mred\x1b[0m \x1b]0;title\x07 \x9b2J tab\there"


def test_markup_and_escapes_survive_the_model_unchanged(run_dir):
    write_run(run_dir, [ev_line(0, f"fullgraph_failed_{MARKUP}", lifecycle_name=MARKUP,
                                exception_type=MARKUP, exception_message=MARKUP)])
    run = RunModel(run_dir).load()
    (ev,) = run.events
    assert ev.name == f"fullgraph_failed_{MARKUP}"
    assert ev.lifecycle == MARKUP
    f = run.triage.first_failure
    assert f.exception_type == MARKUP and f.message == MARKUP
    assert run.attributes(ev)["exception_message"] == MARKUP


def test_literal_makes_control_characters_visible():
    out = literal(MARKUP)
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "\\x1b[31m" in out and "\\x07" in out and "\\x9b" in out
    assert "[bold red]boom[/]" in out  # markup is plain text on a plain terminal
    assert "\t" not in out and "tab\\x09here" in out  # one line: a tab is shown, not obeyed
    assert literal("a\nb") == "a\\x0ab" and literal("a\nb\tc", multiline=True) == "a\nb\tc"
    assert literal("\x7f\x00\r") == "\\x7f\\x00\\x0d" == literal("\x7f\x00\r", multiline=True)
    # bidi overrides and lone surrogates are shown, not obeyed (and never crash an encoder)
    assert literal("a\u202eb\u2066c\ud800") == "a\\u202eb\\u2066c\\ud800"
    assert literal("x" * 100, 10) == "x" * 9 + "…"


@pytest.mark.parametrize("json_flag", [False, True])
def test_cli_never_prints_raw_control_characters(tmp_path, capsys, json_flag):
    run_dir = tmp_path / "model_1_\x1b[2Jevil_rank_0"
    write_run(run_dir, [ev_line(0, f"fullgraph_before_{MARKUP}", lifecycle_name="x"),
                        ev_line(1, f"fullgraph_failed_{MARKUP}", lifecycle_name="x",
                                exception_type="E\x1b[5m", exception_message=MARKUP)])
    flag = ["--json"] if json_flag else []
    for cmd in ("runs", "triage"):
        main([cmd, str(run_dir), *flag])
        out, err = capsys.readouterr()
        for c in ("\x1b", "\x07", "\x9b"):
            assert c not in out and c not in err, (cmd, c)
        if json_flag:
            data = json.loads(out)
            row = data[0] if isinstance(data, list) else data
            text = json.dumps(row, ensure_ascii=False)
            assert "\x1b" not in text  # the escape is in the data, written as \u001b
            if cmd == "triage":
                assert row["first_failure"]["message"] == MARKUP  # round-trips unchanged
        else:
            assert "\\x1b" in out


def test_triage_text_names_files_without_following_links(run_dir, tmp_path):
    # a folder name that is a symlink to outside: the report shows the relative folder, never its content
    write_run(run_dir, [ev_line(0, "fullgraph_before_x", lifecycle_name="x"),
                        ev_line(1, "fullgraph_failed_x", lifecycle_name="x", files=["f.py"])])
    os.symlink(tmp_path, run_dir / "timeline_events" / "files" / "0001_fullgraph_failed_x")
    run = RunModel(run_dir).load()
    assert run.triage.first_failure.folder == "timeline_events/files/0001_fullgraph_failed_x"
    assert event_folder(run.path, run.events[1]) is None
