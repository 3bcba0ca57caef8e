"""Java's toString forms, as system tables print them."""

from __future__ import annotations

import datetime as dt
import decimal

from paimon_cli.core.data.java_format import (
    java_array_string,
    java_double,
    java_float,
    java_hash_map_order,
    java_local_datetime,
    java_map_string,
    java_string,
    java_string_hash,
)
from paimon_cli.core.data.types import DateType, FloatType, IntType


def test_double_to_string() -> None:
    assert java_double(1.0) == "1.0"
    assert java_double(0.1) == "0.1"
    assert java_double(1e7) == "1.0E7"
    assert java_double(12345678.9) == "1.23456789E7"
    assert java_double(0.001) == "0.001"
    assert java_double(0.0001) == "1.0E-4"
    assert java_double(-2.5) == "-2.5"
    assert java_double(float("nan")) == "NaN"
    assert java_double(-0.0) == "-0.0"


def test_float_to_string() -> None:
    assert java_float(0.1) == "0.1"
    assert java_float(1.1) == "1.1"
    assert java_float(3.0) == "3.0"
    assert java_float(3.4028235e38) == "3.4028235E38"


def test_local_date_time() -> None:
    assert java_local_datetime(dt.datetime(2024, 1, 1, 10, 0)) == "2024-01-01T10:00"
    assert java_local_datetime(dt.datetime(2024, 1, 1, 10, 0, 5)) == "2024-01-01T10:00:05"
    assert java_local_datetime(dt.datetime(2024, 1, 1, 10, 0, 0, 123000)) == "2024-01-01T10:00:00.123"
    assert java_local_datetime(dt.datetime(2024, 1, 1, 10, 0, 0, 123456)) == "2024-01-01T10:00:00.123456"
    assert java_local_datetime(dt.datetime(2024, 1, 1), nanos=1) == "2024-01-01T00:00:00.000000001"


def test_internal_values() -> None:
    assert java_string(dt.date(2022, 1, 8), DateType()) == "19000"
    assert java_string(decimal.Decimal("1.50")) == "1.50"
    assert java_string(None) == "null"
    assert java_string(True) == "true"
    assert java_array_string([1, "a", None], [IntType(), None, None]) == "[1, a, null]"
    assert java_map_string({"b": 1.5, "a": 2}, {"b": FloatType()}) == "{a=2, b=1.5}"


def test_string_hash_and_hash_map_order() -> None:
    assert java_string_hash("a") == 97
    assert java_string_hash("ab") == 3105
    assert java_string_hash("polygenelubricants") == -2147483648  # the famous Integer.MIN_VALUE hash
    # Java 0.9 listed these options in this order for a table created with them (interop fixture)
    assert java_hash_map_order(["bucket", "file.format", "dynamic-bucket.target-row-num"]) == [
        "bucket", "dynamic-bucket.target-row-num", "file.format"]
