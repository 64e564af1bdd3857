"""`clusterforge stack new aws DIR`: a Pulumi project a team keeps in its own repository, which runs this release's
program and policy pack (tests/aws/test_team_project.py runs the project's program under Pulumi's mocks)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from clusterforge.core.version import __version__
from tests.conftest import ROOT

Cli = Callable[..., Result]
STACK, PACK = ROOT / "stacks" / "aws", ROOT / "policy-pack"


@pytest.fixture
def project(cli: Cli, tmp_path: Path) -> Path:
    result = cli("stack", "new", "aws", tmp_path / "team-stack")
    assert result.exit_code == 0, result.output
    return tmp_path / "team-stack"


def test_the_project_is_the_releases_program_and_pack_pinned_to_this_release(project: Path) -> None:
    written = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file())
    assert written == [".gitignore", "Pulumi.yaml", "README.md", "__main__.py", "constraints.txt",
                       "policy-pack/PulumiPolicy.yaml", "policy-pack/__main__.py", "policy-pack/requirements.txt",
                       "requirements.txt"]
    # one program: the project's __main__.py is stacks/aws's, which only runs the installed package's
    assert (project / "__main__.py").read_text() == (STACK / "__main__.py").read_text()
    assert "from clusterforge.targets.aws.stack_main import run\n" in (project / "__main__.py").read_text()
    assert (project / "Pulumi.yaml").read_text() == (STACK / "Pulumi.yaml").read_text()  # the config schema
    assert yaml.safe_load((project / "Pulumi.yaml").read_text())["config"]["blueprint"]["type"] == "string"
    for pack_file in ("PulumiPolicy.yaml", "__main__.py"):
        assert (project / "policy-pack" / pack_file).read_text() == (PACK / pack_file).read_text()
    assert yaml.safe_load((project / "policy-pack" / "PulumiPolicy.yaml").read_text())["version"] == __version__
    for requirements, constraints in (("requirements.txt", "constraints.txt"),
                                      ("policy-pack/requirements.txt", "../constraints.txt")):
        lines = [line for line in (project / requirements).read_text().splitlines() if not line.startswith("#")]
        assert lines == [f"-c {constraints}", f"clusterforge[aws]=={__version__}"], requirements
    pins = (project / "constraints.txt").read_text().splitlines()
    assert {"pulumi==3.272.0", "pulumi_aws==7.51.1"} <= set(pins)  # the lock's, as the release was tested
    assert [line for line in pins if not line.startswith("#")] == (ROOT / "requirements" / "lock.txt").read_text(
        ).splitlines()


def test_the_readme_says_how_to_set_it_up(project: Path) -> None:
    readme = (project / "README.md").read_text()
    assert readme.startswith("# team-stack\n") and f"clusterforge {__version__}" in readme
    for line in ("venv/bin/pip install -r requirements.txt", "pulumi config set blueprint ",
                 "pulumi preview --policy-pack policy-pack", "pulumi up --policy-pack policy-pack",
                 "clusterforge-aws:blueprint: "):
        assert line in readme, line


def test_a_folder_that_holds_anything_needs_force(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "stack"
    folder.mkdir()
    (folder / "Pulumi.nlp-p5.yaml").write_text("config: {}\n")
    (folder / "requirements.txt").write_text("edited\n")
    refused = cli("stack", "new", "aws", folder)
    assert refused.exit_code == 2
    assert refused.stderr.startswith(f"{folder}: is not empty (choose a new folder, or pass --force")
    assert "Traceback" not in refused.output
    assert sorted(p.name for p in folder.iterdir()) == ["Pulumi.nlp-p5.yaml", "requirements.txt"]
    assert cli("stack", "new", "aws", folder, "--force").exit_code == 0
    assert (folder / "Pulumi.nlp-p5.yaml").read_text() == "config: {}\n"  # a stack's config is the team's
    assert f"clusterforge[aws]=={__version__}" in (folder / "requirements.txt").read_text()
    assert (folder / "policy-pack" / "__main__.py").is_file()


def test_an_empty_folder_is_taken(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert cli("stack", "new", "aws", tmp_path / "empty").exit_code == 0
    assert (tmp_path / "empty" / "Pulumi.yaml").is_file()


@pytest.mark.parametrize("kind", ["file", "link"])
def test_a_file_or_a_link_is_refused_even_with_force(cli: Cli, tmp_path: Path, kind: str) -> None:
    real = tmp_path / "real"
    real.mkdir()
    given = tmp_path / "given"
    if kind == "file":
        given.write_text("x")
    else:
        given.symlink_to(real, target_is_directory=True)
    result = cli("stack", "new", "aws", given, "--force")
    assert result.exit_code == 2 and result.stderr.startswith(f"{given}: ")
    assert list(real.iterdir()) == []


@pytest.mark.parametrize(("target", "hint"), [("asw", "did you mean aws?"), ("onprem", "targets with one: aws")])
def test_a_target_without_a_project_is_refused(cli: Cli, tmp_path: Path, target: str, hint: str) -> None:
    result = cli("stack", "new", target, tmp_path / "x")
    assert result.exit_code == 2
    assert result.stderr == f"no deployment project for target {target!r} ({hint})\n"
    assert not (tmp_path / "x").exists()


def test_help_teaches_with_examples(cli: Cli) -> None:
    text = cli("stack", "new", "--help").output
    assert "Examples:" in text
    for example in ("clusterforge stack new aws stacks/aws", "pulumi preview --policy-pack policy-pack",
                     "clusterforge stack new aws stacks/aws --force"):
        assert example in text, example
    assert "stack new aws stacks/aws" in cli("stack", "--help").output
    assert "stack" in cli("--help").output


@pytest.fixture
def pack_process(project: Path) -> Iterator[Any]:
    """The project's own policy pack, started as `pulumi preview --policy-pack policy-pack` starts it."""
    import grpc
    from pulumi.runtime.proto import analyzer_pb2_grpc

    folder = project / "policy-pack"
    process = subprocess.Popen([sys.executable, str(folder / "__main__.py")], cwd=folder, env=dict(os.environ),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None and process.stderr is not None
        port = process.stdout.readline().decode().strip()
        assert port.isdigit(), process.stderr.read().decode()
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
        channel.close()
    finally:
        process.kill()
        process.wait(timeout=10)


def test_the_projects_policy_pack_serves_the_releases_policies(pack_process: Any) -> None:
    from google.protobuf import empty_pb2

    from clusterforge.targets.aws.crossguard import PACK_NAME
    from clusterforge.targets.aws.crossguard.pack import policies

    info = pack_process.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == PACK_NAME
    assert sorted(p.name for p in info.policies) == sorted(p.name for p in policies(base=PACK))
