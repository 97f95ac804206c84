"""Analysis: what a run means -- checks and their rules, guards, the break worklist, fallbacks, calls at run
time, cache verdicts, frames, compiled functions, compile metrics, Inductor provenance, advice.

Analysis reads the core (``RunModel``, events, triage) and the sources; it never imports an output."""
