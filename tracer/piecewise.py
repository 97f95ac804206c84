"""A piecewise backend: split the Dynamo graph at chosen ops, run your FX passes on each piece, compile
each piece — the magi_compile / vLLM idea for plain ``torch.compile``, fully recorded.

Events (FORMAT.md part A §7): ``fullgraph_{before,after,failed}_piecewise_backend`` around the whole
call, ``fullgraph_*_graph_split`` (the split GraphModule after), for each compiled piece ``k``
``subgraph_k_{before,after,failed}_<pass>`` with the piece's graph before and after every pass, and
``fullgraph_*_compiler_compile`` (``graph_index`` = k) when the piece is compiled on its first call.
A pass that raises fails the backend (Dynamo then reports it, or falls back with ``suppress_errors``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from tracer.lifecycle import observe_lifecycle

Pass = Callable[[Any], Any]  # takes an fx.Graph (in place) or a GraphModule (may return a new one)


def _pass_name(p: Pass) -> str:
    return getattr(p, "name", None) or getattr(p, "__name__", None) or type(p).__name__


def _is_split_op(node: Any, split_ops: Sequence[Any]) -> bool:
    return node.op == "call_function" and (node.target in split_ops or
                                            getattr(node.target, "__name__", None) in split_ops)


def split_graph(gm: Any, split_ops: Sequence[Any]) -> tuple[Any, list[tuple[str, bool]]]:
    """Split ``gm`` so each split op is its own piece; returns (split module, [(submod name, is_split_op)])."""
    from torch.fx.passes.split_module import split_module

    part = 0
    assignment: dict[Any, int] = {}
    split_parts: set[int] = set()
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if _is_split_op(node, split_ops):
            part += 1
            assignment[node] = part
            split_parts.add(part)
            part += 1
        else:
            assignment[node] = part
    split = split_module(gm, None, lambda n: assignment[n], keep_original_order=True)
    pieces = []
    for name, _ in split.named_children():
        idx = int(name.rsplit("_", 1)[1])
        pieces.append((name, idx in split_parts))
    pieces.sort(key=lambda x: int(x[0].rsplit("_", 1)[1]))
    return split, pieces


class _LazyPiece:
    """Compiles a piece on its first call (the real inputs give the example inputs)."""

    def __init__(self, gm: Any, index: int, compiler: str) -> None:
        self.gm = gm
        self.index = index
        self.compiler = compiler
        self.compiled: Callable | None = None

    def __call__(self, *args: Any) -> Any:
        if self.compiled is None:
            with observe_lifecycle("compiler_compile", graph=self.gm, graph_index=self.index,
                                   compiler=self.compiler):
                if self.compiler == "inductor":
                    from torch._inductor.compile_fx import compile_fx_inner

                    self.compiled = compile_fx_inner(self.gm, list(args))
                else:
                    self.compiled = self.gm.forward
        out = self.compiled(list(args)) if self.compiler == "inductor" else self.compiled(*args)
        return out


def piecewise_backend(split_ops: Iterable[Any] = (), passes: Iterable[Pass] = (),
                      compiler: str = "inductor") -> Callable:
    """A ``torch.compile`` backend. ``compiler`` is ``"inductor"`` or ``"eager"``."""
    split_ops = tuple(split_ops)
    passes = tuple(passes)

    def backend(gm: Any, example_inputs: Any) -> Any:
        with observe_lifecycle("piecewise_backend", graph=gm, compiler=compiler):
            with observe_lifecycle("graph_split", graph=gm) as lc:
                split, pieces = split_graph(gm, split_ops)
                lc.result(split)
            k = 0
            for name, is_split in pieces:
                if is_split:
                    continue
                piece = getattr(split, name)
                for p in passes:
                    with observe_lifecycle(_pass_name(p), graph=piece.graph, subgraph_index=k,
                                           pass_stage="piecewise"):
                        out = p(piece.graph)
                        if out is not None and hasattr(out, "graph"):
                            piece = out
                    piece.graph.lint()
                    piece.recompile()
                if compiler == "inductor":
                    from torch._inductor.compile_fx import compile_fx

                    wrapped = _Compiled(piece, k)
                else:
                    wrapped = _LazyPiece(piece, k, "eager")
                setattr(split, name, wrapped)
                k += 1
            split.recompile()
            return split

    backend.__name__ = "piecewise_backend"
    return backend


class _Compiled:
    """Inductor-compiled piece, compiled on first call through ``compile_fx`` (handles its own
    boxed calling convention and AOT dispatch)."""

    def __init__(self, gm: Any, index: int) -> None:
        self.gm = gm
        self.index = index
        self.fn: Callable | None = None

    def __call__(self, *args: Any) -> Any:
        if self.fn is None:
            from torch._inductor.compile_fx import compile_fx

            with observe_lifecycle("compiler_compile", graph=self.gm, graph_index=self.index,
                                   compiler="inductor"):
                self.fn = compile_fx(self.gm, list(args))
        return self.fn(*args)
