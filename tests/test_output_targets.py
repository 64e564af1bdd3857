"""`-o` on every command: only regular files (and render's folder) are written, never an input, and a place
that cannot be written is exit 2 naming it, never a traceback."""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from clusterforge.cli.main import app
from clusterforge.files import atomic
from tests.aws.test_inventory import outputs
from tests.conftest import EXAMPLES

ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"
SHARED = EXAMPLES / "shared-site"


def run(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def stack_file(folder: Path) -> Path:
    path = folder / "outputs.json"
    path.write_text(json.dumps(outputs()))
    return path


# Every command with -o, as argv given the output path and a scratch folder.
FILE_COMMANDS: dict[str, Callable[[Path, Path], list[object]]] = {
    "check": lambda o, d: ["check", ONPREM, "-o", o],
    "check-junit": lambda o, d: ["check", ONPREM, "-f", "junit", "-o", o],
    "report": lambda o, d: ["report", ONPREM, "-o", o],
    "schema": lambda o, d: ["schema", "-o", o],
    "inventory": lambda o, d: ["inventory", "--from-stack", stack_file(d), "-o", o],
    "new": lambda o, d: ["new", "dgx-h100-superpod", "-o", o],
}
ALL_COMMANDS = {**FILE_COMMANDS, "render": lambda o, d: ["render", ONPREM, "-o", o]}


def special(kind: str, path: Path) -> Iterator[None]:
    """Make `path` a special file of `kind`; yields while it exists."""
    if kind == "device":
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        yield
        sock.close()
        return
    elif kind == "symlink":
        (path.parent / "elsewhere").write_text("keep me\n")
        path.symlink_to(path.parent / "elsewhere")
    elif kind == "dangling-symlink":
        path.symlink_to(path.parent / "nowhere")
    yield


@pytest.mark.parametrize("kind", ["device", "fifo", "socket", "symlink", "dangling-symlink"])
@pytest.mark.parametrize("command", sorted(ALL_COMMANDS))
def test_output_is_never_a_special_file(tmp_path: Path, command: str, kind: str) -> None:
    if kind == "device" and os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    target = tmp_path / "target"
    for _ in special(kind, target):
        before = target.lstat()
        result = run(*ALL_COMMANDS[command](target, tmp_path))
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert f"{target}: is a" in result.output, result.output
        after = target.lstat()
        assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
    if kind == "symlink":
        assert (tmp_path / "elsewhere").read_text() == "keep me\n"
    assert not (tmp_path / "nowhere").exists()


def test_a_directory_is_refused_as_a_file_output(tmp_path: Path) -> None:
    with pytest.raises(atomic.ClusterforgeError, match="is a directory"):
        atomic.write_text(tmp_path, "x")


def test_a_file_is_refused_as_render_folder(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("mine\n")
    result = run("render", ONPREM, "-o", tmp_path / "out")
    assert result.exit_code == 2 and "is not a directory" in result.output
    assert (tmp_path / "out").read_text() == "mine\n"


def copy(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(src.read_bytes())
    return dst


def inputs_case(tmp_path: Path, case: str) -> tuple[list[object], Path]:
    """argv whose output is one of its inputs, and that input."""
    bp = copy(ONPREM, tmp_path / "bp.yaml")
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text("waivers: []\n")
    config = tmp_path / "policy.yaml"
    config.write_text("{}\n")
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("hardware: {}\n")
    (tmp_path / "link.yaml").symlink_to(bp)
    site = copy(SHARED / "site-dc1.yaml", tmp_path / "shared" / "site-dc1.yaml")
    team = copy(SHARED / "team-nlp.yaml", tmp_path / "shared" / "team-nlp.yaml")
    stack = stack_file(tmp_path)
    cases: dict[str, tuple[list[object], Path]] = {
        "check-blueprint": (["check", bp, "-o", bp], bp),
        "check-blueprint-by-another-name": (["check", bp, "-o", tmp_path / "sub" / ".." / "bp.yaml"], bp),
        "check-blueprint-through-a-link": (["check", bp, "-o", tmp_path / "link.yaml"], bp),
        "check-waivers": (["check", bp, "--waivers", waivers, "-o", waivers], waivers),
        "check-policy-config": (["check", bp, "--policy-config", config, "-o", config], config),
        "check-catalog": (["check", bp, "--catalog", catalog, "-o", catalog], catalog),
        "check-included-site": (["check", team, "-o", site], site),
        "report-blueprint": (["report", bp, "-o", bp], bp),
        "report-waivers": (["report", bp, "--waivers", waivers, "-o", waivers], waivers),
        "inventory-stack": (["inventory", "--from-stack", stack, "-o", stack], stack),
    }
    return cases[case]


INPUT_CASES = ["check-blueprint", "check-blueprint-by-another-name", "check-blueprint-through-a-link",
               "check-waivers", "check-policy-config", "check-catalog", "check-included-site", "report-blueprint",
               "report-waivers", "inventory-stack"]


@pytest.mark.parametrize("case", INPUT_CASES)
def test_output_that_is_an_input_is_refused(tmp_path: Path, case: str) -> None:
    argv, victim = inputs_case(tmp_path, case)
    before = victim.read_bytes()
    result = run(*argv)
    assert result.exit_code == 2, result.output
    assert "is also an input of this command" in result.output, result.output
    assert victim.read_bytes() == before


def render_into(tmp_path: Path, where: str) -> tuple[list[object], Path, Path]:
    out = tmp_path / "out"
    assert run("render", ONPREM, "-o", out).exit_code == 0  # a render's own folder, which render may replace
    victim = copy(ONPREM if where != "waivers" else Path(os.devnull), out / "inputs" / "file.yaml")
    if where == "waivers":
        victim.write_text("waivers: []\n")
        return ["render", ONPREM, "--waivers", victim, "-o", out], out, victim
    if where == "included":
        site = copy(SHARED / "site-dc1.yaml", out / "site-dc1.yaml")
        team = copy(SHARED / "team-nlp.yaml", tmp_path / "team-nlp.yaml")
        team.write_text(team.read_text().replace("!include site-dc1.yaml", "!include out/site-dc1.yaml"))
        return ["render", team, "-o", out], out, site
    return ["render", victim, "-o", out], out, victim


@pytest.mark.parametrize("where", ["blueprint", "waivers", "included"])
def test_render_refuses_a_folder_holding_an_input(tmp_path: Path, where: str) -> None:
    argv, out, victim = render_into(tmp_path, where)
    before = victim.read_bytes()
    result = run(*argv)
    assert result.exit_code == 2, result.output
    assert f"{out}: holds an input of this command" in result.output
    assert victim.read_bytes() == before


@pytest.mark.parametrize("command", sorted(ALL_COMMANDS))
def test_too_long_a_name_is_exit_2_naming_it(tmp_path: Path, command: str) -> None:
    target = tmp_path / ("x" * 300)
    result = run(*ALL_COMMANDS[command](target, tmp_path))
    assert result.exit_code == 2, result.output
    assert f"{target}: cannot write: File name too long (use a shorter name)" in result.output


@pytest.mark.parametrize("command", sorted(ALL_COMMANDS))
def test_a_file_as_parent_folder_is_exit_2_naming_it(tmp_path: Path, command: str) -> None:
    (tmp_path / "file").write_text("x\n")
    target = tmp_path / "file" / "out"
    result = run(*ALL_COMMANDS[command](target, tmp_path))
    assert result.exit_code == 2, result.output
    assert f"{target}: cannot write: Not a directory" in result.output or \
        f"{target}: cannot write: File exists" in result.output, result.output
    assert (tmp_path / "file").read_text() == "x\n"


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
@pytest.mark.parametrize("command", sorted(ALL_COMMANDS))
def test_a_failing_disk_is_exit_2_naming_the_output(tmp_path: Path, monkeypatch, command: str, code: int) -> None:
    """The disk fills up (or turns read-only) while the output is written: nothing half-written is left."""
    argv = ALL_COMMANDS[command](tmp_path / "out", tmp_path)

    def fail(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(atomic.os, "fsync", fail)
    result = run(*argv)
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'out'}: cannot write: {os.strerror(code)}" in result.output, result.output
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_a_new_file_gets_0666_minus_the_umask_and_an_old_one_keeps_its_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic.write_text(tmp_path / "new", "x")
        (tmp_path / "kept").write_text("old")
        os.chmod(tmp_path / "kept", 0o604)
        atomic.write_text(tmp_path / "kept", "x")
        os.chmod(tmp_path / "kept", 0o4755)  # a set-id bit is never carried over to new content
        atomic.write_text(tmp_path / "kept", "y")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "kept").stat().st_mode) == 0o755
