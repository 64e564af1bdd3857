"""`image build`: the node images of a blueprint, baked once from its roles and pins (docs/images.md)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from clusterforge.cli.app import app, policy_options, say
from clusterforge.policies.policy_inputs import PolicyInputs


@app.group("image")
def image_group() -> None:
    """Node images: every package the roles install, baked once per change of the roles, pins or base image.

    \b
    clusterforge image build cluster.yaml --dry-run     which images, their inputs hash, built or not
    clusterforge image build cluster.yaml               bake what is missing (minutes each)
    clusterforge image build cluster.yaml --oci-archive out/   and save each as an OCI archive

    See docs/images.md: what is in an image (no identity, no secrets), names, Warewulf and AWS.
    """


class _TaskLines:
    """The bake's progress on stderr: each Ansible step as it starts, with the time since the command began."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def __call__(self, event: Mapping[str, Any]) -> None:
        if event.get("event") == "playbook_on_task_start":
            task = (event.get("event_data") or {}).get("task", "")
            say(f"  [{time.monotonic() - self.started:6.1f}s] {task}")


@image_group.command("build")
@click.argument("blueprint", type=click.Path(path_type=Path, dir_okay=False))
@policy_options
@click.option("--sources", type=click.Choice(["lab", "vendor"]), default="lab", show_default=True,
              help="Where vendor packages come from. lab: the lab's local apt repository of stand-ins at the "
                   "blueprint's pins (the default: works on a machine without the vendors' repositories, as in the "
                   "lab and CI; loads the lab's catalog too). vendor: the repositories the blueprint renders (a "
                   "site with network access to the vendors': the GPU vendors', the cloud's and the Lustre client's).")
@click.option("--oci-archive", "archive_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Also save each image to DIR/<name>-<hash>.tar (podman save --format oci-archive) and print the "
                   "Warewulf 4 command that imports it (`wwctl image import`; `wwctl container import` before 4.6).")
@click.option("--bootable/--no-bootable", default=True, show_default=True,
              help="Put a kernel (linux-image-amd64) and its initramfs in each image, so Warewulf 4.6+ boots it on "
                   "a server (the default). --no-bootable: an image for containers only (the lab's kind).")
@click.option("--dry-run", is_flag=True, help="List the images, their inputs hash and whether each would be built; "
                                              "bake nothing and start no container.")
def build(blueprint: Path, inputs: PolicyInputs, sources: str, archive_dir: Path | None, bootable: bool,
          dry_run: bool) -> None:
    """Bake the node image(s) of BLUEPRINT: one per accelerator vendor among its pools (`none` for pools without
    GPUs; pools that pin their own software get their own), named
    localhost/clusterforge-node-<cluster>-<vendor>:<inputs hash>.

    Each is the roles' install steps run on one node in every SLURM role group and in one pool group of that
    vendor, plus what a node needs to configure itself at boot and, unless --no-bootable, a kernel and its
    initramfs for Warewulf; the node's identity and keys are removed. An
    image whose tag exists is up to date and is not baked again; a bake takes minutes.

    Refuses a design the policy check rejects (exit 2), as `lab up` does. Needs root and podman (not for
    --dry-run).

    \b
    Examples:
      clusterforge image build examples/onprem-dgx-h100.yaml --dry-run
      clusterforge image build clusterforge/lab/data/blueprint.yaml
      clusterforge image build site.yaml --sources vendor --oci-archive /srv/images
    """
    from clusterforge.image import archive
    from clusterforge.image.bootable import describe
    from clusterforge.image.build import BUILT, rendered, status
    from clusterforge.image.build import build as bake_images

    with rendered(blueprint, inputs, sources, bootable) as (render_dir, found):
        if dry_run:
            for item in (status(img) for img in found):
                note = f" ({item.note})" if item.note else ""
                click.echo(f"{item.image.tag}  inputs {item.image.inputs}  {item.state}{note}")
                own = item.image.pool_vars
                pool = f" and {item.image.pool_group} ({', '.join(own)})" if own else ""
                click.echo(f"  vendor {item.image.vendor}: pools {', '.join(item.image.pools)}; baked in every role "
                           f"group{pool}; sources {sources}; {describe(item.image.bootable)}")
            return
        results = bake_images(render_dir, found, say, _TaskLines())
    for item in results:
        note = f" ({item.note})" if item.note else ""
        took = f" in {item.seconds:.0f} s" if item.state == BUILT else ""
        click.echo(f"{item.image.tag}  {item.state}{took}{note}")
    if archive_dir is not None:
        for item in results:
            path, written = archive.save(item.image.tag, archive_dir, item.image.archive, say)
            click.echo(f"{path}  {'written' if written else 'up to date'}")
            click.echo(f"  import into Warewulf 4.6+: {archive.warewulf_import(path, item.image.name)}")
