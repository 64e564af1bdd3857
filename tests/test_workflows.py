"""The PR workflow and the pre-commit hook: they run the real command, report where GitHub shows it, and fail
the job on errors. The changed-blueprint finder is run for real against a scratch git repository."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from clusterforge.cli.main import app
from tests.conftest import EXAMPLES, ROOT
from tests.hostile.cases_basic import VALID

WORKFLOW = ROOT / ".github" / "workflows" / "policy-check.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    """The check job's steps (the cost-comment job has its own: `comment_job`)."""
    return list(workflow["jobs"]["check"]["steps"])


def runs(workflow: dict[str, Any], text: str) -> list[dict[str, Any]]:
    return [s for s in steps(workflow) if text in s.get("run", "")]


def test_runs_on_pull_requests_with_code_scanning_permissions(workflow: dict[str, Any]) -> None:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as true
    assert "pull_request" in triggers
    assert workflow["permissions"] == {"contents": "read", "security-events": "write"}


def test_writes_sarif_and_uploads_it(workflow: dict[str, Any]) -> None:
    """The reports go to the runner's temp folder, and what is uploaded is what that step wrote (its outputs),
    never a path in the PR's checkout."""
    [report] = [s for s in steps(workflow) if s.get("id") == "reports"]
    assert "--format \"$format\" -o \"$path\"" in report["run"] and 'path="$RUNNER_TEMP/$name"' in report["run"]
    assert "|| true" not in report["run"]
    [upload] = [s for s in steps(workflow) if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert upload["with"]["sarif_file"] == "${{ steps.reports.outputs.sarif }}"
    [junit] = [s for s in steps(workflow) if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert junit["with"]["path"] == "${{ steps.reports.outputs.junit }}"
    assert steps(workflow).index(report) < steps(workflow).index(upload)
    assert "always()" in upload["if"] and "steps.reports.outputs.sarif" in upload["if"]  # uploaded on failure too
    assert "hashFiles" not in upload["if"]


def test_annotates_and_fails_the_job_last(workflow: dict[str, Any]) -> None:
    last = steps(workflow)[-1]
    assert re.search(r'^\s*clusterforge check .*--format github -- "\$\{files\[@\]\}"\s*$', last["run"], re.MULTILINE)
    assert "|| true" not in last["run"] and not last.get("continue-on-error")  # exit 1 fails the job


def test_actions_are_pinned_to_a_major_version_at_least(workflow: dict[str, Any]) -> None:
    for step in steps(workflow):
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@(v\d+(\.\d+){0,2}|[0-9a-f]{40})", step["uses"]), step["uses"]


def find_script(workflow: dict[str, Any]) -> str:
    [step] = [s for s in steps(workflow) if s.get("id") == "changed"]
    assert "${{" not in step["run"], "event data reaches the script through env, never inline"
    return str(step["run"])


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with three blueprints on its base commit."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    for name in ("examples/a.yaml", "examples/b.yaml", "blueprints/team/c.yaml", "README.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"kind: Cluster\nname: {name}\n")  # distinct, so git sees no renames
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def runner_env(workflow: dict[str, Any], repo: Path, **extra: str) -> dict[str, str]:
    """The environment a step sees: the workflow's env, the runner's folders, and this venv's clusterforge."""
    temp = repo.parent / "runner"
    temp.mkdir(exist_ok=True)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    values = {k: str(v).replace("${{ github.workspace }}", str(repo)) for k, v in workflow["env"].items()}
    return {**os.environ, **values, "RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(temp / "output"), "PATH": path,
            **extra}


def find(workflow: dict[str, Any], repo: Path, base: str, **extra: str) -> tuple[list[str], list[str], str]:
    """Run the workflow's finder: (blueprints, clusterforge check options, count output)."""
    env = runner_env(workflow, repo, BASE_SHA=base, **extra)
    temp = Path(env["RUNNER_TEMP"])
    (temp / "output").write_text("")
    subprocess.run(["bash", "-e", "-c", find_script(workflow)], cwd=repo, env=env, check=True, capture_output=True)
    names = (temp / "blueprints").read_bytes().decode("utf-8", "surrogateescape").split("\0")
    return ([n for n in names if n], (temp / "check-options").read_text().splitlines(),
            (temp / "output").read_text().strip())


def test_finder_lists_changed_blueprints_only(workflow: dict[str, Any], repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    (repo / "examples/a.yaml").write_text("kind: Cluster\nname: changed\n")
    (repo / "README.md").write_text("changed\n")
    (repo / "gpu.cluster.yaml").write_text("kind: Cluster\nname: gpu\n")
    git(repo, "rm", "-q", "examples/b.yaml")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "change")
    blueprints, args, output = find(workflow, repo, base)
    assert sorted(blueprints) == ["examples/a.yaml", "gpu.cluster.yaml"]  # not the README, not the deleted file
    assert args == [] and output == "count=2"


def test_finder_rechecks_everything_when_waivers_change(workflow: dict[str, Any], repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    (repo / "waivers.yaml").write_text("waivers: []\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "waive")
    blueprints, args, _ = find(workflow, repo, base)
    assert sorted(blueprints) == ["blueprints/team/c.yaml", "examples/a.yaml", "examples/b.yaml"]
    assert args == [] and not (repo / ".clusterforge-checker").exists()  # base: the PR's own waivers never count
    assert find(workflow, repo, base, VERDICT_FILES="pr")[1] == ["--waivers", "waivers.yaml"]


def test_finder_with_nothing_changed_reports_zero(workflow: dict[str, Any], repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    assert find(workflow, repo, base) == ([], [], "count=0")
    assert len(find(workflow, repo, "")[0]) == 3  # a manual run checks every blueprint


def test_verdict_files_come_from_the_trusted_checkout(workflow: dict[str, Any], repo: Path) -> None:
    """The policy config and waivers that decide verdicts are the base branch's, not the ones the PR carries."""
    base = git(repo, "rev-parse", "HEAD")
    (repo / "waivers.yaml").write_text("waivers: []\n")  # the PR's own waivers: not used
    checker = repo / workflow["env"]["CHECKER_DIR"]
    checker.mkdir()
    (checker / "waivers.yaml").write_text("waivers: []\n")
    (checker / "policy-config.yaml").write_text("rules: {}\n")
    _, options, _ = find(workflow, repo, base)
    assert options == ["--policy-config", f"{checker.name}/policy-config.yaml",
                       "--waivers", f"{checker.name}/waivers.yaml"]
    assert find(workflow, repo, base, VERDICT_FILES="pr")[1] == ["--waivers", "waivers.yaml"]


def test_clusterforge_is_installed_from_the_trusted_checkout(workflow: dict[str, Any]) -> None:
    """A PR cannot change the checker that judges it: the base commit is checked out beside it and installed."""
    assert workflow["env"]["VERDICT_FILES"] == "base" and workflow["env"]["CHECKER_REF"] == ""
    [trusted] = [s for s in steps(workflow) if s.get("with", {}).get("path") == "${{ env.CHECKER_DIR }}"]
    assert "github.event.pull_request.base.sha" in trusted["with"]["ref"]
    assert "env.CHECKER_REF" in trusted["with"]["ref"]
    [install] = [s for s in steps(workflow) if "pip install" in s.get("run", "")]
    assert '"./$CHECKER_DIR"' in install["run"] and re.search(r"install\s+[^\n]*\s\.\s*$", install["run"]) is None
    assert steps(workflow).index(trusted) < steps(workflow).index(install)
    for step in steps(workflow):
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False  # no token left in .git for what runs next


def _step(workflow: dict[str, Any], name: str) -> str:
    [found] = [s for s in steps(workflow) if s.get("name", "").startswith(name)]
    return str(found["run"])


def _blueprint_repo(tmp_path: Path) -> Path:
    """A PR that adds a failing blueprint and, beside it, a passing one whose name reads as `-h -o`."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    (root / "examples").mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "commit", "-q", "--allow-empty", "-m", "base")
    hall = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
    broken = hall.replace("voltage: 415, amps: 60, phase: 3}, {name: a02-b, side: B, voltage: 415",
                          "voltage: 208, amps: 60, phase: 3}, {name: a02-b, side: B, voltage: 208")
    assert broken != hall
    (root / "examples" / "broken.yaml").write_text(broken)  # PWR-002: a policy failure
    (root / "-ho.cluster.yaml").write_text(VALID)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pr")
    return root


def test_a_file_named_like_an_option_cannot_pass_the_gate(workflow: dict[str, Any], tmp_path: Path) -> None:
    """The workflow's own steps, run as the runner runs them: the failing blueprint still fails the job."""
    repo = _blueprint_repo(tmp_path)
    base = git(repo, "rev-parse", "HEAD~1")
    blueprints, _, count = find(workflow, repo, base)
    assert sorted(blueprints) == ["-ho.cluster.yaml", "examples/broken.yaml"] and count == "count=2"
    env = runner_env(workflow, repo)
    gate = subprocess.run(["bash", "-e", "-c", _step(workflow, "Check blueprints")], cwd=repo, env=env,
                          capture_output=True, text=True)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "Usage:" not in gate.stdout and "::error file=examples/broken.yaml," in gate.stdout
    reports = subprocess.run(["bash", "-e", "-c", _step(workflow, "Write the SARIF")], cwd=repo, env=env,
                             capture_output=True, text=True)
    assert reports.returncode == 0, reports.stderr
    temp = Path(env["RUNNER_TEMP"])
    assert "PWR-002" in (temp / "clusterforge.sarif").read_text()
    assert "PWR-002" in (temp / "clusterforge-junit.xml").read_text()


def test_a_file_named_like_an_option_cannot_pass_the_hook(hook: dict[str, Any], tmp_path: Path) -> None:
    """pre-commit runs `entry`, then the file names: the failing blueprint still fails the commit."""
    repo = _blueprint_repo(tmp_path)
    command, *args = shlex.split(hook["entry"])
    command = str(Path(sys.executable).parent / command)
    result = subprocess.run([command, *args, "-ho.cluster.yaml", "examples/broken.yaml"], cwd=repo,
                            capture_output=True, text=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Usage:" not in result.stdout and "PWR-002" in result.stdout


def test_file_names_are_listed_with_workflow_commands_off(workflow: dict[str, Any], repo: Path) -> None:
    """The finder prints the PR's file names: between `::stop-commands::` and its token, so none is a command."""
    base = git(repo, "rev-parse", "HEAD")
    for name in ("::warning file=x::forged.cluster.yaml", " ::error::forged.cluster.yaml", "##[error]x.cluster.yaml"):
        (repo / name).write_text("kind: Cluster\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "forge")
    env = runner_env(workflow, repo, BASE_SHA=base)
    (Path(env["RUNNER_TEMP"]) / "output").write_text("")
    log = subprocess.run(["bash", "-e", "-c", find_script(workflow)], cwd=repo, env=env, check=True,
                         capture_output=True, text=True).stdout.splitlines()
    [stop] = [i for i, line in enumerate(log) if line.startswith("::stop-commands::")]
    token = log[stop].removeprefix("::stop-commands::")
    assert len(token) == 32 and log.index(f"::{token}::") > stop
    for line in log[:stop] + log[log.index(f"::{token}::") + 1:]:
        assert not line.lstrip().startswith("::") and "##[" not in line, line
    assert len(find(workflow, repo, base)[0]) == 3


@pytest.fixture(scope="module")
def hook() -> dict[str, Any]:
    hooks = yaml.safe_load(HOOKS.read_text())
    [found] = [h for h in hooks if h["id"] == "clusterforge-check"]
    return dict(found)


def test_hook_entry_is_a_real_command(hook: dict[str, Any]) -> None:
    command, *args = shlex.split(hook["entry"])
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert command in scripts and hook["language"] == "python"
    assert args == ["check", "--"] and "args" not in hook  # file names follow `--`, whatever they look like
    result = CliRunner().invoke(app, ["check", "--help"])
    assert result.exit_code == 0, result.output
    assert "Decide whether the designs in FILES physically fit" in result.output


@pytest.mark.parametrize(("path", "matched"), [
    ("examples/aws-p5.yaml", True),
    ("blueprints/vision/h100.yml", True),
    ("teams/nlp/p5.cluster.yaml", True),
    (".github/workflows/policy-check.yml", False),
    ("policy-pack/PulumiPolicy.yaml", False),
    ("requirements/lock.txt", False),
])
def test_hook_runs_on_blueprints_only(hook: dict[str, Any], path: str, matched: bool) -> None:
    assert bool(re.search(hook["files"], path)) is matched


AUDIT = ROOT / ".github" / "workflows" / "dependency-audit.yml"


def test_dependency_audit_covers_the_lock_with_a_pinned_pip_audit() -> None:
    audit = yaml.safe_load(AUDIT.read_text())
    triggers = audit.get("on", audit.get(True))
    assert "requirements/lock.txt" in triggers["pull_request"]["paths"] and triggers["schedule"]
    assert audit["permissions"] == {"contents": "read"}
    [job] = audit["jobs"].values()
    commands = " ".join(step.get("run", "") for step in job["steps"])
    assert re.search(r"pip install pip-audit==\d+\.\d+\.\d+", commands)
    audit_args = shlex.split(commands[commands.index("pip-audit --requirement"):])
    lock = audit_args[audit_args.index("--requirement") + 1]
    assert (ROOT / lock).is_file() and {"--no-deps", "--disable-pip", "--strict"} <= set(audit_args)


def test_the_lock_pins_every_package_as_the_audit_needs() -> None:
    """pip-audit --disable-pip audits only `name==version` lines; anything else would go unaudited or fail."""
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements/lock.txt").read_text().splitlines()]
    unpinned = [line for line in lines if line and not re.fullmatch(r"[A-Za-z0-9._-]+(\[[a-z,]+\])?==[\w.+-]+", line)]
    assert unpinned == []


def _outputs(env: dict[str, str]) -> dict[str, str]:
    lines = Path(env["GITHUB_OUTPUT"]).read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def _run_step(workflow: dict[str, Any], repo: Path, name: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """A step's script as the runner runs it (bash -e), in the PR's checkout, with the runner's folders."""
    env = runner_env(workflow, repo, **extra)
    Path(env["GITHUB_OUTPUT"]).touch()
    return subprocess.run(["bash", "-e", "-c", _step(workflow, name)], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300)


def _shared_site_repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose base commit holds two teams on one site (examples/shared-site) and a team whose pools
    come from a fragment outside the blueprint folders; returns (repository, base commit)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    (root / "examples").mkdir(parents=True)
    shutil.copytree(EXAMPLES / "shared-site", root / "examples" / "shared-site")
    (root / "fragments").mkdir()
    (root / "fragments" / "notes.yaml").write_text("note: a fragment no blueprint includes\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root, git(root, "rev-parse", "HEAD")


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def test_an_include_only_change_is_checked_through_its_blueprints(workflow: dict[str, Any], tmp_path: Path) -> None:
    """A PR that changes only the site both teams include: both are checked, and the gate fails on the error the
    site's change makes (it passed on the base commit)."""
    repo, base = _shared_site_repo(tmp_path)
    assert find(workflow, repo, base) == ([], [], "count=0")
    site = repo / "examples/shared-site/site-dc1.yaml"
    text = site.read_text()
    weaker = text.replace("amps: 60", "amps: 16")
    assert weaker != text
    site.write_text(weaker)
    _commit(repo, "site only")
    blueprints, _, count = find(workflow, repo, base)
    assert sorted(blueprints) == ["examples/shared-site/team-nlp.yaml", "examples/shared-site/team-vision.yaml"]
    assert count == "count=2"
    gate = _run_step(workflow, repo, "Check blueprints")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "::error file=examples/shared-site/site-dc1.yaml," in gate.stdout


def test_a_fragment_outside_the_blueprint_folders_and_a_yml_blueprint_are_checked(workflow: dict[str, Any],
                                                                                  tmp_path: Path) -> None:
    """A fragment under the include root but outside BLUEPRINTS, included from a team; a new `.yml` blueprint;
    then the fragment deleted: each time the blueprints it touches are listed."""
    repo, base = _shared_site_repo(tmp_path)
    team = repo / "examples/shared-site/team-nlp.yaml"
    pools = "  - {name: gpu, hardware: dgx-h100, count: 3, partition: train}\n"
    (repo / "fragments" / "nlp-pools.yaml").write_text(pools.lstrip())
    text = team.read_text()
    assert pools in text
    team.write_text(text.replace("pools:\n" + pools, "pools: !include ../../fragments/nlp-pools.yaml\n"))
    _commit(repo, "pools in a fragment")
    assert subprocess.run([str(Path(sys.executable).parent / "clusterforge"), "check", "--", str(team)],
                          env=runner_env(workflow, repo), cwd=repo, capture_output=True).returncode == 0
    base = git(repo, "rev-parse", "HEAD")
    (repo / "fragments" / "nlp-pools.yaml").write_text(pools.lstrip().replace("count: 3", "count: 300"))
    (repo / "examples" / "rogue.yml").write_text((EXAMPLES / "onprem-dgx-h100.yaml").read_text().replace(
        "amps: 60", "amps: 16"))
    _commit(repo, "fragment and a .yml blueprint")
    blueprints, _, count = find(workflow, repo, base)
    assert sorted(blueprints) == ["examples/rogue.yml", "examples/shared-site/team-nlp.yaml"] and count == "count=2"
    gate = _run_step(workflow, repo, "Check blueprints")
    assert gate.returncode == 2, gate.stdout + gate.stderr  # the fragment's 300 nodes break the placements
    assert "file=examples/rogue.yml,line=28,title=PWR-002" in gate.stdout
    assert "file=examples/shared-site/team-nlp.yaml,line=10,title=INPUT::pool 'gpu' has 300 nodes" in gate.stdout
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "rm", "-q", "fragments/nlp-pools.yaml")
    _commit(repo, "fragment deleted")
    assert find(workflow, repo, base)[0] == ["examples/shared-site/team-nlp.yaml"]  # and check says it is missing
    gate = _run_step(workflow, repo, "Check blueprints")
    assert gate.returncode == 2 and "title=INPUT::" in gate.stdout and "no such file" in gate.stdout


def test_a_change_that_touches_no_blueprint_says_so(workflow: dict[str, Any], tmp_path: Path) -> None:
    """count=0 is an explained result: every YAML file of the repository is considered, so count=0 means no
    blueprint anywhere reads a changed file; each changed YAML file is named with its kind (with workflow
    commands off: the names are the PR's), and the gate step runs and says there is nothing to judge."""
    repo, base = _shared_site_repo(tmp_path)
    (repo / "examples" / "policy.yaml").write_text("kind: PolicyConfig\n")
    (repo / "fragments" / "notes.yaml").write_text("note: changed\n")
    (repo / "::error title=forged::x.yaml").write_text("note: a name that is a workflow command\n")
    (repo / "README.md").write_text("x\n")
    _commit(repo, "no blueprint")
    env = runner_env(workflow, repo, BASE_SHA=base)
    Path(env["GITHUB_OUTPUT"]).write_text("")
    finder = subprocess.run(["bash", "-e", "-c", find_script(workflow)], cwd=repo, env=env, capture_output=True,
                            text=True, check=True)
    assert _outputs(env)["count"] == "0"
    summary = tmp_path / "summary.md"
    gate = _run_step(workflow, repo, "Check blueprints", GITHUB_STEP_SUMMARY=str(summary))
    assert gate.returncode == 0 and "No blueprint is touched by this change" in gate.stdout
    for log in (finder.stdout, gate.stdout):
        _, token, rest = log.partition("::stop-commands::")
        token = token.split("\n", 1)[0]
        quiet = rest.partition(f"::{token}::")[0]
        assert token and "examples/policy.yaml: changed, not a Cluster (kind: 'PolicyConfig')" in quiet
        assert "fragments/notes.yaml: changed, not a Cluster (no kind)" in quiet  # outside the usual folders
        assert "::error title=forged::x.yaml: changed" in quiet
        assert "::error title=forged" not in log.replace(quiet, "")
    assert "3 changed YAML file(s), read by no blueprint" in summary.read_text()
    [step] = [s for s in steps(workflow) if s.get("name", "").startswith("Check blueprints")]
    assert "if" not in step  # the gate always runs: a skipped step would read as a pass


def test_a_blueprint_anywhere_and_in_any_case_is_checked(workflow: dict[str, Any], tmp_path: Path) -> None:
    """A Cluster outside the usual folders (teams/rogue.yml), one named .YAML, and a team outside them whose
    only change is a fragment it includes: each is checked, and the gate fails on their errors."""
    repo, base = _shared_site_repo(tmp_path)
    failing = (EXAMPLES / "onprem-dgx-h100.yaml").read_text().replace("amps: 60", "amps: 16")
    (repo / "teams").mkdir()
    (repo / "teams" / "pools.yaml").write_text("  - {name: gpu, hardware: dgx-h100, count: 3, partition: train}\n")
    team = (repo / "examples/shared-site/team-nlp.yaml").read_text()
    pools = "pools:\n  - {name: gpu, hardware: dgx-h100, count: 3, partition: train}\n"
    assert pools in team
    (repo / "teams" / "speech.yaml").write_text(
        team.replace(pools, "pools: !include pools.yaml\n").replace("../../", "../").replace(
            "site-dc1.yaml", "../examples/shared-site/site-dc1.yaml").replace("name: nlp", "name: speech"))
    _commit(repo, "a team outside the usual folders")
    base = git(repo, "rev-parse", "HEAD")
    assert find(workflow, repo, base) == ([], [], "count=0")
    (repo / "teams" / "pools.yaml").write_text("  - {name: gpu, hardware: dgx-h100, count: 300, partition: train}\n")
    (repo / "teams" / "rogue.yml").write_text(failing)
    (repo / "rogue.YAML").write_text(failing)
    _commit(repo, "fragment only, and two rogue blueprints")
    blueprints, _, count = find(workflow, repo, base)
    assert sorted(blueprints) == ["rogue.YAML", "teams/rogue.yml", "teams/speech.yaml"] and count == "count=3"
    gate = _run_step(workflow, repo, "Check blueprints")
    assert gate.returncode == 2, gate.stdout + gate.stderr  # the fragment's 300 nodes break the placements
    assert "file=teams/speech.yaml,line=10,title=INPUT::pool 'gpu' has 300 nodes" in gate.stdout
    judged = subprocess.run([str(Path(sys.executable).parent / "clusterforge"), "check", "-f", "json", "--",
                             *blueprints], env=runner_env(workflow, repo), cwd=repo, capture_output=True, text=True)
    assert {f["file"] for f in json.loads(judged.stdout)["findings"] if f["id"] == "PWR-002"} == {
        "rogue.YAML", "teams/rogue.yml"}


def test_report_paths_the_pr_planted_as_links_are_neither_written_through_nor_uploaded(
        workflow: dict[str, Any], tmp_path: Path) -> None:
    repo = _blueprint_repo(tmp_path)
    runner_file = tmp_path / "runner-secret.txt"
    runner_file.write_text("runner's own file\n")
    for name in ("clusterforge.sarif", "clusterforge-junit.xml"):
        (repo / name).symlink_to(runner_file)
    _commit(repo, "links where the reports used to go")
    blueprints, _, _ = find(workflow, repo, git(repo, "rev-parse", "HEAD~2"))
    assert "examples/broken.yaml" in blueprints
    env = runner_env(workflow, repo)
    Path(env["GITHUB_OUTPUT"]).write_text("")
    reports = subprocess.run(["bash", "-e", "-c", _step(workflow, "Write the SARIF")], cwd=repo, env=env,
                             capture_output=True, text=True)
    assert reports.returncode == 0, reports.stdout + reports.stderr
    assert runner_file.read_text() == "runner's own file\n"
    uploaded = _outputs(env)  # what the upload steps take: steps.reports.outputs.sarif / .junit
    for key in ("sarif", "junit"):
        path = Path(uploaded[key])
        assert path.parent == Path(env["RUNNER_TEMP"]) and path.is_file() and not path.is_symlink()
        assert "PWR-002" in path.read_text() and repo not in path.resolve().parents


def test_a_report_that_cannot_be_written_fails_the_step(workflow: dict[str, Any], tmp_path: Path) -> None:
    repo = _blueprint_repo(tmp_path)
    find(workflow, repo, git(repo, "rev-parse", "HEAD~1"))
    env = runner_env(workflow, repo)
    Path(env["GITHUB_OUTPUT"]).write_text("")
    (Path(env["RUNNER_TEMP"]) / "clusterforge.sarif").mkdir()  # check -o refuses a folder
    reports = subprocess.run(["bash", "-e", "-c", _step(workflow, "Write the SARIF")], cwd=repo, env=env,
                             capture_output=True, text=True)
    assert reports.returncode == 1 and "the sarif report was not written (exit 2)" in reports.stdout
    assert "sarif" not in _outputs(env)


# ---------------------------------------------------------------------------------------------------------------
# The cost of the change: the job summary and one PR comment edited in place


def comment_job(workflow: dict[str, Any]) -> dict[str, Any]:
    return dict(workflow["jobs"]["cost-comment"])


def test_no_run_script_interpolates_an_expression(workflow: dict[str, Any]) -> None:
    """`${{ }}` in a run: script is pasted into the shell before it runs: a PR's branch name, title or file name
    would run as code. Every value reaches a script through env."""
    for name, job in workflow["jobs"].items():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), (name, step.get("name"))


def test_only_the_comment_job_may_write_to_the_pull_request(workflow: dict[str, Any]) -> None:
    assert "pull-requests" not in workflow["permissions"]
    assert "permissions" not in workflow["jobs"]["check"]  # the workflow's: contents read, SARIF upload
    job = comment_job(workflow)
    assert job["permissions"] == {"pull-requests": "write"}
    assert job["needs"] == "check"
    for step in job["steps"]:  # nothing of the PR is checked out or run where the token can write
        assert "uses" not in step
        assert "clusterforge" not in step.get("run", "").replace("clusterforge-cost-diff", "")


def test_the_comment_is_found_by_its_marker_and_edited_in_place(workflow: dict[str, Any]) -> None:
    from clusterforge.formats.cost_diff import MARKER

    job = comment_job(workflow)
    assert "always()" in job["if"]  # a failing check still gets its cost comment
    assert "github.event.pull_request.head.repo.full_name == github.repository" in job["if"]  # forks: summary only
    [step] = job["steps"]
    script, env = step["run"], step["env"]
    assert MARKER in script and '"github-actions[bot]"' in script and "--paginate" in script
    assert re.search(r'gh api --method PATCH "repos/\$REPO/issues/comments/\$id" --input "\$payload"', script)
    assert re.search(r'gh api --method POST "repos/\$REPO/issues/\$PR/comments" --input "\$payload"', script)
    assert script.index("PATCH") < script.index("POST")  # a second push edits; it never adds a comment
    assert env["BODY"] == "${{ needs.check.outputs.cost_comment }}"
    assert env["PR"] == "${{ github.event.pull_request.number }}" and env["GH_TOKEN"] == "${{ github.token }}"
    assert workflow["jobs"]["check"]["outputs"]["cost_comment"] == "${{ steps.cost.outputs.comment }}"
    check = steps(workflow)
    [price] = [s for s in check if s.get("id") == "cost"]
    assert check.index(price) < len(check) - 1  # the gate stays the last step
    assert MARKER in price["run"]


def test_the_pricing_step_writes_the_summary_and_the_comment(workflow: dict[str, Any], tmp_path: Path) -> None:
    """The step run as the runner runs it on a PR that grows the AWS example from 64 to 96 nodes and adds a
    blueprint: the job summary and the comment output hold the marker, the p5.48xlarge line with its +$ delta,
    and the new blueprint's estimate."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    (repo / "examples").mkdir(parents=True)
    p5 = (EXAMPLES / "aws-p5.yaml").read_text()
    (repo / "examples" / "p5.yaml").write_text(p5)
    git(repo, "init", "-q")
    _commit(repo, "base")
    base = git(repo, "rev-parse", "HEAD")
    grown = p5.replace("p5.48xlarge, count: 64,", "p5.48xlarge, count: 96,")
    assert grown != p5
    (repo / "examples" / "p5.yaml").write_text(grown)
    (repo / "examples" / "dgx.yaml").write_text((EXAMPLES / "onprem-dgx-h100.yaml").read_text())
    _commit(repo, "grow")
    assert sorted(find(workflow, repo, base)[0]) == ["examples/dgx.yaml", "examples/p5.yaml"]
    summary = tmp_path / "summary.md"
    result = _run_step(workflow, repo, "Price the change", BASE_SHA=base, GITHUB_STEP_SUMMARY=str(summary))
    assert result.returncode == 0, result.stdout + result.stderr
    text = summary.read_text()
    assert text.startswith("<!-- clusterforge-cost-diff -->\n")
    assert re.search(r"^\| p5\.48xlarge [^|]*\| \$1,837,497\.60 \| \$2,756,246\.40 \| \+\$918,748\.80 \|$", text, re.M)
    assert "**monthly total**" in text and "### Cost: " in text  # the new blueprint, priced alone
    output = Path(runner_env(workflow, repo)["GITHUB_OUTPUT"]).read_text()
    opening = re.search(r"^comment<<([0-9a-f]{32})$", output, re.M)
    assert opening is not None and output.rstrip().endswith(opening.group(1))
    assert text in output
