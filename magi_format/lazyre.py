"""Regular expressions compiled at their first use, not when their module is imported.

A headless command's start imports dozens of our modules, which held many module-level patterns; a
``triage --json`` of a timeline run uses about a dozen: compiling the rest was a real share of its start
(issue #21; docs/ARCHITECTURE.md, "Rules that keep it fast"). :func:`lazy_re` stands in for
``re.compile`` at module level: the pattern is compiled when one of its methods is first looked up, and
that lookup puts the compiled pattern's bound methods on the object, so every later call finds them at
once (a few tens of ns more than a compiled pattern's own method per call: keep ``re.compile`` for a
pattern that runs per event or per line of a big file on a path that always uses it). Only the methods
and ``pattern`` / ``flags`` / ``groups`` / ``groupindex`` are there: it is no ``re.Pattern`` for
``isinstance`` nor as the first argument of ``re.sub`` and the like.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast

_FORWARDED = ("match", "search", "fullmatch", "sub", "subn", "split", "findall", "finditer", "scanner",
              "pattern", "flags", "groups", "groupindex")


class _LazyPattern:
    def __init__(self, pattern: Any, flags: int) -> None:
        self._source: tuple[Any, int] = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name == "_source" or name not in _FORWARDED:  # e.g. copy's probes on a bare instance
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for attr in _FORWARDED:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_re({self._source[0]!r}, {self._source[1]!r})"


def lazy_re(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, made when first used."""
    return cast("re.Pattern[AnyStr]", _LazyPattern(pattern, flags))
