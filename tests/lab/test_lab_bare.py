"""Two nodes from the plain node image: every package comes from the roles themselves, as on a fresh server.
Then the EFA path (installer checksum, aws-ofi-nccl) on the same nodes, twice: the second run changes nothing."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest

from clusterforge.target_kernel import blueprint_model
from tests.lab.conftest import Lab, bring_up, job_hosts, leftovers

pytestmark = pytest.mark.lab
NAME = f"cf-labbare-{os.getpid()}"
PINS = blueprint_model().model_fields["software"].default  # the lab's blueprint pins none: the defaults


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    yield from bring_up(NAME, "--bare", "--nodes", "2")


def test_bare_nodes_get_every_package_from_the_roles(lab: Lab) -> None:
    assert job_hosts(lab.up_output) == ["node-0001"], lab.up_output
    changed = dict(re.findall(r"│ (\S+-\d+)\s+│\s+\d+\s+│\s+(\d+)", lab.up_output))
    assert int(changed["node-0001"]) > 20, lab.up_output  # packages, files, services: all made by this run
    assert lab.sh("node-0001", "dpkg-query -W -f '${Version}' libnccl2") == f"{PINS.nccl}-1+cuda{PINS.cuda}"


def test_efa_installer_with_a_wrong_checksum_never_runs(lab: Lab) -> None:
    bad = lab.cli("provision", "-e", "efa_enabled=true", "-e", "fabric_kind=efa",
                  "-e", f"efa_installer_sha256={'0' * 64}", check=False)
    text = " ".join(bad.stdout.split())
    assert bad.returncode == 1, bad.stdout
    assert "FAILED node-0001: The installer tarball is downloaded and its checksum verified" in text, text
    assert "did not match" in text, text
    assert lab.run("node-0001", "test -e /opt/amazon/efa_installed_packages").returncode == 1


def test_efa_role_installs_the_pinned_installer_once(lab: Lab) -> None:
    efa = ("provision", "-e", "efa_enabled=true", "-e", "fabric_kind=efa")
    first = lab.cli(*efa).stdout
    installed = lab.sh("node-0001", "cat /opt/amazon/efa_installed_packages")
    assert f"EFA installer version: {PINS.efa_installer}" in installed
    assert lab.sh("node-0001", "dpkg-query -W -f '${Version}' aws-ofi-nccl") == f"{PINS.aws_ofi_nccl}-1"
    assert "FI_PROVIDER=efa" in lab.sh("node-0001", "cat /etc/profile.d/clusterforge-nccl.sh")
    assert "skipped fi_info -p efa: this host is a container" in first
    again = lab.cli(*efa).stdout
    assert "changed=0 in" in again, again


def test_bare_lab_down_leaves_nothing(lab: Lab) -> None:
    lab.cli("down")
    assert leftovers(lab.name) == {}
