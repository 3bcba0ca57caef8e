"""pypaimon 2.1 as an interop peer, driven through a subprocess in its own venv.

pypaimon 2.1 pins ``pyarrow<20`` and ``fsspec<2026``, which clash with the product venv, so it
lives in a separate venv (made once, cached) and runs ``pypaimon_driver.py`` there. Values cross
the process boundary as JSON; :class:`PyPaimon` encodes Python values on the way in and decodes
them on the way back (see the driver's docstring for the wire encoding), so
``peer.read(...)`` returns the same Python objects ``peer.write(...)`` was given.

System-table answers (:meth:`PyPaimon.system_table`) are left JSON-rendered on purpose: they are
compared against paimon-cli's own output, which renders the same way.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PYPAIMON_VERSION = "2.1.0"
# DB-API drivers pypaimon's JDBC catalog imports for PostgreSQL (it tries psycopg2 first)
PEER_EXTRAS = ("psycopg2-binary",)
DRIVER = Path(__file__).with_name("pypaimon_driver.py")


class PyPaimonUnavailable(RuntimeError):
    """The peer venv could not be made (no network, pip failure); tests should skip."""


class PyPaimonError(RuntimeError):
    """pypaimon raised inside the driver; carries its exception type and traceback."""

    def __init__(self, op: str, error: str, message: str, tb: str) -> None:
        super().__init__(f"pypaimon {op}: {error}: {message}")
        self.op = op
        self.error = error
        self.message = message
        self.traceback = tb


def default_cache_dir() -> Path:
    env = os.environ.get("PAIMON_CLI_TEST_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "paimon-cli-tests"


def ensure_pypaimon_venv(cache_dir: Path | str | None = None) -> Path:
    """Path of a python that can import pypaimon 2.1, making the venv on first use.

    ``PAIMON_CLI_PYPAIMON_PYTHON`` names an existing interpreter and skips creation. A marker
    file is written only after pip succeeded, so an interrupted install is redone.
    """
    env = os.environ.get("PAIMON_CLI_PYPAIMON_PYTHON")
    if env:
        if not Path(env).exists():
            raise PyPaimonUnavailable(f"PAIMON_CLI_PYPAIMON_PYTHON={env}: no such interpreter")
        return Path(env)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    venv = cache / f"pypaimon-{PYPAIMON_VERSION}-venv"
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    marker = venv / ".pypaimon-ready"
    extras_marker = venv / ".extras-ready"
    extras = " ".join(PEER_EXTRAS) + "\n"

    def ready() -> bool:
        return marker.exists() and python.exists() and extras_marker.exists() and extras_marker.read_text() == extras

    if ready():
        return python
    cache.mkdir(parents=True, exist_ok=True)
    import fcntl

    # two test sessions building the same venv at once would clobber each other's files
    with open(cache / f".pypaimon-{PYPAIMON_VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready():
            return python
        if not (marker.exists() and python.exists()):
            _build_venv(venv, python)
            marker.write_text(PYPAIMON_VERSION + "\n")
        _pip_install(python, venv, list(PEER_EXTRAS))  # a venv made before the extras: add them
        extras_marker.write_text(extras)
    return python


def _build_venv(venv: Path, python: Path) -> None:
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True,
                       capture_output=True, text=True, timeout=300)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
        detail = getattr(e, "stderr", None) or str(e)
        raise PyPaimonUnavailable(
            f"cannot create pypaimon {PYPAIMON_VERSION} venv in {venv}: {str(detail).strip()[-800:]}"
        ) from e
    _pip_install(python, venv, [f"pypaimon=={PYPAIMON_VERSION}"])


def _pip_install(python: Path, venv: Path, packages: list[str]) -> None:
    try:
        subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *packages],
                       check=True, capture_output=True, text=True, timeout=900)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
        detail = getattr(e, "stderr", None) or str(e)
        raise PyPaimonUnavailable(
            f"cannot install {' '.join(packages)} into the pypaimon venv {venv}: {str(detail).strip()[-800:]}"
        ) from e


# --------------------------------------------------------------------------------------
# wire encoding (mirror of the driver's)


def encode_value(value: Any) -> Any:
    """Python value -> JSON wire value (dates/timestamps ISO, Decimal str, bytes hex)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): encode_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    raise TypeError(f"cannot send {type(value).__name__} value {value!r} to pypaimon")


def decode_value(value: Any, arrow_type: str) -> Any:
    """JSON wire value -> Python value, driven by the arrow type string the driver reported."""
    if value is None:
        return None
    t = arrow_type.strip()
    if t.startswith("date"):
        return _dt.date.fromisoformat(value)
    if t.startswith("timestamp"):
        return _dt.datetime.fromisoformat(value)
    if t.startswith("time"):
        return _dt.time.fromisoformat(value)
    if t.startswith("decimal"):
        return decimal.Decimal(value)
    if "binary" in t:
        return bytes.fromhex(value)
    if t in ("float", "double", "halffloat") and isinstance(value, str):
        return float(value)
    m = re.fullmatch(r"(?:large_)?list<[^:]+: (.+)>", t)
    if m and isinstance(value, list):
        return [decode_value(v, m.group(1)) for v in value]
    return value


def write_op(warehouse: str, db: str, table: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``write`` op (one batch write + commit) for :meth:`PyPaimon.batch` / :meth:`PyPaimon.run`."""
    return {"op": "write", "warehouse": str(warehouse), "db": db, "table": table,
            "rows": [{k: encode_value(v) for k, v in r.items()} for r in rows]}


@dataclass
class SystemRows:
    """A system table as pypaimon renders it (JSON-safe values, column names verbatim)."""

    columns: list[str]
    types: dict[str, str]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def __getitem__(self, key: str) -> Any:  # dict-style access: res["columns"], res["rows"]
        return getattr(self, key)


class PyPaimon:
    """Handle on the pypaimon 2.1 peer; every method is one (or a batch of) driver call(s)."""

    def __init__(self, python: Path | str, timeout: float = 300.0,
                 catalog_options: dict[str, str] | None = None) -> None:
        self.python = str(python)
        self.timeout = timeout
        self.catalog_options = dict(catalog_options or {})

    def with_catalog(self, options: dict[str, str]) -> PyPaimon:
        """The same peer on another catalog: ``options`` (Java's keys, e.g. ``metastore=rest``,
        ``uri``, ``token.provider``, ``token``) go with every op; ``warehouse`` then is the
        catalog's warehouse option (a REST catalog's warehouse name)."""
        return PyPaimon(self.python, self.timeout, {**self.catalog_options, **options})

    # -- transport ----------------------------------------------------------------------

    def batch(self, ops: list[dict[str, Any]], stop_on_error: bool = True) -> list[dict[str, Any]]:
        """Run many ops in one interpreter (pypaimon takes ~1 s to import); raw results."""
        if self.catalog_options:
            ops = [{"catalog_options": self.catalog_options, **op} for op in ops]
        payload = json.dumps({"ops": ops, "stop_on_error": stop_on_error})
        env = dict(os.environ)
        # keep the peer away from the product venv's site-packages and any user config
        for k in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
            env.pop(k, None)
        env["PYTHONNOUSERSITE"] = "1"
        proc = subprocess.run([self.python, str(DRIVER)], input=payload, capture_output=True,
                              text=True, timeout=self.timeout, env=env)
        lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
        if proc.returncode != 0 or not lines:
            raise RuntimeError(
                f"pypaimon driver exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        return json.loads(lines[-1])["results"]

    def run(self, ops: list[dict[str, Any]]) -> list[Any]:
        """:meth:`batch` that must succeed: every op's result, or PyPaimonError for the first
        that failed."""
        results = self.batch(ops)
        for op, res in zip(ops, results, strict=False):
            if not res["ok"]:
                raise PyPaimonError(op["op"], res["error"], res["message"], res["traceback"])
        if len(results) != len(ops):
            raise RuntimeError(f"pypaimon driver stopped after {len(results)} of {len(ops)} ops")
        return [res["result"] for res in results]

    def call(self, op: str, **kwargs: Any) -> Any:
        (res,) = self.batch([{"op": op, **kwargs}])
        if not res["ok"]:
            raise PyPaimonError(op, res["error"], res["message"], res["traceback"])
        return res["result"]

    # -- API ----------------------------------------------------------------------------

    def version(self) -> dict[str, str]:
        return self.call("version")

    def list_databases(self, where: str | dict[str, str]) -> list[str]:
        """``catalog.list_databases()`` of a warehouse, or of the catalog these options make
        (e.g. ``metastore=jdbc``)."""
        if isinstance(where, dict):
            return list(self.call("list_databases", warehouse=where["warehouse"], catalog_options=where))
        return list(self.call("list_databases", warehouse=str(where)))

    def list_tables(self, where: str | dict[str, str], db: str) -> list[str]:
        if isinstance(where, dict):
            return list(self.call("list_tables", warehouse=where["warehouse"], db=db, catalog_options=where))
        return list(self.call("list_tables", warehouse=str(where), db=db))

    def create_table(self, warehouse: str, db: str, table: str,
                     columns: list[tuple[str, str]] | list[dict[str, Any]],
                     primary_keys: list[str] | None = None,
                     partition_keys: list[str] | None = None,
                     options: dict[str, Any] | None = None,
                     comment: str | None = None, ignore_if_exists: bool = False) -> str:
        """Create ``db.table`` (database too); returns the table path.

        ``columns``: ``[(name, arrow_type)]`` with types like ``"int64"``, ``"string"``,
        ``"float64"``, ``"date32"``, ``"timestamp[ms]"``, ``"decimal(10,2)"``, ``"binary"``,
        ``"bool"``, ``"list<int32>"``; append ``" not null"`` for NOT NULL (primary-key
        columns are NOT NULL anyway).
        """
        cols = [c if isinstance(c, dict) else [c[0], c[1]] for c in columns]
        res = self.call("create_table", warehouse=str(warehouse), db=db, table=table,
                        columns=cols, primary_keys=list(primary_keys or []),
                        partition_keys=list(partition_keys or []),
                        options={k: str(v) for k, v in (options or {}).items()},
                        comment=comment, ignore_if_exists=ignore_if_exists)
        return res["path"]

    def write(self, warehouse: str, db: str, table: str, rows: list[dict[str, Any]],
              overwrite: bool = False, overwrite_partition: dict[str, Any] | None = None,
              postpone_fixed_bucket: bool = False) -> int:
        """One batch write + commit; returns the snapshot id it produced.

        A postpone-bucket table (``bucket = -2``) gets its rows in the postpone bucket, unless
        ``postpone_fixed_bucket`` routes them into real buckets (pypaimon's
        ``new_postpone_fixed_bucket_write_builder``).
        """
        res = self.call("write", warehouse=str(warehouse), db=db, table=table,
                        rows=[{k: encode_value(v) for k, v in r.items()} for r in rows],
                        overwrite=overwrite,
                        overwrite_partition=encode_value(overwrite_partition),
                        postpone_fixed_bucket=postpone_fixed_bucket)
        return int(res["snapshot_id"])

    def update_by_row_id(self, warehouse: str, db: str, table: str, columns: list[str],
                         rows: list[dict[str, Any]]) -> int:
        """Data evolution: pypaimon's ``update_by_arrow_with_row_id`` of ``columns`` for the rows
        named by their ``_ROW_ID``, one commit; returns the snapshot id."""
        res = self.call("update_by_row_id", warehouse=str(warehouse), db=db, table=table, columns=list(columns),
                        rows=[{k: encode_value(v) for k, v in r.items()} for r in rows])
        return int(res["snapshot_id"])

    def build_tables(self, warehouse: str, db: str, columns: list[tuple[str, str]], primary_keys: list[str],
                     partition_keys: list[str],
                     tables: dict[str, tuple[dict[str, str], list[tuple[bool, list[dict[str, Any]]]]]]) -> None:
        """Create every table of ``tables`` (name -> (options, [(staged?, rows)])) and commit its
        writes in order, in ONE driver run. ``staged`` matters for postpone-bucket tables: True
        writes into the postpone bucket, False routes the rows into real buckets."""
        ops: list[dict[str, Any]] = []
        for name, (options, commits) in tables.items():
            ops.append({"op": "create_table", "warehouse": str(warehouse), "db": db, "table": name,
                        "columns": [list(c) for c in columns], "primary_keys": primary_keys,
                        "partition_keys": partition_keys, "options": options})
            ops += [{"op": "write", "warehouse": str(warehouse), "db": db, "table": name,
                     "postpone_fixed_bucket": not staged,
                     "rows": [{k: encode_value(v) for k, v in r.items()} for r in rows]}
                    for staged, rows in commits]
        results = self.batch(ops)
        failed = [r for r in results if not r["ok"]]
        if failed or len(results) != len(ops):
            raise PyPaimonError("build_tables", failed[0]["error"] if failed else "stopped",
                                failed[0]["message"] if failed else "driver stopped",
                                failed[0]["traceback"] if failed else "")

    def read(self, warehouse: str, db: str, table: str, snapshot_id: int | None = None,
             tag: str | None = None, branch: str | None = None,
             projection: list[str] | None = None) -> list[dict[str, Any]]:
        """All rows (merged for primary-key tables) as Python values, in pypaimon's order."""
        res = self.call("read", warehouse=str(warehouse), db=db, table=table,
                        snapshot_id=snapshot_id, tag=tag, branch=branch, projection=projection)
        types = res["types"]
        return [{c: decode_value(r[c], types[c]) for c in res["columns"]} for r in res["rows"]]

    def system_table(self, warehouse: str, db: str, table: str, name: str,
                     branch: str | None = None) -> SystemRows:
        """``db.table$name`` read through pypaimon; values stay JSON-rendered."""
        res = self.call("system_table", warehouse=str(warehouse), db=db, table=table,
                        name=name.lstrip("$"), branch=branch)
        return SystemRows(res["columns"], res["types"], res["rows"])

    def list_system_tables(self) -> list[str]:
        return list(self.call("list_system_tables"))

    def create_tag(self, warehouse: str, db: str, table: str, tag: str,
                   snapshot_id: int | None = None, time_retained: str | None = None) -> None:
        self.call("create_tag", warehouse=str(warehouse), db=db, table=table, tag=tag,
                  snapshot_id=snapshot_id, time_retained=time_retained)

    def create_branch(self, warehouse: str, db: str, table: str, branch: str,
                      from_tag: str | None = None) -> None:
        self.call("create_branch", warehouse=str(warehouse), db=db, table=table,
                  new_branch=branch, from_tag=from_tag)

    def create_global_index(self, warehouse: str, db: str, table: str, column: str,
                            index_type: str = "btree") -> int:
        """Build and commit a global index over ``column``; returns the index files added."""
        res = self.call("create_global_index", warehouse=str(warehouse), db=db, table=table,
                        column=column, index_type=index_type)
        return int(res["added"])

    def set_consumer(self, warehouse: str, db: str, table: str, consumer: str,
                     next_snapshot: int) -> None:
        self.call("set_consumer", warehouse=str(warehouse), db=db, table=table,
                  consumer=consumer, next_snapshot=next_snapshot)

    # -- catalog-level ops (a REST catalog runs them on its server) ------------------------------

    def rollback(self, warehouse: str, db: str, table: str, snapshot_id: int | None = None,
                 tag: str | None = None) -> None:
        """``FileStoreTable.rollback_to``: a REST catalog's server rolls back (``POST .../rollback``)."""
        self.call("rollback", warehouse=str(warehouse), db=db, table=table, snapshot_id=snapshot_id, tag=tag)

    def catalog_create_tag(self, warehouse: str, db: str, table: str, tag: str, snapshot_id: int | None = None,
                           time_retained: str | None = None) -> None:
        """``RESTCatalog.create_tag``: the server makes the tag (``POST .../tags``)."""
        self.call("catalog_create_tag", warehouse=str(warehouse), db=db, table=table, tag=tag,
                  snapshot_id=snapshot_id, time_retained=time_retained)

    def catalog_list_tags(self, warehouse: str, db: str, table: str) -> list[str]:
        return list(self.call("catalog_list_tags", warehouse=str(warehouse), db=db, table=table))

    def catalog_delete_tag(self, warehouse: str, db: str, table: str, tag: str) -> None:
        self.call("catalog_delete_tag", warehouse=str(warehouse), db=db, table=table, tag=tag)

    def drop_table(self, warehouse: str, db: str, table: str) -> None:
        self.call("drop_table", warehouse=str(warehouse), db=db, table=table)

    def latest_snapshot(self, warehouse: str, db: str, table: str) -> dict[str, Any] | None:
        """``{"id", "uuid", "commit_kind"}`` of the latest snapshot as pypaimon sees it."""
        res = self.call("latest_snapshot", warehouse=str(warehouse), db=db, table=table)
        return None if res is None else dict(res)
