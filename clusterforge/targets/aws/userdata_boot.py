"""The boot phase a node on the baked image runs on itself at first boot (pure: text for the user data).

The script fetches the node config (group vars, pool vars, SLURM files) from S3 and the munge key from an SSM
SecureString parameter with the instance role, then runs `ansible-playbook -c local site.yml --skip-tags install
--limit <node>` against a one-host inventory. The key reaches Ansible in a root-only file under /run (tmpfs)
that is removed after the run; the munge role writes it to /etc/munge/munge.key 0400 munge (`no_log`).

The key is made here, on the first controller to boot, and never by the program (whose state every previewing
role could decrypt): a controller creates the parameter with a new random key unless it exists (`Overwrite`
false, which its role's policy requires, so two controllers booting at once agree on the first one's key), and
every node, controllers included, then reads it, waiting up to MUNGE_WAIT_S for a controller that has not made
it yet (a login node the stack starts beside the controller; compute nodes start after it, from its programs).

Jobs must not reach that parameter through the node's role, so the metadata service (where the role's
credentials come from) answers root only: `IMDS_ROOT_ONLY` runs at every boot, before any job can start. On the
controller it answers SlurmUser too (`IMDS_CONTROLLER`), whose power-save programs launch the nodes.

On failure the node does not join: the reason goes to /var/log/clusterforge-boot.log, and where the munge key
is already in place the script asks slurmctld to DRAIN the node with that reason (`scontrol update`, slurmd is
not started), so `sinfo -R` shows it. The reasons are fixed text, never command output.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from clusterforge.render.inventory import pool_group

BASE = "/opt/clusterforge"
VENV = f"{BASE}/venv"  # ansible and boto3, baked (bake.install_commands)
ANSIBLE_DIR = f"{BASE}/ansible"  # the roles bundle, unpacked at bake time and kept in the image
CONFIG_DIR = "/etc/clusterforge"
INVENTORY_FILE = f"{CONFIG_DIR}/inventory/hosts.yml"
BOOT_SCRIPT = "/usr/local/sbin/clusterforge-boot"
BOOT_LOG = "/var/log/clusterforge-boot.log"
METADATA_ADDRESS = "169.254.169.254"
MUNGE_WAIT_S = 1800  # a node waits this long for a controller's first boot to make the munge key
MUNGE_KEY_BYTES = 96  # secrets.token_urlsafe(96): 128 characters, 768 bits (munge wants at least 32 bytes)


def imds_guard(*users: str) -> str:
    """The command that closes the metadata service to everyone but root and `users`. The controller adds
    `slurm`: slurmctld runs the power-save programs as SlurmUser, and they call EC2 with the controller's role
    (no job runs there)."""
    owners = "".join(f" -m owner ! --uid-owner {user}" for user in ("0", *users))
    rule = f"OUTPUT -d {METADATA_ADDRESS}/32{owners} -j REJECT"
    return f"iptables -C {rule} 2>/dev/null || iptables -I {rule}"


IMDS_ROOT_ONLY = imds_guard()
IMDS_CONTROLLER = imds_guard("slurm")  # SlurmUser (render/slurm_conf.py)
ROLE_GROUPS = {"controller": "slurm_controller", "compute": "slurm_compute", "login": "slurm_login"}


@dataclass(frozen=True)
class BootSource:
    """Where a booting node finds what is not in its user data (names only, nothing secret)."""

    region: str
    bucket: str
    config_key: str  # the node config archive (image_bundle.config_bundle)
    munge_parameter: str  # SSM SecureString parameter name
    munge_kms_key: str | None = None  # the stack's key (kmsKeyArn) the controller encrypts it with; else aws/ssm


def boot_env(boot: BootSource | None) -> dict[str, str]:
    if boot is None:
        return {}
    env = {"CLUSTERFORGE_REGION": boot.region, "CLUSTERFORGE_BOOT_BUCKET": boot.bucket,
           "CLUSTERFORGE_BOOT_CONFIG": boot.config_key, "CLUSTERFORGE_MUNGE_PARAMETER": boot.munge_parameter,
           "CLUSTERFORGE_CONFIG_DIR": CONFIG_DIR}
    if boot.munge_kms_key is not None:
        env["CLUSTERFORGE_MUNGE_KMS_KEY"] = boot.munge_kms_key
    return env


def node_inventory(node: str, pool: str, role: str) -> str:
    """This node alone, in the groups the rendered inventory puts it in: its pool's group (whose vars are
    `inventory/group_vars/pool_<name>.yml` of the node config) and its SLURM role's group."""
    group = pool_group(pool)
    children: dict[str, object] = {}
    slurm = ROLE_GROUPS.get(role)
    if slurm == "slurm_controller":
        children[slurm] = {"hosts": {node: {}}}
    elif slurm is not None:
        children[slurm] = {"children": {group: {}}}
    children[group] = {"hosts": {node: {}}}
    return yaml.safe_dump({"all": {"children": children}}, sort_keys=False)


_FETCH = r'''import io, os, re, secrets, tarfile, time, boto3
env = os.environ
region = env["CLUSTERFORGE_REGION"]
body = boto3.client("s3", region_name=region).get_object(
    Bucket=env["CLUSTERFORGE_BOOT_BUCKET"], Key=env["CLUSTERFORGE_BOOT_CONFIG"])["Body"].read()
with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
    tar.extractall(env["CLUSTERFORGE_CONFIG_DIR"], filter="data")
ssm = boto3.client("ssm", region_name=region)
name = env["CLUSTERFORGE_MUNGE_PARAMETER"]
if env.get("CLUSTERFORGE_ROLE") == "controller":
    made = {"Name": name, "Type": "SecureString", "Overwrite": False,
            "Value": secrets.token_urlsafe(@KEY_BYTES@), "Description": "clusterforge: the munge key"}
    if env.get("CLUSTERFORGE_MUNGE_KMS_KEY"):
        made["KeyId"] = env["CLUSTERFORGE_MUNGE_KMS_KEY"]
    try:
        ssm.put_parameter(**made)
        print("made the munge key")
    except ssm.exceptions.ParameterAlreadyExists:
        pass
deadline = time.monotonic() + float(env.get("CLUSTERFORGE_MUNGE_WAIT_S", "@WAIT_S@"))
while True:
    try:
        key = ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"]
        break
    except ssm.exceptions.ParameterNotFound:
        if time.monotonic() >= deadline:
            raise SystemExit("no munge key: no controller has made it (a controller does at its first boot)")
        time.sleep(min(10.0, max(0.0, deadline - time.monotonic())))
if not re.fullmatch(r"[A-Za-z0-9_-]{32,1024}", key):
    raise SystemExit("the munge key parameter does not hold a key of the expected form")
fd = os.open(env["SECRETS"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o400)
with os.fdopen(fd, "w") as out:
    out.write("munge_key: '" + key + "'\n")
'''.replace("@KEY_BYTES@", str(MUNGE_KEY_BYTES)).replace("@WAIT_S@", str(MUNGE_WAIT_S))


def boot_script(attempts: int = 3, pause_s: int = 60) -> str:
    """The script cloud-init runs once (`runcmd`). The playbook is tried `attempts` times, `pause_s` apart: a
    compute node may come up before slurmctld answers."""
    return f"""#!/bin/sh
# clusterforge: the roles' boot phase on this node alone, once, at first boot.
set -u
umask 077
export HOME=/root
LOG={BOOT_LOG}
SECRETS=/run/clusterforge/munge.yml
export SECRETS
exec >>"$LOG" 2>&1
set -a
. {CONFIG_DIR}/node.env
set +a
say() {{ echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) clusterforge-boot: $*"; }}
fail() {{
  rm -f "$SECRETS"
  say "FAILED: $1; $CLUSTERFORGE_NODE has not joined the cluster"
  if [ "$CLUSTERFORGE_ROLE" != controller ] && [ -s /etc/munge/munge.key ] && command -v scontrol >/dev/null; then
    systemctl start munge && SLURM_CONF={CONFIG_DIR}/slurm/slurm.conf timeout 60 scontrol update \\
      NodeName="$CLUSTERFORGE_NODE" State=DRAIN Reason="clusterforge boot: $1" && say "DRAIN registered"
  fi
  exit 1
}}
say "boot phase of $CLUSTERFORGE_NODE (pool $CLUSTERFORGE_POOL)"
mkdir -p /run/clusterforge
{VENV}/bin/python - <<'FETCH' || fail "node config or munge key not fetched"
{_FETCH}FETCH
ok=""
for attempt in $(seq 1 {attempts}); do
  say "ansible-playbook --skip-tags install, attempt $attempt"
  if (cd {ANSIBLE_DIR} && ANSIBLE_CONFIG={ANSIBLE_DIR}/ansible.cfg {VENV}/bin/ansible-playbook -c local \\
      -i {INVENTORY_FILE} site.yml --skip-tags install --limit "$CLUSTERFORGE_NODE" -e "@$SECRETS"); then
    ok=1
    break
  fi
  [ "$attempt" -lt {attempts} ] && sleep {pause_s}
done
rm -f "$SECRETS"
[ -n "$ok" ] || fail "roles boot phase failed"
say "joined"
"""
