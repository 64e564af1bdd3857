"""A team's own Pulumi project (`clusterforge stack new aws DIR`), run as Pulumi runs it: its `__main__.py` under the
mocks (tests/aws/conftest.py: fresh mocks, preview=False, registrations drained, an empty run fails), with a stack
config whose relative paths start at the project's folder, builds what stacks/aws builds and refuses what it
refuses."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pulumi
import pytest
from click.testing import Result

from clusterforge.targets.aws.stack_main import BLUEPRINT_DIR
from tests.aws.blueprints import with_errors, write
from tests.aws.conftest import EXAMPLES, Run, run_main
from tests.aws.test_program import assert_aws_p5

Stack = Callable[..., Run]


@pytest.fixture
def project(cli: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`clusterforge stack new aws` into a team's repository, with the p5 example among its blueprints."""
    monkeypatch.delenv(BLUEPRINT_DIR, raising=False)
    repo = tmp_path / "team-repo"
    result = cli("stack", "new", "aws", repo / "stacks" / "aws")
    assert result.exit_code == 0, result.output
    (repo / "clusters").mkdir()
    shutil.copy(EXAMPLES / "aws-p5.yaml", repo / "clusters" / "nlp-p5.yaml")
    return repo / "stacks" / "aws"


def test_the_generated_project_deploys_the_p5_example(stack: Stack, project: Path) -> None:
    """The blueprint is named relative to the project, as `pulumi config set blueprint` in its README says."""
    run = stack(run_main({"blueprint": "../../clusters/nlp-p5.yaml"}, main=project / "__main__.py"))
    assert_aws_p5(run.recorder)
    assert run.exports["cluster"] == "nlp-p5"


def test_the_generated_project_refuses_policy_errors(stack: Stack, project: Path) -> None:
    write(project.parent.parent / "clusters", with_errors(), "broken.yaml")
    run = stack(run_main({"blueprint": "../../clusters/broken.yaml"}, main=project / "__main__.py"),
                expect_error=True)
    assert isinstance(run.error, pulumi.RunError) and "NET-005" in str(run.error)
    assert run.recorder.resources == []


def test_a_project_whose_main_runs_nothing_fails_the_run(stack: Stack, project: Path) -> None:
    """What the test above would see if the generated __main__.py imported the program but never called it."""
    main = project / "__main__.py"
    main.write_text(main.read_text().replace("\nrun(Path(__file__).resolve().parent)\n", "\n"))
    with pytest.raises(AssertionError, match="registered nothing"):
        stack(run_main({"blueprint": "../../clusters/nlp-p5.yaml"}, main=main))
