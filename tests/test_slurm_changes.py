"""The table of slurm.conf keys -> what changing them takes (catalog/data/slurm-changes.yaml): every row quotes
the SLURM 24.11 man page that justifies it, and every key a render writes has a row or takes the documented
default."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clusterforge.catalog.slurm_changes import PAGES, changes, load
from clusterforge.core.errors import ClusterforgeError
from clusterforge.day2.rendered import Rendered, conf_entries
from clusterforge.pipeline.analysis import PolicyInputs
from tests.conftest import EXAMPLES


def test_every_row_quotes_its_sentence() -> None:
    table = changes()
    assert table.release == "24.11" and "slurm-24-11-7-1" in table.source
    rows = [table.default, table.nodes, *table.keys.values(),
            *(e for row in table.keys.values() for e in row.exceptions)]
    for row in rows:
        assert row.page in PAGES and row.quote.endswith(".") and len(row.quote) > 30, row
        assert row.why, row
    assert table.default.action == "reconfigure" and "unless otherwise noted" in table.default.quote


def test_the_keys_the_issue_names_have_their_rows() -> None:
    keys = changes().keys
    assert keys["SelectType"].action == "lose_jobs" and keys["SwitchType"].action == "lose_jobs"
    assert [(e.old, e.new, e.action) for e in keys["SelectType"].exceptions] == [
        ("select/cons_res", "select/cons_tres", "restart")]
    assert {keys[k].action for k in ("SlurmctldPort", "SlurmdPort", "CredType")} == {"restart"}
    assert {keys[k].action for k in ("SlurmctldHost", "TopologyPlugin", "AccountingStorageType",
                                     "JobAcctGatherType")} == {"reconfigure"}


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_rendered_slurm_conf_key_has_a_row_or_the_default(example: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    rendered = Rendered.from_blueprint(example, PolicyInputs())
    entries = conf_entries(rendered.files["slurm/slurm.conf"], frozenset({"partitionname"})).entries
    table = changes()
    for key in entries:
        row = table.row(key.split("#", 1)[0])
        assert row is table.default or any(row is r for r in table.keys.values()), key
        assert row.quote


def test_a_row_without_its_sentence_is_refused(tmp_path: Path) -> None:
    from importlib import resources

    data = yaml.safe_load((resources.files("clusterforge.catalog") / "data" / "slurm-changes.yaml").read_text())
    data["keys"]["SwitchType"]["quote"] = ""
    bad = tmp_path / "slurm-changes.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ClusterforgeError, match="SwitchType"):
        load(bad.read_text(), str(bad))
