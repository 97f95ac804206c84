"""A cache-key difference said in the user's terms: what they changed, not torch's component names.

:mod:`.cache_explain` names the components of a missed lookup's key whose hash differs from its nearest
lookup (``gm``, ``example_inputs[2]``, ``inductor_config[max_fusion_size]``, ``cache_key_tag``). A user
changed a line of their model, an input, a setting or an environment variable; this says which:

* ``gm`` (the graph) → "the graph changed: relu → sigmoid", the ops read from both keys' graph code (the
  place in the user's file is added by the caller, who can read the captured graph);
* ``example_inputs[i]`` → "input x: shape (4, 16) → (8, 16)" / "dtype float32 → float64", the input
  named from the AOT key's ``aot_config`` (the graph's input sources, in order) where it lists as many;
* ``cache_key_tag`` → ``TORCH_COMPILE_CACHE_KEY_TAG`` changed, its value never shown;
* ``inductor_config[k]`` → the setting with old → new; the keys ``torch.compile(mode=...)`` sets say the
  mode changed; a custom pass key says which pass;
* a value torch recorded cut (``...``), the same text on both sides → that the change is past what was
  recorded, never "x → x".
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from magi_format.lazyre import lazy_re

#: what ``torch.compile(mode=...)`` sets (``torch._inductor.list_mode_options``, torch 2.13)
MODE_KEYS = frozenset({"max_autotune", "coordinate_descent_tuning", "triton.cudagraphs", "max_autotune_pointwise",
                       "max_autotune_gemm"})
#: Inductor settings that hold a user's custom graph pass (``torch._inductor.config``)
PASS_KEYS = frozenset({"post_grad_custom_pre_pass", "post_grad_custom_post_pass", "joint_custom_pre_pass",
                       "joint_custom_post_pass", "pre_grad_custom_pass", "_pre_fusion_custom_pass",
                       "_post_fusion_custom_pass", "custom_partitioner_fn"})
#: components named in words (the rest: the component's name, old → new)
PLAIN = {
    "deterministic_algorithms": "torch.use_deterministic_algorithms",
    "deterministic_algorithms_settings": "torch.use_deterministic_algorithms (settings)",
    "grad_enabled": "grad mode (torch.no_grad / enable_grad)",
    "default_dtype": "torch.get_default_dtype()",
    "torch_version": "the torch build",
    "autograd_config": "AOTAutograd config (torch._functorch.config)",
    "aot_config": "AOTAutograd's inputs and options (aot_config)",
    "shape_env": "the symbolic shapes' guards (shape_env)",
}
_CONFIG = lazy_re(r"^(?P<which>inductor_config|fx_kwargs|system_info)\[(?P<key>[^\]]+)\]$")
_INPUT = lazy_re(r"^example_inputs\[(?P<i>\d+)\]$")
_DTYPE = lazy_re(r"dtype=torch\.(\w+)")
_SHAPE = lazy_re(r"shape=torch\.Size\(\[([^\]]*)\]\)")
_CALL = lazy_re(r"(?:^|\s)\w+ = ([A-Za-z_][\w.]*)\(")
_PICKLED_NAME = lazy_re(r"X[\x00-\xff]\x00\x00\x00([A-Za-z_][A-Za-z0-9_]{1,80})")
_SOURCE_PART = lazy_re(r"(?:local_name|member|index)='([^']{1,100})'")
_CUT = ("...", "…")


class Factor(Struct):
    """One thing that changed, in the user's words (``text``), from the components it covers."""

    kind: str                      # graph | input | env | mode | custom_pass | config | setting | unknown
    text: str
    components: list[str]
    old: str | None = None
    new: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "components": self.components, "old": self.old,
                "new": self.new}


def graph_ops(code: str | None) -> list[str]:
    """The calls of a graph's code, by their short name (``torch.ops.aten.sigmoid.default`` and
    ``y.sigmoid`` -> ``sigmoid``), in order."""
    out = []
    for target in _CALL.findall(code or ""):
        parts = [p for p in target.split(".") if p not in ("default", "Tensor", "Scalar", "self")]
        if parts:
            out.append(parts[-1])
    return out


def graph_change(old_code: str | None, new_code: str | None) -> tuple[list[str], list[str]]:
    """Ops only in the old graph, ops only in the new one (as multisets, in order)."""
    from collections import Counter

    a, b = graph_ops(old_code), graph_ops(new_code)
    ca, cb = Counter(a), Counter(b)
    gone, came = ca - cb, cb - ca
    return [o for o in dict.fromkeys(a) if gone[o]], [o for o in dict.fromkeys(b) if came[o]]


def input_names(aot_config: str | None) -> list[str]:
    """The graph's inputs in order, as the user's code names them (``self.lin.weight``, ``x``), read off
    the AOT key's ``aot_config`` (its list of input sources); [] when not recorded or cut."""
    if not aot_config:
        return []
    start = aot_config.find("[")
    if start < 0:
        return []
    names: list[str] = []
    depth = 0
    item: list[str] = []
    for ch in aot_config[start + 1:]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            names.append("".join(item))
            item = []
            continue
        item.append(ch)
    else:
        return []   # the list never closed: the text was cut
    if "".join(item).strip():
        names.append("".join(item))
    out = []
    for src in names:
        parts = [p for p in _SOURCE_PART.findall(src) if p not in ("_modules", "_parameters", "_buffers")]
        out.append(".".join(parts) if parts else "?")
    return out


def _is_cut(v: str | None) -> bool:
    return v is not None and v.rstrip().endswith(_CUT)


def _tensor_change(old: str | None, new: str | None) -> list[tuple[str, str, str]]:
    """(what, old, new) of a TensorMetadata's dtype and shape; [] when neither is what changed."""
    out = []
    for what, pat in (("dtype", _DTYPE), ("shape", _SHAPE)):
        a = pat.search(old or "")
        b = pat.search(new or "")
        if a and b and a.group(1) != b.group(1):
            if what == "shape":
                out.append((what, f"({a.group(1)})", f"({b.group(1)})"))
            else:
                out.append((what, a.group(1), b.group(1)))
    return out


def _pickled_setting(old: str, new: str) -> str | None:
    """A pickled config's setting at the first difference (the last name pickled before it), if the
    recorded text shows it."""
    p = 0
    while p < len(old) and p < len(new) and old[p] == new[p]:
        p += 1
    if p >= min(len(old), len(new)):
        return None
    names = _PICKLED_NAME.findall(old[:p])
    return names[-1] if names else None


def factors(differs: list[dict[str, Any]], names: list[str] | None = None, old_graph: str | None = None,
            new_graph: str | None = None) -> list[Factor]:
    """The differing components of a miss (``MissExplained.differs``: this lookup's ``value``, the nearest's
    ``nearest``) as factors in the user's terms. ``names``: the graph's inputs by position
    (:func:`input_names`); the graph codes: both lookups' (``Lookup.graph``)."""
    out: list[Factor] = []
    inputs: dict[tuple[str, str, str], list[str]] = {}
    input_comps: dict[tuple[str, str, str], list[str]] = {}
    mode: list[dict[str, Any]] = []
    for d in differs:
        comp, new, old = d["component"], d.get("value"), d.get("nearest")
        if old is not None and new is not None and old == new:
            # torch cut both values (or they print alike): the recorded text cannot tell what changed
            word = PLAIN.get(comp, comp)
            out.append(Factor("unknown", f"{word} changed, past what torch recorded (the recorded text is the "
                                         "same on both sides" + (": cut at 1,024 characters)" if _is_cut(new) else ")"),
                              [comp]))
            continue
        if old is None or new is None:
            out.append(Factor("unknown", f"{comp} is in {'this' if old is None else 'the earlier'} key only",
                              [comp], old, new))
            continue
        if comp == "gm":
            gone, came = graph_change(old_graph, new_graph)
            if gone or came:
                text = f"the graph changed: {', '.join(gone) or '(nothing)'} → {', '.join(came) or '(nothing)'}"
            else:
                text = "the graph changed (the same ops: a constant, an attribute or an argument)"
            out.append(Factor("graph", text, [comp], ", ".join(gone) or None, ", ".join(came) or None))
            continue
        if comp == "cache_key_tag":
            out.append(Factor("env", "TORCH_COMPILE_CACHE_KEY_TAG changed (value not shown)", [comp]))
            continue
        if comp in PASS_KEYS:
            out.append(Factor("custom_pass", f"custom pass {comp}: {_short(old)} → {_short(new)}", [comp], old, new))
            continue
        m = _INPUT.match(comp)
        if m:
            i = int(m.group("i"))
            who = names[i] if names and i < len(names) else f"#{i}"
            changes = _tensor_change(old, new)
            if not changes:
                out.append(Factor("input", f"input {who}: changed (not its dtype or shape)", [comp], old, new))
            for what, a, b in changes:
                inputs.setdefault((what, a, b), []).append(who)
                input_comps.setdefault((what, a, b), []).append(comp)
            continue
        m = _CONFIG.match(comp)
        if m and m.group("which") == "inductor_config":
            key = m.group("key")
            if key in MODE_KEYS:
                mode.append({"key": key, "old": old, "new": new, "comp": comp})
            elif key in PASS_KEYS:
                out.append(Factor("custom_pass", f"custom pass {key}: {_short(old)} → {_short(new)}", [comp], old, new))
            else:
                out.append(Factor("config", f"Inductor config {key}: {_short(old)} → {_short(new)}", [comp], old, new))
            continue
        if m and m.group("which") == "system_info":
            out.append(Factor("setting", f"the machine or its software ({m.group('key')}) changed", [comp], old, new))
            continue
        if comp == "autograd_config":
            which = _pickled_setting(old, new)
            out.append(Factor("config", "AOTAutograd config (torch._functorch.config) changed"
                                        + (f" near {which}" if which else ""), [comp]))
            continue
        word = PLAIN.get(comp)
        out.append(Factor("setting", f"{word or comp}: {_short(old)} → {_short(new)}", [comp], old, new))
    if mode:
        text = "the compile mode changed (torch.compile(mode=...): " + ", ".join(
            f"{d['key']} {_short(d['old'])} → {_short(d['new'])}" for d in mode) + ")"
        out.insert(0, Factor("mode", text, [d["comp"] for d in mode]))
    for (what, a, b), whom in inputs.items():
        label = "input" if len(whom) == 1 else "inputs"
        out.insert(0, Factor("input", f"{label} {', '.join(whom)}: {what} {a} → {b}", input_comps[(what, a, b)], a, b))
    order = {"graph": 0, "input": 1, "env": 2, "mode": 3, "custom_pass": 4, "config": 5, "setting": 6, "unknown": 7}
    out.sort(key=lambda f: order.get(f.kind, 9))
    return out


def component_label(comp: str, names: list[str] | None = None) -> str:
    """A key component's name in the user's terms, as :func:`factors` words its change (``gm`` -> "the
    graph", ``example_inputs[2]`` -> "input x", ``inductor_config[k]`` -> "Inductor config k"); torch's
    name follows in brackets where the words do not contain it."""
    if comp == "gm":
        return "the graph (gm)"
    if comp == "cache_key_tag":
        return "TORCH_COMPILE_CACHE_KEY_TAG (cache_key_tag)"
    m = _INPUT.match(comp)
    if m:
        i = int(m.group("i"))
        return f"input {names[i]} ({comp})" if names and i < len(names) else f"input #{i} ({comp})"
    if comp in PASS_KEYS:
        return f"custom pass {comp}"
    m = _CONFIG.match(comp)
    if m:
        key, which = m.group("key"), m.group("which")
        if which == "inductor_config":
            if key in MODE_KEYS:
                return f"compile mode: Inductor config {key}"
            return f"custom pass {key}" if key in PASS_KEYS else f"Inductor config {key}"
        return f"the machine or its software: {key}" if which == "system_info" else f"compile_fx's {key} (fx_kwargs)"
    word = PLAIN.get(comp)
    return f"{word} ({comp})" if word and comp not in word else (word or comp)


def shown_value(comp: str, value: str | None) -> str | None:
    """A component's value as it may be shown: ``TORCH_COMPILE_CACHE_KEY_TAG``'s never (it may be a secret);
    None stays None (the component is in one key only)."""
    if value is None:
        return None
    return "(value not shown)" if comp == "cache_key_tag" else value


def _short(v: str | None, width: int = 60) -> str:
    if v is None:
        return "(absent)"
    return v if len(v) <= width else v[:width] + "…"

