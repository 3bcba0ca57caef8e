"""``HealthReport``: what ``Warehouse.health`` returns and ``paimon-cli health`` prints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..maintain.findings import FindingKind, Severity, TableHealth
from ..utils.rows import Rows

# one row per finding; a table without findings is one row whose kind is null (message "no findings") (README "health")
HEALTH_COLUMNS = ["database", "table", "score", "kind", "severity", "value", "threshold", "unit", "message", "fix"]
# one row per table, what a terminal shows: the worst finding's message, "(+N more)" findings
SUMMARY_COLUMNS = ["table", "score", "worst_finding"]
_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.CRITICAL: 2}
NO_FINDING = "none"  # the severity label of a 0 sample (no finding of the kind)


@dataclass(frozen=True)
class HealthReport:
    """The health of every selected table, in catalog order."""

    tables: list[TableHealth]
    scan_orphans: bool = False  # orphan_files was measured (else it is unknown, not 0)

    def rows(self) -> Rows:
        rows: list[dict[str, Any]] = []
        for h in self.tables:
            base = {"database": h.database, "table": h.table, "score": h.score}
            if not h.findings:
                rows.append({**base, **dict.fromkeys(HEALTH_COLUMNS[3:]), "message": "no findings"})
            for f in h.findings:
                rows.append({**base, "kind": f.kind.value, "severity": f.severity.value, "value": f.value,
                             "threshold": f.threshold, "unit": f.unit, "message": f.message, "fix": f.fix or None})
        return Rows(list(HEALTH_COLUMNS), rows)

    def summary(self) -> Rows:
        """One row per table: ``db.table``, its score and its worst finding's message (the
        first of the most severe; ``(+N more)`` when it has others), ``no findings`` when
        none: what a terminal shows unless ``--wide``; :meth:`rows` has every finding."""
        rows: list[dict[str, Any]] = []
        for h in self.tables:
            text = "no findings"
            if h.findings:
                worst = max(h.findings, key=lambda f: _RANK[f.severity])  # max keeps the first of equals
                more = len(h.findings) - 1
                text = worst.message + (f" (+{more} more)" if more else "")
            rows.append({"table": h.identifier, "score": h.score, "worst_finding": text})
        return Rows(list(SUMMARY_COLUMNS), rows, wrap=["worst_finding"])

    @property
    def unassessed(self) -> list[TableHealth]:
        """Tables whose metadata could not be read (score 0, ``error`` set)."""
        return [h for h in self.tables if h.error is not None]

    @property
    def exit_code(self) -> int:
        """0: every table assessed (findings are no error); 4: some table's metadata is
        unreadable; 1: some table could not be assessed otherwise (unsupported, unexpected)."""
        codes = {h.error_code or 1 for h in self.unassessed}
        if not codes:
            return 0
        return 4 if 4 in codes else 1

    def metrics(self) -> list[tuple[str, str, list[tuple[dict[str, str], float]]]]:
        """(family name, help, samples) per gauge family: ``paimon_table_health_score`` and one
        ``paimon_table_<kind>`` per finding kind with a sample per table: the finding's value
        (repeated findings of one kind summed, the worst severity kept), else 0 with severity
        ``none`` -- a dashboard shows 0, not "no data". No sample where the value is unknown:
        the other kinds of a table whose metadata could not be read, and ``orphan_files``
        unless storage was scanned."""
        score = [({"db": h.database, "table": h.table}, float(h.score)) for h in self.tables]
        out = [("paimon_table_health_score", "Health score of the table, 0 (unreadable) to 100 (nothing to do)",
                score)]
        for kind in FindingKind:
            samples = []
            for h in self.tables:
                fs = [f for f in h.findings if f.kind is kind]
                if fs:
                    worst = max((f.severity for f in fs), key=_RANK.__getitem__)
                    samples.append(({"db": h.database, "table": h.table, "severity": worst.value},
                                    float(sum(f.value for f in fs))))
                elif self._measured(h, kind):
                    samples.append(({"db": h.database, "table": h.table, "severity": NO_FINDING}, 0.0))
            out.append((f"paimon_table_{kind.value}", kind.description, samples))
        return out

    def _measured(self, h: TableHealth, kind: FindingKind) -> bool:
        """Whether no finding of ``kind`` means 0 for ``h`` (rather than: not known)."""
        if h.error is not None:
            return kind is FindingKind.UNREADABLE_METADATA
        return kind is not FindingKind.ORPHAN_FILES or self.scan_orphans
