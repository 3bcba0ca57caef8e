"""Run by the lock tests in a separate process: take the JDBC commit lock of DB.TABLE, print
``held <epoch s>``, keep it for HOLD seconds (or until killed), release, print ``released <epoch s>``.

    python -m tests.catalogs.lock_holder '<catalog options JSON>' DB TABLE HOLD
"""

from __future__ import annotations

import json
import sys
import time

from paimon_cli.core.catalog.jdbc_store import JdbcCatalogStore


def main() -> int:
    options, db, table, hold = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
    with JdbcCatalogStore.from_options(options) as store:
        lock = store.lock(db, table)
        lock.acquire()
        print(f"held {time.time():.3f}", flush=True)
        time.sleep(hold)
        lock.release()
        print(f"released {time.time():.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
