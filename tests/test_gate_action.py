"""The reusable PR gate in a team's repository that holds blueprints only, with a released wheel as the checker.

A scratch git repository: on its base commit two blueprints from `clusterforge new`, a policy config stricter than
the defaults (containment cooling carries 30 kW a rack, not 40), a waiver for one team's cooling finding and a
price catalog; the PR's commit grows both clusters to three servers and, beside that, loosens the policy config,
waives its own error and cuts a price. The gate's own steps (action.yml, run by tests/gate_steps.py as the runner
runs them, with the variables a pull_request event sets) then judge it with the wheel built from this checkout,
installed by the action's own install step into a fresh environment outside the checkout.

The environment: a venv of the interpreter this suite runs on, whose only packages besides the wheel are links to
the project venv's third-party packages (never its editable clusterforge), and pip offline (`--no-index`, no
config). So the install step really resolves the wheel's dependencies against the lock file and installs the
wheel, in seconds and without a network; what it installs is the wheel's code alone (`clusterforge.__file__` is
asserted to be in the fresh venv).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from clusterforge.cli.main import app
from tests.conftest import ROOT
from tests.gate_steps import (
    GATE,
    POLICY_CHECK,
    ActionRun,
    as_string,
    condition,
    fails,
    interpolate,
    load,
    no_op,
    pull_request_event,
    triggers,
    truthy,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

STRICT = "apiVersion: clusterforge/v1\nkind: PolicyConfig\ncooling: {containment_kw: 30}  # our aisles: 30 kW\n"
LOOSE = "apiVersion: clusterforge/v1\nkind: PolicyConfig\ncooling: {containment_kw: 60}\n"
PRICES = ("apiVersion: clusterforge/v1\nkind: Catalog\nprices:\n  hardware:\n"
          "    cpu-1u: {{usd: {usd}, source: \"quote Q-1\", date: 2026-10-01}}\n")
MARKER = "<!-- clusterforge-cost-diff -->"


def waivers(*entries: tuple[str, str]) -> str:
    expires = (dt.date.today() + dt.timedelta(days=180)).isoformat()
    lines = ["apiVersion: clusterforge/v1", "kind: Waivers", "waivers:"]
    for cluster, reason in entries:
        lines += ["  - rule: CLG-001", f"    cluster: {cluster}", "    target: site.rows[0].racks[0].cooling",
                  f"    reason: {reason}", f"    expires: {expires}", "    approver: facilities@example.com"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# The checker: the wheel, built once per run of the suite (one build shared by the xdist workers)


def _pure(python: Path | str) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True).stdout.strip()
    return Path(out)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip wheel` of a copy of this checkout's files (tracked and new, as git lists them), built once."""
    shared = tmp_path_factory.getbasetemp().parent / "gate-wheel"
    shared.mkdir(exist_ok=True)
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = sorted((shared / "dist").glob("clusterforge-*.whl"))
        if built:
            return built[0]
        files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                                "--exclude-standard"], check=True, capture_output=True).stdout.split(b"\0")
        source = shared / "src"
        for name in filter(None, (f.decode() for f in files)):
            if (ROOT / name).is_file():
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, source / name)
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(shared / "dist"),
                               str(source)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail(f"the wheel was not built: {done.stderr[-2000:]}")
        [found] = sorted((shared / "dist").glob("clusterforge-*.whl"))
        return found


def fresh_venv(where: Path) -> Path:
    """A venv outside the checkout whose third-party packages are the project venv's (links), without clusterforge."""
    deps = where / "deps"
    deps.mkdir(parents=True)
    for entry in _pure(sys.executable).iterdir():
        if entry.name.startswith(("clusterforge", "__editable__", "_virtualenv")) or entry.suffix == ".pth":
            continue
        (deps / entry.name).symlink_to(entry)
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (_pure(venv / "bin" / "python") / "gate-deps.pth").write_text(f"{deps}\n")
    return venv


OFFLINE_PIP = {"PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1"}
STUBS = {"actions/setup-python": no_op, "github/codeql-action/upload-sarif": no_op, "actions/upload-artifact": no_op}


@pytest.fixture(scope="module")
def checker(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fresh venv with the wheel installed by the action's own install step (`checker:` naming the wheel)."""
    where = tmp_path_factory.mktemp("checker")
    venv = fresh_venv(where)
    (where / "workspace").mkdir()
    run = ActionRun(where / "workspace", where / "runner", inputs={"checker": str(wheel)}, path=str(venv / "bin"),
                    uses=STUBS, extra_env=OFFLINE_PIP)
    done = run.step("install")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"at {venv}/bin/clusterforge" in done.stdout
    return venv / "bin"


# ---------------------------------------------------------------------------------------------------------------
# The team's repository


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def new_blueprint(repo: Path, name: str, team: str, nodes: int) -> None:
    out = repo / "blueprints" / f"{name}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = CliRunner().invoke(app, ["new", "onprem-dev", "--set", f"name={name}", "--set", f"team={team}",
                                      "--set", f"nodes={nodes}", "-o", str(out), "--force"])
    assert result.exit_code == 0, result.output


@pytest.fixture
def team_repo(tmp_path: Path) -> tuple[Path, str]:
    """Blueprints only: two commits, the base (verdict files, two 2-server clusters) and the PR's (both grown to
    three servers; the verdict files loosened, a waiver for its own error, a price cut). Returns (repo, base)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    new_blueprint(repo, "vision-dev", "vision", 2)
    new_blueprint(repo, "nlp-dev", "nlp", 2)
    (repo / "policy-config.yaml").write_text(STRICT)
    (repo / "waivers.yaml").write_text(waivers(("nlp-dev", "the nlp rack gets its rear door in the March window")))
    (repo / "prices.yaml").write_text(PRICES.format(usd=4000))
    base = commit(repo, "base: blueprints, the team's policy config, waivers and prices")
    new_blueprint(repo, "vision-dev", "vision", 3)
    new_blueprint(repo, "nlp-dev", "nlp", 3)
    (repo / "policy-config.yaml").write_text(LOOSE)  # the PR's own: never read
    (repo / "waivers.yaml").write_text(waivers(("nlp-dev", "the nlp rack gets its rear door in the March window"),
                                               ("vision-dev", "the PR waives its own error, which must not count")))
    (repo / "prices.yaml").write_text(PRICES.format(usd=1))
    commit(repo, "grow both clusters to three servers")
    return repo, base


TEAM_INPUTS = {"policy-config": "policy-config.yaml", "waivers": "waivers.yaml", "catalogs": "prices.yaml"}


def gate_run(repo: Path, base: str, checker: Path, *, fork: bool = False, uses: dict[str, Any] | None = None,
             **inputs: str) -> ActionRun:
    return ActionRun(repo, repo.parent / "runner", inputs={**TEAM_INPUTS, **inputs},
                     event=pull_request_event(base, git(repo, "rev-parse", "HEAD"), fork=fork), path=str(checker),
                     uses={**STUBS, **(uses or {})})


# ---------------------------------------------------------------------------------------------------------------
# Done when: each bullet of the issue


def test_the_teams_stricter_threshold_fails_the_design_and_its_waiver_waives(team_repo: tuple[Path, str],
                                                                             checker: Path) -> None:
    """The base commit's 30 kW limit fails vision-dev (which the defaults pass), nlp-dev's finding is waived by
    the base's waiver, and the PR's loosened config and self-waiver count for nothing."""
    repo, base = team_repo
    run = gate_run(repo, base, checker).run(skip=("install",))
    annotations = run.result("check").stdout
    assert run.result("check").outputs["status"] == "1"
    assert "::error file=blueprints/vision-dev.yaml," in annotations and "title=CLG-001" in annotations
    assert "30 kW" in annotations
    assert "::error file=blueprints/nlp-dev.yaml," not in annotations  # waived, not failing
    assert "::notice file=blueprints/nlp-dev.yaml," in annotations and "waived" in annotations.lower()
    assert run.result("verdict").returncode == 1 and run.outputs()["verdict"] == "fail"
    log = run.result("changed").stdout
    assert f"policy config policy-config.yaml: read from the base commit {base}" in log
    assert f"waivers waivers.yaml: read from the base commit {base}" in log
    # The same PR without the team's policy config passes: the threshold that failed it is the team's own.
    plain = gate_run(repo, base, checker, **{"policy-config": ""}).run(skip=("install",))
    assert plain.result("check").outputs["status"] == "0", plain.result("check").stdout
    assert plain.result("verdict").returncode == 0 and plain.outputs()["verdict"] == "pass"


def test_a_missing_policy_config_fails_the_job_with_its_name(team_repo: tuple[Path, str], checker: Path) -> None:
    """Named but not on the base commit (the PR adds it): the job fails and says which file, at which commit;
    nothing is judged by defaults in its place."""
    repo, base = team_repo
    (repo / "team-policy.yaml").write_text(STRICT)
    git(repo, "add", "team-policy.yaml")
    git(repo, "commit", "-qm", "the PR adds the policy config the workflow names")
    run = gate_run(repo, base, checker, **{"policy-config": "team-policy.yaml"}).run(skip=("install",))
    finder = run.result("changed")
    assert finder.returncode == 1
    assert f"::error::policy config team-policy.yaml does not exist at the base commit {base}" in finder.stdout
    assert [r.outcome for r in run.runs if r.id in ("reports", "check", "cost", "upload")] == ["skipped"] * 4
    verdict = run.result("verdict")
    assert verdict.returncode == 1 and "reached no verdict" in verdict.stdout


def test_sarif_and_junit_are_written(team_repo: tuple[Path, str], checker: Path) -> None:
    repo, base = team_repo
    uploaded: list[dict[str, str]] = []

    def upload(with_: dict[str, str], run: ActionRun) -> tuple[str, dict[str, str]]:
        uploaded.append(with_)
        return "success", {}

    run = gate_run(repo, base, checker, uses={"github/codeql-action/upload-sarif": upload,
                                              "actions/upload-artifact": upload}).run(skip=("install",))
    reports = run.result("reports").outputs
    sarif = json.loads(Path(reports["sarif"]).read_text())
    results = sarif["runs"][0]["results"]
    clg = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in results
           if r["ruleId"] == "CLG-001"}
    assert set(clg) == {"blueprints/vision-dev.yaml", "blueprints/nlp-dev.yaml"}
    assert "suppressions" not in clg["blueprints/vision-dev.yaml"] and clg["blueprints/nlp-dev.yaml"]["suppressions"]
    junit = Path(reports["junit"]).read_text()
    assert "<failure" in junit and "CLG-001" in junit
    assert [w.get("sarif_file") or w.get("path") for w in uploaded] == [reports["sarif"], reports["junit"]]
    for path in (reports["sarif"], reports["junit"]):
        assert Path(path).parent == run.temp / "clusterforge-gate" and repo not in Path(path).parents


def test_a_failed_sarif_upload_leaves_the_annotations_the_verdict_and_the_cost_comment(
        team_repo: tuple[Path, str], checker: Path) -> None:
    """Code scanning refuses the upload (a private repository without it): the annotations, the cost comment's
    body and the verdict are all there, and the verdict is the check's own; with sarif: auto the failure is a
    warning, with sarif: true it fails the job after everything else is in place; sarif: false never uploads."""
    repo, base = team_repo
    run = gate_run(repo, base, checker, uses={"github/codeql-action/upload-sarif": fails}).run(skip=("install",))
    upload = run.result("upload")
    assert upload.outcome == "failure" and upload.conclusion == "success"  # continue-on-error
    assert "::error file=blueprints/vision-dev.yaml," in run.result("check").stdout
    comment = run.outputs()["cost-comment"]
    assert comment.startswith(MARKER) and "vision-dev" in comment and "nlp-dev" in comment
    assert comment in run.summary.read_text()
    verdict = run.result("verdict")
    assert "::warning::the SARIF upload to code scanning failed" in verdict.stdout
    assert verdict.returncode == 1 and not run.succeeded  # the check's own verdict: vision-dev fails
    # A PR that passes stays green when only the upload failed...
    git(repo, "checkout", "-q", base, "--", "blueprints/vision-dev.yaml")
    commit(repo, "only nlp grows")
    green = gate_run(repo, base, checker, uses={"github/codeql-action/upload-sarif": fails}).run(skip=("install",))
    assert green.result("check").outputs["status"] == "0"
    assert green.result("verdict").returncode == 0 and "::warning::" in green.result("verdict").stdout
    assert green.outputs()["verdict"] == "pass" and green.succeeded
    # ...unless the team asked for SARIF (sarif: true): then the job fails, after the rest is in place.
    strict = gate_run(repo, base, checker, sarif="true",
                      uses={"github/codeql-action/upload-sarif": fails}).run(skip=("install",))
    assert strict.result("check").outputs["status"] == "0" and strict.outputs()["cost-comment"].startswith(MARKER)
    assert strict.result("verdict").returncode == 1 and "::error::the SARIF upload" in strict.result("verdict").stdout
    off = gate_run(repo, base, checker, sarif="false", cost="false",
                   uses={"github/codeql-action/upload-sarif": fails}).run(skip=("install",))
    assert off.result("upload").outcome == "skipped" and off.result("verdict").returncode == 0 and off.succeeded
    assert Path(off.outputs()["sarif"]).is_file()  # written all the same


def test_the_cost_comment_prices_with_the_base_commits_catalog(team_repo: tuple[Path, str], checker: Path) -> None:
    repo, base = team_repo
    run = gate_run(repo, base, checker).run(skip=("install",))
    comment = run.outputs()["cost-comment"]
    assert comment.startswith(MARKER + "\n")
    # cpu-1u has no built-in price: the base's catalog prices it at $4,000, not the PR's $1
    assert re.search(r"^\| cpu-1u [^|]*, pool ctl \| \$4,000\.00 \| \$4,000\.00 \| \$0\.00 \|$", comment, re.M)
    assert "$1.00 " not in comment
    fork = gate_run(repo, base, checker, fork=True).run(skip=("install",))
    assert fork.result("upload").outcome == "skipped"  # a fork's token cannot upload
    assert fork.outputs()["cost-comment"] == comment and comment in fork.summary.read_text()


def test_the_prs_own_files_never_choose_the_checkers_code(wheel: Path, tmp_path: Path) -> None:
    """The PR commits a `clusterforge/` package, a `pip/` that would run for `python -m pip` in its checkout, a
    sitecustomize.py, its own action.yml, lock file and `.clusterforge-checker/`; the install step (for real,
    offline, in that checkout) and the gate run none of them: the checker is the wheel, installed outside."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    new_blueprint(repo, "vision-dev", "vision", 2)
    (repo / "policy-config.yaml").write_text(STRICT)
    base = commit(repo, "base")
    new_blueprint(repo, "vision-dev", "vision", 3)
    ran = tmp_path / "the-prs-code-ran"
    payload = f"import pathlib; pathlib.Path({str(ran)!r}).write_text(__name__)\n"
    hostile = {"clusterforge/__init__.py": payload, "clusterforge/__main__.py": payload,
               "clusterforge/cli/__init__.py": payload, "pip/__init__.py": payload, "pip/__main__.py": payload,
               "sitecustomize.py": payload, "usercustomize.py": payload,
               "requirements/lock.txt": "clusterforge==0.0.1\n",
               "action.yml": "runs: {using: composite, steps: [{run: 'exit 0', shell: bash}]}\n",
               ".clusterforge-checker/action.yml": "runs: {using: composite, steps: []}\n",
               "setup.py": payload, "pyproject.toml": "[project]\nname = 'clusterforge'\nversion = '9.9.9'\n"}
    for name, text in hostile.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    commit(repo, "the PR brings code of its own")
    venv = fresh_venv(tmp_path / "env")
    event = pull_request_event(base, git(repo, "rev-parse", "HEAD"))
    run = ActionRun(repo, tmp_path / "runner", inputs={"checker": str(wheel), "policy-config": "policy-config.yaml"},
                    event=event, path=str(venv / "bin"), uses=STUBS, extra_env=OFFLINE_PIP).run()
    install = run.result("install")
    assert install.returncode == 0, install.stdout + install.stderr
    assert f"clusterforge, version {wheel.name.split('-')[1]} at {venv}/bin/clusterforge" in install.stdout
    assert run.result("check").outputs["status"] == "1" and "title=CLG-001" in run.result("check").stdout
    assert not ran.exists(), f"the PR's {ran.read_text()} ran"
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import clusterforge; print(clusterforge.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert Path(where).is_relative_to(venv) and not Path(where).is_relative_to(ROOT)
    # A checker named inside the PR's checkout is refused, whatever it is.
    shutil.copy2(wheel, repo / wheel.name)
    refused = ActionRun(repo, tmp_path / "runner", inputs={"checker": str(repo / wheel.name)}, event=event,
                        path=str(venv / "bin"), uses=STUBS, extra_env=OFFLINE_PIP).step("install")
    assert refused.returncode == 1 and f"::error::checker {repo / wheel.name} is in the checkout" in refused.stdout


def test_pull_request_target_is_refused(team_repo: tuple[Path, str], checker: Path) -> None:
    """pull_request_target runs with a write token beside the PR's files: the gate does not run there."""
    repo, base = team_repo
    run = ActionRun(repo, repo.parent / "runner", inputs=TEAM_INPUTS, event=pull_request_event(base, "head"),
                    event_name="pull_request_target", path=str(checker), uses=STUBS).run(skip=("install",))
    assert run.result("changed").returncode == 1 and "never pull_request_target" in run.result("changed").stdout
    assert run.result("verdict").returncode == 1


# ---------------------------------------------------------------------------------------------------------------
# The reusable workflow: its check job runs the action from the checker's checkout; its comment job posts


FAKE_GH = """#!{python}
import json, os, sys
args = sys.argv[1:]
entry = {{"args": args}}
if "--input" in args:
    entry["input"] = json.load(open(args[args.index("--input") + 1]))
with open(os.environ["FAKE_GH_LOG"], "a") as log:
    log.write(json.dumps(entry) + "\\n")
if "--paginate" in args:
    print(os.environ.get("FAKE_GH_EXISTING", ""))
"""


def run_gate_workflow(repo: Path, base: str, checker: Path, tmp_path: Path, *, caller_with: dict[str, Any],
                      called_at: str, fork: bool = False, existing: str = "") -> dict[str, Any]:
    """gate.yml as GitHub runs it for a caller: the check job's steps (the two checkouts stubbed: the second lays
    the checker's copy of action.yml at the path it names), its outputs, then the cost-comment job's `if:` and
    script (with a fake `gh` that records what it is asked)."""
    gate = load(GATE)
    declared = triggers(gate)["workflow_call"]["inputs"]
    event = pull_request_event(base, git(repo, "rev-parse", "HEAD"), fork=fork)
    github = {"event": event, "event_name": "pull_request", "repository": "team/blueprints", "token": "t0ken",
              "sha": "merge-sha"}
    inputs = {name: spec.get("default") for name, spec in declared.items()}
    for name, value in caller_with.items():
        assert name in declared, name
        text = interpolate(value, {"github": github})
        inputs[name] = truthy(text != "false") if declared[name]["type"] == "boolean" else text
    context = {"github": github, "inputs": inputs, "job": {"workflow_repository": "owner/clusterforge",
                                                            "workflow_sha": called_at}, "steps": {}}
    checkouts: list[dict[str, str]] = []

    def checkout(with_: dict[str, str], run: Any = None) -> None:
        checkouts.append(with_)
        if "path" in with_:  # the checker's copy at the ref asked for: action.yml and its lock file
            (repo / with_["path"] / "requirements").mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / "action.yml", repo / with_["path"] / "action.yml")
            shutil.copy2(ROOT / "requirements" / "lock.txt", repo / with_["path"] / "requirements" / "lock.txt")

    action_run: ActionRun | None = None
    for entry in gate["jobs"]["check"]["steps"]:
        with_ = {k: interpolate(v, context) for k, v in entry.get("with", {}).items()}
        if entry["uses"].startswith("actions/checkout@"):
            checkout(with_)
        else:
            assert entry["uses"].startswith("./")
            action_run = ActionRun(repo, tmp_path / "runner", inputs=with_, event=event, action_path=repo / entry[
                "uses"][2:], path=str(checker), uses=STUBS).run(skip=("install",))
            context["steps"][entry["id"]] = {"outputs": action_run.outputs(), "outcome": "success"}
    assert action_run is not None
    outputs = {k: interpolate(v, context) for k, v in gate["jobs"]["check"]["outputs"].items()}
    job = gate["jobs"]["cost-comment"]
    needs = {"check": {"outputs": outputs, "result": "failure"}}
    posts: list[dict[str, Any]] = []
    ran = condition(job["if"], {"github": github, "inputs": inputs, "needs": needs}, failed=False)
    if ran:
        fake = tmp_path / "bin" / "gh"
        fake.parent.mkdir(exist_ok=True)
        fake.write_text(FAKE_GH.format(python=sys.executable))
        fake.chmod(0o755)
        [entry] = job["steps"]
        env = {k: interpolate(v, {"github": github, "needs": needs}) for k, v in entry["env"].items()}
        log = tmp_path / "gh.log"
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", entry["run"]],
                              env={**os.environ, **env, "PATH": f"{fake.parent}:{os.environ['PATH']}",
                                   "RUNNER_TEMP": str(tmp_path / "runner"), "FAKE_GH_LOG": str(log),
                                   "FAKE_GH_EXISTING": existing}, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        posts = [json.loads(line) for line in log.read_text().splitlines()]
    return {"checkouts": checkouts, "outputs": outputs, "comment_job_ran": ran, "gh": posts, "run": action_run,
            "inputs": {k: as_string(v) for k, v in inputs.items()}}


def test_a_teams_call_runs_the_release_it_pinned_and_posts_the_comment(team_repo: tuple[Path, str], checker: Path,
                                                                         tmp_path: Path) -> None:
    """`uses: owner/clusterforge/.github/workflows/gate.yml@v0.2.0`: the checker is checked out at the commit the
    call resolved (job.workflow_sha), beside the PR and not from it; the check job's verdict fails the PR, and the
    comment job posts the body the check job built (or edits the one it posted before)."""
    repo, base = team_repo
    result = run_gate_workflow(repo, base, checker, tmp_path, called_at="v0.2.0-sha",
                               caller_with={"policy-config": "policy-config.yaml", "waivers": "waivers.yaml",
                                            "catalogs": "prices.yaml"})
    pr, trusted = result["checkouts"]
    assert pr == {"fetch-depth": "0", "persist-credentials": "false"}
    assert trusted["repository"] == "owner/clusterforge" and trusted["ref"] == "v0.2.0-sha"
    assert result["outputs"]["verdict"] == "fail"
    assert result["run"].result("check").outputs["status"] == "1"
    assert result["comment_job_ran"]
    [listing, post] = result["gh"]
    assert "--paginate" in listing["args"] and post["args"][:3] == ["api", "--method", "POST"]
    assert post["input"]["body"] == result["outputs"]["cost_comment"] and post["input"]["body"].startswith(MARKER)
    again = run_gate_workflow(repo, base, checker, tmp_path / "again", existing="4242",
                              called_at="v0.2.0-sha", caller_with={"policy-config": "policy-config.yaml"})
    assert again["gh"][1]["args"][:4] == ["api", "--method", "PATCH", "repos/team/blueprints/issues/comments/4242"]


def test_a_fork_gets_no_comment_and_a_disabled_comment_is_not_posted(team_repo: tuple[Path, str], checker: Path,
                                                                       tmp_path: Path) -> None:
    repo, base = team_repo
    fork = run_gate_workflow(repo, base, checker, tmp_path / "fork", fork=True, called_at="sha",
                             caller_with={"policy-config": "policy-config.yaml"})
    assert not fork["comment_job_ran"] and fork["gh"] == []
    assert fork["outputs"]["cost_comment"].startswith(MARKER)  # in the check job's summary
    assert fork["outputs"]["cost_comment"] in fork["run"].summary.read_text()
    assert fork["outputs"]["verdict"] == "fail"
    off = run_gate_workflow(repo, base, checker, tmp_path / "off", called_at="sha",
                            caller_with={"policy-config": "policy-config.yaml", "cost-comment": False})
    assert not off["comment_job_ran"] and off["run"].result("cost").outcome == "skipped"


def test_this_repository_judges_its_prs_with_its_base_commit(team_repo: tuple[Path, str], checker: Path,
                                                            tmp_path: Path) -> None:
    """policy-check.yml calls gate.yml from the PR's own copy (job.workflow_sha is the PR's merge commit), so it
    names the base commit as the checker: the checkout of the checker asks for the base, never the merge."""
    repo, base = team_repo
    [job] = load(POLICY_CHECK)["jobs"].values()
    result = run_gate_workflow(repo, base, checker, tmp_path, called_at="merge-sha", caller_with=job["with"])
    trusted = result["checkouts"][1]
    assert trusted["ref"] == base and result["inputs"]["checker-ref"] == base


# ---------------------------------------------------------------------------------------------------------------
# docs/adopt.md: the files a team copies work with what the gate asks for


def test_the_adoption_docs_workflow_grants_what_the_gate_asks_and_names_its_inputs() -> None:
    """The workflow of docs/adopt.md step 3 grants every permission a job of gate.yml asks for (GitHub refuses to
    start the run otherwise), pins a release tag, passes only inputs gate.yml declares, and the check it tells the
    reader to require is the one this call makes; the composite snippet passes only the action's inputs."""
    doc = (ROOT / "docs" / "adopt.md").read_text()
    yaml_blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", doc, re.S)]
    [caller] = [b for b in yaml_blocks if isinstance(b, dict) and "jobs" in b]
    gate = load(GATE)
    [(job_id, job)] = caller["jobs"].items()
    assert re.fullmatch(r"OWNER/clusterforge/\.github/workflows/gate\.yml@v\d+\.\d+\.\d+", job["uses"])
    asked: dict[str, str] = {}
    for nested in gate["jobs"].values():
        asked.update(nested["permissions"])
    assert job["permissions"] == asked
    assert set(job["with"]) <= set(triggers(gate)["workflow_call"]["inputs"])
    assert triggers(caller) == "pull_request"
    assert f'"{job_id} / {gate["jobs"]["check"]["name"]}"' in doc  # the required check of step 8
    [steps] = [b for b in yaml_blocks if isinstance(b, dict) and "steps" in b]
    [composite] = [s for s in steps["steps"] if s.get("uses", "").startswith("OWNER/clusterforge@")]
    assert set(composite["with"]) <= set(load(ROOT / "action.yml")["inputs"])
    checkout = steps["steps"][0]
    assert checkout["with"] == {"fetch-depth": 0, "persist-credentials": False}
    for name in ("policy-config.yaml", "waivers.yaml"):
        assert f"# {name}\n" in doc and job["with"][name.removesuffix(".yaml")] == name
