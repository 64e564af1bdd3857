from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterforge.cli.main import app
from tests.conftest import EXAMPLES, example_files


def test_validate_examples(cli) -> None:
    result = cli("validate", *example_files())
    assert result.exit_code == 0, result.output
    assert "valid (vision-h100, target onprem, 16 nodes in 1 pool, 6 racks)" in result.output


def test_validate_reports_file_line_path_message(cli, write) -> None:
    bad = write((EXAMPLES / "aws-p5.yaml").read_text().replace("count: 64", "count: many"))
    result = cli("validate", bad)
    assert result.exit_code == 2
    assert f"{bad}:10: pools[0].count: expected an integer, got 'many'" in result.stderr


def test_validate_keeps_going_over_files(cli, write) -> None:
    bad = write("a: [", "broken.yaml")
    result = cli("validate", bad, EXAMPLES / "aws-p5.yaml")
    assert result.exit_code == 2
    assert "broken.yaml:2: invalid YAML" in result.stderr
    assert "aws-p5.yaml: valid" in result.stdout


def test_validate_missing_file(cli) -> None:
    result = cli("validate", "nope.yaml")
    assert result.exit_code == 2 and "nope.yaml: no such file" in result.stderr
    assert "Traceback" not in result.output


def test_schema_has_pools(cli) -> None:
    result = cli("schema")
    assert result.exit_code == 0
    cluster = json.loads(result.stdout)["$defs"]["Cluster"]
    assert "pools" in cluster["properties"] and cluster["additionalProperties"] is False


def test_schema_to_file(cli, tmp_path) -> None:
    out = tmp_path / "s.json"
    assert cli("schema", "-o", out).exit_code == 0
    assert "pools" in json.loads(out.read_text())["$defs"]["Cluster"]["properties"]


def test_catalog_show_p5_json(cli) -> None:
    result = cli("catalog", "show", "p5.48xlarge", "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["efa_max_interfaces"] == 32


def test_catalog_show_p5_text(cli) -> None:
    result = cli("catalog", "show", "p5.48xlarge")
    assert "efa_max_interfaces" in result.stdout and "32" in result.stdout


def test_catalog_show_unknown_key(cli) -> None:
    result = cli("catalog", "show", "p5.48xl")
    assert result.exit_code == 2 and "did you mean p5.48xlarge" in result.stderr


def test_catalog_list_has_every_key(cli) -> None:
    from tests.test_catalog import REQUIRED

    result = cli("catalog", "list", "--format", "json")
    keys = {e["key"] for e in json.loads(result.stdout)}
    assert set(REQUIRED) <= keys
    text = cli("catalog", "list").stdout
    assert all(key in text for key in REQUIRED)


def test_bad_format_is_usage_error(cli) -> None:
    result = cli("catalog", "list", "--format", "xml")
    assert result.exit_code == 2


def test_every_command_module_is_in_the_lazy_map() -> None:
    """A command whose module is missing from COMMAND_MODULES would vanish from the CLI: import them all and
    compare what registered with the map."""
    import importlib
    import pkgutil

    import clusterforge.cli as cli_package
    from clusterforge.cli.app import COMMAND_MODULES, app

    for module in pkgutil.iter_modules(cli_package.__path__):
        if module.name.endswith("_cmds"):
            importlib.import_module(f"clusterforge.cli.{module.name}")
    assert set(app.commands) == set(COMMAND_MODULES)
    for name, command in app.commands.items():
        assert command.callback is not None
        assert command.callback.__module__ == f"clusterforge.cli.{COMMAND_MODULES[name]}" or \
            command.__class__.__name__ == "_Group", name


# The real entry point with the analysis replaced by one that raises what argv[1] names: how a bug looks.
CRASHING_CHECK = """
import sys
import clusterforge.pipeline.analysis
from clusterforge.core.errors import ClusterforgeError
raised = sys.argv[1]
def analyze(*args, **kwargs):
    raise eval(raised)
clusterforge.pipeline.analysis.analyze = analyze
from clusterforge.cli.main import main
sys.argv = ["clusterforge", "check", sys.argv[2]]
main()
"""


def _crash(raised: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CRASHING_CHECK, raised, str(EXAMPLES / "aws-p5.yaml")],
                          capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("raised", [
    "MemoryError()", "RecursionError('maximum recursion depth exceeded')", "KeyError('pools')",
    "RuntimeError('boom\\n::error file=x.py::forged')", "GeneratorExit()",
])
def test_an_internal_error_exits_3_with_one_line(raised: str) -> None:
    """A bug is neither a verdict (1) nor bad input (2): CI must not read a crash as an ordinary FAIL."""
    result = _crash(raised)
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    name = raised.split("(")[0]
    assert line.startswith(f"clusterforge: internal error: {name}") and "CLUSTERFORGE_DEBUG=1" in line, line
    assert not line.startswith("::") and "forged" not in result.stdout


def test_an_internal_error_shows_its_traceback_on_request() -> None:
    result = _crash("KeyError('pools')", {"CLUSTERFORGE_DEBUG": "1"})
    assert result.returncode == 3
    assert "Traceback (most recent call last)" in result.stderr and "in analyze" in result.stderr


def test_input_errors_and_interrupts_keep_their_codes() -> None:
    """Bad input stays exit 2; Ctrl-C is exit 130 with one line: neither a verdict (1) nor an internal error."""
    bad_input = _crash("ClusterforgeError('bad input')")
    assert bad_input.returncode == 2 and bad_input.stderr.strip() == "bad input"
    interrupted = _crash("KeyboardInterrupt()")
    assert (interrupted.returncode, interrupted.stderr) == (130, "clusterforge: interrupted\n")


def test_exit_codes_are_documented() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert "3 internal error" in " ".join(result.output.split())
    assert "130 interrupted" in " ".join(result.output.split())
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert "`3` internal error" in readme
