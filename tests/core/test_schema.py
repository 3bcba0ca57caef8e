from __future__ import annotations

import pytest

from paimon_cli.core.data.types import (
    ArrayType,
    BigIntType,
    DataField,
    DecimalType,
    IntType,
    MapType,
    RowType,
    TimestampType,
    VarCharType,
    parse_data_type,
)
from paimon_cli.core.errors import (
    AlreadyExists,
    CommitConflict,
    CorruptMetadata,
    InvalidInput,
    MissingMetadata,
    NotFound,
)
from paimon_cli.core.io.fileio import FileIO, join
from paimon_cli.core.schema.schema_change import (
    AddColumn,
    DropColumn,
    RemoveOption,
    RenameColumn,
    SetOption,
    UpdateColumnType,
    UpdateComment,
)
from paimon_cli.core.schema.schema_manager import SchemaManager
from paimon_cli.core.schema.schema_validation import validate_table_schema
from paimon_cli.core.schema.table_schema import Schema, TableSchema, assign_field_ids, current_highest_field_id

# Hand-written in Jackson's default pretty-printer layout, as Java's SchemaSerializer emits it.
JAVA_SCHEMA = """{
  "version" : 3,
  "id" : 2,
  "fields" : [ {
    "id" : 0,
    "name" : "id",
    "type" : "BIGINT NOT NULL"
  }, {
    "id" : 1,
    "name" : "dt",
    "type" : "STRING NOT NULL",
    "description" : "day"
  }, {
    "id" : 2,
    "name" : "price",
    "type" : "DECIMAL(10, 2)"
  }, {
    "id" : 3,
    "name" : "tags",
    "type" : {
      "type" : "ARRAY",
      "element" : "STRING"
    }
  }, {
    "id" : 4,
    "name" : "attrs",
    "type" : {
      "type" : "MAP NOT NULL",
      "key" : "STRING NOT NULL",
      "value" : "INT"
    }
  }, {
    "id" : 5,
    "name" : "addr",
    "type" : {
      "type" : "ROW",
      "fields" : [ {
        "id" : 6,
        "name" : "city",
        "type" : "VARCHAR(20)"
      }, {
        "id" : 7,
        "name" : "ts",
        "type" : "TIMESTAMP(3) WITH LOCAL TIME ZONE"
      } ]
    },
    "defaultValue" : "x"
  } ],
  "highestFieldId" : 7,
  "partitionKeys" : [ "dt" ],
  "primaryKeys" : [ "id", "dt" ],
  "options" : {
    "bucket" : "4",
    "file.format" : "parquet",
    "deletion-vectors.enabled" : "true"
  },
  "comment" : "orders",
  "timeMillis" : 1718000000123
}"""

APPEND_SCHEMA = """{
  "version" : 3,
  "id" : 0,
  "fields" : [ {
    "id" : 0,
    "name" : "a",
    "type" : "INT"
  } ],
  "highestFieldId" : 0,
  "partitionKeys" : [ ],
  "primaryKeys" : [ ],
  "options" : { },
  "timeMillis" : 5
}"""


def cols(text: str) -> list[tuple[str, object, str | None]]:
    from paimon_cli.core.data.types import parse_columns

    return parse_columns(text)  # type: ignore[return-value]


@pytest.fixture()
def mgr(tmp_path) -> SchemaManager:
    fio = FileIO(str(tmp_path))
    return SchemaManager(fio, join(str(tmp_path), "db.db", "t"))


def make(mgr: SchemaManager, text: str = "id BIGINT, v STRING, dt STRING", pk=("id", "dt"), part=("dt",), **opts: str) -> TableSchema:
    return mgr.create_table(Schema.of(cols(text), part, pk, dict(opts)))


# -- JSON ---------------------------------------------------------------------------------


def test_json_round_trip_is_byte_exact() -> None:
    s = TableSchema.from_json(JAVA_SCHEMA, "schema-2")
    assert s.version == 3 and s.id == 2 and s.highest_field_id == 7
    assert s.field_names == ["id", "dt", "price", "tags", "attrs", "addr"]
    assert s.field("price").type == DecimalType(10, 2)
    assert s.field("dt").description == "day"
    assert s.field("addr").default_value == "x"
    assert list(s.options) == ["bucket", "file.format", "deletion-vectors.enabled"]
    assert s.comment == "orders" and s.time_millis == 1718000000123
    assert s.to_json() == JAVA_SCHEMA
    assert TableSchema.from_json(APPEND_SCHEMA, "x").to_json() == APPEND_SCHEMA


def test_views() -> None:
    s = TableSchema.from_json(JAVA_SCHEMA, "schema-2")
    assert s.bucket == 4
    assert s.trimmed_primary_keys == ["id"]
    assert s.bucket_keys == ["id"]
    assert s.partition_types == [VarCharType(nullable=False)]
    assert s.logical_partition_type.field_names == ["dt"]
    assert s.row_type.field_names == s.field_names
    assert s.core_options.deletion_vectors_enabled is True
    assert s.cross_partition_update is False
    with pytest.raises(NotFound):
        s.field("nope")


def test_unknown_keys_are_tolerated() -> None:
    text = APPEND_SCHEMA.replace('"id" : 0,\n  "fields"', '"id" : 0,\n  "futureKey" : [ 1 ],\n  "fields"')
    assert TableSchema.from_json(text, "x").id == 0


def test_version_2_defaults_to_orc_but_keeps_bucket() -> None:
    text = APPEND_SCHEMA.replace('"version" : 3', '"version" : 2')
    s = TableSchema.from_json(text, "x")
    assert s.options == {"file.format": "orc"}
    assert s.core_options.file_format == "orc"
    assert s.bucket == -1


def test_version_1_and_missing_version_default_bucket_1_and_orc() -> None:
    for text in (APPEND_SCHEMA.replace('"version" : 3', '"version" : 1'), APPEND_SCHEMA.replace('  "version" : 3,\n', "")):
        s = TableSchema.from_json(text, "x")
        assert s.version == 1
        assert s.bucket == 1
        assert s.core_options.file_format == "orc"
        validate_table_schema(s)  # bucketed append without bucket-key is legal for 0.7 schemas


def test_old_explicit_values_win_over_defaults() -> None:
    text = APPEND_SCHEMA.replace('"version" : 3', '"version" : 1').replace(
        '"options" : { }', '"options" : {\n    "bucket" : "-1",\n    "file.format" : "avro"\n  }'
    )
    s = TableSchema.from_json(text, "x")
    assert s.bucket == -1 and s.core_options.file_format == "avro"


def test_missing_time_millis_reads_as_zero() -> None:
    text = APPEND_SCHEMA.replace(',\n  "timeMillis" : 5', "")
    assert TableSchema.from_json(text, "x").time_millis == 0


@pytest.mark.parametrize("text", ["", "{", "[1]", '{"id": 0}', '{"id": 0, "fields": 3, "highestFieldId": 0}'])
def test_corrupt_schema_files(text: str) -> None:
    with pytest.raises(CorruptMetadata):
        TableSchema.from_json(text, "/t/schema/schema-0")


# -- field ids ------------------------------------------------------------------------------


def test_field_ids_follow_java_builder_order_for_nested_rows() -> None:
    fields, highest = assign_field_ids(cols("a INT, r ROW<x INT, inner ROW<p INT, q INT>, y INT>, m MAP<STRING, ROW<z INT>>, b INT"))
    assert [f.id for f in fields] == [0, 1, 7, 9]
    r = fields[1].type
    assert isinstance(r, RowType)
    # a nested row's own id is drawn after its children, as Java's ReassignFieldId does
    assert [(f.name, f.id) for f in r.fields] == [("x", 2), ("inner", 5), ("y", 6)]
    inner = r.fields[1].type
    assert isinstance(inner, RowType)
    assert [f.id for f in inner.fields] == [3, 4]
    m = fields[2].type
    assert isinstance(m, MapType) and isinstance(m.value, RowType)
    assert m.value.fields[0].id == 8
    assert highest == 9
    assert current_highest_field_id(fields) == 9


def test_duplicate_field_ids_are_broken() -> None:
    with pytest.raises(InvalidInput, match="field id 0"):
        current_highest_field_id([DataField(0, "a", IntType()), DataField(0, "b", IntType())])


# -- manager: read path ---------------------------------------------------------------------


def test_empty_table_has_no_schema(mgr: SchemaManager) -> None:
    assert mgr.latest() is None
    assert mgr.list_ids() == []
    assert mgr.list_all() == []
    with pytest.raises(MissingMetadata, match="schema 3") as ei:  # ids come from metadata: broken, exit 4
        mgr.schema(3)
    assert ei.value.exit_code == 4


def test_create_and_read_back(mgr: SchemaManager) -> None:
    s = make(mgr, bucket="2")
    assert s.id == 0 and s.version == 3
    assert mgr.schema_path(0).endswith("/db.db/t/schema/schema-0")
    text = mgr.file_io.read_text(mgr.schema_path(0))
    assert text == s.to_json() and not text.endswith("\n")
    back = mgr.latest()
    assert back == s
    assert mgr.list_ids() == [0]
    # primary-key columns become NOT NULL, as Java's Schema does
    assert back is not None and not back.field("id").type.nullable and not back.field("dt").type.nullable
    assert back.field("v").type.nullable


def test_listing_ignores_other_files_and_sorts_numerically(mgr: SchemaManager) -> None:
    make(mgr)
    for i in range(1, 12):
        mgr.commit_changes([SetOption("snapshot.num-retained.min", str(i + 1))], has_snapshots=False)
    mgr.file_io.write_bytes(join(mgr.schema_dir, ".schema-12.tmp"), b"junk")
    mgr.file_io.write_bytes(join(mgr.schema_dir, "schema-x"), b"junk")
    assert mgr.list_ids() == list(range(12))
    assert [s.id for s in mgr.list_all()] == list(range(12))
    latest = mgr.latest()
    assert latest is not None and latest.id == 11


def test_branch_schema_dir(tmp_path) -> None:
    fio = FileIO(str(tmp_path))
    m = SchemaManager(fio, str(tmp_path / "t"), branch="dev")
    assert m.schema_dir == join(str(tmp_path / "t"), "branch", "branch-dev", "schema")
    assert SchemaManager(fio, str(tmp_path / "t"), branch="main").schema_dir == join(str(tmp_path / "t"), "schema")


# -- create ----------------------------------------------------------------------------------


def test_second_create_is_already_exists(mgr: SchemaManager) -> None:
    first = make(mgr)
    with pytest.raises(AlreadyExists):
        make(mgr)
    assert mgr.create_table(Schema.of(cols("x INT")), ignore_if_exists=True) == first


def test_create_race_lost_is_already_exists(mgr: SchemaManager, monkeypatch) -> None:
    # another writer publishes schema-0 between our listing and our write-if-absent
    other = SchemaManager(mgr.file_io, mgr.table_path)
    real_latest = mgr.latest
    calls = {"n": 0}

    def stale_latest():
        calls["n"] += 1
        if calls["n"] == 1:
            make(other, "x INT", pk=(), part=())
            return None
        return real_latest()

    monkeypatch.setattr(mgr, "latest", stale_latest)
    with pytest.raises(AlreadyExists, match="concurrently"):
        make(mgr)
    assert real_latest().field_names == ["x"]  # the winner's file is untouched


def test_primary_key_and_partition_from_options(mgr: SchemaManager) -> None:
    s = mgr.create_table(Schema.of(cols("a INT, b INT, c INT"), options={"primary-key": "a, b", "partition": "b", "bucket": "1"}))
    assert s.primary_keys == ["a", "b"] and s.partition_keys == ["b"]
    assert "primary-key" not in s.options and "partition" not in s.options


def test_options_keep_their_order(mgr: SchemaManager) -> None:
    s = make(mgr, **{"write-only": "true", "bucket": "3", "file.format": "avro"})
    assert list(s.options) == ["write-only", "bucket", "file.format"]
    assert '"write-only" : "true",\n    "bucket" : "3"' in mgr.file_io.read_text(mgr.schema_path(0))


def _invalid(mgr: SchemaManager, match: str, text: str = "id BIGINT, v STRING, dt STRING", pk=("id", "dt"), part=("dt",), **opts: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        make(mgr, text, pk, part, **opts)
    assert mgr.list_ids() == []  # nothing written


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(text="a INT, a STRING", pk=(), part=()), "duplicate column"),
        (dict(part=("nope",), pk=()), r"partition key\(s\) \['nope'\]"),
        (dict(pk=("nope",), part=()), r"primary key column\(s\) \['nope'\]"),
        (dict(pk=("id", "id"), part=()), "duplicate"),
        (dict(text="id ARRAY<INT>, v INT", pk=("id",), part=()), "ARRAY, MAP"),
        (dict(text="id INT, m MAP<STRING, INT>", pk=(), part=("m",)), "partition column 'm'"),
        (dict(text="id INT, r ROW<a INT>", pk=("id", "r"), part=()), "primary key column 'r'"),
        (dict(text="a INT, b INT", pk=(), part=("a", "b")), "every column is a partition key"),
        (dict(pk=("id",), part=("dt",), bucket="4"), "You should use dynamic bucket \\(bucket = -1\\) mode in cross partition update case"),
        (dict(bucket="0"), "bucket 0 is invalid"),
        (dict(bucket="-3"), "bucket -3 is invalid"),
        (dict(pk=(), part=(), bucket="-2"), "postpone"),
        (dict(pk=(), part=(), bucket="4"), "needs a 'bucket-key'"),
        (dict(pk=(), part=(), **{"bucket-key": "id"}), "bucket = -1"),
        (dict(pk=(), **{"bucket": "2", "bucket-key": "dt"}), "must not be partition keys"),
        (dict(pk=(), part=(), **{"bucket": "2", "bucket-key": "zz"}), "not columns"),
        (dict(**{"bucket": "2", "bucket-key": "v"}), "subset of the primary key"),
        (dict(**{"merge-engine": "latest"}), "merge-engine 'latest' is unknown"),
        (dict(**{"changelog-producer": "always"}), "changelog-producer 'always' is unknown"),
        (dict(pk=(), part=(), **{"changelog-producer": "input"}), "without primary keys"),
        (dict(**{"sequence.field": "nope"}), "sequence.field 'nope'"),
        (dict(**{"sequence.field": "v", "merge-engine": "first-row"}), "first-row"),
        (dict(**{"rowkind.field": "nope"}), "rowkind.field 'nope'"),
        (dict(**{"fields.nope.aggregate-function": "sum"}), "column 'nope'"),
        (dict(**{"snapshot.num-retained.min": "0"}), "at least 1"),
        (dict(**{"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "2"}), "larger than"),
        (dict(pk=(), part=(), **{"partition.expiration-time": "1 d"}), "without partitions"),
        (dict(**{"deletion-vectors.enabled": "true", "changelog-producer": "full-compaction"}), "deletion-vectors"),
        (dict(**{"file.format": "xls"}), "file.format 'xls'"),
        (dict(text="_SEQUENCE_NUMBER INT", pk=(), part=()), "reserved"),
        (dict(text="_KEY_a INT", pk=(), part=()), "must not start"),
        (dict(**{"bucket-kye": "id"}), "did you mean 'bucket-key'"),
        (dict(pk=("dt",), part=("dt",)), "must not be the same as the partition keys"),
    ],
)
def test_create_validation(mgr: SchemaManager, kwargs: dict, match: str) -> None:
    _invalid(mgr, match, **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(bucket="4", pk=("id", "dt")),
        dict(pk=(), part=(), **{"bucket": "3", "bucket-key": "id"}),
        dict(pk=(), part=()),
        dict(pk=("id", "dt"), bucket="-2"),
        dict(pk=("id",), part=("dt",)),  # cross-partition update is fine with dynamic bucket
        dict(**{"merge-engine": "aggregation", "fields.v.aggregate-function": "max", "changelog-producer": "lookup"}),
        dict(**{"fields.default-aggregate-function": "last_value", "sequence.field": "v"}),
        dict(**{"owner": "me", "parquet.enable.dictionary": "true"}),
    ],
)
def test_create_accepts_valid_tables(mgr: SchemaManager, kwargs: dict) -> None:
    s = make(mgr, **kwargs)
    validate_table_schema(s)


# -- alter -----------------------------------------------------------------------------------


def test_add_column_assigns_next_ids_including_nested(mgr: SchemaManager) -> None:
    s0 = make(mgr)
    assert s0.highest_field_id == 2
    s1 = mgr.commit_changes([AddColumn("r", parse_data_type("ROW<a INT, b ROW<c INT>>"), "nested")])
    assert s1.id == 1 and s1.version == 3
    r = s1.field("r")
    assert r.id == 3 and r.description == "nested"
    assert isinstance(r.type, RowType)
    assert [(f.name, f.id) for f in r.type.fields] == [("a", 4), ("b", 6)]
    assert s1.highest_field_id == 6
    s2 = mgr.commit_changes([AddColumn("z", IntType(), first=True), AddColumn("w", IntType(), after="id")])
    assert s2.field_names == ["z", "id", "w", "v", "dt", "r"]
    assert (s2.field("z").id, s2.field("w").id, s2.highest_field_id) == (7, 8, 8)
    assert mgr.latest() == s2


def test_add_column_rules(mgr: SchemaManager) -> None:
    make(mgr)
    with pytest.raises(InvalidInput, match="NOT NULL"):
        mgr.commit_changes([AddColumn("n", IntType(nullable=False))])
    with pytest.raises(AlreadyExists, match="'v'"):
        mgr.commit_changes([AddColumn("v", IntType())])
    assert mgr.list_ids() == [0]


def test_drop_column_rules(mgr: SchemaManager) -> None:
    make(mgr, "id BIGINT, v STRING, w INT, dt STRING")
    for col in ("id", "dt"):
        with pytest.raises(InvalidInput, match="cannot drop partition key or primary key"):
            mgr.commit_changes([DropColumn(col)])
    with pytest.raises(NotFound):
        mgr.commit_changes([DropColumn("zz")])
    s = mgr.commit_changes([DropColumn("v")])
    assert s.field_names == ["id", "w", "dt"] and s.highest_field_id == 3


def test_drop_all_columns_refused(mgr: SchemaManager) -> None:
    make(mgr, "a INT, b INT", pk=(), part=())
    with pytest.raises(InvalidInput, match="every column"):
        mgr.commit_changes([DropColumn("a"), DropColumn("b")])


def test_rename_column_rules(mgr: SchemaManager) -> None:
    make(mgr, "id BIGINT, v STRING, dt STRING", bucket="2", **{"bucket-key": "id"})
    with pytest.raises(InvalidInput, match="cannot rename partition column 'dt'"):
        mgr.commit_changes([RenameColumn("dt", "day")])
    with pytest.raises(AlreadyExists):
        mgr.commit_changes([RenameColumn("v", "id")])
    with pytest.raises(NotFound):
        mgr.commit_changes([RenameColumn("zz", "yy")])
    s = mgr.commit_changes([RenameColumn("v", "value")])
    assert s.field_names == ["id", "value", "dt"] and s.field("value").id == 1
    # renaming a primary-key column carries over to the key lists (Java 1.x)
    s = mgr.commit_changes([RenameColumn("id", "key")])
    assert s.primary_keys == ["key", "dt"]
    assert s.options["bucket-key"] == "key"
    assert s.field("key").id == 0


def test_update_comment_and_options(mgr: SchemaManager) -> None:
    make(mgr, **{"write-only": "true"})
    s = mgr.commit_changes([UpdateComment("hello"), SetOption("snapshot.num-retained.min", "3"), RemoveOption("write-only")])
    assert s.comment == "hello"
    assert s.options == {"snapshot.num-retained.min": "3"}
    assert '"comment" : "hello",\n  "timeMillis"' in mgr.file_io.read_text(mgr.schema_path(1))
    s = mgr.commit_changes([UpdateComment(None)])
    assert s.comment is None and '"comment"' not in s.to_json()


def test_alter_validates_result_and_typos(mgr: SchemaManager) -> None:
    make(mgr)
    with pytest.raises(InvalidInput, match="merge-engine 'foo'"):
        mgr.commit_changes([SetOption("merge-engine", "foo")])
    with pytest.raises(InvalidInput, match="did you mean 'changelog-producer'"):
        mgr.commit_changes([SetOption("changelog-producr", "lookup")])
    with pytest.raises(InvalidInput, match="only be given when the table is created"):
        mgr.commit_changes([SetOption("primary-key", "v")])
    assert mgr.list_ids() == [0]


def test_immutable_options_locked_once_there_are_snapshots(mgr: SchemaManager) -> None:
    make(mgr, bucket="2", **{"merge-engine": "deduplicate"})
    # no snapshots yet: immutable options may still change
    s = mgr.commit_changes([SetOption("merge-engine", "partial-update")])
    assert s.options["merge-engine"] == "partial-update"
    mgr.file_io.write_bytes(join(mgr.branch_root, "snapshot", "snapshot-1"), b"{}")
    assert mgr.has_snapshots()
    for change, match in [
        (SetOption("merge-engine", "deduplicate"), "'merge-engine' cannot be changed"),
        (RemoveOption("merge-engine"), "'merge-engine' cannot be changed"),
        (SetOption("sequence.field", "v"), "'sequence.field' cannot be changed"),
        (SetOption("bucket-key", "id"), "'bucket-key' cannot be changed"),
        (SetOption("bucket", "-1"), "to -1"),
        (RemoveOption("bucket"), "cannot reset 'bucket'"),
    ]:
        with pytest.raises(InvalidInput, match=match):
            mgr.commit_changes([change])
    # rescaling a fixed bucket count is allowed (Java leaves old files at their old count)
    assert mgr.commit_changes([SetOption("bucket", "4")]).bucket == 4


def test_dynamic_bucket_cannot_change_with_data(mgr: SchemaManager) -> None:
    make(mgr, pk=("id", "dt"))
    mgr.file_io.write_bytes(join(mgr.branch_root, "snapshot", "snapshot-3"), b"{}")
    with pytest.raises(InvalidInput, match="bucket = -1"):
        mgr.commit_changes([SetOption("bucket", "4")])


def test_update_column_type(mgr: SchemaManager) -> None:
    make(mgr, "id BIGINT, n INT NOT NULL, v STRING, p DECIMAL(10, 2), ts TIMESTAMP(3), dt STRING")
    s = mgr.commit_changes([UpdateColumnType("n", BigIntType()), UpdateColumnType("p", DecimalType(12, 2)), UpdateColumnType("ts", TimestampType(6))])
    assert s.field("n").type == BigIntType(nullable=False)  # nullability kept
    assert s.field("p").type == DecimalType(12, 2)
    assert s.field("n").id == 1
    for change, match in [
        (UpdateColumnType("n", IntType()), "without losing"),
        (UpdateColumnType("v", IntType()), "without losing"),
        (UpdateColumnType("dt", VarCharType(10)), "partition column"),
        (UpdateColumnType("id", VarCharType()), "primary key column"),
        (UpdateColumnType("v", ArrayType(element=IntType())), "nested"),
    ]:
        with pytest.raises(InvalidInput, match=match):
            mgr.commit_changes([change])


def test_alter_missing_table(mgr: SchemaManager) -> None:
    with pytest.raises(NotFound):
        mgr.commit_changes([SetOption("write-only", "true")])


def test_alter_upgrades_old_schema_to_version_3(mgr: SchemaManager) -> None:
    old = APPEND_SCHEMA.replace('  "version" : 3,\n', "").replace('"primaryKeys" : [ ]', '"primaryKeys" : [ "a" ]')
    old = old.replace('"type" : "INT"', '"type" : "INT NOT NULL"')
    mgr.file_io.write_bytes(mgr.schema_path(0), old.encode())
    s = mgr.commit_changes([SetOption("write-only", "true")])
    assert s.version == 3 and s.id == 1
    # the compatibility defaults become explicit, as Java writes them
    assert s.options == {"bucket": "1", "file.format": "orc", "write-only": "true"}


def test_alter_of_old_bucketed_append_table_is_refused_like_java(mgr: SchemaManager) -> None:
    # a 0.7 append table is implicitly bucket=1 without bucket-key; as a version-3 schema
    # that is invalid, so Java's SchemaValidation refuses the alter as well
    mgr.file_io.write_bytes(mgr.schema_path(0), APPEND_SCHEMA.replace('  "version" : 3,\n', "").encode())
    with pytest.raises(InvalidInput, match="needs a 'bucket-key'"):
        mgr.commit_changes([SetOption("write-only", "true")])


def test_commit_race_lost_is_commit_conflict(mgr: SchemaManager, monkeypatch) -> None:
    make(mgr)
    other = SchemaManager(mgr.file_io, mgr.table_path)
    real_latest = mgr.latest
    stale = real_latest()

    def stale_latest():
        # the other writer commits schema-1 after we read schema-0
        other.commit_changes([SetOption("write-only", "true")], has_snapshots=False)
        return stale

    monkeypatch.setattr(mgr, "latest", stale_latest)
    with pytest.raises(CommitConflict, match="schema-1"):
        mgr.commit_changes([AddColumn("x", IntType())], has_snapshots=False)
    winner = real_latest()
    assert winner is not None and winner.id == 1 and "x" not in winner.field_names
    assert winner.options == {"write-only": "true"}
