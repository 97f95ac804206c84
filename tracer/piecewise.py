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

from tracer.context import compile_ids, compile_scope
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
    split = split_module(gm, gm, lambda n: assignment[n], keep_original_order=True)  # (root_m: unused by torch)
    pieces = []
    for name, _ in split.named_children():
        idx = int(name.rsplit("_", 1)[1])
        pieces.append((name, idx in split_parts))
    pieces.sort(key=lambda x: int(x[0].rsplit("_", 1)[1]))
    return split, pieces


def piecewise_backend(split_ops: Iterable[Any] = (), passes: Iterable[Pass] = (),
                      compiler: str = "inductor") -> Callable:
    """A ``torch.compile`` backend. ``compiler`` is ``"inductor"`` or ``"eager"``."""
    split_ops = tuple(split_ops)
    passes = tuple(passes)

    def backend(gm: Any, example_inputs: Any) -> Any:
        ids = compile_ids()  # pieces compile later, on their first call: keep them in this compile
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
                setattr(split, name, _piece_module()(piece, k, compiler, ids))
                k += 1
            split.recompile()
            return split

    backend.__name__ = "piecewise_backend"
    return backend


_PIECE_CLS = None


def _piece_module() -> type:
    """The wrapper class (an ``nn.Module``, so it can replace a submodule), built on first use."""
    global _PIECE_CLS
    if _PIECE_CLS is None:
        import torch

        class CompiledPiece(torch.nn.Module):
            """Compiles its piece on the first call, whose real inputs are the example inputs."""

            def __init__(self, gm: Any, index: int, compiler: str, ids: Any = None) -> None:
                super().__init__()
                self.ids = ids
                self.gm = gm
                self.index = index
                self.compiler = compiler
                self.fn: Callable | None = None

            def forward(self, *args: Any) -> Any:
                if self.fn is None:
                    with compile_scope(self.ids), observe_lifecycle(
                            "compiler_compile", graph=self.gm, graph_index=self.index, compiler=self.compiler):
                        if self.compiler == "inductor":
                            from torch._inductor.compile_fx import compile_fx

                            compiled = compile_fx(self.gm, list(args))
                            assert callable(compiled), "compile_fx compiles a GraphModule to a callable"
                            self.fn = compiled
                        else:
                            self.fn = self.gm.forward
                    assert self.fn is not None, "neither context swallows an exception: the block set it"
                return self.fn(*args)

        _PIECE_CLS = CompiledPiece
    return _PIECE_CLS
