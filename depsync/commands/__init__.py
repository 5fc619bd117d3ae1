"""One module per command: orchestration only (load, decide, render, exit code)."""
