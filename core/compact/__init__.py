"""Compaction jobs: plan units on the driver, run them in-process or as Spark tasks, commit once.

``unit`` holds the shared models; the merge-tree and append executors live in
:mod:`core.mergetree` and :mod:`core.compact.append`.
"""
