"""The users' deploy workflow: preview with the pack on pull requests, up on main behind an approval, OIDC."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.aws.conftest import EXAMPLES, ROOT, Run, run_main

WORKFLOW = ROOT / ".github" / "workflows" / "pulumi-aws.yml"


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text())
    return data


def step_running(job: dict[str, Any], pattern: str) -> dict[str, Any]:
    [step] = [s for s in job["steps"] if re.search(pattern, s.get("run", ""), re.MULTILINE)]
    return step


def step_using(job: dict[str, Any], action: str) -> dict[str, Any]:
    [step] = [s for s in job["steps"] if s.get("uses", "").startswith(action + "@")]
    return step


def test_triggers_and_oidc_permissions(workflow: dict[str, Any]) -> None:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as true
    assert "pull_request" in triggers and triggers["push"]["branches"] == ["main"]
    assert workflow["permissions"] == {"contents": "read", "id-token": "write"}
    assert workflow["concurrency"]["cancel-in-progress"] is False  # an update is never cancelled halfway
    assert "secrets.AWS" not in WORKFLOW.read_text()  # no stored access keys


def test_preview_runs_the_policy_pack_on_pull_requests(workflow: dict[str, Any]) -> None:
    job = workflow["jobs"]["preview"]
    assert "github.event_name == 'pull_request'" in job["if"]
    step = step_running(job, r"^\s*pulumi preview ")
    assert "--policy-pack ../../policy-pack" in step["run"]
    assert step["working-directory"] == "${{ env.TRUSTED_DIR }}/stacks/aws"
    assert (ROOT / "stacks" / "aws" / "../../policy-pack/PulumiPolicy.yaml").resolve().is_file()
    assert "pulumi up" not in yaml.safe_dump(job)


def test_the_preview_runs_no_code_of_the_pull_request(workflow: dict[str, Any]) -> None:
    """The job that holds cloud credentials runs the base commit's program, pack and clusterforge; the PR's
    checkout gives only the blueprint (CLUSTERFORGE_BLUEPRINT_DIR) and its includes."""
    job = workflow["jobs"]["preview"]
    trusted = workflow["env"]["TRUSTED_DIR"]
    [checkout] = [s for s in job["steps"] if s.get("with", {}).get("path") == "${{ env.TRUSTED_DIR }}"]
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    for step in job["steps"]:
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False
    install = step_running(job, r"pip install")
    assert '"./$TRUSTED_DIR[aws]"' in install["run"] and '-c "$TRUSTED_DIR/requirements/lock.txt"' in install["run"]
    assert " -e " not in install["run"] and "'.[aws]'" not in install["run"]  # not the PR's copy, not editable
    assert '"$PWD/$TRUSTED_DIR/stacks/aws/venv/bin"' in install["run"]
    steps = job["steps"]
    assert steps.index(checkout) < steps.index(install) < steps.index(
        step_using(job, "aws-actions/configure-aws-credentials"))
    preview = step_running(job, r"^\s*pulumi preview ")
    assert preview["env"] == {"CLUSTERFORGE_BLUEPRINT_DIR": "${{ github.workspace }}/stacks/aws",
                              "CLUSTERFORGE_INCLUDE_ROOT": "${{ github.workspace }}"}
    assert trusted.startswith(".") and "TRUSTED_DIR" in preview["working-directory"]


def test_the_trusted_program_reads_the_blueprint_from_the_pull_requests_folder(
        stack: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`blueprint` resolves in CLUSTERFORGE_BLUEPRINT_DIR; everything else the config names stays the program's."""

    pr = tmp_path / "pr" / "stacks" / "aws"
    pr.mkdir(parents=True)
    text = (EXAMPLES / "aws-p5.yaml").read_text().replace("name: nlp-p5", "name: from-the-pr")
    assert "from-the-pr" in text
    (pr / "cluster.yaml").write_text(text)
    monkeypatch.setenv("CLUSTERFORGE_BLUEPRINT_DIR", str(pr))
    run = stack(run_main({"blueprint": "cluster.yaml"}))
    assert {r.inputs.get("tags", {}).get("clusterforge:cluster") for r in run.recorder.resources} >= {"from-the-pr"}


def test_up_runs_on_main_behind_an_environment(workflow: dict[str, Any]) -> None:
    job = workflow["jobs"]["up"]
    assert "github.ref == 'refs/heads/main'" in job["if"] and "pull_request" not in job["if"]
    assert job["environment"] == "aws-production"  # required reviewers are set on this environment
    step = step_running(job, r"^\s*pulumi up ")
    assert "--yes" in step["run"] and "--policy-pack ../../policy-pack" in step["run"]
    assert job["steps"].index(step_using(job, "aws-actions/configure-aws-credentials")) < job["steps"].index(step)


@pytest.mark.parametrize("job", ["preview", "up"])
def test_credentials_backend_and_cli(workflow: dict[str, Any], job: str) -> None:
    steps = workflow["jobs"][job]
    creds = step_using(steps, "aws-actions/configure-aws-credentials")["with"]
    assert creds["role-to-assume"] == "${{ vars.AWS_ROLE_ARN }}" and "aws-access-key-id" not in creds
    assert step_using(steps, "pulumi/actions")["with"]["pulumi-version"] == "${{ env.PULUMI_VERSION }}"
    step_running(steps, r'^pulumi login "\$PULUMI_BACKEND_URL"$')
    install = step_running(steps, r"pip install")
    assert "stacks/aws/venv" in install["run"] and "[aws]" in install["run"]  # the virtualenv Pulumi.yaml names


def test_pulumi_yaml_matches_the_workflow() -> None:
    project = yaml.safe_load((ROOT / "stacks" / "aws" / "Pulumi.yaml").read_text())
    assert project["name"] == "clusterforge-aws"
    assert project["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": "venv"}}


def test_pulumi_yaml_declares_what_the_program_reads() -> None:
    """A declared key without a default is required by every stack (pulumi/pulumi#21797): only the blueprint."""
    declared = yaml.safe_load((ROOT / "stacks" / "aws" / "Pulumi.yaml").read_text())["config"]
    program = (ROOT / "clusterforge" / "targets" / "aws" / "stack_main.py").read_text()  # stacks/aws/__main__.py's
    read = set(re.findall(r'(?:config\.\w+|paths?)\("(\w+)"\)', program))
    assert read == set(declared)
    assert [key for key, spec in declared.items() if "default" not in spec] == ["blueprint"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_run_scripts_parse(workflow: dict[str, Any], tmp_path: Path) -> None:
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if "run" in step:
                script = tmp_path / "step.sh"
                script.write_text(step["run"])
                subprocess.run(["bash", "-n", str(script)], check=True)
