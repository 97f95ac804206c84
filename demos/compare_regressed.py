"""The "after" run of the compare / CI-gate demo (see compare_base.py): the same MLP, but the commit
under review added a ``print`` in ``forward`` (a graph break, GB0059), calls it with a new batch size
under ``dynamic=False`` (a recompile of ``forward`` and of the resume function) and its pass now rewrites
gelu (the pass's graph differs from A's).

    python demos/compare_regressed.py
"""

import compare_base

if __name__ == "__main__":
    compare_base.REGRESSED = True
    compare_base.run("compare_regressed")
