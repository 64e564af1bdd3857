"""The power-save programs run under hard limits, whatever a BMC or the cloud answers: the wrapper the slurm role
installs (roles/slurm/templates/clusterforge-power-save.sh.j2), rendered with small limits and run with a stand-in
program in place of the real one, stops a program that outgrows its address space or its time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jinja2
import pytest

from tests.conftest import ROOT

PROGRAMS = {
    "grows": "def resume_main():\n    held = bytearray(600 * 1024 * 1024)\n    return len(held) and 0\n",
    "sleeps": "import time\n\ndef resume_main():\n    time.sleep(30)\n    return 0\n",
    "quick": "def resume_main():\n    return 0\n",
}


def wrapper(tmp_path: Path, program: str, memory_mib: int = 256, seconds: int = 2) -> Path:
    lib = tmp_path / "lib"
    (lib / "clusterforge" / "powersave").mkdir(parents=True)
    (lib / "clusterforge" / "__init__.py").write_text("")
    (lib / "clusterforge" / "powersave" / "__init__.py").write_text("")
    (lib / "clusterforge" / "powersave" / "programs.py").write_text(PROGRAMS[program])
    # python -S: no site packages, so the stand-in is the clusterforge it imports, not the installed one
    template = jinja2.Template((ROOT / "roles/slurm/templates/clusterforge-power-save.sh.j2").read_text())
    text = template.render(ansible_managed="test", item={"key": "clusterforge-resume", "value": "resume_main"},
                           slurm_conf_dir=str(tmp_path), slurm_power_save_targets_file=str(tmp_path / "t.json"),
                           slurm_power_save_lib=str(lib), slurm_power_save_python=f"{sys.executable} -S",
                           slurm_power_save_memory_mib=memory_mib, slurm_power_save_time_limit_s=seconds)
    path = tmp_path / "clusterforge-resume"
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(("program", "stopped"), [("grows", "MemoryError"), ("sleeps", ""), ("quick", None)])
def test_the_wrapper_stops_a_program_past_its_memory_or_its_time(tmp_path: Path, program: str,
                                                                 stopped: str | None) -> None:
    done = subprocess.run(["/bin/sh", str(wrapper(tmp_path, program))], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)  # python -c reads the working folder first: not the checkout
    if stopped is None:
        assert done.returncode == 0, done.stderr
    elif stopped:
        assert done.returncode != 0 and stopped in done.stderr, (done.returncode, done.stderr[-500:])
    else:
        assert done.returncode == 124, (done.returncode, done.stderr[-500:])  # timeout(1): the time limit passed
