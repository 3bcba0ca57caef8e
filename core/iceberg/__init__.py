"""Iceberg-compatible metadata (``metadata.iceberg.storage``): what Java's ``IcebergCommitCallback``
writes after each commit, so Iceberg readers (Trino, Spark, DuckDB, pyiceberg) read the table.

Version ``N`` of the Iceberg metadata describes Paimon snapshot ``N``. Commits extend the
previous version incrementally (manifests of unchanged partitions are reused); expire, rollback
and tag changes keep the metadata on the Paimon snapshots that remain (:mod:`.callback`).
"""
