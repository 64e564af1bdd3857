"""The node's boot phase script (lab/data/clusterforge-boot) run as a shell script against stand-ins for
ansible-playbook, systemctl and scontrol: what it writes to boot.status, what it asks the controller, and when it
runs the playbook a second time."""

from __future__ import annotations

import os
import subprocess
from importlib import resources
from pathlib import Path

SCRIPT = Path(str(resources.files("clusterforge.lab") / "data" / "clusterforge-boot"))

FACTS_FAIL_ONCE = """#!/bin/sh
echo run >> "$CALLS"
echo "TASK [Gathering Facts] ***"
if [ "$(wc -l < "$CALLS")" -eq 1 ]; then echo 'fatal: [n1]: FAILED! => timed out'; echo 'PLAY RECAP'; exit 2; fi
echo "TASK [slurm : Start slurmd] ***"
"""

LATER_STEP_FAILS = """#!/bin/sh
echo run >> "$CALLS"
echo "TASK [Gathering Facts] ***"
echo "TASK [munge : Start munge] ***"
echo 'fatal: [n1]: FAILED! => no key'
exit 2
"""


def run_boot(tmp_path: Path, playbook: str, host: str = "n1") -> tuple[int, Path]:
    """The script with its fixed paths moved under tmp_path and its commands stood in for on PATH, on a host named
    `host` (its boot folder names n1)."""
    for folder in ("boot", "tree", "bin", "status"):
        (tmp_path / folder).mkdir()
    (tmp_path / "boot" / "node.env").write_text("CLUSTERFORGE_NODE=n1\nCLUSTERFORGE_CLUSTER=c\nSLURM_CONTROLLER=x\n")
    stand_ins = {"ansible-playbook": playbook, "systemctl": "#!/bin/sh\ntrue\n",
                 "scontrol": '#!/bin/sh\necho "$@" >> "$CALLS.scontrol"\n', "sleep": "#!/bin/sh\ntrue\n",
                 "hostname": f"#!/bin/sh\necho {host}\n"}
    for name, text in stand_ins.items():
        (tmp_path / "bin" / name).write_text(text)
        (tmp_path / "bin" / name).chmod(0o755)
    moved = {"BOOT=": "boot", "TREE=": "tree", "LOG=": "boot.log", "STATUS_DIR=": "status"}
    lines = []
    for line in SCRIPT.read_text().splitlines():
        for prefix, target in moved.items():
            if line.startswith(prefix):
                line = f"{prefix}{tmp_path / target}"
        lines.append(line.replace("/dev/console", str(tmp_path / "console")))
    script = tmp_path / "clusterforge-boot"
    script.write_text("\n".join(lines) + "\n")
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "CALLS": str(tmp_path / "calls")}
    done = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, timeout=60, check=False)
    return done.returncode, tmp_path


def test_a_boot_phase_whose_fact_gathering_failed_runs_once_more_and_keeps_the_first_log(tmp_path: Path) -> None:
    rc, root = run_boot(tmp_path, FACTS_FAIL_ONCE)
    assert rc == 0
    assert (root / "calls").read_text().count("run") == 2
    assert (root / "status" / "boot.status").read_text().startswith("ok ")
    assert "timed out" in (root / "boot.log.first").read_text()
    assert "fact gathering failed, running the boot phase once more" in (root / "console").read_text()
    assert not (root / "calls.scontrol").exists() or "DRAIN" not in (root / "calls.scontrol").read_text()


def test_a_boot_phase_that_failed_past_fact_gathering_is_not_run_again_and_drains_the_node(tmp_path: Path) -> None:
    rc, root = run_boot(tmp_path, LATER_STEP_FAILS)
    assert rc == 2
    assert (root / "calls").read_text().count("run") == 1
    assert (root / "status" / "boot.status").read_text().split(" ", 3)[3] == "munge : Start munge\n"
    assert "FAILED at munge : Start munge" in (root / "console").read_text()
    assert "State=DRAIN Reason=boot phase failed: munge : Start munge" in (root / "calls.scontrol").read_text()


def test_a_boot_folder_that_names_another_node_stops_the_boot_before_anything_runs(tmp_path: Path) -> None:
    """A server given another node's overlay (its DHCP name n2, its boot folder n1's) must not configure itself
    as n1: two servers would answer to SLURM under one name. A domain on the host's name is not a difference."""
    rc, root = run_boot(tmp_path, LATER_STEP_FAILS, host="n2")
    assert rc == 1
    assert not (root / "calls").exists()  # the playbook never ran
    assert "FAILED at start: this host is n2, but its boot folder is n1's" in (root / "console").read_text()
    assert not (root / "calls.scontrol").exists()  # nor was any node drained: n1 is another server


def test_a_host_name_with_a_domain_is_the_same_node(tmp_path: Path) -> None:
    rc, root = run_boot(tmp_path, FACTS_FAIL_ONCE, host="n1.cluster.example")
    assert rc == 0 and (root / "status" / "boot.status").read_text().startswith("ok ")


def test_the_boot_phase_runs_as_root_without_sudo(tmp_path: Path) -> None:
    """The unit runs as root: no step goes through sudo, whose lookup of this host's name (not in /etc/hosts yet)
    held the first step 30-42 s while the lab's DNS reloaded."""
    rc, root = run_boot(tmp_path, '#!/bin/sh\necho "$@" >> "$CALLS"\necho "TASK [Gathering Facts] ***"\n')
    assert rc == 0
    argv = (root / "calls").read_text().split()
    assert argv[argv.index("ansible_become=false") - 1] == "-e"
    assert argv.index("ansible_become=false") > argv.index(f"@{root / 'boot'}/vars.yml")  # after the lab's vars
