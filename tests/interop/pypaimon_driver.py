"""Driver run by pypaimon 2.1's own interpreter: JSON request on stdin, JSON answer on stdout.

This file is executed by the *peer* venv (pyarrow<20, fsspec<2026), never imported by the
product's test process, so it must not import anything from paimon_cli and must stay
runnable on the Python that venv was made with (3.10+).

Request::

    {"ops": [{"op": "create_table", ...}, {"op": "write", ...}, ...], "stop_on_error": true}

Answer::

    {"results": [{"ok": true, "result": ...} |
                 {"ok": false, "error": "KeyError", "message": "...", "traceback": "..."}]}

Wire encoding of values (both directions, chosen so that JSON stays lossless):

* date        -> ISO string ``"2024-01-02"``
* timestamp   -> ``datetime.isoformat()`` (``"2024-01-02T03:04:05.123000"``; no fraction when
  it is zero; ``+00:00`` suffix for zoned timestamps)
* time        -> ``time.isoformat()``
* decimal     -> string ``"12.30"`` (scale kept)
* binary      -> lowercase hex string
* float NaN/Inf -> the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``
* list / struct / map -> JSON list / object / list of ``[key, value]`` pairs

Many ops run in one process because importing pypaimon (pandas, polars) costs about a second.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import math
import re
import sys
import traceback
from typing import Any

# --------------------------------------------------------------------------------------
# types


def _parse_type(spec: str) -> Any:
    """``"int64"``, ``"decimal(10,2)"``, ``"timestamp[ms]"``, ``"timestamp[us, tz=UTC]"`` ..."""
    import pyarrow as pa

    s = spec.strip()
    simple = {
        "bool": pa.bool_(), "boolean": pa.bool_(),
        "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(),
        "float32": pa.float32(), "float": pa.float32(), "float64": pa.float64(),
        "double": pa.float64(),
        "string": pa.string(), "utf8": pa.string(), "large_string": pa.large_string(),
        "binary": pa.binary(), "large_binary": pa.large_binary(),
        "date32": pa.date32(), "date": pa.date32(),
    }
    if s in simple:
        return simple[s]
    m = re.fullmatch(r"decimal(?:128)?\((\d+)\s*,\s*(\d+)\)", s)
    if m:
        return pa.decimal128(int(m.group(1)), int(m.group(2)))
    m = re.fullmatch(r"timestamp\[(s|ms|us|ns)(?:\s*,\s*tz=([^\]]+))?\]", s)
    if m:
        return pa.timestamp(m.group(1), tz=m.group(2))
    m = re.fullmatch(r"time(32|64)\[(s|ms|us|ns)\]", s)
    if m:
        return pa.time32(m.group(2)) if m.group(1) == "32" else pa.time64(m.group(2))
    m = re.fullmatch(r"fixed_size_binary\[(\d+)\]", s)
    if m:
        return pa.binary(int(m.group(1)))
    m = re.fullmatch(r"list<(.+)>", s)
    if m:
        return pa.list_(_parse_type(m.group(1)))
    raise ValueError(f"unsupported column type {spec!r}")


def _arrow_schema(columns: list[Any], primary_keys: list[str]) -> Any:
    """Columns are ``[name, type]`` pairs or ``{"name", "type", "nullable"}`` objects.

    Primary-key columns are made NOT NULL, as Paimon requires.
    """
    import pyarrow as pa

    fields = []
    for col in columns:
        if isinstance(col, dict):
            name, type_s, nullable = col["name"], col["type"], col.get("nullable", True)
        else:
            name, type_s = col[0], col[1]
            nullable = True
        type_s = str(type_s).strip()
        if type_s.lower().endswith(" not null"):
            type_s, nullable = type_s[: -len(" not null")], False
        if name in primary_keys:
            nullable = False
        fields.append(pa.field(name, _parse_type(type_s), nullable=nullable))
    return pa.schema(fields)


# --------------------------------------------------------------------------------------
# value encoding


def _decode(value: Any, t: Any) -> Any:
    """Wire value -> Python value pyarrow accepts for arrow type ``t``."""
    import pyarrow as pa

    if value is None:
        return None
    if pa.types.is_date(t) and isinstance(value, str):
        return _dt.date.fromisoformat(value)
    if pa.types.is_timestamp(t) and isinstance(value, str):
        return _dt.datetime.fromisoformat(value)
    if pa.types.is_time(t) and isinstance(value, str):
        return _dt.time.fromisoformat(value)
    if pa.types.is_decimal(t):
        return decimal.Decimal(str(value))
    if (pa.types.is_binary(t) or pa.types.is_large_binary(t)
            or pa.types.is_fixed_size_binary(t)) and isinstance(value, str):
        return bytes.fromhex(value)
    if pa.types.is_floating(t) and isinstance(value, str):
        return float(value)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_decode(v, t.value_type) for v in value]
    if pa.types.is_struct(t):
        return {t.field(i).name: _decode(value.get(t.field(i).name), t.field(i).type)
                for i in range(t.num_fields)}
    if pa.types.is_map(t):
        return [(_decode(k, t.key_type), _decode(v, t.item_type)) for k, v in value]
    return value


def _render(value: Any) -> Any:
    """Python value from ``to_pylist()`` -> JSON-safe wire value."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): _render(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_render(v) for v in value]
    if hasattr(value, "isoformat"):  # pandas Timestamp and friends
        return value.isoformat()
    return str(value)


def _table_json(tbl: Any) -> dict[str, Any]:
    cols = list(tbl.schema.names)
    data = {c: tbl.column(c).to_pylist() for c in cols}
    rows = [{c: _render(data[c][i]) for c in cols} for i in range(tbl.num_rows)]
    return {"columns": cols, "types": {f.name: str(f.type) for f in tbl.schema}, "rows": rows}


# --------------------------------------------------------------------------------------
# ops


def _catalog(req: dict[str, Any]) -> Any:
    from pypaimon import CatalogFactory

    opts = {"warehouse": req["warehouse"]}
    opts.update({k: str(v) for k, v in (req.get("catalog_options") or {}).items()})
    return CatalogFactory.create(opts)


def _ident(req: dict[str, Any], suffix: str = "") -> str:
    name = f"{req['db']}.{req['table']}"
    if req.get("branch"):
        name += f"$branch_{req['branch']}"
    return name + suffix


def op_version(req: dict[str, Any]) -> Any:
    from importlib.metadata import version

    import pyarrow

    return {"pypaimon": version("pypaimon"), "pyarrow": pyarrow.__version__,
            "python": sys.version.split()[0]}


def op_list_databases(req: dict[str, Any]) -> Any:
    return sorted(_catalog(req).list_databases())


def op_list_tables(req: dict[str, Any]) -> Any:
    return sorted(_catalog(req).list_tables(req["db"]))


def op_create_table(req: dict[str, Any]) -> Any:
    from pypaimon import Schema

    cat = _catalog(req)
    cat.create_database(req["db"], True)
    pks = list(req.get("primary_keys") or [])
    schema = Schema.from_pyarrow_schema(
        _arrow_schema(req["columns"], pks),
        partition_keys=list(req.get("partition_keys") or []) or None,
        primary_keys=pks or None,
        options={k: str(v) for k, v in (req.get("options") or {}).items()},
        comment=req.get("comment"),
    )
    cat.create_table(_ident(req), schema, bool(req.get("ignore_if_exists", False)))
    table = cat.get_table(_ident(req))
    return {"path": str(table.table_path)}


def _target_schema(table: Any) -> Any:
    from pypaimon.schema.data_types import PyarrowFieldParser

    return PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)


def op_write(req: dict[str, Any]) -> Any:
    import pyarrow as pa

    table = _catalog(req).get_table(_ident(req))
    schema = _target_schema(table)
    rows = req["rows"]
    cols = {f.name: [_decode(r.get(f.name), f.type) for r in rows] for f in schema}
    data = pa.Table.from_pydict(cols, schema=schema)
    if req.get("postpone_fixed_bucket"):
        # postpone table (bucket = -2): route into real buckets, as Java's batch write does by
        # default; the plain builder writes into the postpone bucket (bucket-postpone/)
        builder = table.new_postpone_fixed_bucket_write_builder()
    else:
        builder = table.new_batch_write_builder()
    if req.get("overwrite"):
        builder = builder.overwrite(req.get("overwrite_partition") or None)
    write = builder.new_write()
    commit = builder.new_commit()
    try:
        write.write_arrow(data)
        commit.commit(write.prepare_commit())
    finally:
        write.close()
        commit.close()
    latest = table.snapshot_manager().get_latest_snapshot()
    return {"snapshot_id": None if latest is None else int(latest.id), "rows": data.num_rows}


def op_read(req: dict[str, Any]) -> Any:
    table = _catalog(req).get_table(_ident(req))
    if req.get("snapshot_id") is not None:
        table = table.copy({"scan.snapshot-id": str(req["snapshot_id"])})
    if req.get("tag"):
        table = table.copy({"scan.tag-name": str(req["tag"])})
    rb = table.new_read_builder()
    if req.get("projection"):
        rb = rb.with_projection(list(req["projection"]))
    tbl = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return _table_json(tbl)


def op_system_table(req: dict[str, Any]) -> Any:
    table = _catalog(req).get_table(_ident(req, "$" + req["name"].lstrip("$")))
    rb = table.new_read_builder()
    tbl = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return _table_json(tbl)


def op_list_system_tables(req: dict[str, Any]) -> Any:
    from pypaimon.table.system import system_table_loader

    return list(system_table_loader.SYSTEM_TABLES)


def op_create_tag(req: dict[str, Any]) -> Any:
    table = _catalog(req).get_table(_ident(req))
    table.create_tag(req["tag"], snapshot_id=req.get("snapshot_id"),
                     ignore_if_exists=bool(req.get("ignore_if_exists", False)),
                     time_retained=req.get("time_retained"))
    return None


def op_create_branch(req: dict[str, Any]) -> Any:
    table = _catalog(req).get_table(f"{req['db']}.{req['table']}")
    table.branch_manager().create_branch(req["new_branch"], tag_name=req.get("from_tag"))
    return None


def op_set_consumer(req: dict[str, Any]) -> Any:
    from pypaimon.consumer.consumer import Consumer

    table = _catalog(req).get_table(_ident(req))
    table.consumer_manager().reset_consumer(req["consumer"], Consumer(int(req["next_snapshot"])))
    return None


OPS = {
    "version": op_version,
    "create_table": op_create_table,
    "list_databases": op_list_databases,
    "list_tables": op_list_tables,
    "write": op_write,
    "read": op_read,
    "system_table": op_system_table,
    "list_system_tables": op_list_system_tables,
    "create_tag": op_create_tag,
    "create_branch": op_create_branch,
    "set_consumer": op_set_consumer,
}


def op_read_filtered(req: dict[str, Any]) -> Any:
    """``read`` with ``ReadBuilder.with_filter``: ``filters`` is ``[[method, field, [literals]]]``, ANDed.

    ``method`` names a ``PredicateBuilder`` method (``equal``, ``is_in``, ``greater_than``,
    ``is_null``, ...); literals use the wire encoding and are decoded with the field's type.
    """
    table = _catalog(req).get_table(_ident(req))
    if req.get("snapshot_id") is not None:
        table = table.copy({"scan.snapshot-id": str(req["snapshot_id"])})
    types = {f.name: f.type for f in _target_schema(table)}
    rb = table.new_read_builder()
    pb = rb.new_predicate_builder()
    preds = []
    for method, name, literals in req["filters"]:
        args = [_decode(v, types[name]) for v in (literals or [])]
        fn = getattr(pb, method)
        preds.append(fn(name, args) if method in ("is_in", "is_not_in") else fn(name, *args))
    rb = rb.with_filter(pb.and_predicates(preds))
    if req.get("projection"):
        rb = rb.with_projection(list(req["projection"]))
    tbl = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return _table_json(tbl)


OPS["read_filtered"] = op_read_filtered


def op_update_by_row_id(req: dict[str, Any]) -> Any:
    """Data evolution: ``TableUpdate.update_by_arrow_with_row_id`` of ``columns`` for the rows
    ``rows`` name by ``_ROW_ID``; one commit."""
    import pyarrow as pa

    table = _catalog(req).get_table(_ident(req))
    types = {f.name: f.type for f in _target_schema(table)}
    cols = list(req["columns"])
    rows = req["rows"]
    data = {"_ROW_ID": pa.array([int(r["_ROW_ID"]) for r in rows], pa.int64())}
    for c in cols:
        data[c] = pa.array([_decode(r.get(c), types[c]) for r in rows], type=types[c])
    builder = table.new_batch_write_builder()
    messages = builder.new_update().with_update_type(cols).update_by_arrow_with_row_id(pa.table(data))
    commit = builder.new_commit()
    try:
        commit.commit(messages)
    finally:
        commit.close()
    latest = table.snapshot_manager().get_latest_snapshot()
    return {"snapshot_id": None if latest is None else int(latest.id)}


OPS["update_by_row_id"] = op_update_by_row_id


def op_delete_by_row_id(req: dict[str, Any]) -> Any:
    """Data evolution with deletion vectors: ``TableDeleteByRowId.delete`` of ``row_ids``; one commit."""
    from pypaimon.write.table_delete import TableDeleteByRowId

    table = _catalog(req).get_table(_ident(req))
    messages = TableDeleteByRowId(table).delete([int(r) for r in req["row_ids"]])
    commit = table.new_batch_write_builder().new_commit()
    try:
        commit.commit(messages)
    finally:
        commit.close()
    latest = table.snapshot_manager().get_latest_snapshot()
    return {"snapshot_id": None if latest is None else int(latest.id),
            "next_row_id": None if latest is None else latest.next_row_id}


OPS["delete_by_row_id"] = op_delete_by_row_id


def op_create_global_index(req: dict[str, Any]) -> Any:
    """pypaimon's ``create_global_index`` (btree / bitmap on data-evolution tables): one commit."""
    table = _catalog(req).get_table(_ident(req))
    added = table.create_global_index(req["column"], index_type=req.get("index_type") or "btree")
    return {"added": int(added)}


OPS["create_global_index"] = op_create_global_index


def _rest_catalog(req: dict[str, Any]) -> Any:
    cat = _catalog(req)
    if not hasattr(cat, "rest_api"):
        raise ValueError("this op needs a REST catalog (catalog_options metastore=rest)")
    return cat


def op_rollback(req: dict[str, Any]) -> Any:
    """``FileStoreTable.rollback_to``: through the catalog's rollback endpoint on a REST catalog."""
    table = _catalog(req).get_table(_ident(req))
    table.rollback_to(req["tag"] if req.get("tag") else int(req["snapshot_id"]))
    return None


def op_catalog_create_tag(req: dict[str, Any]) -> Any:
    """``RESTCatalog.create_tag``: the tag is made by the server (``POST .../tags``)."""
    _rest_catalog(req).create_tag(_ident(req), req["tag"], snapshot_id=req.get("snapshot_id"),
                                  time_retained=req.get("time_retained"),
                                  ignore_if_exists=bool(req.get("ignore_if_exists", False)))
    return None


def op_catalog_list_tags(req: dict[str, Any]) -> Any:
    return list(_rest_catalog(req).list_tags_paged(_ident(req)).elements or [])


def op_catalog_delete_tag(req: dict[str, Any]) -> Any:
    _rest_catalog(req).delete_tag(_ident(req), req["tag"])
    return None


def op_drop_table(req: dict[str, Any]) -> Any:
    _catalog(req).drop_table(_ident(req), bool(req.get("ignore_if_not_exists", False)))
    return None


def op_latest_snapshot(req: dict[str, Any]) -> Any:
    """The latest snapshot as the table's snapshot manager sees it (a REST catalog answers it)."""
    snap = _catalog(req).get_table(_ident(req)).snapshot_manager().get_latest_snapshot()
    return None if snap is None else {"id": int(snap.id), "uuid": snap.uuid, "commit_kind": snap.commit_kind}


OPS.update({
    "rollback": op_rollback,
    "catalog_create_tag": op_catalog_create_tag,
    "catalog_list_tags": op_catalog_list_tags,
    "catalog_delete_tag": op_catalog_delete_tag,
    "drop_table": op_drop_table,
    "latest_snapshot": op_latest_snapshot,
})


def main() -> int:
    request = json.load(sys.stdin)
    ops = request["ops"] if "ops" in request else [request]
    stop = request.get("stop_on_error", True)
    results = []
    for req in ops:
        try:
            fn = OPS[req["op"]]
            results.append({"ok": True, "result": fn(req)})
        except Exception as e:  # noqa: BLE001 - reported to the caller verbatim
            results.append({"ok": False, "error": type(e).__name__, "message": str(e),
                            "traceback": traceback.format_exc()})
            if stop:
                break
    # stdout may carry pypaimon's own prints; the answer is the last line.
    sys.stdout.write("\n" + json.dumps({"results": results}) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
