"""What a Java committer does after each commit, unless the table is ``write-only``.

Java's ``TableCommitImpl`` runs its maintainers in this order after a successful commit:
snapshot (and decoupled changelog) expiration, partition expiration, then the tag manager
(auto-creation, time-retained expiry). ``write`` and ``compact`` call :func:`after_commit`
so a table maintained by cron jobs ages exactly as one written by Java writers. A refused or
failed step never undoes the commit: it comes back as a warning line.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .expire import expire_after_commit
from .partition_expire import expire_partitions_after_commit
from .tag_ops import tag_maintenance_after_commit

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

log = logging.getLogger(__name__)


def after_commit(table: FileStoreTable, options_overrides: Mapping[str, str] | None = None) -> list[str]:
    """Run the post-commit maintainers on ``table`` (with the job's dynamic options); returns warnings."""
    overrides = {k: str(v) for k, v in (options_overrides or {}).items()}
    view = table.copy(overrides)
    if view.options.write_only:
        return []
    warnings: list[str] = []
    try:
        res = expire_after_commit(table, overrides or None)
        error = getattr(res, "error", None) if res is not None else None
        if error:
            warnings.append(f"snapshot expiration skipped: {error}")
    except Exception as e:  # noqa: BLE001 - the commit stands whatever expiration does
        log.warning("snapshot expiration failed after the commit: %s", e)
        warnings.append(f"snapshot expiration failed: {e}")
    for what, step in (("partition expiration", expire_partitions_after_commit),
                       ("tag maintenance", tag_maintenance_after_commit)):
        try:
            step(view)
        except Exception as e:  # noqa: BLE001 - as above
            log.warning("%s failed after the commit: %s", what, e)
            warnings.append(f"{what} failed: {e}")
    return warnings
