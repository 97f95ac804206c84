"""A history of many runs: ``magi-tui index`` writes Parquet tables (one row per run, break site, recompile,
cache lookup, check, frame, compile) and ``magi-tui history`` asks DuckDB, embedded, the questions one run
cannot answer (when did a break first appear, what grew, did compile time regress). docs/HISTORY.md.

Torch-free and Textual-free, as the model is: ``collect`` turns one run's analysis into rows, ``write``
appends them to an index, ``query`` answers from it. Imported only by the commands and screens that use it
(pyarrow and DuckDB are not paid by any other start).
"""
