"""Start-up stays light: --help/--version load no pyarrow, fastavro, pyspark, fsspec or rich;
small reads load no write or maintenance code; `inspect snapshots` and `list` (JSON metadata
and directory listings) load no data libraries and no pydantic."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HEAVY = ("pyarrow", "fastavro", "pyspark", "fsspec", "rich", "pandas", "numpy")
from paimon_cli.app import COMMANDS as REGISTERED

COMMANDS = list(REGISTERED)  # every registered command, so a new one is checked too


def _imported_modules(*args: str) -> set[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "paimon_cli", *args],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    mods = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            mods.add(line.rsplit("|", 1)[1].strip())
    assert mods, "no -X importtime output"
    return mods


@pytest.mark.parametrize("args", [["--help"], ["--version"], *[[c, "--help"] for c in COMMANDS]])
def test_help_and_version_import_nothing_heavy(args: list[str]) -> None:
    mods = _imported_modules(*args)
    heavy = sorted(m for m in mods if m.split(".")[0] in HEAVY)
    assert heavy == [], f"`paimon-cli {' '.join(args)}` imported {heavy}"


# What a read of a small table must not load (issue 28): the write, compaction, maintenance,
# Spark and Iceberg code, and polars (manifests of a few entries decode through fastavro).
# A module counts when it is one of these or lies under one.
NOT_FOR_READS = (
    "paimon_cli.core.compact",
    "paimon_cli.core.maintain",
    "paimon_cli.core.spark",
    "paimon_cli.core.iceberg",
    "paimon_cli.core.demo",
    "paimon_cli.core.catalog.drop",
    "paimon_cli.core.schema.schema_change",
    "paimon_cli.core.mergetree.file_writer",
    "paimon_cli.core.fileindex.writer",
    "paimon_cli.core.manifest.stats",
    "paimon_cli.core.operation.write",
    "paimon_cli.core.operation.commit",
    "paimon_cli.core.operation.expire",
    "paimon_cli.core.operation.orphans",
    "paimon_cli.core.operation.maintenance",
    "paimon_cli.core.operation.file_deletion",
    "paimon_cli.core.api.maintain",
    "pyspark",
    "polars",
    "polars_avro",
)


def _not_for_reads(mods: set[str]) -> list[str]:
    return sorted(m for m in mods if any(m == p or m.startswith(p + ".") for p in NOT_FOR_READS))


@pytest.mark.parametrize("args", [
    ["read", "demo.orders"],
    ["read", "demo.events", "--where", "user_id > 1"],
    ["inspect", "snapshots", "demo.orders"],
    ["list"],
    ["list", "demo"],
])
def test_small_reads_load_no_write_or_maintenance_code(demo_wh: str, args: list[str]) -> None:
    mods = _imported_modules("-w", demo_wh, "-o", "jsonl", *args)
    assert "paimon_cli.core.catalog.filesystem" in mods  # the command really opened the warehouse
    assert _not_for_reads(mods) == [], f"`paimon-cli {' '.join(args)}` imported {_not_for_reads(mods)}"


def test_write_into_a_small_table_loads_no_polars(tmp_path) -> None:
    """A write reads the latest snapshot's files for its sequence numbers; with a few files
    that merge runs on Arrow, so the write never pays polars' import (~0.35 s; issue 28)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wh = str(tmp_path / "wh")
    data = str(tmp_path / "in.parquet")
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}), data)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for argv in (["create", "db.t", "-w", wh, "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id",
                  "--option", "bucket=2"], ["write", "db.t", data, "-w", wh]):
        subprocess.run([sys.executable, "-m", "paimon_cli", *argv], check=True, capture_output=True, env=env,
                       timeout=60)
    mods = _imported_modules("write", "db.t", data, "-w", wh)  # the second commit: a snapshot to read
    assert "paimon_cli.core.operation.commit" in mods  # it really committed
    assert sorted(m for m in mods if m.split(".")[0] in ("polars", "polars_avro")) == []
# `inspect snapshots` reads JSON snapshot files and `list` lists directories: neither needs an
# Arrow, numpy, polars or Avro decoder, nor pydantic (typer 0.29 builds a pydantic TypeAdapter
# for every parameter it coerces; paimon_cli.coercion gives it a plain-Python path), nor fsspec
# on a local warehouse (FileIO builds its fsspec filesystem on first use).
NOT_FOR_METADATA = ("numpy", "pyarrow", "polars", "polars_avro", "fastavro", "pandas", "pydantic",
                    "pydantic_core", "fsspec")


@pytest.mark.parametrize("args", [
    ["inspect", "snapshots", "demo.orders"],
    ["inspect", "snapshots", "demo.orders", "--limit", "2"],
    ["list"],
    ["list", "demo"],
    ["-o", "table", "list"],
])
def test_snapshots_and_list_load_no_data_libraries_or_pydantic(demo_wh: str, args: list[str]) -> None:
    mods = _imported_modules("-w", demo_wh, "-o", "jsonl", *args)
    assert "paimon_cli.core.catalog.filesystem" in mods  # the command really opened the warehouse
    heavy = sorted(m for m in mods if m.split(".")[0] in NOT_FOR_METADATA)
    assert heavy == [], f"`paimon-cli {' '.join(args)}` imported {heavy}"


@pytest.mark.parametrize("table", ["demo.orders", "demo.events"])
def test_small_read_loads_no_pydantic_fsspec_or_numpy_ma(demo_wh: str, table: str) -> None:
    mods = _imported_modules("-w", demo_wh, "-o", "jsonl", "read", table, "--limit", "3")
    assert "pyarrow" in mods  # the read really ran
    unwanted = sorted(m for m in mods if m.split(".")[0] in ("pydantic", "pydantic_core", "fsspec")
                      or m == "numpy.ma" or m.startswith("numpy.ma."))
    assert unwanted == [], f"`paimon-cli read {table}` imported {unwanted}"


@pytest.mark.parametrize(("args", "module"), [
    (["inspect", "snapshots", "demo.orders"], "inspect"),
    (["list"], "list"),
    (["-q", "list", "demo"], "list"),
    (["read", "demo.orders", "--limit", "1"], "read"),
])
def test_a_run_imports_only_its_own_command_module(demo_wh: str, args: list[str], module: str) -> None:
    """Registering a command costs no import: only the module of the command that runs is
    loaded (importing all 36, e.g. compact, clone, write, was ~0.02 s of each start-up)."""
    mods = _imported_modules("-w", demo_wh, "-o", "jsonl", *args)
    commands = sorted(m for m in mods if m.startswith("paimon_cli.commands."))
    assert commands == [f"paimon_cli.commands.{module}"], f"`paimon-cli {' '.join(args)}` imported {commands}"


# Listing names reads directories only: no schema types, table, snapshot or tag code, no schema
# manager or option grammar, no system-table registry. A snapshot listing reads JSON: no
# manifest reader, no tag, branch or consumer manager, no feature gate (inspect asks none).
# Neither parses TOML (no catalogs file) nor makes a thread pool (concurrent.futures pulls
# logging). A module counts when it is one of these or lies under one.
NOT_FOR_LISTING = ("paimon_cli.core.data", "paimon_cli.core.schema", "paimon_cli.core.table.file_store_table",
                   "paimon_cli.core.refs", "paimon_cli.core.api.table", "paimon_cli.core.manifest",
                   "paimon_cli.core.system", "tomllib", "concurrent.futures")
NOT_FOR_SNAPSHOTS = ("paimon_cli.core.manifest", "tomllib", "concurrent.futures", "paimon_cli.core.refs.tags",
                     "paimon_cli.core.refs.branches", "paimon_cli.core.refs.consumers",
                     "paimon_cli.core.table.features", "paimon_cli.core.schema.iceberg_options")


@pytest.mark.parametrize(("args", "unwanted"), [
    (["list"], NOT_FOR_LISTING),
    (["list", "demo"], NOT_FOR_LISTING),
    (["inspect", "snapshots", "demo.orders"], NOT_FOR_SNAPSHOTS),
])
def test_listings_load_only_what_they_read(demo_wh: str, args: list[str], unwanted: tuple[str, ...]) -> None:
    mods = _imported_modules("-w", demo_wh, "-o", "jsonl", *args)
    assert "paimon_cli.core.catalog.filesystem" in mods  # the command really opened the warehouse
    found = sorted(m for m in mods if any(m == p or m.startswith(p + ".") for p in unwanted))
    assert found == [], f"`paimon-cli {' '.join(args)}` imported {found}"


def test_type_classes_are_not_generated_dataclasses() -> None:
    """Every command that opens a table parses its schema into type classes; generating their
    methods as dataclasses cost ~16 ms of `inspect snapshots` (issue 28). They are written out
    by hand and behave as the dataclasses did (tests/core/test_data_types_behaviour.py)."""
    import dataclasses

    from paimon_cli.core.data import types

    generated = sorted(n for n, c in vars(types).items()
                       if isinstance(c, type) and issubclass(c, types.DataType) and dataclasses.is_dataclass(c))
    assert generated == []


def test_value_classes_on_every_path_are_not_generated_dataclasses() -> None:
    """`list` and `inspect snapshots` make these values (catalog options, identifiers, file
    statuses, table entries, Rows) or define them on their way (Schema); generating their methods as dataclasses cost 0.3-1 ms each (issue 28).
    They are written out by hand and behave as the dataclasses did
    (tests/core/test_value_classes_behaviour.py)."""
    import dataclasses

    from paimon_cli.core.catalog.base import Registration, TableEntry
    from paimon_cli.core.catalog.options import CatalogOptions
    from paimon_cli.core.io.fileio import FileStatus
    from paimon_cli.core.schema.table_schema import Schema
    from paimon_cli.core.table.catalog_environment import PartitionStatistics, TagPartitions
    from paimon_cli.core.table.file_store_table import TimeTravel
    from paimon_cli.core.table.identifiers import Identifier
    from paimon_cli.core.utils.rows import Composite, Picked, Rows

    classes = (Rows, Picked, Composite, FileStatus, Identifier, CatalogOptions, TagPartitions, PartitionStatistics,
               TimeTravel, Schema, TableEntry, Registration)
    assert sorted(c.__name__ for c in classes if dataclasses.is_dataclass(c)) == []


def test_command_signatures_hold_objects_not_strings() -> None:
    """typer evaluates string annotations each time it reads a signature (several times per
    run); the root callback's and every command's annotations are objects (issue 28)."""
    from paimon_cli import app

    functions = {"main": app.main, **{name: app.command_function(name) for name in REGISTERED}}
    stringly = sorted(name for name, fn in functions.items()
                      if any(isinstance(a, str) for a in fn.__annotations__.values()))
    assert stringly == []


@pytest.mark.parametrize("exported, expected", [
    ({}, ["0", "1"]),
    ({"OPENBLAS_NUM_THREADS": "4", "MIMALLOC_ARENA_EAGER_COMMIT": "2"}, ["2", "4"]),
])
def test_console_script_sets_native_library_defaults_the_user_did_not(exported: dict[str, str],
                                                                       expected: list[str]) -> None:
    """The console script gives mimalloc and OpenBLAS their defaults (paimon_cli.process_start)
    before anything loads them; a value the user exported is kept."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MIMALLOC_ARENA_EAGER_COMMIT")}
    code = (
        "import atexit, os, sys\n"
        "atexit.register(lambda: print('ENV', os.environ.get('MIMALLOC_ARENA_EAGER_COMMIT'),"
        " os.environ.get('OPENBLAS_NUM_THREADS')))\n"
        "sys.argv = ['paimon-cli', '--version']\n"
        "from paimon_cli.__main__ import main\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**env, **exported},
                          timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("ENV ")][-1]
    assert line.split()[1:] == expected
