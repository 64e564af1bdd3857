"""What the slurm role installs on a controller for the power-save programs: the modules
`clusterforge.powersave.CONTROLLER_MODULES` names, which the role lists as `slurm_power_save_modules` and the AWS
roles bundle carries. They must be enough on their own: a copy of just those files imports the programs."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import yaml

from clusterforge.powersave import CONTROLLER_MODULES
from clusterforge.targets.aws.image_bundle import bundle_paths
from tests.conftest import ROOT


def test_the_role_copies_the_modules_the_package_names() -> None:
    defaults = yaml.safe_load((ROOT / "roles" / "slurm" / "defaults" / "main.yml").read_text())
    assert tuple(defaults["slurm_power_save_modules"]) == CONTROLLER_MODULES


def test_the_aws_roles_bundle_carries_them() -> None:
    carried = {p.relative_to(ROOT).as_posix() for p in bundle_paths(ROOT)}
    assert set(CONTROLLER_MODULES) <= carried
    assert not any(p.startswith("clusterforge/") and p not in CONTROLLER_MODULES for p in carried)


def test_the_modules_alone_run_the_programs(tmp_path: Path) -> None:
    """Only the listed files and pydantic: the rest of clusterforge (click, the blueprint model) is not there."""
    for module in CONTROLLER_MODULES:
        target = tmp_path / module
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / module).read_bytes())
    code = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import clusterforge, clusterforge.powersave.aws; "
            "from clusterforge.powersave.programs import resume_main; "
            "assert clusterforge.__file__.startswith(sys.argv[1]), clusterforge.__file__; "
            "sys.exit(resume_main(['--help']))")
    result = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(tmp_path), sysconfig.get_paths()["purelib"]],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "slurmctld's ResumeProgram" in result.stdout
