"""How a node the resume program launched learns its SLURM name at first boot (pure: text for the user data).

A pool slurmctld launches (`target_kernel.slurm_launched`) shares one launch template, so its user data cannot name the
node. The resume program tags each launch batch at launch (`clusterforge:batch`, inside the CreateFleet request)
and writes the batch's instance -> node map as one object in the boot bucket right after (powersave.NodeMap): no request
per node. The launch template lets the instance read its own tags from the metadata service
(`instance_metadata_tags`); the script reads its instance id and batch id there, waits for the batch's map and
takes its name from it, checks it is a node name (it becomes a hostname, an env line and an inventory host, so a
value of any other form stops the boot), then sets the hostname, completes node.env and writes the one-host
inventory from the pool's template. Only then does the boot phase run (`userdata_boot.boot_script`).
"""

from __future__ import annotations

from clusterforge.targets.aws.powersave import BATCH_TAG, PREFIX
from clusterforge.targets.aws.userdata_boot import BOOT_LOG, CONFIG_DIR, INVENTORY_FILE, METADATA_ADDRESS, VENV

IDENTIFY_SCRIPT = "/usr/local/sbin/clusterforge-identify"
NODE_PLACEHOLDER = "clusterforge-node-name"  # in the inventory template; replaced by the map's value
INVENTORY_TEMPLATE = f"{CONFIG_DIR}/inventory/hosts.template.yml"
NODE_NAME_MAX = 63  # a hostname label: letters, digits and '-', not first (what the planner names nodes)
# The resume program writes the map seconds after CreateFleet answers, but S3 or the program may be slow: a node
# waits as long as slurmctld waits for it (ResumeTimeout; the stack passes the blueprint's), useless after that.
TAG_WAIT_S = 1800

# The map look-up, run by the baked venv's Python (boto3): prints this instance's node, or nothing while the
# batch's map is not written yet; any other failure (no access, a broken object) is the script's exit 1.
_LOOKUP = r'''import json, os, sys, boto3
env = os.environ
try:
    body = boto3.client("s3", region_name=env["CLUSTERFORGE_REGION"]).get_object(
        Bucket=env["CLUSTERFORGE_BOOT_BUCKET"], Key="@PREFIX@" + sys.argv[1] + ".json")["Body"].read()
except Exception as exc:
    if getattr(exc, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404"):
        raise SystemExit(0)
    raise
print(json.loads(body)["nodes"].get(sys.argv[2], ""), end="")
'''.replace("@PREFIX@", PREFIX)


def identify_script(wait_s: int = TAG_WAIT_S, poll_s: int = 5) -> str:
    """The script cloud-init runs before the boot phase; exits 1 (and the boot phase does not run) when the
    batch's map does not name this instance within `wait_s` seconds or names it with something that is not a
    node name."""
    imds = f"http://{METADATA_ADDRESS}/latest"
    return f"""#!/bin/sh
# clusterforge: learn this node's SLURM name from its launch batch's map, once, at first boot.
set -u
exec >>{BOOT_LOG} 2>&1
set -a
. {CONFIG_DIR}/node.env
set +a
say() {{ echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) clusterforge-identify: $*"; }}
deadline=$(( $(date +%s) + {wait_s} ))
node=""
while :; do
  token=$(curl -sf -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 300' {imds}/api/token) || token=""
  id=$(curl -sf -H "X-aws-ec2-metadata-token: $token" '{imds}/meta-data/instance-id') || id=""
  batch=$(curl -sf -H "X-aws-ec2-metadata-token: $token" '{imds}/meta-data/tags/instance/{BATCH_TAG}') || batch=""
  case "$batch$id" in  # both name an object and a key: nothing but what EC2 and new_batch_id make
    *[!a-z0-9-]*) say "FAILED: the {BATCH_TAG} tag or the instance id is not of the expected form"; exit 1 ;;
  esac
  if [ -n "$batch" ] && [ -n "$id" ]; then
    node=$({VENV}/bin/python - "$batch" "$id" <<'LOOKUP'
{_LOOKUP}LOOKUP
) || {{ say "FAILED: cannot read the node map of batch $batch"; exit 1; }}
    [ -n "$node" ] && break
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    say "FAILED: no node map names instance ${{id:-?}} (batch ${{batch:-?}}) after {wait_s} s;\
 the resume program did not name this instance"
    exit 1
  fi
  sleep {poll_s}
done
case "$node" in  # a shell pattern sees the whole value, a newline included (grep would match one line of it)
  -*|*[!A-Za-z0-9-]*) node="" ;;
esac
if [ -z "$node" ] || [ "${{#node}}" -gt {NODE_NAME_MAX} ]; then
  say "FAILED: the node map's name for this instance is not a node name"
  exit 1
fi
hostnamectl set-hostname "$node"
grep -q '^CLUSTERFORGE_NODE=' {CONFIG_DIR}/node.env || echo "CLUSTERFORGE_NODE=$node" >> {CONFIG_DIR}/node.env
sed "s/{NODE_PLACEHOLDER}/$node/g" {INVENTORY_TEMPLATE} > {INVENTORY_FILE}
say "this instance is $node (batch $batch)"
"""
