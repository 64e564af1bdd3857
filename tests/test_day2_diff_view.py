"""`clusterforge diff` for a person: it fits the terminal (no line wider than COLUMNS for any example or template
change) and says what repeats once (one more scalable unit of the DGX H100 template in at most 30 lines at 80
columns), while JSON keeps every host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from rich.cells import cell_len

from clusterforge.blueprint.templating import discover
from clusterforge.cli.main import app
from clusterforge.day2.changes import Change, Diff
from clusterforge.day2.diff_view import Item, headings, item_line, short_why
from clusterforge.render.change_classes import Action
from tests.conftest import EXAMPLES, ROOT

WIDTHS = (60, 80)
PAIRS = [("onprem-dgx-h100.yaml", "onprem-dgx-h100-hall.yaml"), ("aws-p5.yaml", "aws-p5en.yaml"),
         ("aws-p5.yaml", "aws-p6-b200.yaml"), ("onprem-dgx-h100-hall.yaml", "onprem-gb200-nvl72-row.yaml"),
         ("hybrid-burst.yaml", "onprem-dgx-h100.yaml")]


def run(*args: object, columns: int | None = None) -> Result:
    env = {"COLUMNS": None if columns is None else str(columns)}
    return CliRunner(env=env).invoke(app, [str(a) for a in args], catch_exceptions=False)


def too_wide(text: str, width: int) -> list[str]:
    return [line for line in text.splitlines() if cell_len(line) > width]


def scale_parameter(template: str) -> tuple[str, int]:
    """The template's first integer parameter (nodes, racks, scalable units) and its default."""
    params = yaml.safe_load((ROOT / "templates" / template / "params.yaml").read_text())["params"]
    name, spec = next((k, v) for k, v in params.items() if v["type"] == "int")
    return name, int(spec["default"])


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Each template at its defaults and with its scale parameter one larger."""
    out = {}
    folder = tmp_path_factory.mktemp("templates")
    for template in discover(None):
        name, default = scale_parameter(template)
        pair = folder / f"{template}.yaml", folder / f"{template}-grown.yaml"
        for path, value in zip(pair, (default, default + 1), strict=True):
            result = run("new", template, "--set", f"{name}={value}", "-o", path)
            assert result.exit_code in (0, 1), result.output  # 1: written, a policy finding to adjust
        out[template] = pair
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}->{p[1]}")
def test_no_diff_line_of_the_examples_is_wider_than_the_terminal(pair: tuple[str, str], width: int) -> None:
    result = run("diff", EXAMPLES / pair[0], EXAMPLES / pair[1], columns=width)
    assert result.exit_code in (0, 1), result.output
    assert "settings" in result.stdout and too_wide(result.stdout, width) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_no_diff_line_of_a_grown_template_is_wider_than_the_terminal(grown: dict[str, tuple[Path, Path]],
                                                                      width: int) -> None:
    for template, (old, new) in grown.items():
        result = run("diff", old, new, columns=width)
        assert result.exit_code in (0, 1), (template, result.output)
        assert too_wide(result.stdout, width) == [], template


def test_one_more_scalable_unit_reads_in_thirty_lines(grown: dict[str, tuple[Path, Path]],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = grown["dgx-h100-superpod"]
    monkeypatch.chdir(old.parent)  # named as a user names them (`diff main:hall.yaml hall.yaml`)
    old, new = Path(old.name), Path(new.name)
    text = run("diff", old, new, columns=80).stdout
    lines = text.splitlines()
    assert len(lines) <= 30, text
    assert "  added    32: gpu-[0129-0160]" in lines
    assert "    hosts.yml: gpu-[0129-0160]: (absent) -> pool_gpu,slurm_compute" in lines  # 32 changes, one line
    assert "  8 racks su05-r[01-08], each: 0 -> 42.52 kW, 0 -> 33 U, 0 -> 696.3 kg" in lines
    assert "gpu-0130" not in text
    data = json.loads(run("diff", old, new, "-f", "json").stdout)  # JSON: every host, every change
    assert len(data["added"]) == 32
    assert sorted(c["key"] for c in data["changes"] if c["file"] == "hosts.yml") == [
        f"gpu-{n:04d}" for n in range(129, 161)]
    assert sum(1 for d in data["physical"] if d["what"].startswith("rack su05-")) == 24


def change(key: str, action: Action = Action.NONE, hosts: tuple[str, ...] | None = None,
           why: str = "new node") -> Change:
    return Change("hosts.yml", key, None, "pool_gpu", action, (key,) if hosts is None else hosts, None, why)


def test_changes_that_differ_only_in_their_host_are_one_item_under_one_heading() -> None:
    changes = (change("gpu-0002"), change("gpu-0001"), change("gpu-0003"),
               Change("slurm.conf", "SelectType", "a", "b", Action.LOSE_JOBS, ("ctl-1",), "slurmctld", "lost"))
    found = headings(Diff((), (), (), changes, ()))
    assert [(h.action, h.hosts, [i.key for i in h.items]) for h in found] == [
        (Action.LOSE_JOBS, ("ctl-1",), ["SelectType"]),  # most disruptive first
        (Action.NONE, ("gpu-0002", "gpu-0001", "gpu-0003"), ["gpu-[0001-0003]"])]


def test_a_quoted_source_is_left_to_json_and_a_plain_parenthesis_stays() -> None:
    quoted = '`scontrol reconfigure` re-reads it (slurm.conf(5) 24.11, DESCRIPTION: "Changes to the file (x) ...")'
    assert short_why(quoted) == "`scontrol reconfigure` re-reads it"
    plain = "nodes join: `scontrol reconfigure` (SLURM 24.11 adds nodes without a restart)"
    assert short_why(plain) == plain


def test_long_values_are_cut_where_they_differ() -> None:
    old = "Nodes=gpu-[0001-0128] Default=YES MaxTime=UNLIMITED State=UP " + "x" * 80
    line, _ = item_line(Item("slurm.conf", "PartitionName=train", old, old.replace("0128", "0160")), 80)
    assert cell_len(line) <= 80 and "0128" in line and "0160" in line
