"""Paimon's value model: data types, BinaryRow, Roaring64, Java value formats, predicates."""
