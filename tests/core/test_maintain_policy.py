"""The maintain policy: table options as defaults, scoped overrides, one-line refusals."""

from __future__ import annotations

import pytest

from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.maintain.policy import DAY_MILLIS, HOUR_MILLIS, Policy, TableRules, load_policy


def test_no_policy_is_what_the_table_options_say() -> None:
    p = load_policy(None)
    assert p.rules_for("db", "t", {}) == TableRules()
    rules = p.rules_for("db", "t", {"compaction.optimization-interval": "2 h"})
    assert rules.full_compaction_interval_millis == 2 * HOUR_MILLIS
    assert rules.remove_orphan_files is False and rules.orphan_files_older_than_millis == DAY_MILLIS


def test_scopes_override_broadest_to_narrowest() -> None:
    p = Policy.parse("""
[defaults]
full-compaction-interval = "7d"
expire-tags = false
[databases.shop]
full-compaction-interval = "1d"
remove-orphan-files = true
[tables."shop.orders"]
full-compaction-interval = "off"
expire-tags = true
""")
    opts = {"compaction.optimization-interval": "1 h"}  # the policy overrides the table option
    assert p.rules_for("other", "t", opts).full_compaction_interval_millis == 7 * DAY_MILLIS
    shop = p.rules_for("shop", "items", opts)
    assert (shop.full_compaction_interval_millis, shop.remove_orphan_files, shop.expire_tags) == (DAY_MILLIS, True, False)
    orders = p.rules_for("shop", "orders", opts)
    assert (orders.full_compaction_interval_millis, orders.remove_orphan_files, orders.expire_tags) == (None, True, True)


@pytest.mark.parametrize("text, expected", [
    ("[defaults]\nexpire-snapshot = true", "policy [defaults]: unknown key 'expire-snapshot': did you mean 'expire-snapshots'?"),
    ("[default]\ncompact = true", "unknown section [default]: did you mean 'defaults'?"),
    ("[defaults]\ncompact = \"yes\"", "compact must be true or false"),
    ("[defaults]\nfull-compaction-interval = 7", "must be a duration text"),
    ("[defaults]\nfull-compaction-interval = \"7 parsecs\"", "not a duration"),
    ("[defaults\ncompact = true", "not valid TOML"),
    ("[tables.shop]\ncompact = true", 'name a table as "db.table"'),
    ("[databases]\nshop = 1", "expected sub-tables"),
    ("x = " + "[" * 5000 + "]" * 5000, "policy: not valid TOML: arrays or inline tables nested too deeply"),
    ("[defaults]\nx = " + "{a = " * 5000 + "1" + "}" * 5000, "nested too deeply"),
])
def test_policy_errors_are_one_line(text: str, expected: str) -> None:
    with pytest.raises(InvalidInput) as e:
        Policy.parse(text, "policy")
    assert expected in str(e.value)
    assert "\n" not in str(e.value)


def test_orphan_floor_is_one_day_unless_named() -> None:
    with pytest.raises(InvalidInput, match=r"policy \[defaults\]: orphan-files-older-than under 1 day is refused; "
                                           "set orphan-files-allow-under-1d"):
        Policy.parse('[defaults]\nremove-orphan-files = true\norphan-files-older-than = "6h"')
    # scopes combine: the exception named for the database, the value for one table
    with pytest.raises(InvalidInput, match=r'\(table shop.orders\): .* under 1 hour is refused'):
        Policy.parse('[databases.shop]\norphan-files-allow-under-1d = true\n'
                     '[tables."shop.orders"]\norphan-files-older-than = "30min"')
    allowed = Policy.parse('[databases.shop]\norphan-files-allow-under-1d = true\n'
                           '[tables."shop.orders"]\norphan-files-older-than = "6h"')
    assert allowed.rules_for("shop", "orders", {}).orphan_files_older_than_millis == 6 * HOUR_MILLIS
    with pytest.raises(InvalidInput, match="under 1 day is refused"):
        Policy.parse('[defaults]\norphan-files-allow-under-1d = true\n[tables."other.t"]\n'
                     'orphan-files-allow-under-1d = false\norphan-files-older-than = "6h"')
    with pytest.raises(InvalidInput, match="cannot be off"):
        Policy.parse('[defaults]\norphan-files-older-than = "off"')
