"""Shared ``Annotated`` option aliases and the helpers that turn them into core values.

Every command declares the global conventions itself (so options may follow the command:
``paimon-cli inspect snapshots db.t -w /x -o json``). Nothing heavy is imported here: the
catalog and fsspec load only when a command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from .core.durations import DURATION_GRAMMAR, TIME_GRAMMAR
from .output import OutputFormat

if TYPE_CHECKING:
    from .core.catalog import FileSystemCatalog
    from .core.identifiers import Identifier

DEFAULT_WAREHOUSE = "./warehouse"

WarehouseOpt = Annotated[
    str,
    typer.Option(
        "--warehouse",
        "-w",
        envvar="PAIMON_WAREHOUSE",
        metavar="PATH|URI",
        help="Warehouse root (local path, file://, s3://, ...).",
    ),
]
FsOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--fs-option",
        metavar="K=V",
        help="Filesystem (fsspec) option, repeatable; dotted keys nest. Also PAIMON_FS_OPTIONS.",
    ),
]
OutputOpt = Annotated[
    OutputFormat,
    typer.Option("--output", "-o", envvar="PAIMON_OUTPUT", case_sensitive=False, help="Output format."),
]
WideOpt = Annotated[bool, typer.Option("--wide", help="Do not truncate table cells to the terminal width.")]
DryRunOpt = Annotated[
    bool,
    typer.Option("--dry-run", help="Print exactly what a real run would delete or change (files and bytes, "
                                   "also as -o json); change nothing."),
]
BranchOpt = Annotated[Optional[str], typer.Option("--branch", metavar="NAME", help="Branch (default: main).")]
DebugOpt = Annotated[
    bool, typer.Option("--debug", envvar="PAIMON_DEBUG", help="Show the full traceback on errors.")
]
SnapshotOpt = Annotated[
    Optional[int], typer.Option("--snapshot", metavar="ID", min=1, help="Time travel to snapshot ID.")
]
TagOpt = Annotated[Optional[str], typer.Option("--tag", metavar="TAG", help="Time travel to a tag.")]
TimestampOpt = Annotated[
    Optional[str],
    typer.Option(
        "--timestamp",
        metavar="ISO|MILLIS",
        help="Time travel to the latest snapshot at or before this time (epoch millis or ISO-8601; "
        "ISO without offset is local time).",
    ),
]


def duration_option(flag: str, what: str) -> Any:
    """A duration option (``--time-retained``): ``what`` then the one command-line grammar
    (core.durations); parse the value with ``core.durations.parse_duration``."""
    return typer.Option(flag, metavar="DURATION", help=f"{what} A duration is {DURATION_GRAMMAR}; a bare "
                        "number is refused.")


def time_option(flag: str, what: str) -> Any:
    """A point-in-time option (``--older-than``): ``what`` then the one command-line grammar;
    parse the value with ``core.durations.parse_point_in_time``."""
    return typer.Option(flag, metavar="DURATION|ISO", help=f"{what} Give {TIME_GRAMMAR}; a duration is "
                        f"{DURATION_GRAMMAR}; a bare number is refused.")


def open_catalog(warehouse: str, fs_options: list[str] | None) -> FileSystemCatalog:
    """The filesystem catalog for ``--warehouse`` and ``--fs-option`` (env merged by core)."""
    from .core.catalog import FileSystemCatalog
    from .core.fileio import parse_storage_options

    return FileSystemCatalog(warehouse, parse_storage_options(fs_options or []))


def parse_identifier(text: str) -> Identifier:
    from .core.identifiers import Identifier

    return Identifier.parse(text)


def parse_branch(branch: str | None) -> str | None:
    """``--branch`` validated like Java; ``main`` (any case) means the main branch (None)."""
    if branch is None or branch.lower() == "main":
        return None
    from .core.identifiers import validate_name

    return validate_name("branch", branch)


def parse_key_values(pairs: list[str] | None, flag: str) -> dict[str, str]:
    """``k=v`` strings to a dict; the first ``=`` splits; an empty key is invalid input."""
    from .core.errors import InvalidInput

    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"{flag} {pair!r}: expected key=value")
        out[key.strip()] = value
    return out


def parse_timestamp_millis(text: str) -> int:
    """Time travel's ``--timestamp``: epoch millis or ISO-8601 (``2024-05-01``,
    ``2024-05-01 12:00:00``, ``...Z``; no offset = local time, as Paimon's scan.timestamp)."""
    from .core.durations import parse_iso_time
    from .core.errors import InvalidInput

    s = text.strip()
    if s.lstrip("-").isdigit():
        millis = int(s) if len(s) <= 20 else None  # (int() refuses 4,300+ digits anyway)
        if millis is None or not -(1 << 63) <= millis < (1 << 63):
            shown = s if len(s) <= 24 else s[:21] + "..."
            raise InvalidInput(f"--timestamp {shown!r}: epoch milliseconds out of range (a Java long)")
        return millis
    millis = parse_iso_time(s)
    if millis is None:
        raise InvalidInput(f"--timestamp {text!r}: expected epoch millis or ISO-8601 date-time")
    return millis


def time_travel(snapshot: int | None, tag: str | None, timestamp: str | None) -> Any:
    """``--snapshot``/``--tag``/``--timestamp`` (at most one) to core's ``TimeTravel`` or None."""
    given = [n for n, v in (("--snapshot", snapshot), ("--tag", tag), ("--timestamp", timestamp)) if v is not None]
    if not given:
        return None
    if len(given) > 1:
        raise typer.BadParameter(f"give at most one of {', '.join(given)}")
    from .core.identifiers import validate_name

    tag_name = validate_name("tag", tag) if tag is not None else None
    millis = parse_timestamp_millis(timestamp) if timestamp is not None else None
    from .core.table import TimeTravel

    return TimeTravel(snapshot_id=snapshot, tag=tag_name, timestamp_millis=millis)
