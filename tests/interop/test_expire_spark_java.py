"""``expire --engine spark`` on Java-written histories leaves exactly the files Java's own
expiry leaves, and Java reads every retained snapshot and tag of our copy as before.

Why: Java never distributes expiry, so its ExpireSnapshotsImpl is the reference for what the
Spark tasks delete; the histories (tests/interop/test_expire_java.py) carry deletion-vector
and hash index files, lookup changelogs, tags, consumers and branches written by Java 0.9.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.operation.expire_plan import ExpirePolicy
from paimon_cli.core.spark.expire import expire_on_spark

from .java_harness import JavaPaimon
from .test_expire_java import PK_VARIANTS, build_history, compare_expire

pytestmark = [pytest.mark.java, pytest.mark.slow]


def on_spark(table: Any, policy: ExpirePolicy) -> Any:
    """Each call starts (and stops) its own ``local[2]`` session, as a cron job's run does."""
    _, result = expire_on_spark(table, policy, dry_run=False, master="local[2]")
    return result


@pytest.mark.parametrize("seed", [5, 7])
def test_java_pk_histories_expired_on_spark_match_java(java_paimon: JavaPaimon, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    name = f"pk{seed}"
    made = build_history(java_paimon, str(tmp_path / "orig"), name, rng, pk=True, n_ops=rng.randint(14, 24),
                         options=PK_VARIANTS[seed])
    out = compare_expire(java_paimon, tmp_path, name, made, retain_min=1, retain_max=None, max_deletes=None,
                         engine=on_spark)
    assert out["expired"] > 0 and out["deleted"] > 0


def test_java_append_history_expired_on_spark_matches_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    rng = random.Random(11)
    made = build_history(java_paimon, str(tmp_path / "orig"), "ap11", rng, pk=False, n_ops=rng.randint(12, 20))
    out = compare_expire(java_paimon, tmp_path, "ap11", made, retain_min=2, retain_max=None, max_deletes=None,
                         engine=on_spark)
    assert out["expired"] > 0
