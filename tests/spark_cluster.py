"""pytest plugin: a real Spark standalone cluster (one master, two workers) on loopback.

Why: ``local[*]`` runs every task in the driver's machine and environment, so it cannot show
what a cluster changes -- executors in other JVMs launched by workers, with their own Python,
their own environment and no shared memory with the driver. The daemons come from the pyspark
wheel's own ``bin/spark-class`` (the wheel ships no ``sbin/start-*.sh``).

Everything binds to 127.0.0.1 on free ports; work, local and log dirs live in a pytest temp
dir (the defaults would be inside site-packages and /tmp). The daemons' environment carries
no AWS credentials and no ``PYSPARK_PYTHON``: whatever executors need must travel from the
driver, as on a real cluster. Every process of the cluster (daemons, executor JVMs, their
``pyspark.daemon`` workers) inherits a marker variable; at the end the fixture stops the
process groups (SIGTERM, then SIGKILL) and fails if any marked process is still alive.

Register with ``pytest_plugins = ["tests.spark_cluster"]``; use the session fixture
``spark_cluster``. A failing test that uses it gets the cluster's log tails in its report.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

WORKERS = 2
START_TIMEOUT = 120.0  # seconds for the master and both workers (8-12 s measured, 2 busy cores)
STOP_TIMEOUT = 15.0
MARKER = "PAIMON_TEST_SPARK_CLUSTER"
# variables that would let an executor find credentials or a Python without the driver
_SCRUBBED = ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
             "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL",
             "AWS_ENDPOINT_URL_S3", "PAIMON_FS_OPTIONS", "PAIMON_WAREHOUSE")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SparkCluster:
    """A running standalone cluster: its master URL, web UI and where its logs are."""

    master_url: str  # spark://127.0.0.1:PORT
    web_url: str  # http://127.0.0.1:UIPORT (the master's /json/ answers there)
    log_dir: Path  # <name>.log of each daemon
    work_dir: Path  # the workers' work dirs: w<i>/app-*/<executor id>/{stdout,stderr}
    token: str  # the value of MARKER in every process of this cluster
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def state(self) -> dict[str, Any]:
        """The master's JSON status (workers, active and completed apps)."""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=5) as r:
            return dict(json.load(r))

    def driver_conf(self) -> dict[str, str]:
        """Spark conf a driver needs here: loopback, and executors small enough for CI."""
        return {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                "spark.executor.memory": "512m", "spark.executor.cores": "1",
                "spark.cores.max": str(WORKERS), "spark.ui.enabled": "false"}

    def spark_conf_args(self) -> list[str]:
        """``driver_conf`` as ``--spark-conf k=v`` CLI arguments."""
        return [a for k, v in self.driver_conf().items() for a in ("--spark-conf", f"{k}={v}")]

    def driver_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """An environment for a driver process: SPARK_LOCAL_IP pins it to loopback (else
        Spark advertises the first non-loopback address); no PYSPARK_PYTHON (the product
        must choose the executors' Python)."""
        env = dict(os.environ if base is None else base)
        for k in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME"):
            env.pop(k, None)
        env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_HOSTNAME="localhost")
        return env

    def executor_logs(self) -> list[Path]:
        return sorted(self.work_dir.glob("w*/app-*/*/std*"))

    def app_ids(self) -> set[str]:
        return {p.name for p in self.work_dir.glob("w*/app-*")}

    def log_tails(self, lines: int = 30) -> str:
        """The last lines of every daemon and executor log, for a failure report."""
        out = []
        for p in sorted(self.log_dir.glob("*.log")) + self.executor_logs():
            try:
                text = p.read_text(errors="replace").splitlines()[-lines:]
            except OSError as e:
                text = [f"<unreadable: {e}>"]
            out.append(f"==> {p} <==\n" + "\n".join(line[:400] for line in text))
        return "\n".join(out)

    def marked_pids(self) -> list[int]:
        """Live processes (other than zombies) whose environment carries this cluster's marker."""
        needle = f"{MARKER}={self.token}".encode()
        found = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                if needle in (d / "environ").read_bytes().split(b"\0"):
                    if " Z " not in (d / "stat").read_text().split(")", 1)[1][:4]:
                        found.append(int(d.name))
            except OSError:
                continue
        return found


def _daemon_env(spark_home: str, token: str, local_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env.update({
        "SPARK_HOME": spark_home, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOCAL_HOSTNAME": "localhost",
        "SPARK_LOCAL_DIRS": str(local_dir), "SPARK_DAEMON_MEMORY": "512m", "SPARK_NO_DAEMONIZE": "1",
        # nowhere else to find S3 credentials: they must come with the tasks
        "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true", MARKER: token,
    })
    return env


def _start(cluster: SparkCluster, env: dict[str, str], name: str, args: list[str]) -> None:
    spark_class = os.path.join(env["SPARK_HOME"], "bin", "spark-class")
    with open(cluster.log_dir / f"{name}.log", "wb") as log:
        cluster.procs.append(subprocess.Popen([spark_class, *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL, start_new_session=True,
                                              cwd=cluster.work_dir))


def _wait_ready(cluster: SparkCluster, deadline: float) -> None:
    """Until the master's /json/ lists WORKERS workers ALIVE; fail fast if a daemon exits."""
    last: Any = None
    while time.monotonic() < deadline:
        for p in cluster.procs:
            if p.poll() is not None:
                raise RuntimeError(f"a Spark daemon exited with {p.returncode} while starting:\n"
                                   + cluster.log_tails())
        try:
            last = cluster.state()
            if sum(w.get("state") == "ALIVE" for w in last.get("workers", [])) >= WORKERS:
                return
        except OSError as e:
            last = e
        time.sleep(0.2)
    raise RuntimeError(f"Spark cluster not ready after {START_TIMEOUT:.0f} s (last: {last!r}):\n"
                       + cluster.log_tails())


def start_cluster(base: Path) -> SparkCluster:
    """Master + WORKERS workers (1 core, 1 GiB each) from the pyspark wheel, on loopback."""
    import pyspark

    spark_home = os.path.dirname(pyspark.__file__)
    port, ui = _free_port(), _free_port()
    cluster = SparkCluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui}", base / "logs",
                           base / "work", uuid.uuid4().hex)
    for d in (cluster.log_dir, cluster.work_dir, base / "local"):
        d.mkdir(parents=True, exist_ok=True)
    env = _daemon_env(spark_home, cluster.token, base / "local")
    deadline = time.monotonic() + START_TIMEOUT
    try:
        _start(cluster, env, "master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                        "--port", str(port), "--webui-port", str(ui)])
        for i in range(WORKERS):
            work = cluster.work_dir / f"w{i}"
            work.mkdir()
            _start(cluster, env, f"worker{i}", [
                "org.apache.spark.deploy.worker.Worker", cluster.master_url, "--cores", "1",
                "--memory", "1g", "--host", "127.0.0.1", "--port", str(_free_port()),
                "--webui-port", str(_free_port()), "--work-dir", str(work)])
        _wait_ready(cluster, deadline)
    except BaseException:
        stop_cluster(cluster, check=False)
        raise
    return cluster


def stop_cluster(cluster: SparkCluster, check: bool = True) -> None:
    """SIGTERM the daemons' process groups (workers first), SIGKILL what outlives the wait;
    then every marked process (executors, pyspark.daemon in their own groups) must be gone."""
    for p in reversed(cluster.procs):
        _signal_group(p.pid, signal.SIGTERM)
    for p in reversed(cluster.procs):
        try:
            p.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            _signal_group(p.pid, signal.SIGKILL)
            p.wait(STOP_TIMEOUT)
    deadline = time.monotonic() + STOP_TIMEOUT
    left = cluster.marked_pids()
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = cluster.marked_pids()
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if left and check:
        raise AssertionError(f"Spark cluster processes outlived the stop (killed now): {left}")


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """A standalone Spark cluster (master + 2 workers) on 127.0.0.1 for the session."""
    cluster = start_cluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test that used the cluster shows the daemons' and executors' log tails."""
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and "spark_cluster" in getattr(item, "fixturenames", ()):
        cluster = getattr(item, "funcargs", {}).get("spark_cluster")
        if isinstance(cluster, SparkCluster):
            rep.sections.append(("spark cluster logs", cluster.log_tails()))
