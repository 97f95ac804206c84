"""Real runs that a module's tests assert on, made ahead, two at a time.

pytest runs one test at a time, and a real run (a bisect, ``magi-tui fix``) is a subprocess that keeps
one core busy while pytest waits for it: on the 2-core CI machine the other core idles. A test names its
run with ``@pytest.mark.ahead(*key)`` (on a ``pytest.param`` for a parametrized one); the module's
fixture hands :func:`start` a function that makes the run of a key, and the runs of the tests pytest
selected (only those: ``pytest file.py::test`` makes one run) start at once, two at a time, in the order
the tests come. Each test then waits for its own run and asserts on it alone; a run that failed fails
the test that asked for it, with the run's own error.

A run is shared like a module-scoped fixture's value (two tests with one key get the same result): a
test that writes into a run's folder writes into a copy.

A fixture that only makes one real run (a traced program, a TORCH_TRACE log) can start earlier still:
registered with :func:`early`, its run is queued when collection ends if a selected test uses the
fixture, and made in one background thread while pytest runs other tests (mostly in-process: one core),
so it fills the core that would idle; the fixture waits for it with :func:`early_result`. An early run
waits while a module's runs above are going (they already keep both cores busy), and its processes are
niced by 10: they yield to pytest's own (a trial in a session of its own, as ``magi-tui bisect`` and
``fix`` start them, is outside nice's reach: Linux weighs each session as a whole). On a machine already
busier than its cores they are not niced (no core idles; a niced run would starve behind the other work).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.support import slow

#: the CI machine's cores: each run is a process that keeps one busy
WORKERS = 2


def key_of(item: pytest.Item) -> tuple | None:
    """The key of the run ``item`` asserts on (its ``ahead`` mark's arguments), None without one."""
    mark = item.get_closest_marker("ahead")
    return tuple(mark.args) if mark is not None else None


#: how many runs of :class:`Ahead` pools are going (the early runs wait for none)
_going = 0
_going_changed = threading.Condition()


def _counted(make: Callable[..., Any], *key: Any) -> Any:
    global _going
    with _going_changed:
        _going += 1
    try:
        return make(*key)
    finally:
        with _going_changed:
            _going -= 1
            _going_changed.notify_all()


class Ahead:
    """Runs made by ``make(*key)`` in a pool of :data:`WORKERS` threads, one per key."""

    def __init__(self, make: Callable[..., Any], keys: list[tuple], workers: int = WORKERS) -> None:
        self._make = make
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="ahead")
        self._futures: dict[tuple, Future] = {}
        for key in keys:
            self._submit(key)

    def _submit(self, key: tuple) -> Future:
        if key not in self._futures:
            self._futures[key] = self._pool.submit(_counted, self._make, *key)
        return self._futures[key]

    def result(self, key: tuple) -> Any:
        """The run of ``key`` (made now if no selected test named it), once it is done."""
        return self._submit(key).result()

    def result_for(self, item: pytest.Item) -> Any:
        key = key_of(item)
        assert key is not None, f"{item.nodeid} has no @pytest.mark.ahead(...) naming its run"
        return self.result(key)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def start(request: pytest.FixtureRequest, make: Callable[..., Any]) -> Ahead:
    """Start the runs of the selected tests of ``request``'s module (call from a module-scoped fixture,
    and :meth:`Ahead.close` it after its ``yield``)."""
    keys = [key for item in request.session.items
            if getattr(item, "module", None) is request.module and (key := key_of(item)) is not None]
    return Ahead(make, keys)


#: fixture name -> make(a fresh folder) -> its value; filled when the conftests and modules are imported
EARLY: dict[str, Callable[[Path], Any]] = {}
_early: dict[str, Future] = {}
_early_pool: ThreadPoolExecutor | None = None
#: how much nicer the early runs' processes are than pytest's: they yield a busy core to the tests
EARLY_NICE = 10


def early(name: str) -> Callable[[Callable[[Path], Any]], Callable[[Path], Any]]:
    """Register ``make(folder)`` as the run of the fixture ``name`` (a name no other fixture has)."""
    def register(make: Callable[[Path], Any]) -> Callable[[Path], Any]:
        EARLY[name] = make  # (a module imported twice registers the same run again)
        return make
    return register


def _nice() -> None:
    # a thread's niceness is its own on Linux, and the processes it starts inherit it. On a machine already
    # busier than its cores there is no idle core to fill, and a niced run would starve behind every other
    # process there (its time limit is scaled for load, not for a tenth of a core): it runs at pytest's level
    if slow.load_per_core() >= 1.0:
        return
    tid = threading.get_native_id()
    os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + EARLY_NICE)


def _when_cores_free(make: Callable[[Path], Any], folder: Path) -> Any:
    with _going_changed:
        _going_changed.wait_for(lambda: _going == 0)
    return make(folder)


def start_early(session: pytest.Session) -> None:
    """Start the early runs of the fixtures the selected tests use, in the order the tests come (from
    ``pytest_collection_finish``)."""
    global _early_pool
    names: list[str] = []
    for item in session.items:
        names += [n for n in getattr(item, "fixturenames", ()) if n in EARLY and n not in names]
    factory = getattr(session.config, "_tmp_path_factory", None)
    if not names or factory is None:
        return
    _early_pool = ThreadPoolExecutor(1, thread_name_prefix="early", initializer=_nice)
    for name in names:
        _early[name] = _early_pool.submit(_when_cores_free, EARLY[name], factory.mktemp(name))


def early_result(name: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The fixture ``name``'s run: the early one once it is done, else made now."""
    fut = _early.get(name)
    if fut is None:
        return EARLY[name](tmp_path_factory.mktemp(name))
    return fut.result()


def stop_early() -> None:
    """Wait for the early runs still going, drop those not started (from ``pytest_sessionfinish``)."""
    if _early_pool is not None:
        _early_pool.shutdown(wait=True, cancel_futures=True)
