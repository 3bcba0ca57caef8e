"""Features the toolkit refuses by name (README "Paimon versions and features"): exit 1, one
line naming the feature, the table unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.test_compact_cli import one_error_line
from tests.cli.test_metadata_repair_cli import Env as RepairEnv


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


class Env(RepairEnv):
    """db.t: an empty append table created with ``options``; ``csv`` holds two rows."""

    def __init__(self, runner: CliRunner, root: Path, *options: str) -> None:
        self.runner = runner
        self.root = root
        self.wh = str(root / "wh")
        self.table = root / "wh" / "db.db" / "t"
        self.csv = root / "in.csv"
        self.csv.write_text("id,v\n1,a\n2,b\n")
        opts = [a for o in ("bucket=-1", *options) for a in ("--option", o)]
        self.ok("create", "db.t", "--schema", "id BIGINT NOT NULL, v STRING", *opts)

    def refused(self, *args: str) -> str:
        before = _tree(self.table)
        res = self.run(*args)
        assert res.exit_code == 1, res.output
        assert _tree(self.table) == before
        return one_error_line(res)


def test_hive_catalog_iceberg_table_without_a_metastore_refuses_commits(runner: CliRunner, tmp_path: Path) -> None:
    """hive-catalog storage on a filesystem-catalog table without ``metadata.iceberg.uri`` has no
    metastore to register in (Java would fall back to an embedded one): commits are refused by
    name, reads and maintenance that write no Iceberg metadata go on. (The registration itself:
    tests/catalogs/test_hive_iceberg.py.)"""
    env = Env(runner, tmp_path)
    env.ok("write", "db.t", str(env.csv))
    env.ok("alter", "db.t", "--set", "metadata.iceberg.storage=hive-catalog")
    for args in (("write", "db.t", str(env.csv)), ("compact", "db.t", "--full"),
                 ("compact-manifest", "db.t"), ("rollback", "db.t", "--snapshot", "1", "--dry-run"),
                 ("tag", "create", "db.t", "t1")):
        line = env.refused(*args)
        assert line.startswith(f"error: {args[0]}") and "metadata.iceberg.storage=hive-catalog needs a Hive " \
            "Metastore" in line and "set metadata.iceberg.uri" in line, line
    assert not (tmp_path / "wh" / "iceberg").exists()
    assert sorted(r["id"] for r in json.loads(env.ok("read", "db.t", "-o", "json").stdout)) == [1, 2]
    env.ok("expire", "db.t", "--dry-run")
    env.ok("remove-orphan-files", "db.t", "--dry-run")


def test_hive_catalog_iceberg_through_another_client_class_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    env = Env(runner, tmp_path, "metadata.iceberg.storage=hive-catalog", "metadata.iceberg.uri=thrift://127.0.0.1:1",
              "metadata.iceberg.hive-client-class=com.amazonaws.glue.catalog.metastore.AWSCatalogMetastoreClient")
    line = env.refused("write", "db.t", str(env.csv))
    assert line.startswith("error: write on db.t: metadata.iceberg.hive-client-class=com.amazonaws.glue.catalog."
                           "metastore.AWSCatalogMetastoreClient (Paimon 1.0+)"), line


def test_hive_catalog_iceberg_with_an_unreachable_metastore_commits_nothing(runner: CliRunner,
                                                                           tmp_path: Path) -> None:
    """The registration is checked before the commit: a metastore that cannot be reached stops
    the write (exit 8) before any snapshot or Iceberg metadata is written."""
    env = Env(runner, tmp_path, "metadata.iceberg.storage=hive-catalog", "metadata.iceberg.uri=thrift://127.0.0.1:1")
    before = _tree(env.table)
    res = env.run("write", "db.t", str(env.csv))
    assert res.exit_code == 8, res.output
    assert "127.0.0.1:1" in one_error_line(res)
    assert _tree(env.table) == before and not (tmp_path / "wh" / "iceberg").exists()


def test_hive_catalog_iceberg_metastore_from_hive_conf_dir(runner: CliRunner, tmp_path: Path) -> None:
    """``metadata.iceberg.hive-conf-dir``: its hive-site.xml names the metastore (here one that
    cannot be reached: exit 8, nothing committed)."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "hive-site.xml").write_text("<configuration><property><name>hive.metastore.uris</name>"
                                        "<value>thrift://127.0.0.1:2</value></property></configuration>")
    env = Env(runner, tmp_path, "metadata.iceberg.storage=hive-catalog", f"metadata.iceberg.hive-conf-dir={conf}")
    before = _tree(env.table)
    res = env.run("write", "db.t", str(env.csv))
    assert res.exit_code == 8, res.output
    assert "127.0.0.1:2" in one_error_line(res)
    assert _tree(env.table) == before


def test_hive_catalog_iceberg_bad_names_refuse_commits_not_reads(runner: CliRunner, tmp_path: Path) -> None:
    env = Env(runner, tmp_path)
    env.ok("write", "db.t", str(env.csv))
    env.ok("alter", "db.t", "--set", "metadata.iceberg.storage=hive-catalog", "--set",
           "metadata.iceberg.uri=thrift://127.0.0.1:1", "--set", "metadata.iceberg.table=Upper")
    before = _tree(env.table)
    res = env.run("write", "db.t", str(env.csv))
    assert res.exit_code == 4, res.output
    assert one_error_line(res).startswith("error: write on db.t: Iceberg metastore name 'Upper'"), res.output
    assert _tree(env.table) == before
    assert sorted(r["id"] for r in json.loads(env.ok("read", "db.t", "-o", "json").stdout)) == [1, 2]


def test_a_feature_switched_on_for_one_write_is_refused_by_name(runner: CliRunner, tmp_path: Path) -> None:
    env = Env(runner, tmp_path)
    env.ok("write", "db.t", str(env.csv))
    line = env.refused("write", "db.t", str(env.csv), "--option", "metadata.iceberg.storage=rest-catalog")
    assert line.startswith("error: write on db.t: metadata.iceberg.storage=rest-catalog (Paimon 1.0+)"), line
    env.ok("write", "db.t", str(env.csv), "--option", "write-buffer-size=64mb")  # a plain dynamic option


@pytest.mark.parametrize(("options", "named", "command"), [
    (("type=format-table",), "type=format-table", "read"),
    (("chain-table.enabled=true",), "chain-table.enabled=true", "expire"),
    (("bucket=2", "bucket-key=id", "bucket-function.type=mod"), "bucket-function.type=mod", "write"),
    (("sequence.snapshot-ordering=true",), "sequence.snapshot-ordering=true", "write"),
    (("blob-field=v",), "blob-field=v", "write"),
])
def test_refused_by_name(runner: CliRunner, tmp_path: Path, options: tuple[str, ...], named: str,
                         command: str) -> None:
    env = Env(runner, tmp_path, *options)
    args = {"read": ("read", "db.t"), "expire": ("expire", "db.t"), "write": ("write", "db.t", str(env.csv))}
    line = env.refused(*args[command])
    assert line.startswith(f"error: {command} on db.t: {named} (Paimon ") and "is not supported" in line, line


def test_newer_data_type_is_not_corrupt(runner: CliRunner, tmp_path: Path) -> None:
    env = Env(runner, tmp_path)
    schema = env.table / "schema" / "schema-0"
    doc = json.loads(schema.read_text())
    doc["fields"].append({"id": 2, "name": "where", "type": "GEOMETRY"})
    schema.write_text(json.dumps(doc))
    for args in (("read", "db.t"), ("write", "db.t", str(env.csv)), ("inspect", "files", "db.t")):
        assert env.refused(*args) == "error: data type GEOMETRY (Paimon 2.1+) is not supported"
