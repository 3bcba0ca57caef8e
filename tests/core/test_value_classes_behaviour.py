"""The small value classes on the path of every command that opens a catalog or a table
behave exactly as the dataclasses they were: equality, hashing, repr, (im)mutability,
construction, validation and pickling (issue 28: generating a dataclass's methods costs
0.3-1 ms of start-up each, so these are written out by hand).

The reference below is the dataclass form of each class (fields, defaults, frozen or not).
"""

from __future__ import annotations

import copy
import inspect
import pickle
from collections.abc import Callable, Mapping
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest

from paimon_cli.core.catalog.base import Registration, TableEntry
from paimon_cli.core.catalog.options import CatalogOptions
from paimon_cli.core.data.types import DataField, IntType
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.io.fileio import FileStatus
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.table.catalog_environment import PartitionStatistics, TagPartitions
from paimon_cli.core.table.file_store_table import TimeTravel
from paimon_cli.core.table.identifiers import Identifier
from paimon_cli.core.utils.rows import Composite, Picked, Rows


@dataclass
class RefRows:
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    brief: list[str] | None = None
    root: str | None = None
    wrap: list[str] | None = None


@dataclass
class RefPicked:
    values: list[Any]
    index: Any = None


@dataclass
class RefComposite:
    keys: list[str] | None
    parts: list[Any]
    length: int
    valid: Any = None


@dataclass(frozen=True)
class RefFileStatus:
    path: str
    name: str
    size: int
    is_dir: bool
    mtime_millis: int | None


@dataclass(frozen=True)
class RefIdentifier:
    database: str
    table: str


@dataclass(frozen=True)
class RefCatalogOptions:
    raw: Mapping[str, str]
    name: str = ""
    sources: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RefTagPartitions:
    partitions: Any
    field: str


@dataclass(frozen=True)
class RefPartitionStatistics:
    spec: dict[str, str]
    record_count: int
    file_size_in_bytes: int
    file_count: int
    last_file_creation_time: int
    total_buckets: int


@dataclass(frozen=True)
class RefTableEntry:
    name: str
    kind: str = "paimon"
    location: str | None = None


@dataclass(frozen=True)
class RefRegistration:
    kind: str
    name: str
    location: str


@dataclass
class RefSchema:
    fields: list[DataField]
    partition_keys: list[str] = field(default_factory=list)
    primary_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None


@dataclass(frozen=True)
class RefTimeTravel:
    snapshot_id: int | None = None
    tag: str | None = None
    timestamp_millis: int | None = None


class Partitions:
    """A picklable stand-in for a metastore's partitions."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Partitions)

    def __hash__(self) -> int:
        return 1

    def __repr__(self) -> str:
        return "Partitions()"


PARTS = Partitions()

# (ours, reference, frozen, argument sets: (args, kwargs)) -- defaults, every field, keywords
CASES: list[tuple[type, type, bool, list[tuple[tuple[Any, ...], dict[str, Any]]]]] = [
    (Rows, RefRows, False, [((["a"],), {}), ((["a", "b"], [{"a": 1, "b": None}]), {}),
                            ((["a"], [{"a": 1}], ["a"], "/wh/t", ["a"]), {}),
                            ((), {"columns": ["x"], "wrap": ["x"]}), ((["a"], None), {})]),
    (Picked, RefPicked, False, [(([1, 2],), {}), (([1, 2], (0, 1, 1)), {}), ((), {"values": [], "index": None})]),
    (Composite, RefComposite, False, [((["k"], [1], 1), {}), ((None, [], 0, (True,)), {}),
                                      ((), {"keys": None, "parts": [2], "length": 3, "valid": None})]),
    (FileStatus, RefFileStatus, True, [(("/a/b", "b", 3, False, 17), {}), (("/a", "a", 0, True, None), {}),
                                       ((), {"path": "p", "name": "n", "size": 1, "is_dir": False,
                                             "mtime_millis": 2})]),
    (Identifier, RefIdentifier, True, [(("db", "t"), {}), (("db", "t2"), {}), ((), {"database": "d", "table": "t"})]),
    (CatalogOptions, RefCatalogOptions, True, [(({"warehouse": "/wh"},), {}), (({},), {}),
                                               (({"warehouse": "/w"}, "prod", {"warehouse": "--warehouse"}), {}),
                                               ((), {"raw": {}, "name": "x"})]),
    (TagPartitions, RefTagPartitions, True, [((PARTS, "dt"), {}), ((PARTS, "tag"), {}),
                                             ((), {"partitions": PARTS, "field": "x"})]),
    (PartitionStatistics, RefPartitionStatistics, True, [(({"dt": "1"}, 1, 2, 3, 4, 5), {}),
                                                         (({}, 0, 0, 0, 0, -1), {})]),
    (TableEntry, RefTableEntry, True, [(("t",), {}), (("v", "view", "/wh/db.db/v"), {}),
                                       ((), {"name": "t", "location": None})]),
    (Registration, RefRegistration, True, [(("table", "db.t", "/wh/db.db/t"), {}),
                                           ((), {"kind": "database", "name": "db", "location": "/wh/db.db"})]),
    (Schema, RefSchema, False, [(([DataField(0, "a", IntType())],), {}),
                                (([], ["dt"], ["id"], {"bucket": "1"}, "c"), {}),
                                ((), {"fields": [], "comment": "x", "options": {}}), (([], None, None, None), {})]),
    (TimeTravel, RefTimeTravel, True, [((), {}), ((3,), {}), ((None, "t"), {}), ((), {"timestamp_millis": 9})]),
]
PAIRS = [(ours, ref, frozen, args, kwargs) for ours, ref, frozen, sets in CASES for args, kwargs in sets]
IDS = [f"{ours.__name__}-{i}" for i, (ours, *_rest) in enumerate(PAIRS)]


def _fields(ref: type) -> tuple[str, ...]:
    return tuple(ref.__dataclass_fields__)  # type: ignore[attr-defined]


def _repr_of_ref(ours: type, ref: Any) -> str:
    return repr(ref).replace(type(ref).__qualname__ + "(", ours.__qualname__ + "(", 1)


@pytest.mark.parametrize(("ours", "ref", "frozen", "args", "kwargs"), PAIRS, ids=IDS)
def test_value_behaves_as_its_dataclass(ours: type, ref: type, frozen: bool, args: tuple[Any, ...],
                                        kwargs: dict[str, Any]) -> None:
    a, r = ours(*args, **kwargs), ref(*args, **kwargs)
    names = _fields(ref)
    assert tuple(getattr(a, n) for n in names) == tuple(getattr(r, n) for n in names)
    assert vars(a) == vars(r)
    assert repr(a) == _repr_of_ref(ours, r)
    assert a == ours(*args, **kwargs) and not a != ours(*args, **kwargs)
    assert a != r and a.__eq__(r) is NotImplemented and a.__eq__(object()) is NotImplemented
    assert ours.__match_args__ == ref.__match_args__  # type: ignore[attr-defined]
    if frozen:
        try:
            expected: Any = hash(r)
        except TypeError as e:
            with pytest.raises(TypeError, match=str(e)):
                hash(a)
        else:
            assert hash(a) == expected
        for n in (*names, "other"):
            with pytest.raises(FrozenInstanceError, match=f"cannot assign to field '{n}'"):
                setattr(a, n, 1)
            with pytest.raises(FrozenInstanceError, match=f"cannot delete field '{n}'"):
                delattr(a, n)
    else:
        assert ours.__hash__ is None
        with pytest.raises(TypeError, match="unhashable type"):
            hash(a)
        b = ours(*args, **kwargs)
        setattr(b, names[-1], "changed")
        setattr(r, names[-1], "changed")
        assert b != a and repr(b) == _repr_of_ref(ours, r)
    for twin in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert type(twin) is ours and repr(twin) == repr(a) and twin == a


@pytest.mark.parametrize(("ours", "ref"), [(o, r) for o, r, _f, _s in CASES], ids=[o.__name__ for o, *_ in CASES])
def test_constructor_signature_is_the_dataclass_one(ours: type, ref: type) -> None:
    def shape(cls: type) -> list[tuple[str, Any, str]]:
        return [(p.name, p.kind, repr(p.default)) for p in inspect.signature(cls).parameters.values()]

    assert shape(ours) == shape(ref)


def test_factory_defaults_are_fresh() -> None:
    a, b = Rows(["x"]), Rows(["x"])
    a.rows.append({"x": 1})
    assert b.rows == [] and a.rows is not b.rows
    s, t = Schema([]), Schema([])
    s.partition_keys.append("dt")
    s.primary_keys.append("id")
    s.options["k"] = "v"
    assert (t.partition_keys, t.primary_keys, t.options) == ([], [], {})
    assert CatalogOptions({}).sources == {} and CatalogOptions({}).sources is not CatalogOptions({}).sources


def test_cycles_repr_as_the_dataclass_does() -> None:
    a, r = Rows(["x"]), RefRows(["x"])
    a.rows.append({"self": a})
    r.rows.append({"self": r})
    assert repr(a) == _repr_of_ref(Rows, r)


@pytest.mark.parametrize("make", [
    lambda: Identifier("db", ""), lambda: Identifier("", "t"), lambda: Identifier("d b/", "t"),
    lambda: TimeTravel(1, "t"), lambda: TimeTravel(tag="t", timestamp_millis=1),
    lambda: CatalogOptions({"nope": "1"}), lambda: CatalogOptions({"metastore": "x"}),
    lambda: CatalogOptions({"lock.enabled": "maybe"}), lambda: CatalogOptions({"warehouse": 1}),  # type: ignore[dict-item]
])
def test_validation_on_construction(make: Callable[[], Any]) -> None:
    with pytest.raises(InvalidInput):
        make()


def test_methods_kept() -> None:
    assert str(Identifier("db", "t")) == "db.t" == Identifier.parse("db.t").full_name
    assert Identifier.parse("`db`.`t`") == Identifier("db", "t")
    assert TimeTravel().is_latest and not TimeTravel(tag="x").is_latest
    opts = CatalogOptions({"warehouse": "/wh"}).with_warehouse("/w2")
    assert opts == CatalogOptions({"warehouse": "/w2"}, "", {"warehouse": "--warehouse"})
    assert PartitionStatistics({"dt": "1"}, 1, 2, 3, 4, 5).to_json()["totalBuckets"] == 5
    assert Schema.of([("a", IntType(), None)], ["a"]) == Schema([DataField(0, "a", IntType())], ["a"], [], {}, None)
    assert TableEntry("t").is_paimon and not TableEntry("v", "view").is_paimon
    assert Registration("table", "db.t", "/l").as_row()["repaired"] == "/l"
    assert Rows(["a"], [{"a": 1}]).to_arrow().to_pylist() == [{"a": 1}]
