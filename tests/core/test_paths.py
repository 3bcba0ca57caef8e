from __future__ import annotations

import datetime
import decimal

import pytest

from paimon_cli.core.data.types import (
    BigIntType,
    BooleanType,
    DateType,
    DecimalType,
    IntType,
    TimestampType,
    TimeType,
    VarCharType,
)
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.io import paths


def test_table_and_branch_paths() -> None:
    t = paths.table_path("/wh", "db", "t")
    assert t == "/wh/db.db/t"
    assert paths.table_path("s3://b/wh/", "db", "t") == "s3://b/wh/db.db/t"
    assert paths.branch_path(t, None) == t
    assert paths.branch_path(t, "main") == t
    assert paths.branch_path(t, "dev") == "/wh/db.db/t/branch/branch-dev"
    assert paths.snapshot_dir(t, "dev") == "/wh/db.db/t/branch/branch-dev/snapshot"
    assert paths.tag_dir(t) == "/wh/db.db/t/tag"


def test_shared_dirs_are_at_table_root() -> None:
    t = "/wh/db.db/t"
    assert paths.manifest_dir(t) == "/wh/db.db/t/manifest"
    assert paths.index_dir(t) == "/wh/db.db/t/index"
    assert paths.statistics_dir(t) == "/wh/db.db/t/statistics"


def test_bucket_and_data_file_paths() -> None:
    assert paths.bucket_dir(0) == "bucket-0"
    assert paths.bucket_dir(-2) == "bucket-postpone"
    t = "/wh/db.db/t"
    assert paths.data_file_path(t, "dt=1/hr=2", 3, "data-x-0.parquet") == "/wh/db.db/t/dt=1/hr=2/bucket-3/data-x-0.parquet"
    assert paths.data_file_path(t, "", 0, "data-x-0.orc") == "/wh/db.db/t/bucket-0/data-x-0.orc"
    assert paths.data_file_path(t, "", 0, "f", external_path="s3://x/y/f") == "s3://x/y/f"


def test_escaping_exact_char_set() -> None:
    special = "\"#%'*/:=?\\\x7f{}[]^"
    assert paths.escape_path_name(special) == "%22%23%25%27%2A%2F%3A%3D%3F%5C%7F%7B%7D%5B%5D%5E"
    assert paths.escape_path_name("\x00\x01\n\x1f") == "%00%01%0A%1F"
    # not escaped: space, comma, non-ASCII, plus, dash, dot
    assert paths.escape_path_name("a b,c+d-é.~!@$&()") == "a b,c+d-é.~!@$&()"
    assert paths.unescape_path_name(paths.escape_path_name(special + "x%zz")) == special + "x%zz"


def test_partition_path_and_default_name() -> None:
    assert paths.partition_path(["dt", "hr"], ["2024-01-01", "10"]) == "dt=2024-01-01/hr=10"
    assert paths.partition_path(["a"], [None]) == "a=__DEFAULT_PARTITION__"
    assert paths.partition_path(["a"], [""]) == "a=__DEFAULT_PARTITION__"
    assert paths.partition_path(["a"], ["  "]) == "a=__DEFAULT_PARTITION__"
    assert paths.partition_path(["a"], [None], default_name="NULLP") == "a=NULLP"
    assert paths.partition_path(["k=1"], ["a/b"]) == "k%3D1=a%2Fb"
    assert paths.partition_path([], []) == ""
    assert paths.partition_path(["a", "b"], ["1", "2"], only_value=True) == "1/2"
    with pytest.raises(InvalidInput):
        paths.partition_path(["a"], [".."], only_value=True)
    with pytest.raises(InvalidInput):
        paths.partition_path(["a", "b"], ["1"])
    assert paths.parse_partition_path("k%3D1=a%2Fb/x=2") == {"k=1": "a/b", "x": "2"}


def test_legacy_partition_values() -> None:
    v = paths.partition_value_to_str
    assert v(datetime.date(2022, 1, 8), DateType()) == "19000"
    assert v(19000, DateType()) == "19000"
    assert v(True, BooleanType()) == "true"
    assert v(False, BooleanType()) == "false"
    assert v(decimal.Decimal("1.50"), DecimalType(10, 2)) == "1.50"
    assert v(decimal.Decimal("1E+3"), DecimalType(10, 0)) == "1000"
    assert v(decimal.Decimal("5"), DecimalType(10, 3)) == "5.000"
    assert v(42, IntType()) == "42"
    assert v(-7, BigIntType()) == "-7"
    assert v("x", VarCharType(10)) == "x"
    assert v(None, IntType()) is None
    assert v(datetime.time(1, 2, 3), TimeType(0)) == str(3723000)
    ts = TimestampType(3)
    assert v(datetime.datetime(2024, 1, 1, 10, 0), ts) == "2024-01-01T10:00"
    assert v(datetime.datetime(2024, 1, 1, 10, 0, 5), ts) == "2024-01-01T10:00:05"
    assert v(datetime.datetime(2024, 1, 1, 10, 0, 0, 123000), ts) == "2024-01-01T10:00:00.123"
    assert v(datetime.datetime(2024, 1, 1, 10, 0, 0, 123400), ts) == "2024-01-01T10:00:00.123400"
    # escaping then turns ':' into %3A
    assert paths.partition_path(["ts"], [v(datetime.datetime(2024, 1, 1, 10, 0), ts)]) == "ts=2024-01-01T10%3A00"


def test_timestamp_object_with_millis_and_nanos() -> None:
    class Ts:  # duck-typed stand-in for binary_row.Timestamp
        millisecond = 1704103200123
        nano_of_millisecond = 456

    assert paths.partition_value_to_str(Ts(), TimestampType(9)) == "2024-01-01T10:00:00.123000456"


def test_non_legacy_partition_values() -> None:
    v = paths.partition_value_to_str
    assert v(19000, DateType(), legacy_name=False) == "2022-01-08"
    assert v(datetime.datetime(2024, 1, 1, 10, 0, 0, 120000), TimestampType(3), legacy_name=False) == "2024-01-01 10:00:00.120"
    assert v(datetime.datetime(2024, 1, 1, 10, 0), TimestampType(0), legacy_name=False) == "2024-01-01 10:00:00"




@pytest.mark.parametrize("name", ["manifest-list-abc-0", "data-1.parquet", "data-1.parquet-1.index", "stat-x-0",
                                  "a" * 255, "é" * 127])
def test_check_file_name_accepts_plain_names(name: str) -> None:
    assert paths.check_file_name(name, "_FILE_NAME", "/t/manifest/m") == name


@pytest.mark.parametrize("name, problem", [
    ("../snapshot/snapshot-5", "is a path"), ("a/b", "is a path"), ("a\\b", "is a path"), ("..", "is a path"),
    (".", "is a path"), ("", "is empty"), ("a\x00b", "control characters"), ("a\nb", "control characters"),
    ("a" * 256, "longer than 255 bytes"), ("é" * 128, "longer than 255 bytes"), (5, "not a string"),
])
def test_check_file_name_refuses_what_could_address_another_file(name: object, problem: str) -> None:
    """Issue 16: a name recorded in metadata that is not one plain file name is corrupt
    metadata (expire and rollback would otherwise delete a file of another kind)."""
    from paimon_cli.core.errors import CorruptMetadata

    with pytest.raises(CorruptMetadata) as ei:
        paths.check_file_name(name, "_FILE_NAME", "/t/manifest/m")
    assert str(ei.value).startswith("/t/manifest/m: _FILE_NAME ") and problem in str(ei.value)
