"""Compaction jobs: plan units on the driver, run them in-process or as Spark tasks, commit once.

``unit`` holds the shared models; the merge-tree and append executors live in
:mod:`core.mergetree` and :mod:`core.compact.append`. ``rescale`` (a partition rewritten into
another bucket number) and ``rewrite_file_index`` (data files' indexes brought in line with
the options) are rewrites of existing files too and live here.
"""
