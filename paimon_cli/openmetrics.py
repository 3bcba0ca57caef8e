"""OpenMetrics text exposition (what Prometheus' node-exporter textfile collector reads).

A small, generic renderer: a command builds :class:`MetricFamily` values and prints
:func:`render` (``health --format openmetrics``; run metrics of other commands likewise).
Only the text format is written here; nothing is served.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
TYPES = ("gauge", "counter", "unknown")


@dataclass(frozen=True)
class Sample:
    """One value of a family; a counter's sample is written as ``<family>_total``."""

    labels: Mapping[str, str]
    value: float


@dataclass(frozen=True)
class MetricFamily:
    """``name`` without the ``_total`` of counters; ``type``: gauge, counter or unknown."""

    name: str
    help: str
    type: str = "gauge"
    samples: Sequence[Sample] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"metric name {self.name!r} is not a valid OpenMetrics name")
        if self.type not in TYPES:
            raise ValueError(f"metric type {self.type!r}: expected one of {', '.join(TYPES)}")
        if self.type == "counter" and self.name.endswith("_total"):
            raise ValueError(f"counter family {self.name!r} must be named without _total")


def gauge(name: str, help: str, samples: Iterable[tuple[Mapping[str, str], float]]) -> MetricFamily:
    return MetricFamily(name, help, "gauge", tuple(Sample(labels, value) for labels, value in samples))


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_label(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    for k in labels:
        if not _LABEL.match(k) or k.startswith("__"):
            raise ValueError(f"label name {k!r} is not a valid OpenMetrics label name")
    return "{" + ",".join(f'{k}="{_escape_label(str(v))}"' for k, v in labels.items()) + "}"


def render(families: Iterable[MetricFamily]) -> str:
    """The exposition of ``families`` in order, ending with ``# EOF``."""
    lines = []
    seen: set[str] = set()
    for fam in families:
        if fam.name in seen:
            raise ValueError(f"metric family {fam.name!r} given twice")
        seen.add(fam.name)
        lines.append(f"# TYPE {fam.name} {fam.type}")
        lines.append(f"# HELP {fam.name} {_escape_help(fam.help)}")
        sample_name = fam.name + "_total" if fam.type == "counter" else fam.name
        for s in fam.samples:
            lines.append(f"{sample_name}{_labels(s.labels)} {_number(s.value)}")
    lines.append("# EOF")
    return "\n".join(lines) + "\n"
