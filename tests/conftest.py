from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from clusterforge.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SHARED_EXAMPLES = ROOT.parent / "shared" / "examples"


def filter_plugins(name: str = "packages") -> Any:
    """One of the roles' filter plugin modules (plugins/filter/NAME.py: packages holds
    clusterforge.cluster.missing_packages, power_save controller_modules), loaded from its file: the collection's
    plugins are not a Python package."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"clusterforge_cluster_{name}",
                                                  ROOT / "plugins" / "filter" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def example_files() -> list[Path]:
    """The repository's examples plus ../shared/examples (present in CI and on developer machines)."""
    files = sorted(EXAMPLES.glob("*.yaml"))
    if SHARED_EXAMPLES.is_dir():
        files += sorted(SHARED_EXAMPLES.glob("*.yaml"))
    return files


@pytest.fixture(autouse=True, scope="session")
def _the_roles_collection_is_found() -> None:
    """ansible-playbook run by a test finds clusterforge.cluster (the roles' own filter) in this checkout, as
    `provision` and the lab do (clusterforge.files.checkout.ansible_environment)."""
    import os

    from clusterforge.files.checkout import ansible_environment

    os.environ.update(ansible_environment(ROOT))


@pytest.fixture(autouse=True)
def _no_inherited_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts without COLUMNS: pytest-xdist's workers inherit COLUMNS=80 where a serial run has none, so
    a command's text, which wraps at the terminal's width (clusterforge/cli/terminal.py), would depend on how the
    suite was started. A test that wants a width sets COLUMNS itself."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture
def cli() -> Callable[..., Result]:
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return invoke


@pytest.fixture
def onprem_data() -> dict:
    return yaml.safe_load((EXAMPLES / "onprem-dgx-h100.yaml").read_text())


@pytest.fixture
def aws_data() -> dict:
    return yaml.safe_load((EXAMPLES / "aws-p5.yaml").read_text())


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    def _write(text: str, name: str = "bp.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return _write


SHARED_SITE = EXAMPLES / "shared-site"


@pytest.fixture
def hall(tmp_path: Path) -> Path:
    """A copy of examples/shared-site (one site file, two teams that include it) to change."""
    import shutil

    for f in SHARED_SITE.iterdir():
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def line_of(path: Path, needle: str) -> int:
    """The first line of `path` that holds `needle` (1-based), where a finding must point."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def floats(value: Any) -> list[float]:
    """Every float in a JSON document, where machine output must carry rounded numbers."""
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in floats(v)]
    if isinstance(value, list):
        return [f for v in value for f in floats(v)]
    return []


@pytest.fixture(scope="session")
def rendered_onprem(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/onprem-dgx-h100.yaml rendered once, for the tests that read (never change) a rendered folder."""
    out = tmp_path_factory.mktemp("render") / "out"
    result = CliRunner().invoke(app, ["render", str(EXAMPLES / "onprem-dgx-h100.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out
