"""Changes to try for a run's recompiles and graph breaks: ``magi-tui fix``'s candidates (issue 23).

Triage explains each recompile and graph break; this module turns that explanation into changes that
need no code edit, each spelt as the line a user would apply, so ``magi-tui fix`` can re-run the program
with it and prove (or refute) it. Each candidate carries

* ``env``: environment variables torch 2.13 reads itself (``TORCH_COMPILE_DYNAMIC_SOURCES``,
  ``TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS``, ``TORCH_COMPILE_OVERRIDE_DYNAMO_CONFIGS``), empty when torch has
  no variable for the setting;
* ``config``: the same setting as Python lines (``torch._dynamo.config.capture_scalar_outputs = True``);
* ``patch``: a unified diff that puts those lines into the user's script after its ``import torch``, the
  code change that makes the proven setting permanent;
* ``hooks``: what the trial runner sets before the program starts when torch has no variable
  (``reorderable_logging_functions`` holds callables: ``builtins.print``).

What each switch does was checked on small programs under torch 2.13 (tests/fix/programs): a dynamic
source entry fixes a size recompile of a positional or keyword tensor, also with automatic dynamic
shapes off; it does nothing for a float (``assume_static_by_default=False`` does); a storm of
``input_ids`` recompiles needs ``attention_mask`` too, which no reason names: a trial's remaining
recompiles are read and the entry grown (:func:`refine`). Pure Python: no torch, no files but the
user's script for the patch.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from magi_tui.model.analysis.checks import Analysis, BreakEntry, RecompileInfo
from magi_tui.model.analysis.worklist import break_id, frames_by_key, recompile_id

#: recompile kinds a dynamic source entry answers (a stride change is a layout, not a size)
_DYNAMIC_SOURCE_KINDS = ("size", "scalar")
#: recompile kinds dynamic-from-the-start (``assume_static_by_default=False``) answers
_DYNAMIC_KINDS = ("size", "scalar", "float", "shape_range")
DYNAMIC_SOURCES_ENV = "TORCH_COMPILE_DYNAMIC_SOURCES"
OVERRIDE_DYNAMO_ENV = "TORCH_COMPILE_OVERRIDE_DYNAMO_CONFIGS"


class Candidate(Struct):
    """One change to try."""

    key: str                                         # what it is, stable: "dynamic_sources", "capture_scalar_outputs"
    change: str                                      # one line for people
    env: dict[str, str] = field(default_factory=dict)
    config: list[str] = field(default_factory=list)
    hooks: dict[str, Any] = field(default_factory=dict)   # trial-only settings torch has no variable for
    targets: list[str] = field(default_factory=list)     # worklist ids it should resolve
    patch: str | None = None
    #: a change to the user's code (``pass scale as a 0-d tensor``): ``fix`` changes settings only, so it is
    #: shown, never run, and never called proven here (:attr:`not_run`)
    code: str | None = None
    #: why it is not run by ``fix`` (a code edit), or None: it is a setting ``fix`` tries
    not_run: str | None = None

    def env_lines(self) -> list[str]:
        return [f"{k}={_sh_quote(v)}" for k, v in self.env.items()]

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "change": self.change, "env": dict(self.env), "config": list(self.config),
                "patch": self.patch, "targets": list(self.targets), "code": self.code}


def _sh_quote(v: str) -> str:
    if re.fullmatch(r"[\w.,:/=@%+-]+", v):
        return v
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`") + '"'


# -- derivation ------------------------------------------------------------------------------------
def _dynamic_entries(r: RecompileInfo) -> list[str]:
    out = list(r.dynamic_sources)
    for p in r.reasons:
        if p.kind in _DYNAMIC_SOURCE_KINDS and p.dynamic_source and not (p.subject or "").startswith("___stack"):
            out.append(p.dynamic_source)
    return out


def dynamic_sources_candidate(entries: list[str], targets: list[str]) -> Candidate:
    value = ",".join(sorted(dict.fromkeys(entries)))
    return Candidate(
        "dynamic_sources", f"compile {value} dynamic from the first call (dynamic sources)",
        env={DYNAMIC_SOURCES_ENV: value},
        config=[f'torch.compiler.config.dynamic_sources = "{value}"'], targets=targets)


def derive(a: Analysis) -> list[Candidate]:
    """Candidates for the run's recompiles and graph breaks, narrowest first; none when nothing in it has
    a change that needs no code edit."""
    frames = frames_by_key(a)
    out: list[Candidate] = []

    breaks_by: dict[str, list[BreakEntry]] = {}
    for b in a.worklist:
        text = " ".join([b.gb_type or "", b.reason or "", b.explanation or "", *b.hints])
        if "capture_scalar_outputs" in text or "Tensor.item()" in text:
            breaks_by.setdefault("capture_scalar_outputs", []).append(b)
        elif "capture_dynamic_output_shape_ops" in text or "dynamic output shape" in text.lower():
            breaks_by.setdefault("capture_dynamic_output_shape_ops", []).append(b)
        elif "reorderable_logging_functions" in text and re.search(r"`print`|\bprint\(", text + (b.source_line or "")):
            breaks_by.setdefault("reorderable_print", []).append(b)

    # recompiles of a value computed before an .item() break go with the break
    stack_float = [recompile_id(r, frames) for r in a.recompiles
                   if r.primary is not None and (r.primary.subject or "").startswith("___stack")]

    if "capture_scalar_outputs" in breaks_by:
        out.append(Candidate(
            "capture_scalar_outputs", "keep .item() in the graph (capture scalar outputs)",
            env={"TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS": "1"},
            config=["torch._dynamo.config.capture_scalar_outputs = True"],
            targets=[break_id(b) for b in breaks_by["capture_scalar_outputs"]] + stack_float))
    if "capture_dynamic_output_shape_ops" in breaks_by:
        out.append(Candidate(
            "capture_dynamic_output_shape_ops", "keep ops with data-dependent output shapes in the graph",
            env={"TORCHDYNAMO_CAPTURE_DYNAMIC_OUTPUT_SHAPE_OPS": "1", "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS": "1"},
            config=["torch._dynamo.config.capture_dynamic_output_shape_ops = True",
                    "torch._dynamo.config.capture_scalar_outputs = True"],
            targets=[break_id(b) for b in breaks_by["capture_dynamic_output_shape_ops"]]))
    if "reorderable_print" in breaks_by:
        out.append(Candidate(
            "reorderable_print", "let Dynamo move print() after the graph (reorderable logging functions)",
            config=["torch._dynamo.config.reorderable_logging_functions.add(print)"],
            hooks={"reorderable_logging_functions": ["builtins.print"]},
            targets=[break_id(b) for b in breaks_by["reorderable_print"]]))

    dyn_entries: list[str] = []
    dyn_targets: list[str] = []
    wide_targets: list[str] = []
    for r in a.recompiles:
        p = r.primary
        if p is None or (p.subject or "").startswith("___stack"):
            continue
        rid = recompile_id(r, frames)
        entries = _dynamic_entries(r)
        if entries and p.kind in _DYNAMIC_SOURCE_KINDS:
            dyn_entries += entries
            if rid not in dyn_targets:
                dyn_targets.append(rid)
        if p.kind in _DYNAMIC_KINDS and rid not in wide_targets:
            wide_targets.append(rid)
    if dyn_entries:
        out.append(dynamic_sources_candidate(dyn_entries, dyn_targets))
    # a float compiled as a constant: the setting torch 2.13 reads (TORCH_COMPILE_DYNAMIC_SOURCES does not make
    # a float dynamic: tests/advice proves it), and the code change, shown but not run (docs/HEADLESS.md, Advice)
    floats = [r for r in a.recompiles if r.primary is not None and r.primary.kind == "float"
              and not (r.primary.subject or "").startswith("___stack")]
    if floats:
        out.append(Candidate(
            "specialize_float", "trace Python floats as dynamic values, not constants (specialize_float=False)",
            env={OVERRIDE_DYNAMO_ENV: ">=0:specialize_float=False"},
            config=["torch._dynamo.config.specialize_float = False"],
            targets=list(dict.fromkeys(recompile_id(r, frames) for r in floats))))
        from magi_tui.model.analysis.guards import user_expr

        names = list(dict.fromkeys(user_expr(r.primary.subject) or "the float" for r in floats if r.primary))
        arg = names[0]
        out.append(Candidate(
            "float_as_tensor", f"pass {arg} as a 0-d tensor (torch.tensor({arg})) instead of a Python float",
            targets=list(dict.fromkeys(recompile_id(r, frames) for r in floats)),
            code=f"at the call: f(..., torch.tensor({arg})) in place of f(..., {arg}); one compile serves every value",
            not_run="not proven here: a code edit (magi-tui fix runs settings only); on torch 2.13 it removes "
                    "every float recompile of a real program (tests/advice, docs/HEADLESS.md Advice)"))
    if wide_targets:
        out.append(Candidate(
            "assume_dynamic", "compile every size and number dynamic from the first call (dynamic=True)",
            env={OVERRIDE_DYNAMO_ENV: ">=0:assume_static_by_default=False"},
            config=["torch._dynamo.config.assume_static_by_default = False"], targets=wide_targets))
    return out


#: ``check_tensor(L['kwargs']['attention_mask'], Tensor, ..., size=[1, 6], stride=[6, 1])`` in guards.txt
_CHECK_TENSOR = re.compile(r"check_tensor\((?P<src>L\[[^,]*?\](?:\[[^,]*?\]|\.\w+)*)\s*,.*?\bsize=\[(?P<size>[^\]]*)\]")


def tensor_sizes(guard_lines: list[str]) -> dict[str, list[str]]:
    """Frame inputs -> their sizes as one cache entry's guards check them (parameters and buffers under
    ``self`` left out: they are not what changes)."""
    out: dict[str, list[str]] = {}
    for ln in guard_lines:
        m = _CHECK_TENSOR.search(ln)
        if m and not m.group("src").startswith("L['self']"):
            out.setdefault(m.group("src"), [x.strip() for x in m.group("size").split(",")])
    return out


def siblings(entry: str, entries: list[dict[str, list[str]]]) -> list[str]:
    """Dynamic source entries for the inputs whose size at the same dimension equals ``entry``'s in the
    same cache entry (an ``attention_mask`` as long as the ``input_ids``): left static, they specialise
    the dimension back."""
    src, _, dim = entry.rpartition(":")
    if not src or not dim.isdigit():
        return []
    d = int(dim)
    out: list[str] = []
    for sizes in entries:
        mine = sizes.get(src)
        if not mine or len(mine) <= d or mine[d] in ("0", "1") or not mine[d].isdigit():
            continue
        for other, sz in sizes.items():
            if other != src and len(sz) > d and sz[d] == mine[d] and f"{other}:{d}" not in out:
                out.append(f"{other}:{d}")
    return out


def refine(c: Candidate, tried: Analysis, guards: list[list[str]] | None = None) -> Candidate | None:
    """A dynamic-sources candidate grown by the sources its own trial still recompiled on, else by the
    inputs of the same length that specialised a source back (``guards``: the trial's guard files, one
    list of lines per cache entry), or None when there is nothing new to add."""
    if c.key != "dynamic_sources":
        return None
    have = c.env.get(DYNAMIC_SOURCES_ENV, "").split(",")
    more = [e for r in tried.recompiles for e in _dynamic_entries(r) if e not in have]
    if not more and guards:
        sizes = [tensor_sizes(g) for g in guards]
        again = [e for r in tried.recompiles for e in _dynamic_entries(r) if e in have]
        more = [s for e in dict.fromkeys(again) for s in siblings(e, sizes) if s not in have]
    if not more:
        return None
    grown = dynamic_sources_candidate(have + more, c.targets)
    return grown


def combine(cands: list[Candidate]) -> Candidate:
    """One candidate with every setting of ``cands`` (dynamic sources joined, override rules joined)."""
    env: dict[str, str] = {}
    config: list[str] = []
    hooks: dict[str, Any] = {}
    targets: list[str] = []
    for c in cands:
        for k, v in c.env.items():
            if k in env and env[k] != v:
                sep = ";" if k == OVERRIDE_DYNAMO_ENV else ","
                v = sep.join(dict.fromkeys(env[k].split(sep) + v.split(sep)))
            env[k] = v
        config += [ln for ln in c.config if ln not in config]
        for k, v in c.hooks.items():
            hooks[k] = list(dict.fromkeys([*hooks.get(k, []), *v]))
        targets += [t for t in c.targets if t not in targets]
    if DYNAMIC_SOURCES_ENV in env:
        value = ",".join(sorted(set(env[DYNAMIC_SOURCES_ENV].split(","))))
        env[DYNAMIC_SOURCES_ENV] = value
        config = [ln for ln in config if not ln.startswith("torch.compiler.config.dynamic_sources")]
        config.append(f'torch.compiler.config.dynamic_sources = "{value}"')
    return Candidate("+".join(c.key for c in cands), " + ".join(c.change for c in cands), env, config, hooks,
                     targets)


# -- the patch ---------------------------------------------------------------------------------------
_IMPORT_TORCH = re.compile(r"^(import torch\b|from torch\b)")


def patched(script: str | Path | None, lines: list[str]) -> tuple[list[str], list[str]] | None:
    """``script``'s lines before and after adding ``lines`` right after its first top-level ``import torch``
    (else ``import torch`` and the lines after its docstring / ``__future__`` imports); None without a
    readable script or lines."""
    if not script or not lines:
        return None
    try:
        text = Path(script).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    old = text.splitlines(keepends=True)
    if old and not old[-1].endswith("\n"):
        old[-1] += "\n"
    at = next((i + 1 for i, ln in enumerate(old) if _IMPORT_TORCH.match(ln)), None)
    add = [ln + "\n" for ln in lines]
    if at is None:
        at = _after_header(old)
        add = ["import torch\n", *add]
    return old, old[:at] + add + old[at:]


def config_patch(script: str | Path | None, lines: list[str]) -> str | None:
    """The unified diff of :func:`patched` (``patch -p1`` applies it in the script's folder)."""
    both = patched(script, lines)
    if both is None:
        return None
    name = Path(str(script)).name
    return "".join(difflib.unified_diff(both[0], both[1], f"a/{name}", f"b/{name}", n=2))


def _after_header(lines: list[str]) -> int:
    """Index after a module docstring and ``from __future__`` imports (a best effort on the text)."""
    i = 0
    if lines and lines[0].startswith("#!"):
        i = 1
    if i < len(lines) and lines[i].lstrip().startswith(('"""', "'''")):
        q = lines[i].lstrip()[:3]
        if lines[i].count(q) >= 2:
            i += 1
        else:
            i += 1
            while i < len(lines) and q not in lines[i]:
                i += 1
            i += 1
    while i < len(lines) and lines[i].startswith("from __future__"):
        i += 1
    return min(i, len(lines))


# -- the result, as the CLI and the app show it ------------------------------------------------------
def _n(v: Any) -> str:
    return "?" if v is None else str(v)


def _secs(v: Any) -> str:
    return "?" if not isinstance(v, (int, float)) else f"{v:.2f}s"


def _outputs(equal: Any) -> str:
    """The table's outputs column: equal, DIFFER, or — (not run)."""
    return "—" if equal is None else ("equal" if equal else "DIFFER")


def fix_lines(obj: dict[str, Any], width: int = 60) -> list[tuple[str, str, int | None]]:
    """``magi-tui fix``'s result (its JSON) as ``(style, text, candidate index)`` lines: the baseline, a table
    (change, breaks / recompiles / compile time before → after, outputs, kept; best first), then per
    candidate why, its env and config lines, its run, and the best one's patch. Styles: head, add (kept),
    del (rejected), dim, warn."""
    out: list[tuple[str, str, int | None]] = []
    b = obj.get("baseline") or {}
    cands = [c for c in obj.get("candidates") or [] if isinstance(c, dict)]
    best = obj.get("best")
    if b:
        out.append(("head", f"baseline: {_n(b.get('graph_breaks'))} graph break(s), {_n(b.get('recompiles'))} "
                            f"recompile(s), compile {_secs(b.get('compile_s'))}, exit {_n(b.get('exit_code'))}  "
                            f"({_n(obj.get('runs'))} run(s))", None))
    ref = obj.get("reference")
    nondeterministic = isinstance(ref, dict) and ref.get("deterministic") is False
    if nondeterministic:
        assert isinstance(ref, dict)
        out.append(("warn", f"nondeterministic: two runs of the program as it is disagree ({ref.get('why')}): no "
                            "change can be proven by comparing outputs, so none was tried", None))
        out.append(("dim", "  moved (the first run -, the second +):", None))
        out.extend(("dim", f"    {m}", None) for m in ref.get("moved") or [])
        for m in (ref.get("numbers_moved") or [])[:5]:
            if isinstance(m, dict):
                out.append(("dim", f"    number {m.get('index')}: {m.get('first')} then {m.get('second')}", None))
    elif isinstance(ref, dict):
        moved = ref.get("numbers_changed") or 0
        out.append(("dim", "reference: the baseline ran twice and printed the same numbers"
                           + (f" within the tolerances ({moved} moved, at most {ref.get('max_abs_diff'):.3g})"
                              if moved and isinstance(ref.get("max_abs_diff"), (int, float)) else ""), None))
    for a in obj.get("advice") or []:
        out.append(("warn", f"→ {a}", None))
    if cands and b:
        w = min(width, max(len("change"), *(len(str(c.get("change"))) + 6 for c in cands)))
        out.append(("head", f"{'change':<{w}}  {'breaks':>7}  {'recompiles':>10}  {'compile':>13}  {'outputs':<8} kept",
                    None))
        for i, c in enumerate(cands):
            name = ("best: " if best is not None and c == best else "") + str(c.get("change"))
            if len(name) > w:
                name = name[:w - 1] + "…"
            out.append(("add" if c.get("kept") else "del",
                        f"{name:<{w}}  {_n(b.get('graph_breaks')) + '→' + _n(c.get('graph_breaks')):>7}  "
                        f"{_n(b.get('recompiles')) + '→' + _n(c.get('recompiles')):>10}  "
                        f"{_secs(b.get('compile_s')) + '→' + _secs(c.get('compile_s')):>13}  "
                        f"{_outputs(c.get('outputs_equal')):<8} {'yes' if c.get('kept') else 'no'}", i))
        for i, c in enumerate(cands):
            is_best = best is not None and c == best
            out.append(("", "", None))
            why = str(c.get("why"))
            verdict = "kept" if c.get("kept") else "rejected" if c.get("tried") is not False else "not run"
            if verdict == "not run" and why.startswith("not tried: "):
                why = why[len("not tried: "):]
            out.append(("add" if c.get("kept") else "del",
                        ("best: " if is_best else "") + f"{c.get('change')} — {verdict}: {why}", i))
            for k, v in (c.get("env") or {}).items():
                out.append(("", f"  env:    {k}={_sh_quote(str(v))}", i))
            for ln in c.get("config") or []:
                out.append(("", f"  config: {ln}", i))
            if c.get("code"):
                out.append(("", f"  code:   {c['code']}", i))
            if c.get("run"):
                out.append(("dim", f"  run:    {c['run']}", i))
            if is_best and c.get("patch"):
                # a patch is printed as a fix only when its own run proved it (issue 31.7); else why not
                if c.get("patch_proven"):
                    out.append(("dim", f"  patch (proven: its own run, {c.get('patch_why')}):", i))
                    out.extend(("dim", "    " + ln, i) for ln in str(c["patch"]).splitlines())
                else:
                    why = c.get("patch_why") or "its own run was not made"
                    out.append(("warn", f"  patch not proven: {why} (the setting above is what was proven)", i))
    if best is None and not obj.get("error"):
        out.append(("warn", "no change can be proven: the baseline is nondeterministic" if nondeterministic else
                    "no proven change" + (": nothing to try" if not cands else ""), None))
    if obj.get("error"):
        out.append(("del", f"could not fix: {obj['error']}", None))
    for n in obj.get("notes") or []:
        out.append(("dim", f"note: {n}", None))
    return out


# -- fix.json, read back: typed and bounded (issue 32.6) ----------------------------------------------------
