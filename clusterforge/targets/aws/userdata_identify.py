"""How a node the resume program launched learns its SLURM name at first boot (pure: text for the user data).

A pool slurmctld launches (`target_kernel.slurm_launched`) shares one launch template, so its user data cannot name the
node. The resume program tags each instance `clusterforge:node=<name>` right after CreateFleet, and the launch
template lets the instance read its own tags from the metadata service (`instance_metadata_tags`). The script
waits for that tag, checks it is a node name (it becomes a hostname, an env line and an inventory host, so a
value of any other form stops the boot), then sets the hostname, completes node.env and writes the one-host
inventory from the pool's template. Only then does the boot phase run (`userdata_boot.boot_script`).
"""

from __future__ import annotations

from clusterforge.targets.aws.powersave import NODE_TAG  # what the resume program tags each instance with
from clusterforge.targets.aws.userdata_boot import BOOT_LOG, CONFIG_DIR, INVENTORY_FILE, METADATA_ADDRESS

IDENTIFY_SCRIPT = "/usr/local/sbin/clusterforge-identify"
NODE_PLACEHOLDER = "clusterforge-node-name"  # in the inventory template; replaced by the tag's value
INVENTORY_TEMPLATE = f"{CONFIG_DIR}/inventory/hosts.template.yml"
NODE_NAME_MAX = 63  # a hostname label: letters, digits and '-', not first (what the planner names nodes)
# The resume program tags right after CreateFleet, but CreateTags has its own (mutating) rate: a node waits as long
# as slurmctld waits for it (ResumeTimeout; the stack passes the blueprint's), since it is useless after that.
TAG_WAIT_S = 1800


def identify_script(wait_s: int = TAG_WAIT_S, poll_s: int = 5) -> str:
    """The script cloud-init runs before the boot phase; exits 1 (and the boot phase does not run) when no
    node-name tag appears within `wait_s` seconds or the tag is not a node name."""
    imds = f"http://{METADATA_ADDRESS}/latest"
    return f"""#!/bin/sh
# clusterforge: learn this node's SLURM name from its instance tag, once, at first boot.
set -u
exec >>{BOOT_LOG} 2>&1
say() {{ echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) clusterforge-identify: $*"; }}
deadline=$(( $(date +%s) + {wait_s} ))
node=""
while :; do
  token=$(curl -sf -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 300' {imds}/api/token) || token=""
  node=$(curl -sf -H "X-aws-ec2-metadata-token: $token" '{imds}/meta-data/tags/instance/{NODE_TAG}') || node=""
  [ -n "$node" ] && break
  if [ "$(date +%s)" -ge "$deadline" ]; then
    say "FAILED: no {NODE_TAG} tag after {wait_s} s; the resume program did not name this instance"
    exit 1
  fi
  sleep {poll_s}
done
case "$node" in  # a shell pattern sees the whole value, a newline included (grep would match one line of it)
  -*|*[!A-Za-z0-9-]*) node="" ;;
esac
if [ -z "$node" ] || [ "${{#node}}" -gt {NODE_NAME_MAX} ]; then
  say "FAILED: the {NODE_TAG} tag is not a node name"
  exit 1
fi
hostnamectl set-hostname "$node"
grep -q '^CLUSTERFORGE_NODE=' {CONFIG_DIR}/node.env || echo "CLUSTERFORGE_NODE=$node" >> {CONFIG_DIR}/node.env
sed "s/{NODE_PLACEHOLDER}/$node/g" {INVENTORY_TEMPLATE} > {INVENTORY_FILE}
say "this instance is $node"
"""
