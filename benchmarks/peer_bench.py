"""The lab beside a peer: a cached `lab up` (its default, `--boot self`) against the galaxyproject/ansible-slurm
role's cold run, on the same machine, the same node image and the same 3 containers.

    sudo .venv/bin/python benchmarks/peer_bench.py --role PATH/TO/ansible-slurm [--runs 2] [--apt-proxy-port 3142]

The peer: 3 containers from the lab's node image (Debian 13, systemd, sshd; nothing of SLURM), then the role's
own example as its users run it (`slurmservers` and `slurmexechosts` groups, a shared munge key, SLURM from
Debian's archive, Ansible's default strategy with pipelining), timed from the first container start to
`srun -N2 hostname` on the two compute nodes. It builds a SLURM-only cluster: no accounting, QOS, containers,
telemetry, health checks or monitoring, all of which the lab's 3 nodes have.

The lab: `lab up` (nodes that configure themselves, the default) with its images built (`clusterforge lab up`
once first), timed the same way by benchmarks/selfboot_bench.py's measure. Prints one markdown row per run,
with the load average at the start. The role is not part of clusterforge: pass a checkout of it
(github.com/galaxyproject/ansible-slurm).

`--apt-proxy-port PORT` gives the peer's nodes an apt proxy on this host, reached at the lab network's gateway: a
caching proxy for deb.debian.org (benchmarks/README.md shows the nginx `proxy_cache` one used here; Debian's
apt-cacher-ng is the usual one, but it could not resolve the archive's name on this machine). After one run has
filled it, the peer installs SLURM from a local cache instead of deb.debian.org: the "same fast mirror" as the
lab, whose cached image downloads nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.lab import image, nodes, podman  # noqa: E402
from clusterforge.lab.paths import LabPaths  # noqa: E402
from clusterforge.lab.state import Node  # noqa: E402

NAME = "cf-peer"
HOSTS = {"ctl-0001": ("slurmservers",), "node-0001": ("slurmexechosts", "slurm_compute"),
         "node-0002": ("slurmexechosts", "slurm_compute")}
PLAYBOOK = """\
- name: SLURM, as galaxyproject.slurm's README sets it up
  hosts: all
  become: true
  pre_tasks:
    - name: The package index is current (a cold node)
      ansible.builtin.apt:
        update_cache: true
  vars:
    slurm_munge_key: {munge_key}
    slurm_config:
      SlurmctldHost: ctl-0001
      SelectType: select/cons_tres
      ReturnToService: 2
    slurm_nodes:
      - name: "node-000[1-2]"
        CPUs: 1
    slurm_partitions:
      - name: debug
        Default: "YES"
        Nodes: "node-000[1-2]"
        State: UP
  roles:
    - role: galaxyproject.slurm
"""


def run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, **kw)  # type: ignore[call-overload]


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def down() -> None:
    run([sys.executable, "-m", "clusterforge", "lab", "down", "--name", NAME], cwd=ROOT)


def peer(role: Path, apt_proxy_port: int | None = None) -> float:
    """Seconds from the first container start to the first srun on both compute nodes; with `apt_proxy_port`, the
    nodes' apt goes through the proxy at that port of the lab network's gateway (this host)."""
    down()
    paths = LabPaths.of(NAME)
    paths.root.mkdir(parents=True, exist_ok=True)
    node_image = image.ensure_node()
    nodes.ensure_ssh_key(paths)
    work = Path(tempfile.mkdtemp(prefix="peer-"))
    try:
        shutil.copytree(role, work / "roles" / "galaxyproject.slurm", ignore=shutil.ignore_patterns(".git"))
        key = work / "munge.key"
        key.write_bytes(os.urandom(1024))
        (work / "site.yml").write_text(PLAYBOOK.format(munge_key=key))
        groups: dict[str, list[str]] = {}
        for host, host_groups in HOSTS.items():
            groups.setdefault(host_groups[0], []).append(host)
        (work / "hosts.ini").write_text("".join(f"[{g}]\n" + "".join(f"{h}\n" for h in hs) for g, hs in groups.items()))
        (work / "ansible.cfg").write_text(f"[defaults]\nhost_key_checking = False\nroles_path = {work / 'roles'}\n"
                                          "[ssh_connection]\npipelining = True\n")
        started = time.monotonic()
        subnet = nodes.ensure_network(paths)
        specs = nodes.specs_for(HOSTS, subnet)
        repo = paths.root / "empty-repo"
        repo.mkdir(exist_ok=True)
        nodes.start(paths, specs, node_image, str(repo))
        nodes.write_ssh_config(paths, [Node(s.name, paths.container(s.name), s.ip, s.groups) for s in specs])
        nodes.wait_booted(paths, list(HOSTS))
        if apt_proxy_port is not None:
            proxy = f'Acquire::http::Proxy "http://{subnet.network_address + 1}:{apt_proxy_port}";\n'
            for host in HOSTS:
                run(["podman", "exec", paths.container(host), "sh", "-c",
                     f"printf '%s' '{proxy}' > /etc/apt/apt.conf.d/01bench-proxy"])
        env = os.environ | {"ANSIBLE_CONFIG": str(work / "ansible.cfg"),
                            "ANSIBLE_SSH_ARGS": f"-F {paths.ssh_config} -o ControlMaster=auto -o ControlPersist=60s"}
        play = run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(work / "hosts.ini"),
                    "-u", "root", str(work / "site.yml")], cwd=work, env=env)
        if play.returncode != 0:
            raise SystemExit(f"the peer's play failed:\n{play.stdout[-3000:]}\n{play.stderr[-1000:]}")
        for _ in range(120):
            job = run(["podman", "exec", paths.container("ctl-0001"), "srun", "-N2", "-t", "1", "hostname"],
                      timeout=60)
            if job.returncode == 0 and len(job.stdout.split()) == 2:
                return time.monotonic() - started
            time.sleep(0.5)
        raise SystemExit(f"the peer's cluster ran no job: {job.stderr[-500:]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        down()


def lab() -> float:
    from benchmarks.selfboot_bench import measure

    return measure(3, boot="self")[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--role", type=Path, required=True, help="a checkout of galaxyproject/ansible-slurm")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--apt-proxy-port", type=int, default=None,
                        help="the peer's apt through a caching proxy on this host, at this port")
    args = parser.parse_args()
    if not (args.role / "tasks" / "main.yml").is_file():
        raise SystemExit(f"{args.role} is not a checkout of the role (no tasks/main.yml)")
    if not podman.exists("image", image.BASE_IMAGE):
        raise SystemExit("build the lab's images first: clusterforge lab up")
    print("| run | what | load (1 min) | container start to first srun, s |")
    print("|---|---|---|---|")
    for number in range(1, args.runs + 1):
        before = load()
        seconds = peer(args.role, args.apt_proxy_port)
        mirror = "a local apt cache" if args.apt_proxy_port else "deb.debian.org"
        print(f"| {number} | galaxyproject.slurm, cold play (SLURM only), {mirror} | {before} | {seconds:.0f} |",
              flush=True)
        before = load()
        seconds = lab()
        print(f"| {number} | clusterforge `lab up` (self boot, the default), cached image | {before} | "
              f"{seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
