"""Thin fastavro wrapper for Paimon's manifest-type Avro container files.

fastavro does all of the container work (header, sync markers, blocks, the null/deflate/
snappy/zstandard codecs; zstandard needs ``backports.zstd`` before Python 3.14). The
wrapper exists because (1) every decode failure must become one ``CorruptMetadata`` line
naming the file, and (2) fastavro turns ``timestamp-millis`` into datetimes, but
``_CREATION_TIME`` is a wall clock stored as UTC millis and callers want the raw int.

Header difference vs Java: fastavro writes ``avro.schema`` with ``json.dumps`` default
separators (``", "``/``": "``) where Avro Java prints compact JSON. Names, namespace, key
order and types are Java's (we hand fastavro the unparsed schema), and Java's reader parses
that JSON and matches fields by name, so the whitespace is harmless.
"""

from __future__ import annotations

import datetime
import io
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, cast

from ..errors import CorruptMetadata, InvalidInput, MissingMetadata, NotFound, NotYetSupported
from ..io.fileio import FileIO, join

JAVA_SYNC_INTERVAL = 64_000  # Avro Java DataFileConstants.DEFAULT_SYNC_INTERVAL
ZSTD_LEVEL = 1  # Paimon's ``file.compression.zstd-level`` default
NAMESPACE = "org.apache.paimon.avro.generated"
CODECS = ("null", "deflate", "snappy", "zstandard")
MAGIC = b"Obj\x01"  # Avro container files begin with these four bytes (Avro spec)
# fastavro is imported where a file is read or written: commands that read only JSON metadata
# (`inspect snapshots`, `list`) import this module through the feature gate and need no Avro.


def schema_json(schema: Any) -> str:
    """Compact JSON exactly as Avro Java's ``Schema.toString()`` prints a schema we built
    in Java's key order (``type``, ``name``, ``namespace``, ``fields``; ``name``, ``type``,
    ``default``); used to compare schemas with Java's text."""
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def _one_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def read_avro(data: bytes, path: str) -> tuple[Any, list[dict[str, Any]]]:
    """Return (writer schema as JSON object, records as dicts keyed by field name).

    fastavro applies logical types of the writer schema (a ``timestamp-millis`` long comes
    back as an aware UTC datetime; see :func:`epoch_millis`). Null records of a 0.2-era
    top-level ``["null", record]`` union are dropped.
    """
    raw = bytes(data)
    if raw[:4] != MAGIC:  # fastavro skips the magic check; a Parquet file would "decode" as garbage
        raise CorruptMetadata(path, f"not an Avro container file (magic {raw[:4].hex() or 'empty'})")
    import fastavro

    try:
        reader = fastavro.reader(io.BytesIO(raw))
        writer_schema = json.loads(reader.metadata["avro.schema"])
        # a manifest-type file's records are Avro records: dicts (fastavro types any Avro value)
        records = cast(list[dict[str, Any]], [r for r in reader if r is not None])
    except Exception as e:  # fastavro and the codecs raise many kinds (ValueError, EOFError, KeyError, ZstdError)
        raise CorruptMetadata(path, f"cannot decode Avro: {_one_line(e)}") from e
    return writer_schema, records


_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def epoch_millis(value: Any) -> int | None:
    """The raw long behind a ``timestamp-millis`` field that fastavro turned into a datetime."""
    if value is None or isinstance(value, int):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return (value - _EPOCH_UTC) // datetime.timedelta(milliseconds=1)


def write_avro(schema: Any, records: list[dict[str, Any]], codec: str = "zstandard") -> bytes:
    """An Avro container file of ``records`` written by ``fastavro.writer``.

    The schema is passed unparsed so the header keeps Java's record names and namespace
    (a parsed schema would be printed with expanded full names); zstandard uses level 1 and
    blocks follow Java's 64 kB sync interval.
    """
    if codec not in CODECS:
        raise InvalidInput(f"unsupported Avro codec {codec!r} (choose from {', '.join(CODECS)})")
    import fastavro

    buf = io.BytesIO()
    fastavro.writer(
        buf,
        schema,
        records,
        codec=codec,
        sync_interval=JAVA_SYNC_INTERVAL,
        codec_compression_level=ZSTD_LEVEL if codec == "zstandard" else None,
    )
    return buf.getvalue()


# ---------------------------------------------------------------------------------------
# Object files: manifest lists, manifests, index manifests
# ---------------------------------------------------------------------------------------


def optional_field(name: str, t: Any) -> dict[str, Any]:
    """A nullable field as Java writes it: ``["null", T]`` with a null default."""
    return {"name": name, "type": ["null", t], "default": None}


def check_version(r: dict[str, Any], expected: int, path: str) -> None:
    """Refuse a record whose ``_VERSION`` is not the layout we read (absent: pre-versioned)."""
    v = r.get("_VERSION")
    if isinstance(v, int) and v > expected:  # a layout a newer Paimon writes: refused by name, not corrupt
        raise NotYetSupported(f"{path}: manifest _VERSION {v} (written by a newer Paimon) is not supported; "
                              f"this toolkit reads _VERSION {expected}")
    if v is not None and v != expected:
        hint = " (written by an incompatible old version; Java asks to recreate the table)" if v < expected else ""
        raise CorruptMetadata(path, f"unsupported manifest _VERSION {v}, expected {expected}{hint}")


def _convert(records: list[dict[str, Any]], fn: Any, path: str) -> list[Any]:
    try:
        return [fn(r, path) for r in records]
    except CorruptMetadata:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise CorruptMetadata(path, f"malformed record ({type(e).__name__}: {e})") from e


@dataclass
class _Namer:
    prefix: str
    base: str = field(default_factory=lambda: str(uuid.uuid4()))
    counter: int = 0

    def next(self) -> str:
        name = f"{self.prefix}-{self.base}-{self.counter}"
        self.counter += 1
        return name


def _record_of(t: Any) -> dict[str, Any] | None:
    """The record schema inside a field type (a bare record or a ``["null", record]`` union)."""
    for x in t if isinstance(t, list) else [t]:
        if isinstance(x, dict) and x.get("type") == "record":
            return x
    return None


def unknown_fields(writer: Any, reader: Any, prefix: str = "") -> list[str]:
    """Dotted paths of record fields the writer schema has and ``reader`` lacks."""
    w, r = _record_of(writer), _record_of(reader)
    if w is None or r is None:
        return []
    known = {f["name"]: f["type"] for f in r.get("fields", [])}
    out: list[str] = []
    for f in w.get("fields", []):
        name = f"{prefix}{f['name']}"
        if f["name"] not in known:
            out.append(name)
        else:
            out += unknown_fields(f["type"], known[f["name"]], f"{name}.")
    return out


def _value_at(record: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(record, dict):
            return None
        record = record.get(part)
    return record


def check_unknown_fields(writer_schema: Any, reader_schema: Any, records: list[dict[str, Any]], path: str,
                         ignorable: frozenset[str] = frozenset()) -> None:
    """Refuse a file whose records carry values in fields we do not know.

    Such a field was added by a newer Paimon: reading past it may misread the file, and every
    rewrite (a commit's manifest merge, ``compact-manifest``) would silently drop it. Fields that
    are present but null everywhere are harmless (Java writes every field of its schema).
    """
    for name in unknown_fields(writer_schema, reader_schema):
        if name in ignorable:
            continue
        if any(_value_at(r, name) is not None for r in records):
            raise NotYetSupported(f"{path}: manifest field {name} (written by a newer Paimon) is not supported")


class ObjectsFile:
    """A file of Avro records in the manifest directory (Java's ``ObjectsFile``).

    Subclasses name the file prefix, the schema and the record converters; reading and
    writing, naming and codec handling live here once.
    """

    prefix: str = ""
    schema: dict[str, Any] = {}
    # writer fields we may drop: peers' extras that Java ignores too
    ignorable_fields: frozenset[str] = frozenset()

    def __init__(self, file_io: FileIO, manifest_dir: str, codec: str = "zstandard") -> None:
        self.file_io = file_io
        self.manifest_dir = manifest_dir
        self.codec = codec
        self._names = _Namer(self.prefix)

    def _read_objects(self, name: str, from_record: Any) -> tuple[str, list[Any]]:
        path = join(self.manifest_dir, name)
        try:
            data = self.file_io.read_bytes(path)
        except NotFound as e:
            raise MissingMetadata(str(e)) from e
        writer_schema, records = read_avro(data, path)
        objects = _convert(records, from_record, path)  # a file of another layout is corrupt first
        check_unknown_fields(writer_schema, self.schema, records, path, self.ignorable_fields)
        return path, objects

    def _write_records(self, records: list[dict[str, Any]]) -> tuple[str, int]:
        """Write a new file (empty is legal); returns (file name, size in bytes)."""
        data = write_avro(self.schema, records, self.codec)
        name = self._names.next()
        self.file_io.write_bytes(join(self.manifest_dir, name), data)
        return name, len(data)
