"""Paimon file indexes (bloom filter, bitmap, BSI): the container, each index format, and evaluation."""
