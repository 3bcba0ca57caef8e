"""Interop tests against the real Java Paimon 0.9 (py4j harness in java_harness.py)."""
