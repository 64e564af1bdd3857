"""The pre-commit hooks (.pre-commit-hooks.yaml) as another repository uses them: pre-commit itself installs this
tree into a virtualenv of its own with pip and runs `clusterforge-check` and `clusterforge-validate` over a scratch
repository's blueprints, from `pre-commit try-repo` and from a `.pre-commit-config.yaml` naming a release tag.

The tree is this checkout as it stands (tracked and untracked files, .gitignore respected), committed into a
scratch repository tagged as the release: `try-repo` of a checkout with uncommitted changes would leave its
untracked files out. pip runs offline: the pinned dependencies come from the wheelhouse scripts/test downloads
(.cache/wheelhouse); pre-commit's store is a temporary folder. pip builds the tree with setuptools>=77
(pyproject's build requirement): from the wheelhouse when it holds one, else, with build isolation off, the
setuptools virtualenv seeds into pre-commit's environment, when that one is recent enough; otherwise skipped."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from clusterforge.core.version import __version__
from tests.conftest import EXAMPLES, ROOT

WHEELHOUSE = ROOT / ".cache" / "wheelhouse"
BUILD_REQUIREMENT = 77  # setuptools>=77 (pyproject.toml's [build-system])
TAG = f"v{__version__}"
IDENTITY = {"GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.com", "GIT_COMMITTER_NAME": "test",
            "GIT_COMMITTER_EMAIL": "test@example.com"}
GOOD = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
MISSPELT = GOOD.replace("hardware: dgx-h100,", "hardware: dgx-h10,", 1)
MISSPELT_LINE = MISSPELT.splitlines().index(next(line for line in MISSPELT.splitlines() if "dgx-h10," in line)) + 1


def _major(wheel: Path) -> int:
    found = re.match(r"setuptools-(\d+)\.", wheel.name)
    return int(found.group(1)) if found else 0


def _seeded_setuptools() -> int:
    """The setuptools major version virtualenv (pre-commit's) seeds into an environment of this Python; 0: none."""
    try:
        from virtualenv.seed.wheels.embed import get_embed_wheel
    except ImportError:
        return 0
    wheel = get_embed_wheel("setuptools", f"{sys.version_info.major}.{sys.version_info.minor}")
    return _major(wheel.path) if wheel is not None else 0


@pytest.fixture(scope="module")
def pip_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment pre-commit runs in: pip offline on the wheelhouse, its store and virtualenv's in temp."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if shutil.which("pre-commit", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("pre-commit is not installed (the dev extra)")
    if not WHEELHOUSE.is_dir():
        pytest.skip("no wheelhouse: scripts/test downloads the pinned dependencies into .cache/wheelhouse, which "
                    "pip needs offline to install the hooks' environment")
    home = tmp_path_factory.mktemp("pre-commit")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "PRE_COMMIT", "VIRTUAL_ENV", "CLUSTERFORGE_", "GIT_", "PYTHON"))}
    env |= {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE), "PRE_COMMIT_HOME": str(home / "store"),
            "VIRTUALENV_OVERRIDE_APP_DATA": str(home / "virtualenv"), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}", **IDENTITY}
    if not any(_major(w) >= BUILD_REQUIREMENT for w in WHEELHOUSE.glob("setuptools-*.whl")):
        if _seeded_setuptools() < BUILD_REQUIREMENT:
            pytest.skip(f"the wheelhouse holds no setuptools>={BUILD_REQUIREMENT}, the build requirement pip needs "
                        "to build the hooks' package offline, and virtualenv seeds none that recent")
        env["PIP_NO_BUILD_ISOLATION"] = "0"  # pip reads this one inverted: "0" turns build isolation off
    return env


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env={**os.environ, **IDENTITY}, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's files (tracked and untracked, not ignored) committed into a repository tagged as the
    release, as a clone of the tag holds them."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path_factory.mktemp("release") / "clusterforge"
    listed = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for relative in sorted(set(filter(None, listed))):
        source = ROOT / relative
        if source.is_file() or source.is_symlink():
            (repo / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / relative, follow_symlinks=False)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "release")
    _git(repo, "tag", TAG)
    return repo


def _team(folder: Path, files: dict[str, str], release: Path | None = None) -> Path:
    """A team's repository holding `files`, with a .pre-commit-config.yaml naming the release's tag."""
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    if release is not None:
        (folder / ".pre-commit-config.yaml").write_text(
            f"repos:\n  - repo: {release}\n    rev: {TAG}\n"
            "    hooks: [{id: clusterforge-check}, {id: clusterforge-validate}]\n")
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "blueprints")
    return folder


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def pre_commit(pip_env: dict[str, str]) -> Run:
    def run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(Path(sys.executable).parent / "pre-commit"), *args], cwd=repo, env=pip_env,
                              capture_output=True, text=True, timeout=900)

    return run


def _verdicts(output: str) -> dict[str, str]:
    """Each hook's line, `clusterforge check....Passed`, as {name: Passed | Failed | (no files to check)Skipped}."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^(clusterforge \w+)\.+(\S.*)$", output, re.M)}


def test_try_repo_runs_both_hooks_and_passes_on_a_good_blueprint(pre_commit: Run, release: Path,
                                                                 tmp_path: Path) -> None:
    team = _team(tmp_path / "team", {"blueprints/vision.yaml": GOOD})
    done = pre_commit(team, "try-repo", str(release), "--all-files")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _verdicts(done.stdout) == {"clusterforge check": "Passed", "clusterforge validate": "Passed"}


@pytest.fixture(scope="module")
def teams(tmp_path_factory: pytest.TempPathFactory, release: Path) -> dict[str, Path]:
    """Team repositories using the hooks at the release's tag; pre-commit installs the hooks' environment once."""
    base = tmp_path_factory.mktemp("teams")
    shared = {f"blueprints/dc1/{p.name}": p.read_text() for p in sorted((EXAMPLES / "shared-site").glob("*.yaml"))}
    return {
        "good": _team(base / "good", {"blueprints/vision.yaml": GOOD, "hall.cluster.yaml": GOOD}, release),
        "misspelt": _team(base / "misspelt", {"blueprints/vision.yaml": GOOD, "blueprints/broken.yaml": MISSPELT},
                          release),
        "named-like-an-option": _team(base / "option", {"-h.cluster.yaml": MISSPELT}, release),
        "shared-site": _team(base / "site", shared, release),
    }


def test_at_a_release_tag_both_hooks_pass_on_good_blueprints(pre_commit: Run, teams: dict[str, Path]) -> None:
    done = pre_commit(teams["good"], "run", "--all-files")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _verdicts(done.stdout) == {"clusterforge check": "Passed", "clusterforge validate": "Passed"}


def test_both_hooks_fail_on_a_misspelt_hardware_name_at_its_line(pre_commit: Run, teams: dict[str, Path]) -> None:
    done = pre_commit(teams["misspelt"], "run", "--all-files")
    assert done.returncode == 1
    assert _verdicts(done.stdout) == {"clusterforge check": "Failed", "clusterforge validate": "Failed"}
    said = f"blueprints/broken.yaml:{MISSPELT_LINE}: pools[0].hardware: unknown hardware 'dgx-h10'"
    assert done.stdout.count(said) == 2, done.stdout  # once from each hook


def test_a_file_named_like_an_option_is_checked_as_a_file(pre_commit: Run, teams: dict[str, Path]) -> None:
    """`-h.cluster.yaml` after the entry's `--` is a file: read as `-h`, both hooks would print help and pass."""
    done = pre_commit(teams["named-like-an-option"], "run", "--all-files")
    assert done.returncode == 1, done.stdout
    assert _verdicts(done.stdout) == {"clusterforge check": "Failed", "clusterforge validate": "Failed"}
    assert f"-h.cluster.yaml:{MISSPELT_LINE}: pools[0].hardware: unknown hardware" in done.stdout
    assert "Usage:" not in done.stdout


def test_a_site_file_is_checked_through_its_blueprints_and_left_out_of_validate(pre_commit: Run,
                                                                              teams: dict[str, Path]) -> None:
    done = pre_commit(teams["shared-site"], "run", "--all-files", "--verbose")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _verdicts(done.stdout) == {"clusterforge check": "Passed", "clusterforge validate": "Passed"}
    assert "site-dc1.yaml is a Site" in done.stdout  # check judged it through the teams that include it
    assert "blueprints/dc1/team-nlp.yaml: valid" in done.stdout and "site-dc1.yaml: valid" not in done.stdout
