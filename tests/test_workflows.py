"""The PR gate and the pre-commit hook: they run the real command, report where GitHub shows it, and fail the job on
errors. The gate's steps live in the composite action (action.yml); the reusable workflow (gate.yml) runs them and
posts the cost comment; this repository's policy-check.yml calls that workflow with its own base commit as the
checker. The steps are run for real against scratch git repositories (tests/gate_steps.py runs them as the runner
does); tests/test_gate_action.py runs the whole gate in a repository of blueprints only, with the wheel as the
checker."""

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
from tests.gate_steps import ACTION, GATE, POLICY_CHECK, ActionRun, load, no_op, pull_request_event, triggers
from tests.hostile.cases_basic import VALID

HOOKS = ROOT / ".pre-commit-hooks.yaml"
VENV_BIN = str(Path(sys.executable).parent)  # this checkout's clusterforge: the finder tests need no wheel
STUBS = {"actions/setup-python": no_op, "github/codeql-action/upload-sarif": no_op, "actions/upload-artifact": no_op}


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    return load(ACTION)


@pytest.fixture(scope="module")
def gate() -> dict[str, Any]:
    return load(GATE)


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return load(POLICY_CHECK)


def steps(action: dict[str, Any]) -> list[dict[str, Any]]:
    """The composite action's steps: the one implementation of the gate."""
    return list(action["runs"]["steps"])


def step(action: dict[str, Any], key: str) -> dict[str, Any]:
    [found] = [s for s in steps(action) if s.get("id") == key or s.get("name", "").startswith(key)]
    return found


def check_job(gate: dict[str, Any]) -> dict[str, Any]:
    return dict(gate["jobs"]["check"])


def comment_job(gate: dict[str, Any]) -> dict[str, Any]:
    return dict(gate["jobs"]["cost-comment"])


# ---------------------------------------------------------------------------------------------------------------
# What each file says


def test_runs_on_pull_requests_with_code_scanning_permissions(workflow: dict[str, Any], gate: dict[str, Any]) -> None:
    """policy-check.yml runs on PRs and calls the reusable gate; the calling job grants exactly what gate.yml's jobs
    ask for (GitHub refuses to start a run whose nested job asks for more), and nothing is granted workflow-wide."""
    assert "pull_request" in triggers(workflow) and "workflow_call" in triggers(gate)
    assert workflow["permissions"] == {}
    [job] = workflow["jobs"].values()
    assert job["uses"] == "./.github/workflows/gate.yml"
    asked: dict[str, str] = {}
    for nested in gate["jobs"].values():
        asked.update(nested["permissions"])
    assert job["permissions"] == asked
    assert check_job(gate)["permissions"] == {"contents": "read", "actions": "read", "security-events": "write"}


def test_writes_sarif_and_uploads_it(action: dict[str, Any]) -> None:
    """The reports go to the runner's temp folder, and what is uploaded is what that step wrote (its outputs),
    never a path in the PR's checkout; the upload may fail without failing the job (the verdict step judges)."""
    report = step(action, "reports")
    assert "--format \"$format\" -o \"$path\"" in report["run"] and 'path="$gate/$name"' in report["run"]
    assert 'gate="$RUNNER_TEMP/clusterforge-gate"' in report["run"] and "|| true" not in report["run"]
    [upload] = [s for s in steps(action) if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert upload["with"]["sarif_file"] == "${{ steps.reports.outputs.sarif }}"
    [junit] = [s for s in steps(action) if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert junit["with"]["path"] == "${{ steps.reports.outputs.junit }}"
    assert steps(action).index(report) < steps(action).index(upload)
    assert "always()" in upload["if"] and "steps.reports.outputs.sarif" in upload["if"]  # uploaded on failure too
    assert "inputs.sarif != 'false'" in upload["if"] and "hashFiles" not in upload["if"]
    assert upload["continue-on-error"] is True and junit["continue-on-error"] is True


def test_annotates_then_the_saved_verdict_fails_the_job_last(action: dict[str, Any]) -> None:
    """The annotations come from `check --format github`, whose exit code is kept; the last step, which always
    runs, exits with it: no upload between them can skip or change the verdict."""
    annotate = step(action, "check")
    assert re.search(r'^\s*clusterforge check .*--format github -- "\$\{files\[@\]\}" \|\| status=\$\?\s*$',
                     annotate["run"], re.MULTILINE)
    assert 'echo "status=$status" >> "$GITHUB_OUTPUT"' in annotate["run"]
    last = steps(action)[-1]
    assert last["id"] == "verdict" and last["if"] == "always()" and not last.get("continue-on-error")
    assert last["env"]["STATUS"] == "${{ steps.check.outputs.status }}"
    assert 'exit "$STATUS"' in last["run"] and "|| true" not in last["run"]
    upload = step(action, "upload")
    assert steps(action).index(annotate) < steps(action).index(upload) < steps(action).index(last)


@pytest.mark.parametrize("path", [ACTION, GATE, POLICY_CHECK], ids=lambda p: p.name)
def test_actions_are_pinned_to_a_major_version_at_least(path: Path) -> None:
    document = load(path)
    found = steps(document) if path == ACTION else [s for j in document["jobs"].values() for s in j.get("steps", [])]
    for entry in found:
        if "uses" in entry and not entry["uses"].startswith("./"):
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@(v\d+(\.\d+){0,2}|[0-9a-f]{40})", entry["uses"]), entry["uses"]


@pytest.mark.parametrize("path", [ACTION, GATE, POLICY_CHECK], ids=lambda p: p.name)
def test_no_run_script_interpolates_an_expression(path: Path) -> None:
    """`${{ }}` in a run: script is pasted into the shell before it runs: a PR's branch name, title or file name
    would run as code. Every value reaches a script through env."""
    document = load(path)
    found = steps(document) if path == ACTION else [s for j in document["jobs"].values() for s in j.get("steps", [])]
    for entry in found:
        assert "${{" not in entry.get("run", ""), entry.get("name")


def test_clusterforge_is_installed_from_the_trusted_checkout(workflow: dict[str, Any], gate: dict[str, Any],
                                                             action: dict[str, Any]) -> None:
    """A PR cannot change the checker that judges it. This repository passes its PR's base commit as the checker;
    gate.yml checks that commit (or, for a team, the release it was called at) out beside the PR and runs the
    action from there; the action installs its own copy ($GITHUB_ACTION_PATH), never the checkout's."""
    [job] = workflow["jobs"].values()
    assert job["with"]["checker-ref"] == "${{ github.event.pull_request.base.sha || github.sha }}"
    assert "checker" not in job["with"]
    pr, checker, run = check_job(gate)["steps"]
    assert pr["uses"].startswith("actions/checkout@") and "ref" not in pr["with"] and "path" not in pr["with"]
    assert checker["uses"].startswith("actions/checkout@")
    assert checker["with"]["ref"] == "${{ inputs.checker-ref || job.workflow_sha }}"
    assert checker["with"]["repository"] == "${{ inputs.checker-repository || job.workflow_repository }}"
    assert run["uses"] == "./" + checker["with"]["path"]
    for entry in (pr, checker):
        assert entry["with"]["persist-credentials"] is False  # no token left in .git for what runs next
    install = step(action, "install")
    script = install["run"]
    assert 'source="$GITHUB_ACTION_PATH"' in script and 'lock="$GITHUB_ACTION_PATH/requirements/lock.txt"' in script
    assert 'python -P -m pip install --disable-pip-version-check -c "$lock" "$source"' in script
    assert script.index('cd "$RUNNER_TEMP"') < script.index("pip install")  # not from the PR's checkout
    assert steps(action).index(install) < steps(action).index(step(action, "changed"))
    finder = step(action, "changed")["run"]
    assert 'specs+=(":(exclude).clusterforge-checker")' in finder  # the checker's copy is never judged


# ---------------------------------------------------------------------------------------------------------------
# The finder, run as the runner runs it


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


def action_run(repo: Path, base: str, **inputs: str) -> ActionRun:
    """The action in `repo` for a PR whose base is `base` ("" a manual run), this checkout's clusterforge."""
    event = pull_request_event(base, "head") if base else {}
    return ActionRun(repo, repo.parent / "runner", inputs={"base": base, **inputs}, event=event,
                     event_name="pull_request" if base else "workflow_dispatch", path=VENV_BIN, uses=STUBS)


def find(*args: Any, **inputs: str) -> tuple[list[str], list[str], str]:
    """Run the action's finder on (repo, base): (blueprints, clusterforge check options, count output)."""
    repo, base = args
    run = action_run(repo, base, **inputs)
    done = run.step("changed", check_if=False)
    assert done.returncode == 0, done.stdout + done.stderr
    gate_dir = run.temp / "clusterforge-gate"
    names = (gate_dir / "blueprints").read_bytes().decode("utf-8", "surrogateescape").split("\0")
    count = f"count={done.outputs['count']}" if "count" in done.outputs else ""
    return [n for n in names if n], (gate_dir / "check-options").read_text().splitlines(), count


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def test_finder_lists_changed_blueprints_only(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    (repo / "examples/a.yaml").write_text("kind: Cluster\nname: changed\n")
    (repo / "README.md").write_text("changed\n")
    (repo / "gpu.cluster.yaml").write_text("kind: Cluster\nname: gpu\n")
    git(repo, "rm", "-q", "examples/b.yaml")
    _commit(repo, "change")
    blueprints, args, output = find(repo, base)
    assert sorted(blueprints) == ["examples/a.yaml", "gpu.cluster.yaml"]  # not the README, not the deleted file
    assert args == [] and output == "count=2"


def test_finder_rechecks_everything_when_waivers_change(repo: Path) -> None:
    """A change to a named verdict file re-checks every blueprint (any verdict may change once it merges), and the
    waivers that judge are the base commit's, not the ones the PR carries."""
    (repo / "waivers.yaml").write_text("apiVersion: clusterforge/v1\nkind: Waivers\nwaivers: []\n")
    _commit(repo, "waivers on the base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "waivers.yaml").write_text("waivers: [{rule: PWR-002}]\n")
    _commit(repo, "waive")
    blueprints, args, _ = find(repo, base, waivers="waivers.yaml")
    assert sorted(blueprints) == ["blueprints/team/c.yaml", "examples/a.yaml", "examples/b.yaml"]
    assert args[0] == "--waivers" and Path(args[1]).read_text().endswith("waivers: []\n")
    assert find(repo, base)[0] == []  # not named: the PR's waivers file is just another YAML file


def test_finder_with_nothing_changed_reports_zero(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    assert find(repo, base) == ([], [], "count=0")
    assert len(find(repo, "")[0]) == 3  # a manual run checks every blueprint


def test_verdict_files_come_from_the_base_commit(repo: Path) -> None:
    """The policy config and waivers that decide verdicts are the base commit's, copied out of git into the
    runner's temp folder: the PR's copies in the checkout are never read, nor is the checker's."""
    (repo / "policy-config.yaml").write_text("apiVersion: clusterforge/v1\nkind: PolicyConfig\n# base\n")
    (repo / "waivers.yaml").write_text("apiVersion: clusterforge/v1\nkind: Waivers\nwaivers: []  # base\n")
    _commit(repo, "verdict files")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "policy-config.yaml").write_text("# the PR's\n")
    (repo / "waivers.yaml").write_text("# the PR's\n")
    _commit(repo, "the PR changes them")
    checker = repo / ".clusterforge-checker"  # the checker's copy beside the PR: never read for verdicts
    checker.mkdir()
    (checker / "policy-config.yaml").write_text("# the checker's\n")
    _, options, _ = find(repo, base, **{"policy-config": "policy-config.yaml", "waivers": "waivers.yaml"})
    assert options[0::2] == ["--policy-config", "--waivers"]
    temp = repo.parent / "runner" / "clusterforge-gate"
    assert [Path(p).read_text().splitlines()[-1][-6:] for p in options[1::2]] == ["# base", "# base"]
    assert all(temp in Path(p).parents for p in options[1::2])


def test_a_named_verdict_file_missing_at_the_base_commit_fails_with_its_name(repo: Path) -> None:
    """Named but absent on the base (even when the PR adds it): the job fails and says which file and commit."""
    base = git(repo, "rev-parse", "HEAD")
    (repo / "policy-config.yaml").write_text("apiVersion: clusterforge/v1\nkind: PolicyConfig\n")
    _commit(repo, "the PR adds it")
    done = action_run(repo, base, **{"policy-config": "policy-config.yaml", "catalogs": "prices.yaml"}).step(
        "changed", check_if=False)
    assert done.returncode == 1
    assert f"::error::policy config policy-config.yaml does not exist at the base commit {base}" in done.stdout
    assert f"::error::catalog prices.yaml does not exist at the base commit {base}" in done.stdout
    assert "count" not in done.outputs


def test_a_file_named_like_an_option_cannot_pass_the_gate(tmp_path: Path) -> None:
    """The action's own steps, run as the runner runs them: the failing blueprint still fails the job."""
    repo = _blueprint_repo(tmp_path)
    base = git(repo, "rev-parse", "HEAD~1")
    run = action_run(repo, base).run(skip=("install",))
    assert sorted(run.result("changed").stdout.split("Blueprints to check: 2\n")[1].split()[:2]) == [
        "-ho.cluster.yaml", "examples/broken.yaml"]
    assert run.steps["changed"]["outputs"]["count"] == "2"
    gate = run.result("check")
    assert gate.outputs["status"] == "1"
    assert "Usage:" not in gate.stdout and "::error file=examples/broken.yaml," in gate.stdout
    assert run.result("verdict").returncode == 1 and run.outputs()["verdict"] == "fail"
    gate_dir = run.temp / "clusterforge-gate"
    assert "PWR-002" in (gate_dir / "clusterforge.sarif").read_text()
    assert "PWR-002" in (gate_dir / "clusterforge-junit.xml").read_text()


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


def test_a_file_named_like_an_option_cannot_pass_the_hook(hook: dict[str, Any], tmp_path: Path) -> None:
    """pre-commit runs `entry`, then the file names: the failing blueprint still fails the commit."""
    repo = _blueprint_repo(tmp_path)
    command, *args = shlex.split(hook["entry"])
    command = str(Path(sys.executable).parent / command)
    result = subprocess.run([command, *args, "-ho.cluster.yaml", "examples/broken.yaml"], cwd=repo,
                            capture_output=True, text=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Usage:" not in result.stdout and "PWR-002" in result.stdout


def test_file_names_are_listed_with_workflow_commands_off(repo: Path) -> None:
    """The finder prints the PR's file names: between `::stop-commands::` and its token, so none is a command."""
    base = git(repo, "rev-parse", "HEAD")
    for name in ("::warning file=x::forged.cluster.yaml", " ::error::forged.cluster.yaml", "##[error]x.cluster.yaml"):
        (repo / name).write_text("kind: Cluster\n")
    _commit(repo, "forge")
    done = action_run(repo, base).step("changed", check_if=False)
    assert done.returncode == 0, done.stderr
    log = done.stdout.splitlines()
    [stop] = [i for i, line in enumerate(log) if line.startswith("::stop-commands::")]
    token = log[stop].removeprefix("::stop-commands::")
    assert len(token) == 32 and log.index(f"::{token}::") > stop
    for line in log[:stop] + log[log.index(f"::{token}::") + 1:]:
        assert not line.lstrip().startswith("::") and "##[" not in line, line
    assert len(find(repo, base)[0]) == 3


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


def _run_step(repo: Path, base: str, name: str, **inputs: str) -> Any:
    """The finder, then one step of the action, as the runner runs them (the step's `if:` is not consulted)."""
    run = action_run(repo, base, **inputs)
    found = run.step("changed", check_if=False)
    assert found.returncode == 0, found.stdout + found.stderr
    return run.step(name, check_if=False)


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


def _checked(repo: Path, *files: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(VENV_BIN) / "clusterforge"), "check", "-f", "json", "--", *files], cwd=repo,
                          env={**os.environ, "CLUSTERFORGE_INCLUDE_ROOT": str(repo)},
                          capture_output=True, text=True)


def test_an_include_only_change_is_checked_through_its_blueprints(tmp_path: Path) -> None:
    """A PR that changes only the site both teams include: both are checked, and the gate fails on the error the
    site's change makes (it passed on the base commit)."""
    repo, base = _shared_site_repo(tmp_path)
    assert find(repo, base) == ([], [], "count=0")
    site = repo / "examples/shared-site/site-dc1.yaml"
    text = site.read_text()
    weaker = text.replace("amps: 60", "amps: 16")
    assert weaker != text
    site.write_text(weaker)
    _commit(repo, "site only")
    blueprints, _, count = find(repo, base)
    assert sorted(blueprints) == ["examples/shared-site/team-nlp.yaml", "examples/shared-site/team-vision.yaml"]
    assert count == "count=2"
    gate = _run_step(repo, base, "check")
    assert gate.outputs["status"] == "1", gate.stdout + gate.stderr
    assert "::error file=examples/shared-site/site-dc1.yaml," in gate.stdout


def test_a_fragment_outside_the_blueprint_folders_and_a_yml_blueprint_are_checked(tmp_path: Path) -> None:
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
    assert _checked(repo, str(team)).returncode == 0
    base = git(repo, "rev-parse", "HEAD")
    (repo / "fragments" / "nlp-pools.yaml").write_text(pools.lstrip().replace("count: 3", "count: 300"))
    (repo / "examples" / "rogue.yml").write_text((EXAMPLES / "onprem-dgx-h100.yaml").read_text().replace(
        "amps: 60", "amps: 16"))
    _commit(repo, "fragment and a .yml blueprint")
    blueprints, _, count = find(repo, base)
    assert sorted(blueprints) == ["examples/rogue.yml", "examples/shared-site/team-nlp.yaml"] and count == "count=2"
    gate = _run_step(repo, base, "check")
    assert gate.outputs["status"] == "2", gate.stdout + gate.stderr  # the fragment's 300 nodes break the placements
    assert "file=examples/rogue.yml,line=28,title=PWR-002" in gate.stdout
    assert "file=examples/shared-site/team-nlp.yaml,line=10,title=INPUT::pool 'gpu' has 300 nodes" in gate.stdout
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "rm", "-q", "fragments/nlp-pools.yaml")
    _commit(repo, "fragment deleted")
    assert find(repo, base)[0] == ["examples/shared-site/team-nlp.yaml"]  # and check says it is missing
    gate = _run_step(repo, base, "check")
    assert gate.outputs["status"] == "2" and "title=INPUT::" in gate.stdout and "no such file" in gate.stdout


def test_a_change_that_touches_no_blueprint_says_so(tmp_path: Path) -> None:
    """count=0 is an explained result: every YAML file of the repository is considered, so count=0 means no
    blueprint anywhere reads a changed file; each changed YAML file is named with its kind (with workflow
    commands off: the names are the PR's), and the gate step runs and says there is nothing to judge."""
    repo, base = _shared_site_repo(tmp_path)
    (repo / "examples" / "policy.yaml").write_text("kind: PolicyConfig\n")
    (repo / "fragments" / "notes.yaml").write_text("note: changed\n")
    (repo / "::error title=forged::x.yaml").write_text("note: a name that is a workflow command\n")
    (repo / "README.md").write_text("x\n")
    _commit(repo, "no blueprint")
    run = action_run(repo, base).run(skip=("install",))
    finder, gate, verdict = run.result("changed"), run.result("check"), run.result("verdict")
    assert finder.outputs["count"] == "0" and run.result("reports").outcome == "skipped"
    assert gate.outputs["status"] == "0" and "No blueprint is touched by this change" in gate.stdout
    assert verdict.returncode == 0 and "clusterforge check: pass" in verdict.stdout
    for log in (finder.stdout, gate.stdout):
        _, token, rest = log.partition("::stop-commands::")
        token = token.split("\n", 1)[0]
        quiet = rest.partition(f"::{token}::")[0]
        assert token and "examples/policy.yaml: changed, not a Cluster (kind: 'PolicyConfig')" in quiet
        assert "fragments/notes.yaml: changed, not a Cluster (no kind)" in quiet  # outside the usual folders
        assert "::error title=forged::x.yaml: changed" in quiet
        assert "::error title=forged" not in log.replace(quiet, "")
    assert "3 changed YAML file(s), read by no blueprint" in run.summary.read_text()


def test_a_blueprint_anywhere_and_in_any_case_is_checked(tmp_path: Path) -> None:
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
    assert find(repo, base) == ([], [], "count=0")
    (repo / "teams" / "pools.yaml").write_text("  - {name: gpu, hardware: dgx-h100, count: 300, partition: train}\n")
    (repo / "teams" / "rogue.yml").write_text(failing)
    (repo / "rogue.YAML").write_text(failing)
    _commit(repo, "fragment only, and two rogue blueprints")
    blueprints, _, count = find(repo, base)
    assert sorted(blueprints) == ["rogue.YAML", "teams/rogue.yml", "teams/speech.yaml"] and count == "count=3"
    gate = _run_step(repo, base, "check")
    assert gate.outputs["status"] == "2", gate.stdout + gate.stderr  # the fragment's 300 nodes break the placements
    assert "file=teams/speech.yaml,line=10,title=INPUT::pool 'gpu' has 300 nodes" in gate.stdout
    judged = _checked(repo, *blueprints)
    assert {f["file"] for f in json.loads(judged.stdout)["findings"] if f["id"] == "PWR-002"} == {
        "rogue.YAML", "teams/rogue.yml"}


def test_report_paths_the_pr_planted_as_links_are_neither_written_through_nor_uploaded(tmp_path: Path) -> None:
    repo = _blueprint_repo(tmp_path)
    runner_file = tmp_path / "runner-secret.txt"
    runner_file.write_text("runner's own file\n")
    for name in ("clusterforge.sarif", "clusterforge-junit.xml"):
        (repo / name).symlink_to(runner_file)
    _commit(repo, "links where the reports used to go")
    reports = _run_step(repo, git(repo, "rev-parse", "HEAD~2"), "reports")
    assert reports.returncode == 0, reports.stdout + reports.stderr
    assert runner_file.read_text() == "runner's own file\n"
    for key in ("sarif", "junit"):  # what the upload steps take: steps.reports.outputs.sarif / .junit
        path = Path(reports.outputs[key])
        assert path.parent == repo.parent / "runner" / "clusterforge-gate" and path.is_file()
        assert not path.is_symlink() and "PWR-002" in path.read_text() and repo not in path.resolve().parents


def test_a_report_that_cannot_be_written_fails_the_step(tmp_path: Path) -> None:
    repo = _blueprint_repo(tmp_path)
    run = action_run(repo, git(repo, "rev-parse", "HEAD~1"))
    assert run.step("changed", check_if=False).returncode == 0
    (run.temp / "clusterforge-gate" / "clusterforge.sarif").mkdir()  # check -o refuses a folder
    reports = run.step("reports", check_if=False)
    assert reports.returncode == 1 and "the sarif report was not written (exit 2)" in reports.stdout
    assert "sarif" not in reports.outputs


# ---------------------------------------------------------------------------------------------------------------
# The cost of the change: the job summary and one PR comment edited in place


def test_only_the_comment_job_may_write_to_the_pull_request(gate: dict[str, Any]) -> None:
    assert "pull-requests" not in check_job(gate)["permissions"]
    job = comment_job(gate)
    assert job["permissions"] == {"pull-requests": "write"}
    assert job["needs"] == "check"
    for entry in job["steps"]:  # nothing of the PR is checked out or run where the token can write
        assert "uses" not in entry
        assert "clusterforge" not in entry.get("run", "").replace("clusterforge-cost-diff", "")


def test_the_comment_is_found_by_its_marker_and_edited_in_place(gate: dict[str, Any], action: dict[str, Any]) -> None:
    from clusterforge.formats.cost_diff import MARKER

    job = comment_job(gate)
    assert "always()" in job["if"] and "inputs.cost-comment" in job["if"]  # a failing check still gets its comment
    assert "github.event.pull_request.head.repo.full_name == github.repository" in job["if"]  # forks: summary only
    [entry] = job["steps"]
    script, env = entry["run"], entry["env"]
    assert MARKER in script and '"github-actions[bot]"' in script and "--paginate" in script
    assert re.search(r'gh api --method PATCH "repos/\$REPO/issues/comments/\$id" --input "\$payload"', script)
    assert re.search(r'gh api --method POST "repos/\$REPO/issues/\$PR/comments" --input "\$payload"', script)
    assert script.index("PATCH") < script.index("POST")  # a second push edits; it never adds a comment
    assert env["BODY"] == "${{ needs.check.outputs.cost_comment }}"
    assert env["PR"] == "${{ github.event.pull_request.number }}" and env["GH_TOKEN"] == "${{ github.token }}"
    assert check_job(gate)["outputs"]["cost_comment"] == "${{ steps.gate.outputs.cost-comment }}"
    assert action["outputs"]["cost-comment"]["value"] == "${{ steps.cost.outputs.comment }}"
    price = step(action, "cost")
    assert steps(action).index(price) < steps(action).index(step(action, "upload"))  # before the upload can fail
    assert MARKER in price["run"]


def test_the_pricing_step_writes_the_summary_and_the_comment(tmp_path: Path) -> None:
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
    assert sorted(find(repo, base)[0]) == ["examples/dgx.yaml", "examples/p5.yaml"]
    run = action_run(repo, base)
    assert run.step("changed", check_if=False).returncode == 0
    result = run.step("cost")
    assert result.outcome == "success", result.stdout + result.stderr
    text = run.summary.read_text()
    assert text.startswith("<!-- clusterforge-cost-diff -->\n")
    assert re.search(r"^\| p5\.48xlarge [^|]*\| \$1,837,497\.60 \| \$2,756,246\.40 \| \+\$918,748\.80 \|$", text, re.M)
    assert "**monthly total**" in text and "### Cost: " in text  # the new blueprint, priced alone
    output = Path(run.temp / f"output-{len(run.runs) - 1}").read_text()
    opening = re.search(r"^comment<<([0-9a-f]{32})$", output, re.M)
    assert opening is not None and output.rstrip().endswith(opening.group(1))
    assert text in output and result.outputs["comment"] + "\n" == text
