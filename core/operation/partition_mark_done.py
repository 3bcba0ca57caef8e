"""mark-partition-done: tell downstream jobs that partitions are complete (Java's
``mark_partition_done`` procedure and its ``PartitionMarkDoneAction``s).

The actions are the table's ``partition.mark-done-action`` (comma-separated, default
``success-file``), run per partition in the option's order, as Java's procedure runs them:

* ``success-file``: ``<table>/<k=v/...>/_SUCCESS``, the JSON Java's ``SuccessFile`` writes
  (``creationTime`` / ``modificationTime``, epoch millis, Jackson's layout); an existing file
  keeps its ``creationTime``. At the table path, not below ``data-file.path-directory``,
  exactly where Java puts it (and where its readers look).
* ``done-partition``: the metastore partition ``<k=v,...,last=value.done>`` (Java's
  ``AddDonePartitionAction``); needs a metastore that keeps the table's partitions
  (``metastore.partitioned-table=true`` in a Hive catalog).
* ``mark-event``: the metastore's ``markPartitionForEvent(LOAD_DONE)`` (Hive; the same
  option required, as Java requires it).
* ``http-report``: one POST per partition to ``partition.mark-done-action.http.url`` with
  Java's JSON body ``{"params", "table", "path", "partition"}``; the answer must be a 200,
  202 or 204 whose JSON ``result`` is ``SUCCESS`` (any case), as Java checks it.

``custom`` (a Java class) is refused by name, and so is an action the catalog cannot do; every
refusal comes before the first action runs. Partitions are named as ``--partition`` names
them (``;`` or a repeated flag separate partitions); a spec may name the leading partition
keys only (a day of a day/hour table), except for the two metastore actions, whose metastore
partitions are whole. Each must match a partition with data, unless ``allow_empty`` (Java's
procedure never looks): a typo must not mark a partition nobody writes. Paths and values are
those of the matched partition's directory, as Java names them from the user's values.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import CorruptMetadata, InvalidInput, NoPartitionMatched, NotFound, NotYetSupported, PaimonError
from ..io import paths
from ..io.fileio import join
from ..utils.json_util import dumps_jackson, loads_metadata
from ..utils.rows import Rows
from .metastore_sync import DONE_SUFFIX
from .partition_spec import no_match_message, parse_partition_specs, spec_spelling
from .scan import FileStoreScan

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

SUCCESS_FILE = "success-file"
DONE_PARTITION = "done-partition"
MARK_EVENT = "mark-event"
HTTP_REPORT = "http-report"
CUSTOM = "custom"
ACTIONS = (SUCCESS_FILE, DONE_PARTITION, MARK_EVENT, HTTP_REPORT, CUSTOM)
ACTION_OPTION = "partition.mark-done-action"
URL_OPTION = "partition.mark-done-action.http.url"
PARAMS_OPTION = "partition.mark-done-action.http.params"
SUCCESS_FILE_NAME = "_SUCCESS"
HTTP_TIMEOUT_S = 30.0
_HTTP_RETRIES = 3  # 429 / 503 answers, with back-off (Java's client retries them too)
PLAN_COLUMNS = ["partition", "action", "target"]


@dataclass(frozen=True)
class MarkStep:
    """One action on one partition: ``target`` is the file, metastore partition or URL."""

    partition: str  # Java's partition path, ``k=v/k2=v2/``
    spec: dict[str, str]
    action: str
    target: str

    def as_row(self) -> dict[str, Any]:
        return {"partition": self.partition.rstrip("/"), "action": self.action, "target": self.target}


@dataclass
class MarkDonePlan:
    table_path: str
    actions: list[str]
    steps: list[MarkStep] = field(default_factory=list)
    done: int = 0  # steps a real run completed

    @property
    def partitions(self) -> list[str]:
        return list(dict.fromkeys(s.partition.rstrip("/") for s in self.steps))

    def rows(self) -> Rows:
        return Rows(PLAN_COLUMNS, [s.as_row() for s in self.steps])


def parse_actions(text: str) -> list[str]:
    """``partition.mark-done-action`` to its actions, in order, each once."""
    out: list[str] = []
    for raw in text.split(","):
        a = raw.strip().lower()
        if not a:
            continue
        if a not in ACTIONS:
            raise InvalidInput(f"{ACTION_OPTION}: unknown action {raw.strip()!r} (expected {', '.join(ACTIONS)})")
        if a not in out:
            out.append(a)
    if not out:
        raise InvalidInput(f"{ACTION_OPTION}: no action given")
    return out


def _check_catalog(table: FileStoreTable, actions: list[str]) -> None:
    """Refuse, by name and before anything runs, what the table's catalog or options cannot do."""
    env = table.catalog_environment
    opts = table.options
    partitioned = (opts.get("metastore.partitioned-table") or "false").strip().lower() == "true"
    for a in actions:
        if a == CUSTOM:
            raise NotYetSupported(f"{ACTION_OPTION}={CUSTOM}: a custom mark-done action is a Java class "
                                  "(partition.mark-done-action.custom.class), which paimon-cli cannot run")
        if a in (DONE_PARTITION, MARK_EVENT):
            if env.partition_events is None:
                raise NotYetSupported(
                    f"mark-partition-done: action {a} needs a metastore that keeps partitions; catalog "
                    f"{env.catalog} (metastore {env.metastore}) keeps none (Java refuses it alike: \"Cannot mark "
                    "done partition for table without metastore\")")
            if not partitioned:
                raise InvalidInput(f"mark-partition-done: action {a} needs the table option "
                                   "metastore.partitioned-table=true, as Java requires")
            if a == DONE_PARTITION and env.partitions is None:
                raise NotYetSupported(f"mark-partition-done: action {a}: catalog {env.catalog} does not keep the "
                                      f"data partitions of {table.identifier} (metastore.tag-to-partition is set)")
        if a == HTTP_REPORT and not (opts.get(URL_OPTION) or "").strip():
            raise InvalidInput(f"Parameter {URL_OPTION} must be non-empty when you use `{HTTP_REPORT}` partition "
                               "mark done action.")


def plan_mark_done(table: FileStoreTable, partitions: Sequence[str], *, actions: str | None = None,
                   allow_empty: bool = False) -> MarkDonePlan:
    """The steps (partition x action) a mark would run; nothing is written or sent."""
    schema = table.schema
    keys = schema.partition_keys
    if not keys:
        raise InvalidInput(f"mark-partition-done: {table.identifier} is not partitioned")
    chosen = parse_actions(actions if actions is not None else table.options.get(ACTION_OPTION) or SUCCESS_FILE)
    _check_catalog(table, chosen)
    specs = parse_partition_specs(partitions, schema)
    if not specs:
        raise InvalidInput("mark-partition-done: give at least one --partition")
    whole = any(a in (DONE_PARTITION, MARK_EVENT) for a in chosen)
    latest = table.snapshot_manager.latest_snapshot()
    live = [] if latest is None else sorted(
        {bytes(p) for p in FileStoreScan(table).plan_table(latest, columns=["_PARTITION"])
         .column("_PARTITION").unique().to_pylist()})
    live_specs = [paths.partition_spec_of(schema, p) for p in live]
    plan = MarkDonePlan(table.path, chosen)
    named: dict[str, dict[str, str]] = {}
    for spec in specs:
        n = len(spec)
        if set(spec) != set(keys[:n]):
            raise InvalidInput(f"mark-partition-done: {spec_spelling(spec)} must name the leading partition keys "
                               f"(a prefix of {', '.join(keys)})")
        if whole and n != len(keys):
            raise InvalidInput(f"mark-partition-done: {spec_spelling(spec)} names part of a partition; the actions "
                               f"{DONE_PARTITION} and {MARK_EVENT} need every partition key ({', '.join(keys)})")
        resolved = _resolve(schema, spec, keys[:n], live, live_specs)
        if resolved is None:
            if not allow_empty:
                raise NoPartitionMatched(no_match_message(spec_spelling(spec), table,
                                                          "; nothing was marked (--allow-empty marks it anyway)"))
            default = schema.core_options.partition_default_name
            resolved = {k: (default if spec[k] is None or not str(spec[k]).strip() else str(spec[k]))
                        for k in keys[:n]}
        path = paths.partition_path(list(resolved), list(resolved.values())) + "/"
        named.setdefault(path, resolved)
    for path, spec in named.items():
        for a in chosen:
            plan.steps.append(MarkStep(path, spec, a, _target(table, a, path, spec)))
    return plan


def _resolve(schema: Any, spec: dict[str, str], prefix: list[str], live: list[bytes],
             live_specs: list[dict[str, str]]) -> dict[str, str] | None:
    """The matched partition's (prefix) spec as its directory spells it; None when none matches."""
    from .partition_spec import partition_filter

    selection = partition_filter(schema, [spec], None)
    assert selection is not None
    for part, full in zip(live, live_specs, strict=True):
        if selection(part):
            return {k: full[k] for k in prefix}
    return None


def _target(table: FileStoreTable, action: str, path: str, spec: dict[str, str]) -> str:
    if action == SUCCESS_FILE:
        return paths.table_relative(join(table.path, path + SUCCESS_FILE_NAME), table.path)
    if action == DONE_PARTITION:
        return "metastore partition " + "/".join(f"{k}={v}" for k, v in _done_spec(spec).items())
    if action == MARK_EVENT:
        return "metastore event LOAD_DONE " + "/".join(f"{k}={v}" for k, v in spec.items())
    return "POST " + (table.options.get(URL_OPTION) or "").strip()


def _done_spec(spec: dict[str, str]) -> dict[str, str]:
    """Java's ``AddDonePartitionAction``: the last key's value gets ``.done``."""
    out = dict(spec)
    last = list(out)[-1]
    out[last] = out[last] + DONE_SUFFIX
    return out


def mark_done(table: FileStoreTable, plan: MarkDonePlan, now_millis: Callable[[], int] | None = None) -> MarkDonePlan:
    """Run the plan's steps in order; the first failure stops the run (steps before it stay
    done, as in Java, and a re-run repeats them harmlessly)."""
    clock = now_millis or (lambda: int(time.time() * 1000))
    env = table.catalog_environment
    for step in plan.steps:
        if step.action == SUCCESS_FILE:
            _write_success_file(table, join(table.path, step.partition + SUCCESS_FILE_NAME), clock())
        elif step.action == DONE_PARTITION:
            assert env.partitions is not None
            env.partitions.add_partitions([_done_spec(step.spec)])
        elif step.action == MARK_EVENT:
            assert env.partition_events is not None
            env.partition_events.mark_done([step.spec])
        else:
            http_report(table, step.partition)
        plan.done += 1
    return plan


def success_file_json(creation_millis: int, modification_millis: int) -> str:
    """Java's ``SuccessFile.toJson`` (Jackson's pretty printer)."""
    return dumps_jackson({"creationTime": creation_millis, "modificationTime": modification_millis})


def _write_success_file(table: FileStoreTable, path: str, now: int) -> None:
    fio = table.file_io

    def write() -> None:
        created = now
        try:
            text = fio.read_text(path)
        except NotFound:
            text = None
        if text is not None:
            obj = loads_metadata(text, path)
            if not isinstance(obj, dict) or not isinstance(obj.get("creationTime"), int):
                raise CorruptMetadata(path, "not a _SUCCESS file (no creationTime)")
            created = obj["creationTime"]
        fio.write_bytes(path, success_file_json(created, now).encode("utf-8"), overwrite=True)

    table.lock.run_with_lock(write)


def http_report(table: FileStoreTable, partition: str) -> None:
    """Java's ``HttpReportMarkDoneAction.markDone``: POST the JSON body, check ``result``."""
    opts = table.options
    url = (opts.get(URL_OPTION) or "").strip()
    body = json.dumps({"params": opts.get(PARAMS_OPTION), "table": _full_name(table), "path": table.path,
                       "partition": partition}, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    what = f"mark-partition-done: http-report of {partition.rstrip('/')} to {url}"
    for attempt in range(_HTTP_RETRIES + 1):
        req = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json; charset=UTF-8"})
        try:
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as resp:
                status, text = resp.status, resp.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            if e.code in (429, 503) and attempt < _HTTP_RETRIES:
                time.sleep(0.5 * 2 ** attempt)
                continue
            raise PaimonError(f"{what}: the server answered HTTP {e.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            raise PaimonError(f"{what}: {reason}") from None
        break
    if status not in (200, 202, 204) or not text.strip():
        raise PaimonError(f"{what}: the server answered HTTP {status} with an empty body")
    try:
        result = json.loads(text).get("result")
    except (ValueError, AttributeError):
        raise PaimonError(f"{what}: the answer is not JSON with a 'result'") from None
    if not isinstance(result, str) or result.upper() != "SUCCESS":
        raise PaimonError(f"{what}: The http-report action's response attribute `result` should be 'SUCCESS' "
                          f"but is '{result}'.")


def _full_name(table: FileStoreTable) -> str:
    """Java's ``FileStoreTable.fullName()``: ``db.table``, with ``$branch_<name>`` for a branch."""
    name = table.identifier.full_name
    return name if table.branch is None else f"{name}$branch_{table.branch}"
