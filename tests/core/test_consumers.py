from __future__ import annotations

from pathlib import Path

import pytest

from paimon_cli.core.errors import CorruptMetadata, InvalidInput, NotFound
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.refs.consumers import ConsumerManager


def test_consumers_round_trip(tmp_path: Path) -> None:
    cm = ConsumerManager(FileIO(str(tmp_path)), str(tmp_path / "t"))
    assert cm.consumers() == {}
    cm.reset_consumer("zeta", 7)
    cm.reset_consumer("alpha", 3)
    Path(cm.consumer_dir, ".consumer-x.1.tmp").write_text("junk")
    assert list(cm.consumers().items()) == [("alpha", 3), ("zeta", 7)]
    assert Path(cm.consumer_path("alpha")).read_text() == '{\n  "nextSnapshot" : 3\n}'
    assert cm.consumer("nope") is None
    cm.reset_consumer("alpha", 4)
    assert cm.consumer("alpha") == 4
    assert set(cm.consumer_mtimes()) == {"alpha", "zeta"}
    cm.delete_consumer("zeta")
    assert cm.consumers() == {"alpha": 4}
    with pytest.raises(NotFound):
        cm.delete_consumer("zeta")
    with pytest.raises(InvalidInput):
        cm.reset_consumer("a/b", 1)


def test_branch_consumer_dir(tmp_path: Path) -> None:
    cm = ConsumerManager(FileIO(str(tmp_path)), str(tmp_path / "t"), branch="b1")
    assert cm.consumer_dir == str(tmp_path / "t" / "branch" / "branch-b1" / "consumer")


@pytest.mark.parametrize("content, problem", [("{", "invalid JSON"), ("{}", "nextSnapshot"),
                                              ('{"nextSnapshot": "x"}', "integer"), ("[]", "object"), ("", "empty")])
def test_corrupt_consumer(tmp_path: Path, content: str, problem: str) -> None:
    cm = ConsumerManager(FileIO(str(tmp_path)), str(tmp_path / "t"))
    cm.reset_consumer("c", 1)
    Path(cm.consumer_path("c")).write_text(content)
    with pytest.raises(CorruptMetadata) as ei:
        cm.consumers()
    assert "consumer-c" in str(ei.value) and problem in str(ei.value)
