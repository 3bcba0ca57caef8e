"""A real Hive Metastore 2.3.9 Thrift server on loopback, for the catalog tests.

Everything comes from the pyspark wheel's ``jars/`` (metastore, Derby, DataNucleus, Hadoop
client); a tiny launcher (``java/HmsLauncher.java``, compiled with ``javac`` once per source
hash into the test cache) creates Hive's transaction tables, without which the metastore has
no locks, and then runs ``HiveMetaStore.main``. Metadata lives in an embedded Derby database
under ``base_dir``, so :meth:`HiveMetastoreServer.stop` and :meth:`HiveMetastoreServer.start`
again keep every database, table, partition and lock (a metastore restarted in the middle of a
command). :meth:`pause` / :meth:`resume` freeze the JVM (SIGSTOP): connections are accepted by
the kernel but never answered, the hung-server case.

Lock expiry: the 2.3.9 metastore only times out locks whose holder stopped heart-beating in its
house-keeping thread, which runs only with ``hive.compactor.initiator.on=true``. The fixture
turns it on with a short ``hive.txn.timeout`` (``txn_timeout_s``) and reaper interval, so a test
can watch a dead process's lock expire in seconds.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from xml.sax.saxutils import escape

from tests.interop.java_harness import default_cache_dir

LAUNCHER_CLASS = "HmsLauncher"
JAVA_SRC_DIR = Path(__file__).resolve().parent / "java"
_ADD_OPENS = ("java.base/java.lang", "java.base/java.util", "java.base/java.net", "java.base/java.nio")


def pyspark_jars_dir() -> Path:
    """``pyspark/jars`` of the installed wheel (pyspark is not imported)."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pyspark is not installed; its jars/ holds the Hive Metastore 2.3.9 the tests run")
    jars = Path(list(spec.submodule_search_locations)[0]) / "jars"
    if not any(jars.glob("hive-metastore-2.3.*.jar")):
        raise RuntimeError(f"{jars} has no hive-metastore-2.3.*.jar")
    return jars


def compile_launcher(cache_dir: Path | None = None) -> Path:
    """Compile java/HmsLauncher.java against pyspark's jars once per source hash; return the classes dir."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    src = JAVA_SRC_DIR / f"{LAUNCHER_CLASS}.java"
    digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    out = cache / "hms-launcher" / digest
    if (out / f"{LAUNCHER_CLASS}.class").is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".build-"))
    cmd = ["javac", "--release", "17", "-nowarn", "-d", str(tmp), "-cp", str(pyspark_jars_dir() / "*"), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(f"javac failed for {src}:\n{proc.stderr}")
    try:
        os.replace(tmp, out)
    except OSError:  # another session won the race; its output is identical
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class HiveMetastoreServer:
    """One metastore JVM bound to 127.0.0.1:``port`` with its Derby database in ``base_dir``."""

    def __init__(
        self,
        base_dir: Path,
        port: int | None = None,
        *,
        txn_timeout_s: int = 20,
        heap: str = "512m",
        extra_conf: dict[str, str] | None = None,
    ) -> None:
        self.base_dir = Path(base_dir)
        self.port = port if port is not None else free_port()
        self.txn_timeout_s = txn_timeout_s
        self.heap = heap
        self.extra_conf = dict(extra_conf or {})
        self.warehouse_dir = self.base_dir / "hive-warehouse"
        self.log_dir = self.base_dir / "logs"
        self._proc: subprocess.Popen[bytes] | None = None
        self._starts = 0

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def hive_log(self) -> Path:
        """The server's own log; every API call shows up in it as an ``audit`` line (``cmd=...``)."""
        return self.log_dir / "hive.log"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _conf(self) -> dict[str, str]:
        derby = self.base_dir / "metastore_db"
        conf = {
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={derby};create=true",
            "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            "hive.metastore.warehouse.dir": self.warehouse_dir.as_uri(),
            # pyspark lacks the disruptor jar async logging needs: the server would die at start
            "hive.async.log.enabled": "false",
            # lock expiry (see the module docstring)
            "hive.compactor.initiator.on": "true",
            "hive.support.concurrency": "true",
            "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
            "hive.txn.timeout": f"{self.txn_timeout_s}s",
            "hive.timedout.txn.reaper.start": "1s",
            "hive.timedout.txn.reaper.interval": "2s",
            "hive.compactor.check.interval": "3600s",
        }
        conf.update(self.extra_conf)
        return conf

    def _write_conf(self) -> Path:
        conf_dir = self.base_dir / "conf"
        conf_dir.mkdir(parents=True, exist_ok=True)
        props = "".join(
            f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
            for k, v in self._conf().items()
        )
        (conf_dir / "hive-site.xml").write_text(f"<configuration>\n{props}</configuration>\n")
        return conf_dir

    def start(self, timeout_s: float = 150.0) -> None:
        """Start the JVM and wait until the port accepts connections; fail with its output if it cannot."""
        if self.running:
            return
        if shutil.which("java") is None or shutil.which("javac") is None:
            raise RuntimeError("java/javac not on PATH: the Hive Metastore tests need a JDK 17")
        classes = compile_launcher()
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        conf_dir = self._write_conf()
        self._starts += 1
        out_path = self.log_dir / f"jvm-{self._starts}.out"
        classpath = os.pathsep.join([str(conf_dir), str(classes), str(pyspark_jars_dir() / "*")])
        cmd = [
            "java", f"-Xmx{self.heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            f"-Dhive.log.dir={self.log_dir}", f"-Dderby.stream.error.file={self.log_dir / 'derby.log'}",
            *[f"--add-opens={m}=ALL-UNNAMED" for m in _ADD_OPENS],
            "-cp", classpath, LAUNCHER_CLASS, "-p", str(self.port),
        ]
        with open(out_path, "wb") as out:
            self._proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=self.base_dir, start_new_session=True,
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            if _accepts(self.port):
                return
            time.sleep(0.3)
        code = self._proc.poll()
        self._kill()
        tail = out_path.read_text(errors="replace").splitlines()[-25:] if out_path.exists() else []
        why = f"exited with {code}" if code is not None else f"did not open port {self.port} in {timeout_s:.0f}s"
        raise RuntimeError(
            f"Hive Metastore 2.3.9 {why}; JVM output ({out_path}), last lines:\n" + "\n".join(tail)
        )

    def _kill(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGCONT)  # a paused JVM cannot act on SIGTERM
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=15)
        self._proc = None

    def stop(self) -> None:
        """Stop the JVM (Derby database and port are kept for a later :meth:`start`)."""
        self._kill()
        deadline = time.monotonic() + 10
        while _accepts(self.port) and time.monotonic() < deadline:
            time.sleep(0.2)

    def pause(self) -> None:
        """Freeze the JVM: connects succeed (kernel backlog), calls never return."""
        assert self._proc is not None and self.running
        os.kill(self._proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self._proc is not None
        os.kill(self._proc.pid, signal.SIGCONT)

    def audit_commands(self) -> list[str]:
        """The ``cmd=`` part of every audit line the server logged so far, in order."""
        if not self.hive_log.exists():
            return []
        out = []
        for line in self.hive_log.read_text(errors="replace").splitlines():
            if "HiveMetaStore.audit" in line and "cmd=" in line:
                out.append(line.split("cmd=", 1)[1].strip())
        return out
