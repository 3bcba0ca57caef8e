"""Table options: typed getters with Java's defaults, and the list of keys Paimon knows.

Options live in the schema file as a plain string map. Readers need a handful of them
(bucket, file format, merge engine, retention, ...) with exactly Java's defaults, and
``create``/``alter`` need to catch ``bucket-kye``-style typos before they are persisted,
because Paimon itself silently keeps unknown keys and the table would quietly misbehave.
"""

from __future__ import annotations

import difflib
import re
from typing import Iterable, Mapping

from .errors import InvalidInput

# Keys and defaults of every option in upstream's generated core_configuration table
# (None = no default). Hand-extracted once; the defaults are the documented strings.
KNOWN_OPTIONS: dict[str, str | None] = {
    'add-column-before-partition': 'false',
    'aggregation.remove-record-on-delete': 'false',
    'alter-column-null-to-not-null.disabled': 'true',
    'async-file-write': 'true',
    'auto-create': 'false',
    'blob-as-descriptor': 'false',
    'blob-compaction.enabled': 'false',
    'blob-descriptor-field': None,
    'blob-descriptor.source-table': None,
    'blob-field': None,
    'blob-view-field': None,
    'blob-view.resolve.enabled': 'true',
    'blob-write-null-on-fetch-failure': 'false',
    'blob-write-null-on-missing-file': 'false',
    'blob.copy-buffer-size': '4 kb',
    'blob.split-by-file-size': None,
    'blob.target-file-size': None,
    'bucket': '-1',
    'bucket-append-ordered': 'true',
    'bucket-function.type': 'default',
    'bucket-key': None,
    'cache-page-size': '64 kb',
    'chain-table.chain-partition-keys': None,
    'chain-table.enabled': 'false',
    'chain-table.split.key-range-enabled': 'true',
    'chain-table.streaming.merge-snapshot': 'false',
    'changelog-file.compression': None,
    'changelog-file.format': None,
    'changelog-file.prefix': 'changelog-',
    'changelog-file.stats-mode': None,
    'changelog-producer': 'none',
    'changelog-producer.row-deduplicate': 'false',
    'changelog-producer.row-deduplicate-ignore-fields': None,
    'changelog.num-retained.max': None,
    'changelog.num-retained.min': None,
    'changelog.time-retained': None,
    'clustering.columns': None,
    'clustering.history-partition.idle-to-full-sort': None,
    'clustering.history-partition.limit': '5',
    'clustering.incremental': 'false',
    'clustering.incremental.mode': 'global-sort',
    'clustering.incremental.optimize-write': 'false',
    'clustering.strategy': 'auto',
    'commit.callback.#.param': None,
    'commit.callbacks': None,
    'commit.discard-duplicate-files': 'false',
    'commit.force-compact': 'false',
    'commit.force-create-snapshot': 'false',
    'commit.max-retries': '10',
    'commit.max-retry-wait': '10 s',
    'commit.min-retry-wait': '10 ms',
    'commit.strict-mode.last-safe-snapshot': None,
    'commit.timeout': None,
    'commit.user-prefix': None,
    'compaction.delete-ratio-threshold': '0.2',
    'compaction.file-num-limit': '100000',
    'compaction.force-rewrite-all-files': 'false',
    'compaction.force-up-level-0': 'false',
    'compaction.incremental-size-threshold': None,
    'compaction.max-size-amplification-percent': '200',
    'compaction.min.file-num': '5',
    'compaction.offpeak-ratio': '0',
    'compaction.offpeak.end.hour': '-1',
    'compaction.offpeak.start.hour': '-1',
    'compaction.optimization-interval': None,
    'compaction.size-ratio': '1',
    'compaction.skip-expired-partitions': 'false',
    'compaction.small-file-ratio': '0.7',
    'compaction.total-size-threshold': None,
    'consumer-id': None,
    'consumer.changelog-only': 'false',
    'consumer.expiration-time': None,
    'consumer.ignore-progress': 'false',
    'consumer.mode': 'exactly-once',
    'continuous.discovery-interval': '10 s',
    'cross-partition-upsert.bootstrap-parallelism': '10',
    'cross-partition-upsert.index-ttl': None,
    'data-evolution.compaction.rewrite-row-ids': 'false',
    'data-evolution.enabled': 'false',
    'data-evolution.merge-into.file-pruning': 'true',
    'data-evolution.merge-into.source-persist': 'false',
    'data-evolution.reassign.skip-contiguous-row-count': '1000000000',
    'data-evolution.row-id-conflict-rewrite.max-size': '256 mb',
    'data-evolution.row-sidecar.enabled': 'false',
    'data-evolution.row-sidecar.max-selected-rows': '4096',
    'data-evolution.row-sidecar.max-selection-ratio': '0.05',
    'data-file.external-paths': None,
    'data-file.external-paths.specific-fs': None,
    'data-file.external-paths.strategy': 'none',
    'data-file.external-paths.weights': None,
    'data-file.path-directory': None,
    'data-file.prefix': 'data-',
    'data-file.thin-mode': 'false',
    'delete.force-produce-changelog': 'false',
    'deletion-vector.index-file.target-size': '2 mb',
    'deletion-vectors.bitmap64': 'false',
    'deletion-vectors.enabled': 'false',
    'deletion-vectors.merge-on-read': 'false',
    'deletion-vectors.modifiable': 'false',
    'disable-explicit-type-casting': 'false',
    'dynamic-bucket.assigner-parallelism': None,
    'dynamic-bucket.initial-buckets': None,
    'dynamic-bucket.max-buckets': '-1',
    'dynamic-bucket.target-row-num': '2000000',
    'dynamic-partition-overwrite': 'true',
    'end-input.check-partition-expire': 'false',
    'fields.default-aggregate-function': None,
    'file-index.in-manifest-threshold': '500 bytes',
    'file-index.read.enabled': 'true',
    'file-operation.thread-num': None,
    'file-reader-async-threshold': '10 mb',
    'file.block-size': None,
    'file.compression': 'zstd',
    'file.compression.per.level': '',
    'file.compression.zstd-level': '1',
    'file.format': 'parquet',
    'file.format.per.level': '',
    'file.suffix.include.compression': 'false',
    'force-lookup': 'false',
    'format-table.commit-hive-sync-url': None,
    'format-table.file.compression': None,
    'format-table.implementation': 'paimon',
    'format-table.partition-path-only-value': 'false',
    'format-table.scan.list-parallelism': '64',
    'full-compaction.delta-commits': None,
    'full-text-index.search-mode': 'fast',
    'global-index.build.max-parallelism': '4096',
    'global-index.build.max-shard': '32',
    'global-index.column-update-action': 'THROW_ERROR',
    'global-index.enabled': 'true',
    'global-index.external-path': None,
    'global-index.row-count-per-shard': '100000',
    'global-index.search-mode': None,
    'global-index.thread-num': '32',
    'ignore-delete': 'false',
    'ignore-update-before': 'false',
    'incremental-between': None,
    'incremental-between-scan-mode': 'auto',
    'incremental-between-tag-to-snapshot': 'false',
    'incremental-between-timestamp': None,
    'incremental-to-auto-tag': None,
    'index-file-in-data-file-dir': 'false',
    'local-kv-db.block-size': '4 kb',
    'local-merge-buffer-size': None,
    'local-sort.max-num-file-handles': '128',
    'lookup-compact': 'RADICAL',
    'lookup-compact.max-interval': None,
    'lookup-wait': 'true',
    'lookup.blob-as-descriptor': 'false',
    'lookup.cache-file-retention': '1 h',
    'lookup.cache-max-disk-size': 'infinite',
    'lookup.cache-max-memory-size': '256 mb',
    'lookup.cache-rows': '10000',
    'lookup.cache-spill-compression': 'zstd',
    'lookup.cache.bloom.filter.enabled': 'true',
    'lookup.cache.bloom.filter.fpp': '0.05',
    'lookup.cache.high-priority-pool-ratio': '0.25',
    'lookup.continuous.discovery-interval': None,
    'lookup.hash-load-factor': '0.75',
    'lookup.merge-buffer-size': '8 mb',
    'lookup.merge-records-threshold': '1024',
    'lookup.remote-file.enabled': 'false',
    'lookup.remote-file.level-threshold': '-2147483648',
    'manifest-sort.enabled': 'false',
    'manifest-sort.max-rewrite-size': '256 mb',
    'manifest-sort.partition-field': None,
    'manifest.compression': 'zstd',
    'manifest.delete-file-drop-stats': 'false',
    'manifest.full-compaction-threshold-size': '16 mb',
    'manifest.merge-min-count': '30',
    'manifest.merge-optimize.enabled': 'true',
    'manifest.target-file-size': '8 mb',
    'merge-engine': 'deduplicate',
    'metadata.stats-dense-store': 'true',
    'metadata.stats-keep-first-n-columns': '-1',
    'metadata.stats-mode': 'truncate(16)',
    'metadata.stats-mode.per.level': '',
    'metastore.partitioned-table': 'false',
    'metastore.tag-to-partition': None,
    'metastore.tag-to-partition.preview': 'none',
    'num-levels': None,
    'num-sorted-run.compaction-trigger': '5',
    'num-sorted-run.stop-trigger': None,
    'overwrite-upgrade': 'true',
    'page-size': '64 kb',
    'parquet.enable.dictionary': None,
    'partial-update.remove-record-on-delete': 'false',
    'partial-update.remove-record-on-sequence-group': None,
    'partition': None,
    'partition.default-name': '__DEFAULT_PARTITION__',
    'partition.end-input-to-done': 'false',
    'partition.expiration-batch-size': None,
    'partition.expiration-check-interval': '1 h',
    'partition.expiration-max-num': '100',
    'partition.expiration-strategy': 'values-time',
    'partition.expiration-time': None,
    'partition.idle-time-to-report-statistic': '0 ms',
    'partition.legacy-name': 'true',
    'partition.mark-done-action': 'success-file',
    'partition.mark-done-action.custom.class': None,
    'partition.mark-done-action.http.params': None,
    'partition.mark-done-action.http.url': None,
    'partition.sink-strategy': 'NONE',
    'partition.timestamp-format.strict': 'false',
    'partition.timestamp-formatter': None,
    'partition.timestamp-pattern': None,
    'pk-bitmap.index.columns': None,
    'pk-btree.index.columns': None,
    'pk-clustering-override': 'false',
    'pk-full-text.index.columns': None,
    'pk-multivalue.index.columns': None,
    'pk-vector.index.columns': None,
    'postpone.batch-write-fixed-bucket': 'true',
    'postpone.batch-write-fixed-bucket.max-parallelism': '2048',
    'postpone.batch-write-fixed-bucket.rescale-load-factor': '32',
    'postpone.default-bucket-num': None,
    'postpone.merge-on-read': 'false',
    'postpone.target-row-num-per-bucket': None,
    'postpone.target-size-per-bucket': '1 gb',
    'primary-key': None,
    'primary-key.nullable': 'false',
    'query-auth.enabled': 'false',
    'read.batch-size': '1024',
    'record-level.expire-time': None,
    'record-level.time-field': None,
    'row-tracking.enabled': 'false',
    'row-tracking.partition-group-on-commit': 'true',
    'rowkind.field': None,
    'scalar-index.search-mode': 'fast',
    'scan.bounded.watermark': None,
    'scan.bucket': None,
    'scan.creation-time-millis': None,
    'scan.fallback-branch': None,
    'scan.fallback-branch.read-fail-fast': 'false',
    'scan.fallback-delta-branch': None,
    'scan.fallback-snapshot-branch': None,
    'scan.file-creation-time-millis': None,
    'scan.ignore-corrupt-files': 'false',
    'scan.ignore-lost-files': 'false',
    'scan.manifest.parallelism': None,
    'scan.max-splits-per-task': '10',
    'scan.mode': 'default',
    'scan.plan-auto-tag-for-read.time-retained': None,
    'scan.plan-sort-partition': 'false',
    'scan.primary-branch': None,
    'scan.snapshot-id': None,
    'scan.tag-name': None,
    'scan.timestamp': None,
    'scan.timestamp-millis': None,
    'scan.watermark': None,
    'sequence.field': None,
    'sequence.field.sort-order': 'ascending',
    'sequence.snapshot-ordering': 'false',
    'sink.process-time-zone': None,
    'sink.watermark-time-zone': 'UTC',
    'snapshot.clean-empty-directories': 'false',
    'snapshot.expire.execution-mode': 'sync',
    'snapshot.expire.limit': '50',
    'snapshot.ignore-empty-commit': None,
    'snapshot.num-retained.max': 'infinite',
    'snapshot.num-retained.min': '10',
    'snapshot.time-retained': '1 h',
    'snapshot.watermark-idle-timeout': None,
    'sort-compaction.local-sample.magnification': '1000',
    'sort-compaction.range-strategy': 'SIZE',
    'sort-engine': 'loser-tree',
    'sort-spill-buffer-size': '64 mb',
    'sort-spill-threshold': None,
    'source.split.open-file-cost': '4 mb',
    'source.split.target-size': '128 mb',
    'spill-compression': 'zstd',
    'spill-compression.zstd-level': '1',
    'streaming-read-append-overwrite': 'false',
    'streaming-read-overwrite': 'false',
    'streaming.read.snapshot.delay': None,
    'table-read.sequence-number.enabled': 'false',
    'tag.automatic-completion': 'false',
    'tag.automatic-creation': 'none',
    'tag.batch.customized-name': None,
    'tag.callback.#.param': None,
    'tag.callbacks': None,
    'tag.create-success-file': 'false',
    'tag.creation-delay': '0 ms',
    'tag.creation-period': 'daily',
    'tag.creation-period-duration': None,
    'tag.default-time-retained': None,
    'tag.num-retained-max': None,
    'tag.period-formatter': 'with_dashes',
    'tag.time-expire-enabled': 'true',
    'target-file-row-num': '9223372036854775807',
    'target-file-size': None,
    'type': 'table',
    'variant.inferShreddingSchema': 'false',
    'variant.shredding.adaptive.maxInferBufferRow': '256',
    'variant.shredding.adaptive.retentionRatio': '0.05',
    'variant.shredding.inferenceMode': 'per-file',
    'variant.shredding.maxInferBufferRow': '4096',
    'variant.shredding.maxSchemaDepth': '50',
    'variant.shredding.maxSchemaWidth': '300',
    'variant.shredding.minFieldCardinalityRatio': '0.1',
    'variant.shreddingSchema': None,
    'vector-field': None,
    'vector-index.search-mode': 'fast',
    'vector-search.distribute.enabled': 'false',
    'vector-search.lateral-join.batch-size': '256',
    'vector.file.format': None,
    'vector.target-file-size': None,
    'visibility-callback.check-interval': '10 s',
    'visibility-callback.enabled': 'false',
    'visibility-callback.timeout': '30 min',
    'write-buffer-for-append': 'false',
    'write-buffer-size': '256 mb',
    'write-buffer-spill.max-disk-size': 'infinite',
    'write-buffer-spillable': 'true',
    'write-max-writers-to-spill': '10',
    'write-only': 'false',
    'write.batch-memory': '128 mb',
    'write.batch-size': '1024',
    'write.sequence-number-init-mode': 'scan',
    'zorder.var-length-contribution': '8',
}

# Keys that older (0.9 .. 1.x) CoreOptions, their deprecated/fallback aliases, and the
# Flink/Spark connector and Iceberg-compatibility options that users also store as table
# options. They are legal; they only need to be known so they are not flagged as typos.
OTHER_KNOWN_KEYS: frozenset[str] = frozenset(
    """
    batch-scan-mode branch compaction.max.file-num compaction.early-max.file-num
    delete-file.thread-num key-value.sequence_number.enabled log.changelog-mode log.consistency
    log.format log.ignore-delete log.key.format log.scan log.scan.timestamp-millis
    lookup.local-file-type manifest.format metadata.iceberg-compatible object-location
    partition.mark-done-action.http.timeout path record-level.time-field-type scan.version
    stream-scan-mode streaming-read-mode upsert-key write-manifest-cache
    changelog-producer.lookup-wait orc.write.batch-size snapshot.expire.clean-empty-directories
    write.compaction-skip blob.stored-descriptor-fields blob-external-storage-field
    blob-external-storage-path parquet.variant.shreddingSchema
    changelog-producer.compaction-interval changelog.precommit-compact
    changelog.precommit-compact.buffer-size changelog.precommit-compact.thread-num
    commit.custom-listeners compaction.bucket-distribution-strategy end-input.watermark
    filesystem.job-level-settings.enabled format-table.repair.collect-statistics
    format-table.statistics.parallelism legacy-timestamp-mapping.enabled
    lineage-use-catalog-key-as-identifier log.system log.system.auto-register
    log.system.auto-register-timeout log.system.partitions log.system.replication
    lookup.async lookup.async-thread-number lookup.bootstrap-parallelism lookup.cache
    lookup.dynamic-partition lookup.dynamic-partition.refresh-interval
    lookup.dynamic-partition.refresh.async lookup.refresh.async
    lookup.refresh.async.pending-snapshot-count lookup.refresh.full-load-threshold
    lookup.refresh.time-periods-blacklist partition.idle-time-to-done
    partition.mark-done-action.mode partition.mark-done.recover-from-state
    partition.time-interval precommit-compact read.allow.fullScan read.changelog
    read.shuffle-bucket-with-partition read.stream.maxBytesPerTrigger
    read.stream.maxFilesPerTrigger read.stream.maxRowsPerTrigger read.stream.maxTriggerDelayMs
    read.stream.minRowsPerTrigger requiredSparkConfsCheck.enabled scan.bounded
    scan.dedicated-split-generation scan.infer-parallelism scan.infer-parallelism.max
    scan.max-snapshot.count scan.parallelism scan.partitions scan.push-down
    scan.remove-normalize scan.split-enumerator.batch-size scan.split-enumerator.mode
    scan.watermark.alignment.group scan.watermark.alignment.max-drift
    scan.watermark.alignment.update-interval scan.watermark.emit.strategy
    scan.watermark.idle-timeout sink.clustering.by-columns sink.clustering.sample-factor
    sink.clustering.sort-in-cluster sink.clustering.strategy sink.committer-cpu
    sink.committer-memory sink.committer-operator-chaining sink.coordinator-commit.enabled
    sink.cross-partition.managed-memory sink.key-only-deletes.enabled
    sink.managed.writer-buffer-memory sink.operator-uid.suffix sink.parallelism
    sink.savepoint.auto-tag sink.use-managed-memory-allocator sink.writer-cpu sink.writer-memory
    sink.writer-refresh-detectors source.checkpoint-align.enabled
    source.checkpoint-align.timeout source.operator-uid.suffix
    source.split.target-size-with-column-pruning streaming-read.shuffle-bucket-with-partition
    unaware-bucket.compaction.parallelism unaware-bucket.no-shuffle write.merge-schema
    write.merge-schema.explicit-cast write.merge-schema.type-widening write.use-v2-write
    write-mode connector comment owner transient_lastDdlTime
    """.split()
)

# Families whose keys embed a column, index type, class name or format name. They are
# passed through untouched (the format options go to the Parquet/ORC/Avro writers).
PASS_THROUGH_PREFIXES: tuple[str, ...] = (
    "fields.",
    "file-index.",
    "metadata.iceberg.",
    "commit.callback.",
    "tag.callback.",
    "parquet.",
    "orc.",
    "avro.",
    "csv.",
    "json.",
    "text.",
    "lance.",
    "vortex.",
    "format.",
    "hive.",
    "metastore.",
    "materialized-table.",
    "log.",
    "sink.writer-coordinator.",
    "write.data-evolution.",
    "lookup.",
    "dynamic-bucket.",
    "partition.mark-done-action.",
    "global-index.",
    "variant.",
)

# Options Java's CoreOptions marks @Immutable (union of 1.0 .. master that matter for
# tables this toolkit manages): once a table has data they cannot be set or reset.
IMMUTABLE_OPTIONS: frozenset[str] = frozenset(
    {
        "bucket-key",
        "data-file.path-directory",
        "merge-engine",
        "sequence.field",
        "sequence.field.sort-order",
        "partial-update.remove-record-on-delete",
        "partial-update.remove-record-on-sequence-group",
        "aggregation.remove-record-on-delete",
        "rowkind.field",
        "primary-key",
        "primary-key.nullable",
        "partition",
        "force-lookup",
        "bucket-function.type",
        "sequence.snapshot-ordering",
        "dynamic-bucket.initial-buckets",
        "row-tracking.enabled",
        "data-evolution.enabled",
        "index-file-in-data-file-dir",
        "type",
    }
)

MERGE_ENGINES = ("deduplicate", "partial-update", "aggregation", "first-row")
CHANGELOG_PRODUCERS = ("none", "input", "full-compaction", "lookup")

INT_MAX = 2147483647
LONG_MAX = 9223372036854775807


def is_known_key(key: str) -> bool:
    """True for a documented key, a legacy/connector key, or a key of a pass-through family."""
    if key in KNOWN_OPTIONS or key in OTHER_KNOWN_KEYS:
        return True
    return key.startswith(PASS_THROUGH_PREFIXES)


def suggest_key(key: str) -> str | None:
    """The known key ``key`` was most likely meant to be, or None when it looks deliberate."""
    if is_known_key(key):
        return None
    candidates = list(KNOWN_OPTIONS) + sorted(OTHER_KNOWN_KEYS)
    lowered = key.lower().replace("_", "-")
    for c in candidates:
        if c.lower() == lowered:  # wrong case or snake_case of a real key
            return c
    for c in candidates:
        if _one_adjacent_swap(lowered, c):  # `bukcet`: short keys fall under difflib's cutoff
            return c
    match = difflib.get_close_matches(key, candidates, n=1, cutoff=0.85)
    return match[0] if match else None


def _one_adjacent_swap(a: str, b: str) -> bool:
    """True when ``a`` is ``b`` with two neighbouring characters swapped."""
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def check_option_keys(options: Iterable[str] | Mapping[str, str]) -> None:
    """Refuse option keys that look like typos of known keys.

    Paimon accepts arbitrary user keys, so an unknown key on its own is fine; only a key that
    is one slip away from a real option is refused, since Java would silently ignore it.
    """
    for key in options:
        hint = suggest_key(key)
        if hint is not None:
            raise InvalidInput(f"unknown table option {key!r}: did you mean {hint!r}?")


# ---------------------------------------------------------------------------------------
# Value parsers (Java's TimeUtils.parseDuration / MemorySize.parse / boolean parsing)
# ---------------------------------------------------------------------------------------

_DURATION_UNITS: dict[str, float] = {}
for _names, _ms in (
    (("d", "day", "days"), 86_400_000),
    (("h", "hour", "hours"), 3_600_000),
    (("min", "m", "minute", "minutes"), 60_000),
    (("s", "sec", "secs", "second", "seconds"), 1_000),
    (("ms", "milli", "millis", "millisecond", "milliseconds"), 1),
    (("us", "µs", "micro", "micros", "microsecond", "microseconds"), 1e-3),
    (("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 1e-6),
):
    for _n in _names:
        _DURATION_UNITS[_n] = _ms

_MEMORY_UNITS: dict[str, int] = {}
for _names, _bytes in (
    (("b", "bytes"), 1),
    (("k", "kb", "kibibytes"), 1 << 10),
    (("m", "mb", "mebibytes"), 1 << 20),
    (("g", "gb", "gibibytes"), 1 << 30),
    (("t", "tb", "tebibytes"), 1 << 40),
):
    for _n in _names:
        _MEMORY_UNITS[_n] = _bytes

_NUM_UNIT = re.compile(r"^\s*(\d+)\s*([^\d\s]*)\s*$")


def parse_duration_millis(text: str, key: str = "duration") -> int:
    """``"1 h"``, ``"30 min"``, ``"2h"``, ``"500"`` (bare number = ms) to milliseconds."""
    m = _NUM_UNIT.match(text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _DURATION_UNITS and unit != "":
        raise InvalidInput(f"option {key}={text!r}: not a duration (e.g. '1 h', '30 min', '10 s')")
    factor = _DURATION_UNITS.get(unit, 1)
    return int(int(m.group(1)) * factor)


def parse_memory_bytes(text: str, key: str = "size") -> int:
    """``"128 mb"``, ``"8mb"``, ``"500 bytes"``, ``"1024"`` (bare number = bytes) to bytes."""
    m = _NUM_UNIT.match(text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _MEMORY_UNITS and unit != "":
        raise InvalidInput(f"option {key}={text!r}: not a memory size (e.g. '128 mb', '8 kb')")
    return int(m.group(1)) * _MEMORY_UNITS.get(unit, 1)


def parse_bool(text: str, key: str = "option") -> bool:
    t = text.strip().lower()
    if t == "true":
        return True
    if t == "false":
        return False
    raise InvalidInput(f"option {key}={text!r}: expected true or false")


# room a file name prefix leaves for "<uuid>-<n>.<format>[.<compression>]" and "-<n>.index"
MAX_FILE_PREFIX_BYTES = 128


def _file_prefix(key: str, prefix: str) -> str:
    """A data/changelog file name prefix: part of one file name, short enough for the rest."""
    if "/" in prefix or "\\" in prefix or any(ord(c) < 0x20 or ord(c) == 0x7F for c in prefix):
        raise InvalidInput(f"option {key}={prefix[:40]!r}: a file name prefix cannot hold '/', '\\' or control characters")
    if len(prefix.encode("utf-8", "surrogatepass")) > MAX_FILE_PREFIX_BYTES:
        raise InvalidInput(f"option {key}={prefix[:40]!r}...: a file name prefix can be at most "
                           f"{MAX_FILE_PREFIX_BYTES} bytes (a file name at most 255)")
    return prefix


def parse_int(text: str, key: str = "option") -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise InvalidInput(f"option {key}={text!r}: expected an integer") from None


def _split_list(text: str | None) -> list[str]:
    if text is None:
        return []
    return [s.strip() for s in text.split(",") if s.strip()]


# ---------------------------------------------------------------------------------------
# CoreOptions
# ---------------------------------------------------------------------------------------


class CoreOptions:
    """Typed, read-only view of a table's option map with Java's defaults.

    Compatibility defaults of old schema versions (bucket=1, file.format=orc) are already
    in the map when it comes from :class:`~.schema.TableSchema`, so nothing here depends on
    the schema version.
    """

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.options: dict[str, str] = dict(options or {})

    # -- generic access ------------------------------------------------------------------

    def get(self, key: str, default: str | None = None) -> str | None:
        v = self.options.get(key)
        if v is not None:
            return v
        if default is not None:
            return default
        return KNOWN_OPTIONS.get(key)

    def contains(self, key: str) -> bool:
        return key in self.options

    def get_str(self, key: str, default: str | None = None) -> str | None:
        return self.get(key, default)

    def get_int(self, key: str, default: int | None = None) -> int | None:
        v = self.options.get(key)
        if v is None:
            d = KNOWN_OPTIONS.get(key)
            if default is not None or d is None:
                return default
            if d == "infinite":
                return INT_MAX
            return parse_int(d, key)
        return parse_int(v, key)

    def get_bool(self, key: str, default: bool | None = None) -> bool:
        v = self.options.get(key)
        if v is None:
            if default is not None:
                return default
            d = KNOWN_OPTIONS.get(key)
            return parse_bool(d, key) if d else False
        return parse_bool(v, key)

    def get_duration_millis(self, key: str, default: str | None = None) -> int | None:
        v = self.get(key, default)
        return None if v is None else parse_duration_millis(v, key)

    def get_memory_bytes(self, key: str, default: str | None = None) -> int | None:
        v = self.get(key, default)
        if v is None:
            return None
        if v == "infinite":
            return LONG_MAX
        return parse_memory_bytes(v, key)

    # -- layout ---------------------------------------------------------------------------

    @property
    def bucket(self) -> int:
        v = self.options.get("bucket")
        return -1 if v is None else parse_int(v, "bucket")

    @property
    def bucket_key(self) -> list[str]:
        return _split_list(self.options.get("bucket-key"))

    @property
    def primary_key(self) -> list[str]:
        """The ``primary-key`` option (only used at create time; the schema's list wins)."""
        return _split_list(self.options.get("primary-key"))

    @property
    def partition(self) -> list[str]:
        return _split_list(self.options.get("partition"))

    @property
    def file_format(self) -> str:
        return (self.get("file.format") or "parquet").lower()

    def file_format_per_level(self) -> dict[int, str]:
        return {k: v.lower() for k, v in self._level_map("file.format.per.level").items()}

    @property
    def file_compression(self) -> str:
        return self.get("file.compression") or "zstd"

    def file_compression_per_level(self) -> dict[int, str]:
        return self._level_map("file.compression.per.level")

    @property
    def file_compression_zstd_level(self) -> int:
        return self.get_int("file.compression.zstd-level") or 1

    @property
    def changelog_file_format(self) -> str:
        return (self.options.get("changelog-file.format") or self.file_format).lower()

    @property
    def changelog_file_compression(self) -> str:
        return self.options.get("changelog-file.compression") or self.file_compression

    @property
    def data_file_prefix(self) -> str:
        return _file_prefix("data-file.prefix", self.get("data-file.prefix") or "data-")

    @property
    def changelog_file_prefix(self) -> str:
        return _file_prefix("changelog-file.prefix", self.get("changelog-file.prefix") or "changelog-")

    @property
    def file_suffix_include_compression(self) -> bool:
        return self.get_bool("file.suffix.include.compression")

    @property
    def index_file_in_data_file_dir(self) -> bool:
        return self.get_bool("index-file-in-data-file-dir")

    @property
    def partition_default_name(self) -> str:
        return self.get("partition.default-name") or "__DEFAULT_PARTITION__"

    @property
    def partition_legacy_name(self) -> bool:
        return self.get_bool("partition.legacy-name")

    # -- merge tree -----------------------------------------------------------------------

    @property
    def merge_engine(self) -> str:
        return (self.get("merge-engine") or "deduplicate").lower()

    @property
    def changelog_producer(self) -> str:
        return (self.get("changelog-producer") or "none").lower()

    @property
    def sequence_field(self) -> list[str]:
        return _split_list(self.options.get("sequence.field"))

    @property
    def sequence_field_sort_order(self) -> str:
        return (self.get("sequence.field.sort-order") or "ascending").lower()

    @property
    def rowkind_field(self) -> str | None:
        return self.options.get("rowkind.field")

    @property
    def ignore_delete(self) -> bool:
        return self.get_bool("ignore-delete")

    @property
    def deletion_vectors_enabled(self) -> bool:
        return self.get_bool("deletion-vectors.enabled")

    @property
    def deletion_vectors_bitmap64(self) -> bool:
        return self.get_bool("deletion-vectors.bitmap64")

    @property
    def deletion_vector_index_file_target_size(self) -> int:
        return self.get_memory_bytes("deletion-vector.index-file.target-size") or (2 << 20)

    @property
    def num_sorted_run_compaction_trigger(self) -> int:
        return self.get_int("num-sorted-run.compaction-trigger") or 5

    @property
    def num_sorted_run_stop_trigger(self) -> int:
        """Java: explicit value or trigger + 3, never below the compaction trigger."""
        trigger = self.num_sorted_run_compaction_trigger
        stop = self.get_int("num-sorted-run.stop-trigger")
        return max(trigger, stop if stop is not None else trigger + 3)

    @property
    def num_levels(self) -> int:
        """Java: explicit ``num-levels`` or compaction trigger + 1."""
        v = self.get_int("num-levels")
        return v if v is not None else self.num_sorted_run_compaction_trigger + 1

    @property
    def compaction_max_size_amplification_percent(self) -> int:
        return self.get_int("compaction.max-size-amplification-percent") or 200

    @property
    def compaction_size_ratio(self) -> int:
        v = self.get_int("compaction.size-ratio")
        return 1 if v is None else v

    @property
    def full_compaction_delta_commits(self) -> int | None:
        return self.get_int("full-compaction.delta-commits")

    def target_file_size(self, has_primary_key: bool) -> int:
        """Java: 128 MB for primary-key tables and 256 MB for append tables unless set."""
        v = self.get_memory_bytes("target-file-size")
        if v is not None:
            return v
        return (128 if has_primary_key else 256) << 20

    @property
    def write_only(self) -> bool:
        return self.get_bool("write-only")

    @property
    def fields_default_aggregate_function(self) -> str | None:
        return self.options.get("fields.default-aggregate-function")

    def field_aggregate_function(self, field: str) -> str | None:
        return self.options.get(f"fields.{field}.aggregate-function") or self.fields_default_aggregate_function

    def field_default_values(self) -> dict[str, str]:
        """``fields.<col>.default-value`` options by column."""
        out: dict[str, str] = {}
        for k, v in self.options.items():
            if k.startswith("fields.") and k.endswith(".default-value"):
                out[k[len("fields.") : -len(".default-value")]] = v
        return out

    # -- dynamic bucket -------------------------------------------------------------------

    @property
    def dynamic_bucket_target_row_num(self) -> int:
        return self.get_int("dynamic-bucket.target-row-num") or 2_000_000

    @property
    def dynamic_bucket_initial_buckets(self) -> int | None:
        return self.get_int("dynamic-bucket.initial-buckets")

    @property
    def dynamic_bucket_max_buckets(self) -> int:
        v = self.get_int("dynamic-bucket.max-buckets")
        return -1 if v is None else v

    # -- commit / snapshots ---------------------------------------------------------------

    @property
    def commit_max_retries(self) -> int:
        v = self.get_int("commit.max-retries")
        return 10 if v is None else v

    @property
    def snapshot_num_retained_min(self) -> int:
        v = self.get_int("snapshot.num-retained.min")
        return 10 if v is None else v

    @property
    def snapshot_num_retained_max(self) -> int:
        v = self.options.get("snapshot.num-retained.max")
        return INT_MAX if v is None else parse_int(v, "snapshot.num-retained.max")

    @property
    def snapshot_time_retained_millis(self) -> int:
        return self.get_duration_millis("snapshot.time-retained") or 3_600_000

    @property
    def snapshot_expire_limit(self) -> int:
        return self.get_int("snapshot.expire.limit") or 50

    @property
    def snapshot_clean_empty_directories(self) -> bool:
        if "snapshot.clean-empty-directories" in self.options:
            return self.get_bool("snapshot.clean-empty-directories")
        return self.get_bool("snapshot.expire.clean-empty-directories", False)

    @property
    def changelog_num_retained_min(self) -> int:
        v = self.get_int("changelog.num-retained.min")
        return self.snapshot_num_retained_min if v is None else v

    @property
    def changelog_num_retained_max(self) -> int:
        v = self.get_int("changelog.num-retained.max")
        return self.snapshot_num_retained_max if v is None else v

    @property
    def changelog_time_retained_millis(self) -> int:
        v = self.get_duration_millis("changelog.time-retained")
        return self.snapshot_time_retained_millis if v is None else v

    @property
    def streaming_read_overwrite(self) -> bool:
        return self.get_bool("streaming-read-overwrite")

    @property
    def scan_fallback_branch(self) -> str | None:
        v = self.options.get("scan.fallback-branch")
        return v if v and v.strip() else None

    # -- manifests / metadata --------------------------------------------------------------

    @property
    def manifest_format(self) -> str:
        return (self.options.get("manifest.format") or "avro").lower()

    @property
    def manifest_compression(self) -> str:
        return self.get("manifest.compression") or "zstd"

    @property
    def manifest_target_file_size(self) -> int:
        return self.get_memory_bytes("manifest.target-file-size") or (8 << 20)

    @property
    def manifest_merge_min_count(self) -> int:
        return self.get_int("manifest.merge-min-count") or 30

    @property
    def manifest_full_compaction_threshold_size(self) -> int:
        return self.get_memory_bytes("manifest.full-compaction-threshold-size") or (16 << 20)

    @property
    def metadata_stats_mode(self) -> str:
        return self.get("metadata.stats-mode") or "truncate(16)"

    def metadata_stats_mode_per_level(self) -> dict[int, str]:
        return self._level_map("metadata.stats-mode.per.level")

    @property
    def metadata_stats_keep_first_n_columns(self) -> int:
        v = self.get_int("metadata.stats-keep-first-n-columns")
        return -1 if v is None else v

    def field_stats_mode(self, field: str) -> str:
        return self.options.get(f"fields.{field}.stats-mode") or self.metadata_stats_mode

    # -- file index -------------------------------------------------------------------------

    def file_index_columns(self) -> dict[str, list[str]]:
        """``file-index.<type>.columns`` options by index type (bloom-filter, bitmap, bsi, ...)."""
        out: dict[str, list[str]] = {}
        for k, v in self.options.items():
            if k.startswith("file-index.") and k.endswith(".columns"):
                out[k[len("file-index.") : -len(".columns")]] = _split_list(v)
        return out

    def file_index_options(self, index_type: str, column: str) -> dict[str, str]:
        """Per-column settings ``file-index.<type>.<column>.<key>`` (e.g. bloom-filter fpp)."""
        prefix = f"file-index.{index_type}.{column}."
        return {k[len(prefix) :]: v for k, v in self.options.items() if k.startswith(prefix)}

    @property
    def file_index_in_manifest_threshold(self) -> int:
        return self.get_memory_bytes("file-index.in-manifest-threshold", "500 bytes") or 500

    @property
    def file_index_read_enabled(self) -> bool:
        return self.get_bool("file-index.read.enabled", True)

    # -- helpers ---------------------------------------------------------------------------

    def format_options(self, fmt: str) -> dict[str, str]:
        """Pass-through options of one file format (``parquet.*`` etc.), keys as written."""
        prefix = fmt.lower() + "."
        return {k: v for k, v in self.options.items() if k.startswith(prefix)}

    def _level_map(self, key: str) -> dict[int, str]:
        raw = self.options.get(key)
        out: dict[int, str] = {}
        for part in _split_list(raw):
            lvl, sep, val = part.partition(":")
            if not sep:
                raise InvalidInput(f"option {key}={raw!r}: expected 'level:value' pairs")
            out[parse_int(lvl, key)] = val.strip()
        return out

    def to_map(self) -> dict[str, str]:
        return dict(self.options)

    def __repr__(self) -> str:
        return f"CoreOptions({self.options!r})"
