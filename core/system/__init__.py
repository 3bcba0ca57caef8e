"""Paimon's $ system tables as rows (snapshots, files, ..., file indexes) for inspect."""
