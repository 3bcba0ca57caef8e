from __future__ import annotations

import pytest

from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.schema.option_keys import KNOWN_OPTIONS, check_option_keys, is_known_key, suggest_key
from paimon_cli.core.schema.options import CoreOptions, parse_memory_bytes
from paimon_cli.core.utils.durations import parse_duration_millis


def test_known_options_cover_the_documented_table() -> None:
    # a sample across the generated core_configuration table, with documented defaults
    assert len(KNOWN_OPTIONS) >= 300
    assert KNOWN_OPTIONS["bucket"] == "-1"
    assert KNOWN_OPTIONS["file.format"] == "parquet"
    assert KNOWN_OPTIONS["manifest.compression"] == "zstd"
    assert KNOWN_OPTIONS["snapshot.time-retained"] == "1 h"
    assert KNOWN_OPTIONS["bucket-key"] is None
    assert KNOWN_OPTIONS["partition.default-name"] == "__DEFAULT_PARTITION__"
    assert "zorder.var-length-contribution" in KNOWN_OPTIONS


def test_defaults() -> None:
    o = CoreOptions({})
    assert o.bucket == -1
    assert o.bucket_key == []
    assert o.file_format == "parquet"
    assert o.file_compression == "zstd"
    assert o.merge_engine == "deduplicate"
    assert o.changelog_producer == "none"
    assert o.sequence_field == []
    assert o.rowkind_field is None
    assert o.deletion_vectors_enabled is False
    assert o.deletion_vectors_bitmap64 is False
    assert o.num_sorted_run_compaction_trigger == 5
    assert o.num_sorted_run_stop_trigger == 8
    assert o.num_levels == 6
    assert o.target_file_size(True) == 128 << 20
    assert o.target_file_size(False) == 256 << 20
    assert o.write_only is False
    assert o.snapshot_num_retained_min == 10
    assert o.snapshot_num_retained_max == 2147483647
    assert o.snapshot_time_retained_millis == 3_600_000
    assert o.changelog_num_retained_min == 10
    assert o.changelog_time_retained_millis == 3_600_000
    assert o.partition_default_name == "__DEFAULT_PARTITION__"
    assert o.partition_legacy_name is True
    assert o.manifest_target_file_size == 8 << 20
    assert o.manifest_merge_min_count == 30
    assert o.manifest_full_compaction_threshold_size == 16 << 20
    assert o.manifest_format == "avro"
    assert o.metadata_stats_mode == "truncate(16)"
    assert o.file_index_in_manifest_threshold == 500
    assert o.file_index_read_enabled is True
    assert o.dynamic_bucket_target_row_num == 2_000_000
    assert o.commit_max_retries == 10
    assert o.data_file_prefix == "data-"
    assert o.changelog_file_prefix == "changelog-"


def test_typed_getters_read_set_values() -> None:
    o = CoreOptions(
        {
            "bucket": "4",
            "bucket-key": "a,b",
            "file.format": "ORC",
            "merge-engine": "partial-update",
            "changelog-producer": "lookup",
            "sequence.field": "ts, v",
            "deletion-vectors.enabled": "TRUE",
            "num-sorted-run.compaction-trigger": "3",
            "num-levels": "10",
            "target-file-size": "64 mb",
            "snapshot.time-retained": "30 min",
            "snapshot.num-retained.max": "20",
            "changelog.num-retained.min": "3",
            "file-index.bloom-filter.columns": "a,b",
            "file-index.bitmap.columns": "c",
            "file-index.bloom-filter.a.fpp": "0.01",
            "file.format.per.level": "0:avro, 3:parquet",
            "fields.v.default-value": "0",
            "parquet.page.size": "1",
        }
    )
    assert o.bucket == 4
    assert o.bucket_key == ["a", "b"]
    assert o.file_format == "orc"
    assert o.merge_engine == "partial-update"
    assert o.changelog_producer == "lookup"
    assert o.sequence_field == ["ts", "v"]
    assert o.deletion_vectors_enabled is True
    assert o.num_sorted_run_stop_trigger == 6
    assert o.num_levels == 10
    assert o.target_file_size(True) == 64 << 20
    assert o.snapshot_time_retained_millis == 1_800_000
    assert o.snapshot_num_retained_max == 20
    assert o.changelog_num_retained_min == 3
    assert o.changelog_num_retained_max == 20  # falls back to the snapshot setting
    assert o.file_index_columns() == {"bloom-filter": ["a", "b"], "bitmap": ["c"]}
    assert o.file_index_options("bloom-filter", "a") == {"fpp": "0.01"}
    assert o.file_format_per_level() == {0: "avro", 3: "parquet"}
    assert o.field_default_values() == {"v": "0"}
    assert o.format_options("parquet") == {"parquet.page.size": "1"}


@pytest.mark.parametrize(
    ("text", "millis"),
    [("1 h", 3_600_000), ("2h", 7_200_000), ("30 min", 1_800_000), ("10 s", 10_000), ("500", 500),
     ("100 ms", 100), ("1 d", 86_400_000), ("3 days", 259_200_000), ("5m", 300_000)],
)
def test_durations(text: str, millis: int) -> None:
    assert parse_duration_millis(text) == millis


@pytest.mark.parametrize(("text", "size"), [("128 mb", 128 << 20), ("8mb", 8 << 20), ("500 bytes", 500), ("4 kb", 4096), ("1 gb", 1 << 30), ("7", 7)])
def test_memory_sizes(text: str, size: int) -> None:
    assert parse_memory_bytes(text) == size


@pytest.mark.parametrize("bad", ["", "one hour", "1 fortnight", "-1 h"])
def test_bad_durations_are_refused(bad: str) -> None:
    with pytest.raises(InvalidInput):
        parse_duration_millis(bad, "snapshot.time-retained")


def test_bad_values_are_refused_with_the_key() -> None:
    with pytest.raises(InvalidInput, match="deletion-vectors.enabled"):
        _ = CoreOptions({"deletion-vectors.enabled": "yes"}).deletion_vectors_enabled
    with pytest.raises(InvalidInput, match="bucket"):
        _ = CoreOptions({"bucket": "four"}).bucket


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("bucket-kye", "bucket-key"),
        ("bucket-keys", "bucket-key"),
        ("snapshot.num-retain.max", "snapshot.num-retained.max"),
        ("changelog-producr", "changelog-producer"),
        ("merge_engine", "merge-engine"),
        ("File.Format", "file.format"),
        ("deletion-vector.enabled", "deletion-vectors.enabled"),
        ("write-onyl", "write-only"),
        ("bukcet", "bucket"),  # one swap in a short key: under difflib's cutoff, caught anyway
        ("ubcket", "bucket"),
    ],
)
def test_typos_are_refused_with_a_suggestion(typo: str, meant: str) -> None:
    assert suggest_key(typo) == meant
    with pytest.raises(InvalidInput, match=f"did you mean '{meant}'"):
        check_option_keys({typo: "x"})


@pytest.mark.parametrize(
    "key",
    [
        "owner",
        "my.custom.key",
        "bucket-num",
        "fields.price.aggregate-function",
        "fields.a,b.sequence-group",
        "file-index.bloom-filter.columns",
        "file-index.bloom-filter.a.fpp",
        "parquet.enable.dictionary",
        "orc.bloom.filter.columns",
        "metadata.iceberg.storage",
        "commit.callback.com.acme.Cb.param",
        "sink.parallelism",
        "scan.parallelism",
        "manifest.format",
        "path",
        "write-mode",
    ],
)
def test_deliberate_keys_pass(key: str) -> None:
    assert suggest_key(key) is None
    check_option_keys([key])


def test_every_documented_key_is_known() -> None:
    assert all(is_known_key(k) for k in KNOWN_OPTIONS)
    check_option_keys(KNOWN_OPTIONS)
