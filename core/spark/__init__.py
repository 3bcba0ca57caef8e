"""Maintenance procedures run as Spark tasks (``--engine spark``) beside compaction's
``compact.spark``: the driver decides and keeps the safety rules, executors list, read and
delete (Java's SparkOrphanFilesClean design)."""
