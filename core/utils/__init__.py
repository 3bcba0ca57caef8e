"""Low-level utilities: JSON helpers, the duration/time grammar, worker threads, signals."""
