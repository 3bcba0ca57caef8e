"""Table options: typed getters with Java's defaults (Java ``CoreOptions``) and value parsers.

Options live in the schema file as a plain string map. Readers need a handful of them
(bucket, file format, merge engine, retention, ...) with exactly Java's defaults; the keys and
their documented defaults are in :mod:`.option_keys`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import InvalidInput
from ..utils.durations import parse_duration_millis
from .option_keys import KNOWN_OPTIONS

MERGE_ENGINES = ("deduplicate", "partial-update", "aggregation", "first-row")
# Java's IGNORE_DELETE key and its fallback keys, in the order ``Options`` tries them
IGNORE_DELETE_KEYS = ("ignore-delete", "first-row.ignore-delete", "deduplicate.ignore-delete",
                      "partial-update.ignore-delete")
CHANGELOG_PRODUCERS = ("none", "input", "full-compaction", "lookup")

INT_MAX = 2147483647
LONG_MAX = 9223372036854775807


# ---------------------------------------------------------------------------------------
# Value parsers (Java's MemorySize.parse / boolean parsing; durations: core.utils.durations)
# ---------------------------------------------------------------------------------------

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


def parse_memory_bytes(text: str, key: str = "size") -> int:
    """``"128 mb"``, ``"8mb"``, ``"500 bytes"``, ``"1024"`` (bare number = bytes) to bytes."""
    m = _NUM_UNIT.match(text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _MEMORY_UNITS and unit != "":
        raise InvalidInput(f"option {key}={text!r}: not a memory size (e.g. '128 mb', '8 kb')")
    return int(m.group(1)) * _MEMORY_UNITS.get(unit, 1)


def memory_text(n: int) -> str:
    """Bytes for people: ``512 B``, ``1.5 KiB``, ``599.1 KiB``, ``20.0 GiB``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


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
    def data_file_path_directory(self) -> str | None:
        """The raw ``data-file.path-directory``; resolve it with ``io.paths.data_root`` /
        ``relative_bucket_path`` (the one rule that also validates it)."""
        return self.get("data-file.path-directory")

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
        """``ignore-delete``, else its first present 0.9 fallback key (Java's ``Options`` order)."""
        for key in IGNORE_DELETE_KEYS:
            if key in self.options:
                return self.get_bool(key)
        return False

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
