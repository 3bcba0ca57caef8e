"""Catalog options under Java's own keys, so a user pastes the ``WITH (...)`` of their Flink or
Spark ``CREATE CATALOG`` (Java ``CatalogOptions``, ``JdbcCatalogOptions``, ``HiveCatalogOptions``).

Keys we do not know are refused by name (a typo in ``lock.enabled`` must not run a commit
unlocked); keys that only tune a Java engine (caches, client pools, Flink's ``type``) are
accepted and have no effect here. Values whose key names a secret are never shown.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import InvalidInput
from ..utils.durations import parse_duration_millis
from ..utils.suggest import did_you_mean
from ..utils.values import FACTORY, FrozenValue, set_field

METASTORES = ("filesystem", "hive", "jdbc", "rest")

# every key this tool acts on
WAREHOUSE = "warehouse"
METASTORE = "metastore"
URI = "uri"
TABLE_TYPE = "table.type"
LOCK_ENABLED = "lock.enabled"
LOCK_TYPE = "lock.type"
LOCK_ACQUIRE_TIMEOUT = "lock-acquire-timeout"
LOCK_CHECK_MAX_SLEEP = "lock-check-max-sleep"
SYNC_ALL_PROPERTIES = "sync-all-properties"
CATALOG_KEY = "catalog-key"  # JDBC
JDBC_PREFIX = "jdbc."  # JDBC connection properties: jdbc.user, jdbc.password, ...
HIVE_CONF_DIR = "hive-conf-dir"
LOCATION_IN_PROPERTIES = "location-in-properties"  # Hive
# Hive: every catalog option is set on Java's HiveConf, so a HiveConf key works as one
HIVE_CLIENT_SOCKET_TIMEOUT = "hive.metastore.client.socket.timeout"
CLIENT_POOL_SIZE = "client-pool-size"
# REST (Java RESTCatalogOptions; prefix and data-token.enabled usually come from the server's config)
TOKEN_PROVIDER = "token.provider"
TOKEN = "token"
PREFIX = "prefix"
DATA_TOKEN_ENABLED = "data-token.enabled"
HEADER_PREFIX = "header."  # header.X-Name=v: an HTTP header of every request
DLF_PREFIX = "dlf."  # Alibaba DLF signing (dlf.region, dlf.access-key-id, ...): rest_auth reads them

ACTED_ON = (
    WAREHOUSE, METASTORE, URI, TABLE_TYPE, LOCK_ENABLED, LOCK_TYPE, LOCK_ACQUIRE_TIMEOUT, LOCK_CHECK_MAX_SLEEP,
    SYNC_ALL_PROPERTIES, CATALOG_KEY, HIVE_CONF_DIR, LOCATION_IN_PROPERTIES, TOKEN_PROVIDER, TOKEN, PREFIX,
    DATA_TOKEN_ENABLED, HIVE_CLIENT_SOCKET_TIMEOUT,
)
# Java engine tuning that changes nothing a maintenance command does: accepted, no effect
NO_EFFECT = (
    "type", "default-database", CLIENT_POOL_SIZE, "cache-enabled", "case-sensitive", "allow-upper-case",
    "format-table.enabled", "file-io.allow-cache", "catalog-options-table.enabled", "resolving-file-io.enabled",
    "hadoop-conf-dir", "metastore.client.class", "client-pool-cache.eviction-interval-ms",
    "client-pool-cache.keys", "io-cache.enabled", "io-cache.whitelist-path", "io-cache.policy",
)
NO_EFFECT_PREFIXES = ("cache.", "cache-", "local-cache.", "user-agent.")

SECRET_WORDS = ("password", "secret", "token", "credential", "access-key", "private-key")
MASK = "******"

DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS = 8 * 60 * 1000  # Java's 8 min
DEFAULT_LOCK_CHECK_MAX_SLEEP_MS = 8 * 1000  # Java's 8 s
DEFAULT_CATALOG_KEY = "jdbc"


def is_secret(key: str) -> bool:
    k = key.lower()
    return any(w in k for w in SECRET_WORDS)


def _parse_bool(key: str, value: str) -> bool:
    v = value.strip().lower()
    if v in ("true", "false"):
        return v == "true"
    raise InvalidInput(f"catalog option {key}={value!r}: expected true or false")


class CatalogOptions(FrozenValue):
    """The options of one catalog, checked when made; ``name`` is what messages call it
    (the ``--catalog`` name, else the metastore)."""

    raw: Mapping[str, str]
    name: str
    sources: Mapping[str, str]  # key -> where it came from, for messages
    FIELDS = __match_args__ = ("raw", "name", "sources")

    def __init__(self, raw: Mapping[str, str], name: str = "", sources: Mapping[str, str] = FACTORY) -> None:
        set_field(self, "raw", raw)
        set_field(self, "name", name)
        set_field(self, "sources", {} if sources is FACTORY else sources)
        for key, value in self.raw.items():
            if not isinstance(value, str):
                raise InvalidInput(f"catalog option {key}: value must be text, got {value!r}")
            if key in ACTED_ON or key in NO_EFFECT or key.startswith(NO_EFFECT_PREFIXES):
                continue
            if key.startswith((JDBC_PREFIX, HEADER_PREFIX, DLF_PREFIX)):
                continue
            where = f" (from {self.sources[key]})" if key in self.sources else ""
            raise InvalidInput(
                f"unknown catalog option {key!r}{where}{did_you_mean(key, ACTED_ON + NO_EFFECT)}; "
                "catalog options take Java Paimon's keys (see README, Catalogs)")
        metastore = self.metastore
        if metastore not in METASTORES:
            raise InvalidInput(f"catalog option metastore={metastore!r}: expected one of {', '.join(METASTORES)}"
                               f"{did_you_mean(metastore, METASTORES)}")
        # typed getters refuse a bad value now, before any I/O
        _ = (self.lock_enabled, self.lock_acquire_timeout_millis, self.lock_check_max_sleep_millis,
             self.sync_all_properties, self.table_type)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.raw.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.raw

    @property
    def label(self) -> str:
        return self.name or self.metastore

    @property
    def metastore(self) -> str:
        return self.raw.get(METASTORE, "filesystem").strip().lower()

    @property
    def warehouse(self) -> str | None:
        w = self.raw.get(WAREHOUSE)
        return w if w else None

    @property
    def uri(self) -> str | None:
        u = self.raw.get(URI)
        return u.strip() if u and u.strip() else None

    def required(self, key: str) -> str:
        value = self.raw.get(key, "").strip()
        if not value:
            raise InvalidInput(f"catalog {self.label}: metastore={self.metastore} needs the option {key!r}")
        return value

    @property
    def lock_enabled(self) -> bool | None:
        """``lock.enabled`` as given; None: unset (Java then locks on object stores only)."""
        v = self.raw.get(LOCK_ENABLED)
        return None if v is None else _parse_bool(LOCK_ENABLED, v)

    @property
    def lock_acquire_timeout_millis(self) -> int:
        v = self.raw.get(LOCK_ACQUIRE_TIMEOUT)
        return DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS if v is None else parse_duration_millis(v, LOCK_ACQUIRE_TIMEOUT)

    @property
    def lock_check_max_sleep_millis(self) -> int:
        v = self.raw.get(LOCK_CHECK_MAX_SLEEP)
        return DEFAULT_LOCK_CHECK_MAX_SLEEP_MS if v is None else parse_duration_millis(v, LOCK_CHECK_MAX_SLEEP)

    @property
    def sync_all_properties(self) -> bool:
        """Java 1.1+'s default is true (0.9 synced only a few keys)."""
        v = self.raw.get(SYNC_ALL_PROPERTIES)
        return True if v is None else _parse_bool(SYNC_ALL_PROPERTIES, v)

    @property
    def table_type(self) -> str:
        v = self.raw.get(TABLE_TYPE, "managed").strip().lower()
        if v not in ("managed", "external"):
            raise InvalidInput(f"catalog option {TABLE_TYPE}={v!r}: expected managed or external")
        return v

    @property
    def catalog_key(self) -> str:
        return self.raw.get(CATALOG_KEY, DEFAULT_CATALOG_KEY)

    def prefixed(self, prefix: str) -> dict[str, str]:
        """``jdbc.user=x`` -> ``{"user": "x"}`` for ``prefix="jdbc."``."""
        return {k[len(prefix):]: v for k, v in self.raw.items() if k.startswith(prefix)}

    def cli_args(self) -> list[str]:
        """Arguments that select this catalog again on a command line (the fix commands ``health``
        prints): ``--catalog NAME`` for what the catalogs file gives, ``--catalog-option k=v``
        for every other option (secret values masked, never printed), and for the filesystem
        catalog just ``--warehouse`` -- never a bare warehouse path for a metastore catalog,
        whose commands would then run without its lock and partition sync."""
        if self.metastore == "filesystem":
            return ["--catalog", self.name] if self.name else ["--warehouse", self.warehouse or ""]
        out = ["--catalog", self.name] if self.name else []
        from_file = f"catalog {self.name} in "
        for key, value in sorted(self.raw.items()):
            if self.name and self.sources.get(key, "").startswith(from_file):
                continue
            out += ["--catalog-option", f"{key}={MASK if is_secret(key) else value}"]
        return out

    def masked(self) -> list[tuple[str, str]]:
        """(key, value) with every secret's value masked, sorted by key."""
        return [(k, MASK if is_secret(k) else v) for k, v in sorted(self.raw.items())]

    def with_warehouse(self, warehouse: str) -> CatalogOptions:
        return CatalogOptions({**self.raw, WAREHOUSE: warehouse}, self.name,
                              {**self.sources, WAREHOUSE: "--warehouse"})
