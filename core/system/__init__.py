"""Paimon's ``$`` system tables as rows for ``inspect``: one module per family of tables
(snapshots, files, refs, indexes, file indexes, audit log, overview, catalog); which kind
maps to which function is ``registry.SYSTEM_TABLES`` / ``registry.CATALOG_TABLES``."""
