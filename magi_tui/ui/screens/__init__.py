"""The app's screens: runs list, run (tree + detail + triage + timeline), diff, compiled functions, help."""
