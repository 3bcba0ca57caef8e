"""Partitions as users name them: ``--partition`` specs, ``--where`` on partition columns, labels.

Every job that acts on some partitions (write ``--overwrite --partition``, compact, rescale,
rewrite-file-index, sort compaction) parses the user's spelling here and matches it against
serialized partition rows; messages and plans render partitions back with
:func:`partition_label`, in the same ``k=v,k2=v2`` syntax the user types.

A selection that matches no live partition is an error of its own (:func:`selected_entries`,
``NoPartitionMatched``, exit 3), not "nothing to do": a mistyped value in a cron line
(``--partition dt=2024-05-09``) must not pass as a quiet run. Overwrites and reads name
partitions too, but there no match is a legitimate answer (a new partition, an empty
result); they only say so, in the same words (:func:`no_match_message`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..data.binary_row import deserialize
from ..data.predicate_parser import parse_predicate
from ..errors import InvalidInput, NoPartitionMatched
from ..io import paths
from .scan import FileStoreScan, ScanFilter

if TYPE_CHECKING:
    from ..manifest.manifest import ManifestEntry
    from ..refs.snapshot import Snapshot
    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable


def parse_partition_spec(pairs: Iterable[str]) -> dict[str, str]:
    """``k=v`` strings (``write --partition``) to ONE spec dict."""
    out: dict[str, str] = {}
    for p in pairs:
        k, sep, v = p.partition("=")
        if not sep or not k.strip():
            raise InvalidInput(f"--partition {p!r}: expected key=value")
        out[k.strip()] = v
    return out


def check_partition_spec(schema: TableSchema, spec: Mapping[str, Any]) -> None:
    """InvalidInput unless every key of ``spec`` is a partition key of ``schema``."""
    if not schema.partition_keys:
        raise InvalidInput(f"--partition {dict(spec)}: the table is not partitioned")
    unknown = [k for k in spec if k not in schema.partition_keys]
    if unknown:
        raise InvalidInput(f"--partition: {unknown[0]!r} is not a partition key (keys: {schema.partition_keys})")


def parse_partition_specs(values: Sequence[str], schema: TableSchema) -> list[dict[str, str]]:
    """``--partition`` values to specs: ``;`` separates alternatives (OR), ``,`` joins keys (AND).

    Repeating ``--partition`` also ORs, as Paimon's compact action does.
    """
    specs: list[dict[str, str]] = []
    keys = schema.partition_keys
    for value in values:
        for alt in value.split(";"):
            if not alt.strip():
                continue
            spec: dict[str, str] = {}
            for pair in alt.split(","):
                k, sep, v = pair.partition("=")
                k = k.strip()
                if not sep or not k:
                    raise InvalidInput(f"--partition {value!r}: expected k=v[,k2=v2][;k=v...]")
                if not keys:
                    raise InvalidInput(f"--partition {value!r}: the table is not partitioned")
                if k not in keys:
                    raise InvalidInput(f"--partition {value!r}: {k!r} is not a partition key (keys: {keys})")
                if k in spec:
                    raise InvalidInput(f"--partition {value!r}: key {k!r} given twice")
                spec[k] = v
            specs.append(spec)
        if not value.strip(";").strip():
            raise InvalidInput(f"--partition {value!r}: empty partition spec")
    return specs


class PartitionSelection:
    """The partitions a ``--partition`` / ``--where`` names: a predicate on serialized
    partitions that remembers how the user spelt it, to name it when it matches nothing."""

    def __init__(self, spelling: str, matches: Callable[[bytes], bool]) -> None:
        self.spelling = spelling
        self._matches = matches

    def __call__(self, partition: bytes) -> bool:
        return self._matches(partition)

    def no_match_message(self, table: FileStoreTable) -> str:
        return no_match_message(self.spelling, table)


def no_match_message(spelling: str, table: FileStoreTable, outcome: str = "") -> str:
    """``--partition dt=x matched no partition of db.t ...`` -- the one wording of every
    command whose partition selection came up empty; ``outcome`` says what followed."""
    name = str(table.identifier)
    where = name if table.branch is None else f"{name} (branch {table.branch})"
    inspect = f"paimon-cli inspect partitions {name}" + ("" if table.branch is None else f" --branch {table.branch}")
    return f"{spelling} matched no partition of {where}{outcome} (`{inspect}` lists them)"


def spec_spelling(spec: Mapping[str, Any]) -> str:
    """A static partition spec as the user typed it: ``--partition k=v,k2=v2``."""
    return "--partition " + ",".join(f"{k}={v}" for k, v in spec.items())


def partition_filter(
    schema: TableSchema, specs: Sequence[Mapping[str, str]] | None, where: str | None, *, command: str = "",
) -> PartitionSelection | None:
    """A predicate on serialized partitions for ``--partition`` specs or ``--where`` (not both);
    ``command`` is the running command a refused ``--where`` names."""
    if specs and where:
        raise InvalidInput("give either --partition or --where, not both")
    if not specs and not where:
        return None
    if where:
        return PartitionSelection(f"--where {where!r}", _where_filter(schema, where, command))
    text = ";".join(spec_spelling(spec).removeprefix("--partition ") for spec in specs or [])
    return PartitionSelection(f"--partition {text}", _spec_filter(schema, specs or []))


def selected_entries(
    table: FileStoreTable, snapshot: Snapshot | None, selection: PartitionSelection | None
) -> list[ManifestEntry]:
    """The live files of ``snapshot`` in the selected partitions (all without a selection).
    NoPartitionMatched when a selection matches no live partition, the table's first snapshot
    not written yet included: the same refusal for a real run, ``--plan`` and ``--dry-run``."""
    entries = [] if snapshot is None else FileStoreScan(table).plan(snapshot, ScanFilter(partition=selection))
    if selection is not None and not entries:
        raise NoPartitionMatched(selection.no_match_message(table))
    return entries


def _where_filter(schema: TableSchema, where: str, command: str) -> Callable[[bytes], bool]:
    """``--where`` over partition columns, decided once per partition from its values."""
    keys = schema.partition_keys
    who = f"{command} " if command else ""
    if not keys:
        raise InvalidInput(f"--where: the table is not partitioned; {who}filters partitions only")
    pred = parse_predicate(where, list(schema.fields))
    others = sorted(pred.columns() - set(keys))
    if others:
        raise InvalidInput(
            f"--where: {who}selects partitions only; {others[0]!r} is not a partition key (keys: {keys})"
        )
    types = schema.partition_types
    cache: dict[bytes, bool] = {}

    def by_where(part: bytes) -> bool:
        hit = cache.get(part)
        if hit is None:
            values = deserialize(part, types)
            stats = {k: (v, v, 1 if v is None else 0, 1) for k, v in zip(keys, values, strict=True)}
            hit = cache[part] = bool(pred.might_match(stats))
        return hit

    return by_where


def _renderings(value: Any, t: Any) -> set[str]:
    """The directory spellings of a partition value (legacy and non-legacy names)."""
    out = set()
    for legacy in (True, False):
        try:
            s = paths.partition_value_to_str(value, t, legacy)
        except Exception:  # noqa: BLE001 - a rendering that does not apply
            continue
        if s is not None:
            out.add(s)
    return out


def _spec_filter(schema: TableSchema, specs: Sequence[Mapping[str, str]]) -> Callable[[bytes], bool]:
    """``--partition`` specs (ORed; keys of one spec ANDed), values compared as spelled."""
    types = schema.partition_types
    keys = schema.partition_keys
    default = schema.core_options.partition_default_name
    cache: dict[bytes, bool] = {}
    wanted = [[(keys.index(k), v) for k, v in spec.items()] for spec in specs]

    def matches(values: list[Any], conj: list[tuple[int, str]]) -> bool:
        for i, want in conj:
            v = values[i]
            if v is None or (isinstance(v, str) and not v.strip()):
                ok = want == default
            else:
                ok = want in _renderings(v, types[i])
            if not ok:
                return False
        return True

    def by_spec(part: bytes) -> bool:
        hit = cache.get(part)
        if hit is None:
            values = deserialize(part, types)
            hit = cache[part] = any(matches(values, conj) for conj in wanted)
        return hit

    return by_spec


def static_partition_filter(schema: TableSchema, spec: Mapping[str, Any]) -> Callable[[bytes], bool] | None:
    """A predicate for a (possibly partial) static partition spec of an overwrite or a
    partition drop (values as given: strings or Python values); None for ``{}``."""
    if not spec:
        return None
    keys = schema.partition_keys
    unknown = [k for k in spec if k not in keys]
    if unknown:
        if not keys:
            raise InvalidInput(f"overwrite partition {dict(spec)}: the table is not partitioned")
        raise InvalidInput(f"overwrite partition: {unknown[0]!r} is not a partition key (keys: {keys})")
    default = schema.core_options.partition_default_name
    wanted = [(keys.index(k), None if v is None else str(v)) for k, v in spec.items()]
    types = schema.partition_types
    cache: dict[bytes, bool] = {}

    def admits(v: Any, i: int, want: str | None) -> bool:
        if v is None:
            return want is None or want == default
        if want is None or want == default:
            return False
        return want in _value_spellings(v, types[i])

    def matches(partition: bytes) -> bool:
        hit = cache.get(partition)
        if hit is None:
            values = deserialize(partition, types)
            hit = cache[partition] = all(admits(values[i], i, want) for i, want in wanted)
        return hit

    return matches


def _value_spellings(value: Any, data_type: Any) -> set[str]:
    """The strings a user may give for a partition value (legacy and SQL-cast forms)."""
    out = _renderings(value, data_type)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        out.add(str(value))
    return out


def partition_label(schema: TableSchema, partition: bytes) -> str:
    """``k=v,k2=v2`` (the ``--partition`` syntax), "" for an unpartitioned table."""
    if not schema.partition_keys:
        return ""
    opts = schema.core_options
    values = deserialize(partition, schema.partition_types)
    strs = paths.partition_values_to_str(values, schema.partition_types, opts.partition_legacy_name)
    return ",".join(f"{k}={opts.partition_default_name if s is None else s}"
                    for k, s in zip(schema.partition_keys, strs, strict=True))
