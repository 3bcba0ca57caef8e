"""Every table option key Paimon knows, which ones are immutable, and the typo check.

``create``/``alter`` (and ``write``'s dynamic options) catch ``bucket-kye``-style typos before
they are persisted, because Paimon itself silently keeps unknown keys and the table would
quietly misbehave. Typed access to values is :class:`~.options.CoreOptions`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import InvalidInput
from ..utils.suggest import close_match

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
    # wrong case or snake_case of a real key counts as the same name
    return close_match(key, candidates, cutoff=0.85, normalise=lambda k: k.lower().replace("_", "-"))


def check_option_keys(options: Iterable[str] | Mapping[str, str]) -> None:
    """Refuse option keys that look like typos of known keys.

    Paimon accepts arbitrary user keys, so an unknown key on its own is fine; only a key that
    is one slip away from a real option is refused, since Java would silently ignore it.
    """
    for key in options:
        hint = suggest_key(key)
        if hint is not None:
            raise InvalidInput(f"unknown table option {key!r}: did you mean {hint!r}?")
