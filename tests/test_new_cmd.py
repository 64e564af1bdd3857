"""`new` for a team's first hour: an edited blueprint is never overwritten by surprise, the prompts speak in words
(a menu for choices, ranges with thousands separators, patterns described), FSx sizes follow AWS's rule, and
--list/--params have JSON forms for scripts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from clusterforge.blueprint.templating import discover, pattern_words
from clusterforge.cli.app import app

TEMPLATES = sorted(discover())
FSX = [name for name in TEMPLATES if "fsx_capacity_gib" in discover()[name].spec.params]
E_NOTATION = re.compile(r"\d(?:\.\d+)?e[+-]?\d", re.IGNORECASE)


def invoke(*args: object, stdin: str | None = None) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args], input=stdin)


def test_o_onto_an_existing_file_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    edited = tmp_path / "existing.yaml"
    edited.write_text("# my edits\n")
    result = invoke("new", "onprem-dev", "-o", edited)
    assert result.exit_code == 2, result.output
    assert f"{edited}: exists; pass --force to replace it" in result.stderr
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert edited.read_text() == "# my edits\n"


def test_o_onto_an_existing_file_asks_nothing_before_refusing(tmp_path: Path) -> None:
    edited = tmp_path / "existing.yaml"
    edited.write_text("# my edits\n")
    result = invoke("new", "onprem-dev", "-i", "-o", edited, stdin="")
    assert result.exit_code == 2 and "exists; pass --force" in result.stderr
    assert "cluster name" not in result.stderr


def test_force_replaces_it(tmp_path: Path) -> None:
    edited = tmp_path / "existing.yaml"
    edited.write_text("# my edits\n")
    result = invoke("new", "onprem-dev", "-o", edited, "--force")
    assert result.exit_code == 0, result.output
    assert "clusterforge new onprem-dev" in edited.read_text()


def test_the_line_prompts_reask_and_speak_in_words(tmp_path: Path) -> None:
    """Piped answers: a bad name, then good ones; FSx capacity off AWS's steps, then on them; a choice by number."""
    out = tmp_path / "train.yaml"
    answers = ["Train_1", "train", "", "2", "0", "16", "", "", "", "3000", "9600", "", ""]
    result = invoke("new", "aws-p5-capacity-block", "-i", "-o", out, stdin="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    prompts = result.stderr
    assert prompts.count("name — cluster name") == 2  # asked again after the refusal
    assert "refused: name='Train_1': not of the allowed form" in prompts
    assert "a lowercase letter, then up to 39 lowercase letters, digits or dashes" in prompts
    assert "refused: nodes='0'" in prompts and "(1 to 64)" in prompts
    assert "refused: fsx_capacity_gib='3000': not 1,200 or a multiple of 2,400" in prompts
    assert "1,200 to 2,000,000" in prompts
    assert "  1) p5.48xlarge\n  2) p5e.48xlarge\n  3) p5en.48xlarge" in prompts
    assert not E_NOTATION.search(prompts), prompts
    assert "[0-9" not in prompts and "{0,39}" not in prompts and "^" not in prompts
    blueprint = out.read_text()
    assert '"p5e.48xlarge"' in blueprint and "capacity_gib: 9600" in blueprint and "count: 16" in blueprint


@pytest.mark.parametrize(("typed", "chosen"), [("2", "p5e.48xlarge"), ("p5en", "p5en.48xlarge"),
                                               ("p5.48xlarge", "p5.48xlarge")])
def test_a_choice_by_number_value_or_unique_start(tmp_path: Path, typed: str, chosen: str) -> None:
    out = tmp_path / "bp.yaml"
    result = invoke("new", "aws-p5-capacity-block", "-i", "--set", "name=a", "--set", "team=b", "-o", out,
                    stdin=f"{typed}\n" + "\n" * 8)
    assert result.exit_code == 0, result.output
    assert f'"{chosen}"' in out.read_text()


def test_an_ambiguous_start_is_asked_again(tmp_path: Path) -> None:
    result = invoke("new", "aws-p5-capacity-block", "-i", "--set", "name=a", "--set", "team=b", "-o",
                    tmp_path / "bp.yaml", stdin="p5\n3\n" + "\n" * 8)
    assert result.exit_code == 0, result.output
    assert "refused: instance_type='p5'" in result.stderr and "one of p5.48xlarge" in result.stderr


def test_the_prompt_path_is_chosen_by_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    from clusterforge.cli import new_prompts

    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    assert new_prompts.asker() is new_prompts.ask_on_terminal
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert new_prompts.asker() is new_prompts.ask_by_lines


@pytest.mark.parametrize("name", FSX)
@pytest.mark.parametrize("size", ["3000", "3600", "1201", "2401"])
def test_an_fsx_size_aws_refuses_is_refused_at_set(tmp_path: Path, name: str, size: str) -> None:
    out = tmp_path / "bp.yaml"
    result = invoke("new", name, "--set", f"fsx_capacity_gib={size}", "-o", out)
    assert result.exit_code == 2, result.output
    assert f"parameter fsx_capacity_gib='{size}': not 1,200 or a multiple of 2,400" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("name", FSX)
def test_the_fsx_help_and_check_agree_with_the_storage_rule(name: str) -> None:
    """Every size the template takes is one the blueprint rule (targets/aws/fsx.py, AWS CreateFileSystem) takes,
    and the reverse; the help states the same rule."""
    from clusterforge.core.errors import ClusterforgeError
    from clusterforge.targets.aws.fsx import capacity_rule

    template = discover()[name]
    spec = template.spec.params["fsx_capacity_gib"]
    assert "1,200 or a multiple of 2,400" in spec.help and "1,200 or a multiple of 2,400" in spec.allowed()
    for gib in range(1200, 60_001, 600):
        try:
            template.parameters({"fsx_capacity_gib": str(gib)})
            taken = True
        except ClusterforgeError:
            taken = False
        assert taken == (capacity_rule(gib, "PERSISTENT_2") is None), gib


def test_list_json_carries_every_template() -> None:
    result = invoke("new", "--list", "--format", "json")
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [t["name"] for t in listed] == TEMPLATES
    assert all(t["description"] and t["folder"] for t in listed)


def test_params_json_carries_the_fields() -> None:
    result = invoke("new", "aws-p5-capacity-block", "--params", "-f", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["template"] == "aws-p5-capacity-block"
    params = {p["name"]: p for p in document["params"]}
    assert list(params) == list(discover()["aws-p5-capacity-block"].spec.params)
    assert all({"name", "help", "default", "type", "allowed"} <= set(p) for p in params.values())
    assert params["nodes"] | {"help": ""} == {"name": "nodes", "help": "", "type": "int", "default": 16,
                                              "allowed": "1 to 64", "min": 1, "max": 64}
    assert params["fsx_capacity_gib"]["max"] == 2_000_000 and isinstance(params["fsx_capacity_gib"]["max"], int)
    assert params["fsx_capacity_gib"]["multiple_of"] == 2400 and params["fsx_capacity_gib"]["also_allowed"] == [1200]
    assert params["instance_type"]["choices"] == ["p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge"]
    assert params["region"]["pattern"].startswith("^") and "choices" not in params["region"]


def test_json_is_only_for_list_and_params() -> None:
    result = invoke("new", "onprem-dev", "--format", "json")
    assert result.exit_code == 2 and "--format json is for --list and --params" in result.output


def test_params_text_shows_no_regex_and_no_e_notation() -> None:
    for name in TEMPLATES:
        text = invoke("new", name, "--params").stdout
        assert not E_NOTATION.search(text), name
        assert "{0,39}" not in text and "[a-z" not in text, name


@pytest.mark.parametrize(("pattern", "words"), [
    ("^[a-z][a-z0-9-]{0,39}$", "a lowercase letter, then up to 39 lowercase letters, digits or dashes"),
    ("^[a-zA-Z0-9_]{1,8}$", "1 to 8 letters, digits or underscores"),
    ("^cr-[0-9a-f]{8,17}$", '"cr-", then 8 to 17 digits or letters a-f'),
    ("^[a-z]{2,5}[0-9]-az[0-9]{1,2}$", '2 to 5 lowercase letters, then a digit, then "-az", then 1 or 2 digits'),
    ("^[a-z]{2}(-[a-z]+)+-[0-9]$", None),   # groups: the help and an example say it instead
    ("[^\\n]*", None),
])
def test_patterns_in_words(pattern: str, words: str | None) -> None:
    assert pattern_words(pattern) == words


def test_help_teaches_each_way_in() -> None:
    text = invoke("new", "--help").stdout
    for example in ("new --list", "--params", "--list --format json", "-i -o", "--set", "--force"):
        assert example in text, example


@pytest.mark.parametrize("name", TEMPLATES)
def test_each_template_with_defaults_passes_check(tmp_path: Path, name: str) -> None:
    out = tmp_path / f"{name}.yaml"
    assert invoke("new", name, "-o", out).exit_code == 0
    verdict = json.loads(invoke("check", out, "-f", "json").stdout)
    assert verdict["verdict"] == "pass", verdict


def test_one_error_and_one_warning_are_said_in_the_singular(tmp_path: Path) -> None:
    """onprem-dev's defaults give one PWR-003 warning (a feed loss leaves the servers degraded), the only rule
    run here; a policy config that makes it an error gives one error."""
    from clusterforge.policies.discovery import load_rules
    from clusterforge.policies.registry import REGISTRY

    load_rules()
    skips = [arg for rule in sorted(REGISTRY) if rule != "PWR-003" for arg in ("--skip", rule)]
    warned = invoke("new", "onprem-dev", "-o", tmp_path / "dev.yaml", *skips)
    assert warned.exit_code == 0, warned.output
    assert "check passes (0 errors, 1 warning)" in warned.stderr
    (tmp_path / "policy.yaml").write_text("kind: PolicyConfig\nrules:\n  PWR-003: {level: error}\n")
    failed = invoke("new", "onprem-dev", "--policy-config", tmp_path / "policy.yaml", *skips)
    assert failed.exit_code == 1, failed.output
    assert "check FAILS (1 error, 0 warnings)" in failed.stderr


def test_an_unknown_template_is_said_without_a_file_prefix() -> None:
    result = invoke("new", "no-such-template")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("unknown template 'no-such-template' (see `clusterforge new --list`)")
