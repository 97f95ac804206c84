"""Outputs: what the analysis is turned into -- headless reports and their sections, bug reports, fixes,
bisect views, comparisons, ranks, budgets, chrome traces, redaction of what leaves the machine.

Nothing below ``model`` imports an output."""
