"""Drive the real Java Paimon 0.9 from pytest through py4j.

Why: paimon-cli must read tables exactly as Java Paimon writes and reads them, so interop
tests need the real thing. Maven is unreachable; the pieces come from PyPI:

* the ``pypaimon==0.2.0`` sdist ships ``paimon-python-java-bridge-0.9.0.jar`` (Paimon 0.9
  core + the py4j 0.10.9.7 gateway server);
* the ``pyspark`` 3.5 wheel ships the Hadoop client jars and commons-logging that Paimon's
  parquet/orc writers need.

py4j cannot call interface methods through Paimon's non-public implementation classes and
per-field py4j calls are slow, so every operation goes through one public static Java helper
(``tests/interop/java/PaimonTestHelper.java``) that exchanges JSON text. The helper is
compiled with ``javac`` at test time and cached by source hash.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

PYPAIMON_SDIST_VERSION = "0.2.0"
BRIDGE_JAR_NAME = "paimon-python-java-bridge-0.9.0.jar"
_BRIDGE_MEMBER = f"pypaimon-{PYPAIMON_SDIST_VERSION}/deps/jars/{BRIDGE_JAR_NAME}"
_HADOOP_JAR_PREFIXES = ("hadoop-client-api-", "hadoop-client-runtime-", "commons-logging-")
HELPER_CLASS = "PaimonTestHelper"
JAVA_SRC_DIR = Path(__file__).resolve().parent / "java"
# C1-only JIT + serial GC: test workloads are small, so start-up and class loading dominate
# (measured: a 10-step scenario 4.0 s -> 2.6 s). Override with $PAIMON_CLI_TEST_JAVA_OPTS
# (space-separated; set it to "" for the JVM defaults, e.g. for million-row benchmarks).
DEFAULT_JAVA_OPTS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss4m")


class JavaPaimonError(RuntimeError):
    """A Java-side failure, reduced to the exception chain (the full trace is in the JVM log)."""


def default_cache_dir() -> Path:
    """Cache for the bridge jar and compiled helper: $PAIMON_CLI_TEST_CACHE or ~/.cache/paimon-cli-tests."""
    env = os.environ.get("PAIMON_CLI_TEST_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "paimon-cli-tests"


def ensure_bridge_jar(cache_dir: Path | None = None) -> Path:
    """Return the cached bridge jar, downloading the sdist with pip and extracting only the jar if missing."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    jar = cache / "jars" / BRIDGE_JAR_NAME
    if jar.is_file() and jar.stat().st_size > 0:
        return jar
    jar.parent.mkdir(parents=True, exist_ok=True)
    sdist_dir = cache / "sdist"
    sdist = sdist_dir / f"pypaimon-{PYPAIMON_SDIST_VERSION}.tar.gz"
    if not sdist.is_file():
        sdist_dir.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
            f"pypaimon=={PYPAIMON_SDIST_VERSION}", "-d", str(sdist_dir),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not sdist.is_file():
            raise RuntimeError(
                f"pip download of pypaimon=={PYPAIMON_SDIST_VERSION} failed: "
                f"{proc.stderr.strip().splitlines()[-1:] or proc.returncode}"
            )
    with tarfile.open(sdist, "r:gz") as tar:
        src = tar.extractfile(_BRIDGE_MEMBER)
        if src is None:
            raise RuntimeError(f"{sdist} does not contain {_BRIDGE_MEMBER}")
        fd, tmp = tempfile.mkstemp(dir=jar.parent, suffix=".part")
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(src, out)
    os.replace(tmp, jar)  # atomic: concurrent sessions never see half a jar
    return jar


def hadoop_jars() -> list[Path]:
    """Hadoop client + commons-logging jars from the installed pyspark wheel (pyspark is not imported)."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pyspark is not installed; it provides the Hadoop jars Java Paimon needs")
    jars_dir = Path(list(spec.submodule_search_locations)[0]) / "jars"
    found: list[Path] = []
    for prefix in _HADOOP_JAR_PREFIXES:
        matches = sorted(jars_dir.glob(prefix + "*.jar"))
        if not matches:
            raise RuntimeError(f"{jars_dir} has no {prefix}*.jar")
        found.append(matches[-1])
    return found


# What Java Paimon 0.9's HiveCatalog needs beside the Hadoop jars (all in the pyspark wheel).
# Kept off the shared JVM's classpath: a catalog test starts its own JVM with these added.
_HIVE_CATALOG_JAR_GLOBS = (
    "hive-metastore-*.jar", "hive-common-*.jar", "hive-exec-*-core.jar", "hive-serde-*.jar",
    "hive-shims-*.jar", "hive-storage-api-*.jar", "libthrift-*.jar", "libfb303-*.jar", "commons-lang-2*.jar",
    "commons-lang3-*.jar", "guava-14*.jar", "jdo-api-*.jar", "javax.jdo-*.jar",
    "commons-collections-3*.jar", "antlr-runtime-*.jar", "jakarta.servlet-api-*.jar",
)


def hive_catalog_jars() -> list[Path]:
    """The jars Java's HiveCatalog (metastore=hive) needs on top of :func:`hadoop_jars`."""
    jars_dir = hadoop_jars()[0].parent
    found: list[Path] = []
    for pattern in _HIVE_CATALOG_JAR_GLOBS:
        matches = sorted(jars_dir.glob(pattern))
        if not matches:
            raise RuntimeError(f"{jars_dir} has no {pattern}")
        found.extend(matches)
    return found


# JDBC drivers from the system packages (libxerial-sqlite-jdbc-java, libpostgresql-jdbc-java) for
# Java's JdbcCatalog; on the JVM's classpath when present. xerial's native part lives in a jni dir.
JDBC_DRIVER_JARS = {
    "sqlite": ("/usr/share/java/sqlite-jdbc.jar", "/usr/share/java/xerial-sqlite-jdbc.jar"),
    "postgresql": ("/usr/share/java/postgresql.jar",),
}
JDBC_APT_PACKAGES = "libxerial-sqlite-jdbc-java libpostgresql-jdbc-java"
_SQLITE_JNI_GLOB = "/usr/lib/*/jni/libsqlitejdbc.so"


def jdbc_driver_jars() -> dict[str, Path]:
    """The JDBC driver jar per protocol that exists on this machine."""
    found: dict[str, Path] = {}
    for proto, candidates in JDBC_DRIVER_JARS.items():
        for c in candidates:
            if Path(c).is_file():
                found[proto] = Path(c)
                break
    return found


def _jdbc_java_opts() -> list[str]:
    """Point xerial at the system's libsqlitejdbc.so (Debian's JDK has that dir on its library
    path already, other JDKs do not)."""
    import glob

    libs = sorted(glob.glob(_SQLITE_JNI_GLOB))
    if not libs:
        return []
    return [f"-Dorg.sqlite.lib.path={Path(libs[0]).parent}", "-Dorg.sqlite.lib.name=libsqlitejdbc.so"]


def catalog_spec(options: Mapping[str, Any] | None = None, **more: Any) -> str:
    """The ``warehouse`` argument naming a catalog by its options (``metastore``, ``uri``,
    ``warehouse``, ...): every JavaPaimon method takes it where it takes a warehouse path. Give
    a mapping, keywords, or both (keys with ``.`` or ``-`` through the mapping or ``**{...}``)."""
    merged = {**(options or {}), **more}
    return json.dumps({k: str(v) for k, v in merged.items()}, sort_keys=True)


def _java_sources() -> list[Path]:
    return sorted(JAVA_SRC_DIR.glob("*.java"))


def compile_helper(cache_dir: Path | None = None) -> Path:
    """Compile tests/interop/java/*.java once per source hash; return the classes directory."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    jar = ensure_bridge_jar(cache)
    sources = _java_sources()
    digest = hashlib.sha256(BRIDGE_JAR_NAME.encode())
    for src in sources:
        digest.update(src.name.encode())
        digest.update(src.read_bytes())
    out = cache / "helper" / digest.hexdigest()[:16]
    if (out / f"{HELPER_CLASS}.class").is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".build-"))
    classpath = os.pathsep.join(str(p) for p in [jar, *hadoop_jars()])
    cmd = ["javac", "--release", "17", "-nowarn", "-d", str(tmp), "-cp", classpath,
           *[str(s) for s in sources]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(f"javac failed for {JAVA_SRC_DIR}:\n{proc.stderr}")
    try:
        os.replace(tmp, out)
    except OSError:  # another session won the race; its output is identical
        shutil.rmtree(tmp, ignore_errors=True)
    return out


# ---------------------------------------------------------------------------- value conversion


def _json_default(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"cannot send {type(value).__name__} value {value!r} to Java")


def _parse_timestamp(text: str) -> dt.datetime:
    """Parse Java LocalDateTime.toString (seconds optional, 0-9 fraction digits); nanos are truncated."""
    date_part, _, time_part = text.partition("T")
    frac = ""
    if "." in time_part:
        time_part, frac = time_part.split(".", 1)
    hms = [int(x) for x in time_part.split(":")] + [0]
    micros = int((frac + "000000")[:6]) if frac else 0
    d = dt.date.fromisoformat(date_part)
    return dt.datetime(d.year, d.month, d.day, hms[0], hms[1], hms[2], micros)


def _parse_time(text: str) -> dt.time:
    t = _parse_timestamp("1970-01-01T" + text)
    return t.time()


def _float(v: Any) -> Any:
    return float(v) if isinstance(v, str) else v


_CONVERTERS: dict[str, Any] = {
    "DECIMAL": decimal.Decimal,
    "DATE": dt.date.fromisoformat,
    "TIME_WITHOUT_TIME_ZONE": _parse_time,
    "TIMESTAMP_WITHOUT_TIME_ZONE": _parse_timestamp,
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": lambda s: _parse_timestamp(s).replace(tzinfo=dt.timezone.utc),
    "BINARY": base64.b64decode,
    "VARBINARY": base64.b64decode,
    "FLOAT": _float,
    "DOUBLE": _float,
}


def convert_rows(result: Mapping[str, Any], row_kind: bool) -> list[dict[str, Any]]:
    """Turn the helper's JSON (columns/roots/rows/kinds) into dicts of natural Python values.

    Top-level columns become Decimal/date/time/datetime/bytes; nested values stay as rendered
    (arrays -> lists, maps -> [[k, v], ...], rows -> dicts, leaves in JSON form).
    """
    columns: list[str] = result["columns"]
    convs = [_CONVERTERS.get(root) for root in result["roots"]]
    out: list[dict[str, Any]] = []
    kinds = result.get("kinds") or []
    for i, raw in enumerate(result["rows"]):
        row = {
            name: (conv(v) if conv is not None and v is not None else v)
            for name, conv, v in zip(columns, convs, raw, strict=True)
        }
        if row_kind:
            row["_row_kind"] = kinds[i]
        out.append(row)
    return out


# ---------------------------------------------------------------------------- the JVM


class JavaPaimon:
    """One JVM running Java Paimon 0.9 plus the test helper; all data crosses as JSON text.

    Every table-level method takes ``warehouse`` (a local path) plus ``db`` and ``table``.
    Create with :meth:`start`; stop with :meth:`close` (the JVM also dies with Python).
    """

    def __init__(self, gateway: Any, helper: Any, log_path: Path, temp_dir: Path) -> None:
        self._gateway = gateway
        self._helper = helper
        self.log_path = log_path
        self.temp_dir = temp_dir

    # -- lifecycle ---------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        cache_dir: Path | None = None,
        log_path: Path | None = None,
        temp_dir: Path | None = None,
        java_opts: Sequence[str] | None = None,
        extra_classpath: Sequence[Path] = (),
    ) -> JavaPaimon:
        """Launch the gateway JVM (stdout/stderr -> ``log_path``) and initialise the helper.

        ``extra_classpath``: more jars, e.g. :func:`hive_catalog_jars` for metastore=hive.
        """
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        jar = ensure_bridge_jar(cache)
        classes = compile_helper(cache)
        if java_opts is None:
            env = os.environ.get("PAIMON_CLI_TEST_JAVA_OPTS")
            java_opts = env.split() if env is not None else DEFAULT_JAVA_OPTS
        if log_path is None:
            log_path = cache / "logs" / f"jvm-{os.getpid()}-{int(time.time())}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        if temp_dir is None:
            temp_dir = Path(tempfile.mkdtemp(prefix="paimon-java-io-"))
        temp_dir.mkdir(parents=True, exist_ok=True)
        classpath = os.pathsep.join(str(p) for p in [classes, jar, *hadoop_jars(), *jdbc_driver_jars().values(),
                                                     *extra_classpath])
        java_opts = [*java_opts, *_jdbc_java_opts()]
        log = open(log_path, "a", buffering=1)  # noqa: SIM115 - lives as long as the JVM
        # jarpath = the bridge jar: its py4j server (0.10.9.7) is what runs, not the venv's jar.
        port = launch_gateway(
            jarpath=str(jar),
            classpath=classpath,
            javaopts=list(java_opts),
            die_on_exit=True,
            redirect_stdout=log,
            redirect_stderr=log,
        )
        gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_close=True))
        helper = getattr(gateway.jvm, HELPER_CLASS)
        helper.init(str(temp_dir))
        return cls(gateway, helper, log_path, temp_dir)

    def close(self) -> None:
        """Stop the JVM."""
        try:
            self._gateway.shutdown()
        except Exception:  # noqa: BLE001 - the JVM may already be gone
            pass

    def __enter__(self) -> JavaPaimon:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ----------------------------------------------------------------------

    def _call(self, method: str, *args: Any) -> Any:
        return self._call_on(HELPER_CLASS, method, *args)

    def _call_on(self, helper_class: str, method: str, *args: Any) -> Any:
        from py4j.protocol import Py4JJavaError

        helper = self._helper if helper_class == HELPER_CLASS else getattr(self._gateway.jvm, helper_class)
        try:
            return getattr(helper, method)(*args)
        except Py4JJavaError as err:
            chain: list[str] = []
            throwable = err.java_exception
            while throwable is not None and len(chain) < 8:
                chain.append(str(throwable.toString()))
                throwable = throwable.getCause()
            raise JavaPaimonError(
                f"{method} failed: {' <- '.join(chain)} (JVM log: {self.log_path})"
            ) from None

    def _catalog_call(self, method: str, *args: Any) -> Any:
        """A CatalogHelper call with the same error reduction as :meth:`_call`."""
        from py4j.protocol import Py4JJavaError

        try:
            return getattr(self._gateway.jvm.CatalogHelper, method)(*args)
        except Py4JJavaError as err:
            chain: list[str] = []
            throwable = err.java_exception
            while throwable is not None and len(chain) < 8:
                chain.append(str(throwable.toString()))
                throwable = throwable.getCause()
            raise JavaPaimonError(
                f"{method} failed: {' <- '.join(chain)} (JVM log: {self.log_path})"
            ) from None

    @staticmethod
    def _json(value: Any) -> str | None:
        return None if value is None else json.dumps(value, default=_json_default)

    # -- JdbcCatalogHelper (a spec: a warehouse path, or catalog_spec(options)) ---------

    def jdbc_list_databases(self, spec: str) -> list[str]:
        """Java's listDatabases, verbatim (0.9's JDBC catalog repeats names)."""
        return json.loads(self._call_on("JdbcCatalogHelper", "listDatabases", spec))

    def jdbc_list_tables(self, spec: str, db: str) -> list[str]:
        return json.loads(self._call_on("JdbcCatalogHelper", "listTables", spec, db))

    def table_path(self, spec: str, db: str, table: str) -> str | None:
        """The table's location if Java's getTable loads it (catalog entry and schema), else None."""
        return self._call_on("JdbcCatalogHelper", "tablePath", spec, db, table)

    def jdbc_create_database(self, spec: str, db: str, properties: Mapping[str, str] | None = None) -> None:
        self._call_on("JdbcCatalogHelper", "createDatabase", spec, db, json.dumps(dict(properties or {})))

    def database_properties(self, spec: str, db: str) -> dict[str, str]:
        return json.loads(self._call_on("JdbcCatalogHelper", "databaseProperties", spec, db))

    def jdbc_drop_database(self, spec: str, db: str, cascade: bool = False) -> None:
        self._call_on("JdbcCatalogHelper", "dropDatabase", spec, db, cascade)

    def jdbc_drop_table(self, spec: str, db: str, table: str) -> None:
        self._call_on("JdbcCatalogHelper", "dropTable", spec, db, table)

    def jdbc_rename_table(self, spec: str, from_db: str, from_table: str, to_db: str, to_table: str) -> None:
        self._call_on("JdbcCatalogHelper", "renameTable", spec, from_db, from_table, to_db, to_table)

    def jdbc_hold_lock(self, spec: str, db: str, table: str, hold_ms: int) -> tuple[int, int, int]:
        """Take the catalog's commit lock of db.table, hold it ``hold_ms``, release it; returns
        epoch millis (acquire started, acquired, released). Blocks: call it from a thread."""
        start, acquired, released = json.loads(
            self._call_on("JdbcCatalogHelper", "holdLock", spec, db, table, int(hold_ms)))
        return int(start), int(acquired), int(released)

    def close_catalog(self, spec: str) -> None:
        """Close the JVM's catalog of ``spec`` (its JDBC connections go with it)."""
        self._call("closeCatalog", spec)

    # -- catalog / DDL -----------------------------------------------------------------

    def list_system_tables(self) -> list[str]:
        """Names Java 0.9's SystemTableLoader knows (``t$<name>``)."""
        return json.loads(self._call("listSystemTables"))

    def create_table(
        self,
        warehouse: str | Path,
        db: str,
        table: str,
        columns: Iterable[tuple[str, str]],
        primary_keys: Sequence[str] = (),
        partition_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
    ) -> None:
        """Create db (if absent) and table; column types are Paimon SQL strings, nesting allowed."""
        self._call(
            "createTable", str(warehouse), db, table,
            json.dumps([list(c) for c in columns]), json.dumps(list(primary_keys)),
            json.dumps(list(partition_keys)), json.dumps({k: str(v) for k, v in (options or {}).items()}),
        )

    def alter_table(self, warehouse: str | Path, db: str, table: str, changes: list[dict[str, Any]]) -> None:
        """Schema changes: {"set": {k: v}}, {"remove": k}, {"add": [name, type]}, {"rename": [a, b]}, {"drop": name}."""
        self._call("alterTable", str(warehouse), db, table, json.dumps(changes))

    # -- data --------------------------------------------------------------------------

    def write(
        self,
        warehouse: str | Path,
        db: str,
        table: str,
        rows: Sequence[Mapping[str, Any]],
        row_kinds: Sequence[str] | None = None,
        *,
        overwrite: Mapping[str, Any] | None = None,
        branch: str | None = None,
    ) -> int:
        """Write rows in ONE batch commit; return the latest snapshot id afterwards.

        Values: int/float/bool/str/None, Decimal, date, time, datetime (naive), bytes,
        lists/dicts for ARRAY/MAP/ROW. ``row_kinds`` holds "+I"/"-U"/"+U"/"-D" per row.
        ``overwrite`` = partition spec for INSERT OVERWRITE ({} = whole table).
        """
        if row_kinds is not None and len(row_kinds) != len(rows):
            raise ValueError("row_kinds must have one entry per row")
        return int(
            self._call(
                "write", str(warehouse), db, table, branch, self._json(list(rows)),
                self._json(list(row_kinds) if row_kinds is not None else None), self._json(overwrite),
            )
        )

    def compact(
        self,
        warehouse: str | Path,
        db: str,
        table: str,
        partition: Mapping[str, Any] | None = None,
        bucket: int | None = None,
        full: bool = True,
        options: Mapping[str, str] | None = None,
    ) -> int:
        """Compact (whole table / one partition / one bucket) in one commit; return latest snapshot id.

        Runs on ``table.copy({"write-only": "false", **options})``. Bucket-unaware append tables
        use Java's compaction coordinator, which only picks bins per its thresholds (e.g. pass
        ``{"compaction.min.file-num": "2"}`` ... to force small bins).
        """
        return int(
            self._call(
                "compact", str(warehouse), db, table, self._json(partition), bucket, bool(full),
                self._json(options),
            )
        )

    def read_raw(
        self, warehouse: str | Path, db: str, table: str, snapshot_id: int | None = None,
        branch: str | None = None,
    ) -> dict[str, Any]:
        """Merged batch read as the helper's JSON: columns, types, roots, kinds, rows."""
        return json.loads(self._call("read", str(warehouse), db, table, branch, snapshot_id))

    def read(
        self, warehouse: str | Path, db: str, table: str, snapshot_id: int | None = None,
        *, branch: str | None = None, row_kind: bool = True,
    ) -> list[dict[str, Any]]:
        """Merged batch read (latest or ``snapshot_id``) as dicts; ``_row_kind`` holds "+I" etc."""
        return convert_rows(self.read_raw(warehouse, db, table, snapshot_id, branch), row_kind)

    def system_table(
        self, warehouse: str | Path, db: str, table: str, name: str, *, branch: str | None = None,
    ) -> dict[str, Any]:
        """Read ``table$name`` through the catalog: {"columns", "types", "roots", "rows"} (Java rendering)."""
        return json.loads(self._call("systemTable", str(warehouse), db, table, branch, name))

    # -- catalog level (any catalog: ``warehouse`` may be a :func:`catalog_spec`) ------------

    def list_databases(self, warehouse: str | Path) -> list[str]:
        return json.loads(self._catalog_call("listDatabases", str(warehouse)))

    def list_tables(self, warehouse: str | Path, db: str) -> list[str]:
        return json.loads(self._catalog_call("listTables", str(warehouse), db))

    def create_database(self, warehouse: str | Path, db: str, ignore_if_exists: bool = True) -> None:
        self._catalog_call("createDatabase", str(warehouse), db, ignore_if_exists)

    def drop_database(self, warehouse: str | Path, db: str, cascade: bool = False) -> None:
        self._catalog_call("dropDatabase", str(warehouse), db, cascade)

    def drop_table(self, warehouse: str | Path, db: str, table: str) -> None:
        self._catalog_call("dropTable", str(warehouse), db, table)

    def rename_table(self, warehouse: str | Path, db: str, table: str, to_db: str, to_table: str) -> None:
        self._catalog_call("renameTable", str(warehouse), db, table, to_db, to_table)

    def table_exists(self, warehouse: str | Path, db: str, table: str) -> bool:
        return bool(self._catalog_call("tableExists", str(warehouse), db, table))

    def table_location(self, warehouse: str | Path, db: str, table: str) -> str:
        return str(self._catalog_call("tableLocation", str(warehouse), db, table))

    def drop_partition(self, warehouse: str | Path, db: str, table: str, partition: Mapping[str, str]) -> None:
        """``Catalog.dropPartition`` (Hive: the HMS partition first, then the drop commit)."""
        self._catalog_call("dropPartition", str(warehouse), db, table, json.dumps(dict(partition)))

    def mark_partition_done(self, warehouse: str | Path, db: str, table: str, partition_path: str) -> None:
        """Java's ``PartitionMarkDoneAction``s of the table's ``partition.mark-done-action`` on
        one partition path (``dt=x/``), as its mark_partition_done procedure runs them."""
        self._catalog_call("markPartitionDone", str(warehouse), db, table, partition_path)

    def repair_table(self, warehouse: str | Path, db: str, table: str) -> None:
        self._catalog_call("repairTable", str(warehouse), db, table)

    def hold_lock(self, warehouse: str | Path, db: str, table: str, hold_ms: int) -> dict[str, int]:
        """Hold the catalog's own lock on db.table for ``hold_ms`` -> {"waited_ms", "held_ms"}."""
        return json.loads(self._catalog_call("holdLock", str(warehouse), db, table, int(hold_ms)))

    # -- tags, branches, maintenance ----------------------------------------------------

    def create_tag(self, warehouse: str | Path, db: str, table: str, name: str,
                   snapshot_id: int | None = None) -> None:
        self._call("createTag", str(warehouse), db, table, name, snapshot_id)

    def delete_tag(self, warehouse: str | Path, db: str, table: str, name: str) -> None:
        self._call("deleteTag", str(warehouse), db, table, name)

    def create_branch(self, warehouse: str | Path, db: str, table: str, name: str,
                      from_tag: str | None = None) -> None:
        """Java 0.9 branches start empty (schema only) or from a tag."""
        self._call("createBranch", str(warehouse), db, table, name, from_tag)

    def rollback_to(self, warehouse: str | Path, db: str, table: str, *, snapshot_id: int | None = None,
                    tag: str | None = None) -> None:
        if (snapshot_id is None) == (tag is None):
            raise ValueError("give exactly one of snapshot_id / tag")
        if tag is not None:
            self._call("rollbackToTag", str(warehouse), db, table, tag)
        else:
            self._call("rollbackToSnapshot", str(warehouse), db, table, snapshot_id)

    def expire(
        self, warehouse: str | Path, db: str, table: str, *, retain_max: int | None = None,
        retain_min: int | None = None, older_than_ms: int | None = None, max_deletes: int | None = None,
    ) -> int:
        """Java snapshot expiration (None = table option); returns how many snapshots were expired.

        ``older_than_ms`` is Java's ``snapshot.time-retained`` duration in milliseconds.
        """
        return int(self._call("expire", str(warehouse), db, table, retain_max, retain_min,
                              older_than_ms, max_deletes))

    def reset_consumer(self, warehouse: str | Path, db: str, table: str, consumer_id: str,
                       next_snapshot: int) -> None:
        self._call("resetConsumer", str(warehouse), db, table, consumer_id, next_snapshot)

    def analyze(self, warehouse: str | Path, db: str, table: str) -> int:
        """Commit table statistics (merged row count, data size; no column stats) -> ANALYZE snapshot id."""
        return int(self._call("analyze", str(warehouse), db, table))


if __name__ == "__main__":
    # CI warm-up: `python tests/interop/java_harness.py` fetches the jar and compiles the helper.
    print(compile_helper())
