"""Where a catalog's options come from: a named catalog in a TOML file, the environment, the
command line (in that order, later wins), and ``--warehouse`` last.

The file is ``$PAIMON_CLI_CATALOGS`` when set, else ``$XDG_CONFIG_HOME/paimon-cli/catalogs.toml``
(``~/.config/...``): one table per catalog, its keys Java's catalog options::

    [catalogs.prod]
    metastore = "hive"
    uri = "thrift://hms.internal:9083"
    warehouse = "s3://lake/warehouse"
    "lock.enabled" = true

    [catalogs.pg]
    metastore = "jdbc"
    uri = "jdbc:postgresql://db.internal:5432/paimon"
    "jdbc.user" = "paimon"
    "jdbc.password" = "${PAIMON_PG_PASSWORD}"

``${VAR}`` in a value is read from the environment when the catalog is used, so secrets stay
out of the file (``$$`` is a literal ``$``); a variable that is not set is refused by name.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, NotFound
from ..utils.suggest import did_you_mean
from .options import WAREHOUSE, CatalogOptions

CATALOGS_FILE_ENV = "PAIMON_CLI_CATALOGS"
CATALOG_ENV = "PAIMON_CATALOG"
CATALOG_OPTIONS_ENV = "PAIMON_CATALOG_OPTIONS"
DEFAULT_WAREHOUSE = "./warehouse"

_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def catalogs_file() -> Path:
    env = os.environ.get(CATALOGS_FILE_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "paimon-cli" / "catalogs.toml"


def _text(name: str, key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise InvalidInput(f"catalog {name} in {catalogs_file()}: option {key} must be text, a number or a boolean")


def _expand(name: str, key: str, value: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        var = m.group(1)
        if var not in os.environ:
            raise InvalidInput(f"catalog {name}: option {key} reads ${{{var}}}, which is not set in the environment")
        return os.environ[var]

    return _VAR.sub(sub, value)


def load_catalogs_file(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Every catalog of the file, values as written (``${VAR}`` not yet expanded)."""
    # Imported here: a run without a catalogs file never parses TOML (start-up, issue 28).
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    path = path or catalogs_file()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFound(f"no catalogs file at {path} (set {CATALOGS_FILE_ENV} or create it; see README, "
                       "Catalogs)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidInput(f"{path}: cannot read the catalogs file: {e}") from e
    except (tomllib.TOMLDecodeError, RecursionError) as e:
        raise InvalidInput(f"{path}: not valid TOML: {e}") from e
    catalogs = data.get("catalogs")
    unknown = sorted(set(data) - {"catalogs"})
    if unknown or not isinstance(catalogs, dict):
        raise InvalidInput(f"{path}: expected [catalogs.NAME] tables only"
                           + (f", found {', '.join(unknown)}" if unknown else ""))
    for name, opts in catalogs.items():
        if not isinstance(opts, dict):
            raise InvalidInput(f"{path}: catalogs.{name} must be a table of options")
    return catalogs


def named_catalog(name: str, path: Path | None = None) -> dict[str, str]:
    catalogs = load_catalogs_file(path)
    if name not in catalogs:
        raise NotFound(f"no catalog {name!r} in {path or catalogs_file()}{did_you_mean(name, catalogs)}"
                       f" (catalogs there: {', '.join(sorted(catalogs)) or 'none'})")
    return {k: _expand(name, k, _text(name, k, v)) for k, v in catalogs[name].items()}


def parse_option_pairs(pairs: Iterable[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"{flag} {pair!r}: expected key=value")
        out[key.strip()] = value.strip()
    return out


def _env_pairs() -> list[str]:
    text = os.environ.get(CATALOG_OPTIONS_ENV, "")
    return [p for p in (s.strip() for s in text.split(",")) if p]


def resolve_catalog_options(
    catalog: str | None = None,
    options: Mapping[str, str] | Iterable[str] | None = None,
    warehouse: str | None = None,
) -> CatalogOptions:
    """The options of the catalog a command runs on.

    ``catalog``: a name in the catalogs file (else ``$PAIMON_CATALOG``); ``options``:
    ``--catalog-option`` pairs or a mapping, over ``$PAIMON_CATALOG_OPTIONS``; ``warehouse``:
    ``--warehouse``, which overrides the ``warehouse`` option. With none of them: the
    filesystem catalog at ``./warehouse``.
    """
    values: dict[str, str] = {}
    sources: dict[str, str] = {}
    name = catalog or os.environ.get(CATALOG_ENV) or ""
    if name:
        for k, v in named_catalog(name).items():
            values[k], sources[k] = v, f"catalog {name} in {catalogs_file()}"
    for k, v in parse_option_pairs(_env_pairs(), CATALOG_OPTIONS_ENV).items():
        values[k], sources[k] = v, CATALOG_OPTIONS_ENV
    given = (options.items() if isinstance(options, Mapping)
             else parse_option_pairs([options] if isinstance(options, str) else list(options or ()),
                                     "--catalog-option").items())
    for k, v in given:
        values[str(k)], sources[str(k)] = str(v), "--catalog-option"
    if warehouse:
        values[WAREHOUSE], sources[WAREHOUSE] = warehouse, "--warehouse"
    opts = CatalogOptions(values, name, sources)
    if opts.metastore == "filesystem" and not opts.warehouse:
        opts = CatalogOptions({**values, WAREHOUSE: DEFAULT_WAREHOUSE}, name, sources)
    return opts
