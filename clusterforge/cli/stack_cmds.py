"""`stack new`: a deployment project of a team's own, which runs this release's program and policy pack.

A target offers one with a module `team_project` in its package (`SUMMARY`, and `files(name, version)`: the
project's files by path), found at run time as the target packages are, so no target is named here.
"""

from __future__ import annotations

import importlib
import importlib.util
import stat
from pathlib import Path
from typing import Protocol, cast

import click

from clusterforge.cli.app import app, say
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.core.hints import did_you_mean


class TeamProject(Protocol):
    """What a target's `team_project` module gives."""

    SUMMARY: str

    def files(self, name: str, version: str) -> dict[str, str]:
        ...


def team_projects() -> dict[str, str]:
    """Each registered target that offers a project, and the module that writes it."""
    from clusterforge.target_kernel import PACKAGES, registered

    modules = {name: f"{PACKAGES}.{name}.team_project" for name in registered()}
    return {name: module for name, module in modules.items() if importlib.util.find_spec(module) is not None}


def _project(target: str) -> TeamProject:
    offered = team_projects()
    if target not in offered:
        names = list(offered) or ["none"]
        raise ClusterforgeError(Problem(f"no deployment project for target {shown(target)}",
                                        hint=did_you_mean(target, names, "targets with one: " + ", ".join(names))))
    return cast(TeamProject, importlib.import_module(offered[target]))


def _refuse_occupied(folder: Path, force: bool) -> None:
    """A folder that holds anything needs --force; a file, a link or anything but a folder is refused."""
    try:
        mode = folder.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ClusterforgeError(Problem(f"cannot read: {exc.strerror}", str(folder))) from None
    if stat.S_ISLNK(mode):
        raise ClusterforgeError(Problem("is a symbolic link", str(folder), hint=(
            "give the real path: the project is written only into a real folder")))
    if not stat.S_ISDIR(mode):
        raise ClusterforgeError(Problem("exists and is not a folder", str(folder), hint="choose a new folder"))
    if not force and any(folder.iterdir()):
        raise ClusterforgeError(Problem("is not empty", str(folder), hint=(
            "choose a new folder, or pass --force to write the project's files into it: files of the same names "
            "are replaced, everything else is kept")))


@app.group("stack")
def stack_group() -> None:
    """A deployment project of your own: this release's Pulumi program and policy pack, from your repository.

    \b
    clusterforge stack new aws stacks/aws      the Pulumi project and its policy pack, pinned to this release

    See docs/aws.md ("A project of your own").
    """


@stack_group.command("new")
@click.argument("target")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True,
              help="Write into DIRECTORY although it holds files: the project's own are replaced, the rest kept.")
def new(target: str, directory: Path, force: bool) -> None:
    """Write TARGET's deployment project into DIRECTORY, for your repository to keep.

    The project runs the program and the policy pack of the clusterforge you run this with: its requirements.txt
    pins this release (clusterforge[aws]==VERSION, the release's lock as constraints), and its __main__.py only
    calls the installed program for its folder. What you keep in it is your stacks' config (Pulumi.<stack>.yaml).

    \b
    Examples:
      clusterforge stack new aws stacks/aws
          a Pulumi project in stacks/aws: Pulumi.yaml, __main__.py, requirements.txt, constraints.txt,
          README.md (setup and `pulumi config set` lines) and policy-pack/ (the CrossGuard pack)
      cd stacks/aws && python3 -m venv venv && venv/bin/pip install -r requirements.txt
      pulumi stack init nlp-p5 && pulumi config set blueprint ../../clusters/nlp-p5.yaml
      pulumi preview --policy-pack policy-pack
      clusterforge stack new aws stacks/aws --force
          after upgrading clusterforge: the files it wrote, pins included, rewritten; your stacks' config kept

    At stacks/aws under the folder you run `clusterforge render` in, the stack config render writes
    (pulumi/Pulumi.<cluster>.yaml) refers to the blueprint from this project. A DIRECTORY that holds anything
    is refused without --force (exit 2).
    """
    from clusterforge.core.version import __version__
    from clusterforge.files.atomic import write_text

    project = _project(target)
    _refuse_occupied(directory, force)
    files = project.files(directory.resolve().name or target, __version__)
    for relative, text in files.items():
        write_text(directory / relative, text)
    say(f"wrote {directory}: {project.SUMMARY}, pinned to clusterforge {__version__}")
    for relative in files:
        say(f"  {relative}")
    say(f"next: {directory / 'README.md'}")
