"""Lifecycle events for code that is not torch's: your backend, your passes, your pipeline.

``observe_lifecycle(name)`` (a context manager and a decorator) writes
``<scope>_before_<frag>`` on entry and ``<scope>_after_<frag>`` (with ``duration_ms``) or
``<scope>_failed_<frag>`` (with ``exception_type``/``exception_message``) on exit, attaching the graph
it was given or found in the arguments / return value, as FORMAT.md part A §5 names the files.
``emit_event`` writes a point event. Outside an active ``explain_compilation`` they do nothing.
Graphs are rendered on the calling thread (a pass may mutate the graph right after), everything
else happens on the writer thread.
"""

from __future__ import annotations

import functools
import time
from contextlib import ContextDecorator
from types import TracebackType
from typing import Any, Callable, Literal, TypeVar, cast

from magi_format.names import frag, lifecycle_event, point_event, scope_attrs
from tracer import session as _session

_F = TypeVar("_F", bound=Callable[..., Any])


def graph_files(prefix: str, obj: Any) -> dict[str, str]:
    """``{prefix}_graph_module.py`` for a GraphModule, ``{prefix}_graph.txt`` for an fx.Graph."""
    try:
        import torch.fx as fx
    except Exception:
        return {}
    try:
        if isinstance(obj, (tuple, list)) and obj:
            obj = obj[0]
        if isinstance(obj, fx.GraphModule):
            text = obj.print_readable(print_output=False).replace("<lambda>", "GraphModule")
            return {f"{prefix}_graph_module.py": "from __future__ import annotations\nimport torch\n" + text}
        if isinstance(obj, fx.Graph):
            return {f"{prefix}_graph.txt": str(obj)}
    except Exception as exc:  # rendering a graph must never break the pass
        return {f"{prefix}_graph.txt": f"# could not render the graph: {type(exc).__name__}: {exc}\n"}
    return {}


def _find_graph(args: tuple, kwargs: dict) -> Any:
    try:
        import torch.fx as fx
    except Exception:
        return None
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, (fx.GraphModule, fx.Graph)):
            return a
    return None


def _base_attrs(name: str, subgraph_index: int | None, extra: dict[str, Any]) -> dict[str, Any]:
    a = dict(scope_attrs(subgraph_index))
    a["lifecycle_name"] = name
    a["source"] = "lifecycle"
    a.update({k: v for k, v in extra.items() if v is not None})
    return a


class observe_lifecycle(ContextDecorator):
    """``with observe_lifecycle("my_pass", graph=gm, subgraph_index=k): ...`` or ``@observe_lifecycle("x")``.

    Inside the block, ``.result(graph)`` sets the graph attached to ``after`` (by default the input
    graph again, as it is after the block — passes mutate in place).
    """

    def __init__(self, name: str, *, graph: Any = None, subgraph_index: int | None = None, **attrs: Any) -> None:
        self.name = name
        self.graph = graph
        self.subgraph_index = subgraph_index
        self.attrs = attrs
        self._result: Any = None
        self._t0 = 0.0

    def result(self, graph: Any) -> None:
        self._result = graph

    def __call__(self, fn: _F) -> _F:  # decorator: find the graph in the arguments
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with observe_lifecycle(self.name, graph=self.graph or _find_graph(args, kwargs),
                                   subgraph_index=self.subgraph_index, **self.attrs) as lc:
                out = fn(*args, **kwargs)
                lc.result(out if _is_graph(out) else None)
                return out

        return cast(_F, wrapper)  # (functools.wraps: the same signature)

    def __enter__(self) -> "observe_lifecycle":
        s = _session.current()
        self._t0 = time.perf_counter()
        if s is not None and s.active:
            try:  # what cannot be recorded is one dropped record, never the user's pass
                files = graph_files(f"before_{frag(self.name)}", self.graph) if self.graph is not None else {}
                s.emit(lifecycle_event("before", self.name, self.subgraph_index),
                       _base_attrs(self.name, self.subgraph_index, self.attrs), files)
            except Exception as exc:
                s.drop("observe_lifecycle", exc, self.name)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        s = _session.current()
        if s is None or not s.active:
            return False
        try:
            self._record_exit(s, exc)
        except Exception as err:  # what cannot be recorded is one dropped record, never the user's pass
            s.drop("observe_lifecycle", err, self.name)
        return False

    def _record_exit(self, s: Any, exc: BaseException | None) -> None:
        dur = (time.perf_counter() - self._t0) * 1000
        if exc is None:
            g = self._result if self._result is not None else self.graph
            files = graph_files("after_lifecycle", g) if g is not None else {}
            s.emit(lifecycle_event("after", self.name, self.subgraph_index),
                   _base_attrs(self.name, self.subgraph_index, {**self.attrs, "duration_ms": dur}), files)
        else:
            files = graph_files("failed_lifecycle", self.graph) if self.graph is not None else {}
            s.emit(lifecycle_event("failed", self.name, self.subgraph_index),
                   _base_attrs(self.name, self.subgraph_index,
                               {**self.attrs, "exception_type": type(exc).__name__,
                                "exception_message": str(exc)[:4000]}), files)


def _is_graph(obj: Any) -> bool:
    try:
        import torch.fx as fx

        return isinstance(obj, (fx.GraphModule, fx.Graph))
    except Exception:
        return False


def emit_event(name: str, *, files: dict[str, str] | None = None, subgraph_index: int | None = None,
               **attrs: Any) -> None:
    """A point event ``<scope>_<name>`` with optional text files."""
    s = _session.current()
    if s is None or not s.active:
        return
    try:
        a = dict(scope_attrs(subgraph_index))
        a["source"] = "lifecycle"
        a.update(attrs)
        s.emit(point_event(name, subgraph_index), a, files)
    except Exception as exc:  # never the user's code
        s.drop("emit_event", exc, name)


def traced_backend(backend: Callable | str, name: str | None = None) -> Callable:
    """Wrap a ``torch.compile`` backend so each call is a ``backend_call`` lifecycle with its graph."""
    label = name or (backend if isinstance(backend, str) else getattr(backend, "__name__", "backend"))

    def wrapped(gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        fn = backend
        if isinstance(fn, str):
            from torch._dynamo.backends.registry import lookup_backend

            fn = lookup_backend(fn)
        with observe_lifecycle("backend_call", graph=gm, backend=str(label)):
            return fn(gm, example_inputs, **kwargs)

    wrapped.__name__ = f"traced_{label}"
    return wrapped
