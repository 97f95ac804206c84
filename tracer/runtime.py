"""What the compiled code cost at run time: calls and seconds per compiled entry, and a frame's eager calls.

Torch counts compiles, not calls: once Dynamo has a cache entry, the C eval-frame runs it (or the original
code) with no Python in between. Two cheap taps tell the calls apart, and nothing else changes:

* every entry's code gets a prologue and an epilogue (Dynamo's bytecode hook may return a code object to
  use instead, and Dynamo's own ``bytecode_transformation`` rewrites it): ``enter()`` counts the call and
  notes the time, ``leave(value)`` adds the seconds and hands ``value`` back. The program computes the
  same values, raises the same exceptions (a call that raises is counted, its seconds are not);
* torch's guard-complete hook (``set_guard_complete_hook``, called after every cache lookup of a frame that
  has entries, with whether an entry's guards passed; it returns that answer unchanged, or the answer of
  the hook that was there before us) marks a *miss*. A miss that no new entry of that frame serves ran
  the frame eagerly: past the recompile limit (Dynamo then looks up the cache but never compiles), under
  an ``eager_on_recompile`` stance, or a recompile that was skipped. Which frame missed is learnt from the
  compile the miss started (its ``dynamo_start`` or recompile-limit warning on this thread, from the same
  call site); later misses from that call site are that frame's.

Not counted (said in the run's ``runtime.json``): calls of a frame Dynamo skipped whole (it has no entry,
so torch never looks it up again), calls that raise (their seconds), code Dynamo gives us that we cannot
rewrite (generators, an unknown Python version: the entry is listed with ``calls: null``).
Seconds are inclusive: an entry's time includes the resume functions and eager code it calls.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from time import perf_counter
from types import FrameType
from typing import Any, Callable

from magi_format.torch_mapping import ResetCounter, in_generation

#: the file the tracer writes this into (FORMAT part B: ``runtime.json`` beside ``timeline_events/``)
RUNTIME_VERSION = 1

_tls = threading.local()
#: Dynamo's callback (called from the eval frame, above the frame that called the compiled one)
_CALLBACK_FILE = os.path.join("_dynamo", "convert_frame.py")


class EntrySlot:
    """One compiled entry (a cache entry: one compile id of one frame)."""

    __slots__ = ("compile_id", "frame_key", "name", "file", "line", "calls", "seconds", "first", "counted")

    def __init__(self, compile_id: str | None, frame_key: str | None, code: Any, counted: bool) -> None:
        self.compile_id = compile_id
        self.frame_key = frame_key
        self.name = getattr(code, "co_name", None)
        self.file = getattr(code, "co_filename", None)
        self.line = getattr(code, "co_firstlineno", None)
        self.calls = 0
        self.seconds = 0.0
        self.first: float | None = None   # the first call's seconds: lazy work (compile, warm-up) lands there
        self.counted = counted


class _Pending:
    """A cache miss not yet explained: a compile that makes an entry of its frame, or an eager call."""

    __slots__ = ("site", "caller", "frame_key")

    def __init__(self, site: tuple, caller: Any) -> None:
        self.site = site
        self.caller = id(caller)    # not the frame: holding it would keep its locals (tensors) alive
        self.frame_key: str | None = None


class RuntimeCounters:
    """Counts for one tracing session. ``attach()`` / ``detach()`` the guard hook; ``instrument(code,
    new_code)`` from the bytecode hook; ``snapshot()`` for ``runtime.json``."""

    def __init__(self, framework_paths: tuple[str, ...] = ()) -> None:
        self.slots: list[EntrySlot] = []
        self.eager: dict[str, int] = {}
        self.generations = ResetCounter()  # compile ids after torch._dynamo.reset(): R<n>/…, as the mapping's
        self.eager_unattributed = 0
        self.hits = 0
        self.misses = 0
        self.site_frame: dict[tuple, str | None] = {}   # call site -> frame key (None: two frames share it)
        #: id(our counting code) -> (it, Dynamo's code). By id: a code object hashes its constants, and Dynamo's
        #: may hold a dict (``hash()`` raises ``TypeError: unhashable type: 'dict'``)
        self.originals: dict[int, tuple[Any, Any]] = {}
        self._prev_hook: Any = None
        self._attached = False
        self._lock = threading.Lock()
        here = os.path.dirname(os.path.abspath(__file__)) + os.sep
        self._skip_paths = tuple(framework_paths) + (here, os.path.dirname(os.path.abspath(logging.__file__)) + os.sep)

    # -- the guard-complete hook ---------------------------------------------------------------------
    def attach(self) -> bool:
        try:
            from torch._C._dynamo.eval_frame import set_guard_complete_hook
        except Exception:
            return False
        self._prev_hook = set_guard_complete_hook(self._guard_complete)
        self._attached = True
        return True

    def detach(self) -> None:
        if not self._attached:
            return
        self._attached = False
        try:
            from torch._C._dynamo.eval_frame import set_guard_complete_hook

            current = set_guard_complete_hook(self._prev_hook)
            if current is not None and getattr(current, "__self__", None) is not self:
                set_guard_complete_hook(current)   # someone replaced ours meanwhile: leave theirs
        except Exception:
            pass
        self.resolve_pending()

    def _guard_complete(self, cache_hit: bool) -> bool:  # (the parameter named as torch's hook type names it)
        hit = cache_hit
        prev = self._prev_hook
        if prev is not None:       # outside the try: what it raises reaches the program as before
            hit = bool(prev(hit))
        try:
            pending = getattr(_tls, "pending", None)
            if pending is not None:
                _tls.pending = None
                self._eager(pending)
            if hit:
                self.hits += 1
            else:
                self.misses += 1
                caller = sys._getframe(1)
                _tls.pending = _Pending(self._site(caller), caller)
        except Exception:
            pass
        return hit

    def _site(self, caller: Any) -> tuple:
        """Where the frame was called from; through ``torch.compile(fn)``'s wrapper, also which ``fn``."""
        code = caller.f_code
        site: tuple = (id(code), caller.f_lasti)
        if code.co_name == "compile_wrapper" and code.co_filename.startswith(self._skip_paths):
            try:
                site += (id(caller.f_locals.get("fn")),)
            except Exception:
                pass
        return site

    def _eager(self, pending: _Pending) -> None:
        key = pending.frame_key
        if key is None:
            key = self.site_frame.get(pending.site)
        with self._lock:
            if key is None:
                self.eager_unattributed += 1
            else:
                self.eager[key] = self.eager.get(key, 0) + 1

    def resolve_pending(self) -> None:
        pending = getattr(_tls, "pending", None)
        if pending is not None:
            _tls.pending = None
            self._eager(pending)

    def dynamo_start(self, md: dict[str, Any]) -> None:
        """A ``dynamo_start`` record: a compile (or a new generation after a reset) starts."""
        before = self.generations.resets
        self.generations.start(md)
        if self.generations.resets != before:
            with self._lock:
                self.site_frame.clear()  # reset() dropped every frame's entries: a call site's frame is new
        self.compile_started(md)

    def _spell(self, cid: str) -> str:
        return in_generation(cid, self.generations.resets)

    def compile_started(self, ids: dict[str, Any] | None) -> None:
        """On the compiling thread (a ``dynamo_start`` or a recompile-limit warning): the frame that called
        the frame being compiled is the one above Dynamo's callback (``convert_frame``); its call site is
        this frame's from now on, and a pending miss from there was this frame's."""
        if not ids or ids.get("frame_id") is None:
            return
        try:
            f: FrameType | None = sys._getframe(1)
            outer: FrameType | None = None
            while f is not None:
                if f.f_code.co_filename.endswith(_CALLBACK_FILE):
                    outer = f
                f = f.f_back
            caller = outer.f_back if outer is not None else None
        except Exception:
            return
        if caller is None:
            return
        key = self._spell(str(ids["frame_id"]))
        pending = getattr(_tls, "pending", None)
        site = self._site(caller)
        if pending is not None and pending.caller == id(caller) and pending.site == site:
            pending.frame_key = key     # the caller is on the stack: its id is its own (the site: a reused id)
        known = self.site_frame.get(site, key)
        self.site_frame[site] = key if known == key else None

    # -- the bytecode hook --------------------------------------------------------------------------
    def instrument(self, code: Any, new_code: Any, ids: dict[str, Any] | None) -> Any:
        """``new_code`` with a counting prologue and epilogue, or None (leave Dynamo's code as it is)."""
        cid = None if not ids else self._spell(f"{ids.get('frame_id')}/{ids.get('frame_compile_id')}")
        fkey = None if not ids else self._spell(str(ids.get("frame_id")))
        slot = EntrySlot(cid, fkey, code, counted=False)
        with self._lock:
            self.slots.append(slot)
        try:
            out = _rewrite(new_code, _enter_fn(slot, self), _leave_fn(slot))
            if out is not None:
                self.originals[id(out)] = (out, new_code)
        except Exception:
            return None
        slot.counted = out is not None
        return out

    # -- the result ---------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        self.resolve_pending()
        entries = [{"compile_id": s.compile_id, "frame_key": s.frame_key, "name": s.name, "file": s.file,
                    "line": s.line, "calls": s.calls if s.counted else None,
                    "seconds": round(s.seconds, 6) if s.counted else None,
                    "first_call_seconds": round(s.first, 6) if s.counted and s.first is not None else None}
                   for s in self.slots]
        return {"version": RUNTIME_VERSION, "source": "tracer", "entries": entries,
                "eager_calls": dict(self.eager), "eager_calls_unattributed": self.eager_unattributed,
                "cache_lookups": {"hits": self.hits, "misses": self.misses},
                "not_counted": ["calls of a frame Dynamo skipped whole (no cache entry: torch never looks it "
                                "up again)", "the seconds of a call that raised",
                                "seconds are inclusive: resume functions and eager code an entry calls"]}


def _enter_fn(slot: EntrySlot, counters: RuntimeCounters) -> Callable[[], None]:
    def enter() -> None:
        try:  # (runs inside the user's compiled code: nothing of ours may raise into it)
            slot.calls += 1
            pending = getattr(_tls, "pending", None)
            if pending is not None and pending.frame_key != slot.frame_key:
                _tls.pending = None     # a miss of another frame ran eagerly (and calls us)
                counters._eager(pending)
            elif pending is not None:
                _tls.pending = None     # the miss compiled this entry: a call it serves
            try:
                st = _tls.stack
            except AttributeError:
                st = _tls.stack = []
            st.append((slot, perf_counter()))
        except Exception:
            pass
    return enter


def _leave_fn(slot: EntrySlot) -> Callable[[Any], Any]:
    def leave(value: Any) -> Any:
        try:  # (runs inside the user's compiled code: it returns the value whatever happens here)
            t = perf_counter()
            st = getattr(_tls, "stack", ())
            while st:
                s, t0 = st.pop()
                if s is slot:
                    slot.seconds += t - t0
                    if slot.first is None:
                        slot.first = t - t0
                    break
        except Exception:
            pass
        return value
    return leave


# -- the rewrite --------------------------------------------------------------------------------------
_PREAMBLE = {"RESUME", "COPY_FREE_VARS", "MAKE_CELL", "NOP"}
_CO_GENERATOR_LIKE = 0x20 | 0x80 | 0x100 | 0x200   # generator, coroutine, iterable coroutine, async gen


def _rewrite(new_code: Any, enter: Any, leave: Any) -> Any:
    """Dynamo's transformed code with ``enter()`` first and ``return leave(value)`` at each return."""
    if new_code.co_flags & _CO_GENERATOR_LIKE or not (3, 11) <= sys.version_info[:2] <= (3, 13):
        return None
    from torch._dynamo import bytecode_transformation as bt
    from torch._dynamo.eval_frame import skip_code

    for fn in (enter, leave):   # called from compiled code: Dynamo must never try to compile them
        skip_code(fn.__code__)

    def transform(instructions: list, code_options: dict) -> None:
        i = 0
        while i < len(instructions) and instructions[i].opname in _PREAMBLE:
            i += 1
        prologue = [bt.create_load_const(enter, checked=False), *bt.create_call_function(0, True),
                    bt.create_instruction("POP_TOP")]
        first = instructions[i]
        for p in prologue:
            p.starts_line = first.starts_line
            p.positions = first.positions
            p.exn_tab_entry = None
        instructions[i:i] = prologue
        out: list = []
        for inst in instructions:
            if inst.opname == "RETURN_VALUE":
                out += bt.overwrite_instruction(inst, [bt.create_load_const(leave, checked=False),
                                                       *bt.create_swap(2), *bt.create_call_function(1, True),
                                                       bt.create_instruction("RETURN_VALUE")])
            elif inst.opname == "RETURN_CONST":
                val = inst.argval
                out += bt.overwrite_instruction(inst, [bt.create_load_const(leave, checked=False),
                                                       bt.create_load_const(val, checked=False),
                                                       *bt.create_call_function(1, True),
                                                       bt.create_instruction("RETURN_VALUE")])
            else:
                out.append(inst)
        instructions[:] = out

    code, _ = bt.transform_code_object(new_code, transform)
    return code
