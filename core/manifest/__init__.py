"""Manifest metadata: Avro object files, manifest lists and files, index manifests, stats."""
