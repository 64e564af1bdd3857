"""`clusterforge image build --no-bootable` on the lab's blueprint with the lab's sources: the image the lab bakes
for its own nodes, named for the product, found again without a second bake; and its OCI archive. (A bootable
image, the default, adds a kernel to that recipe and bakes: minutes, not for this test.)

The lab tests before this one (test_fault_drills) bake the lab's image; run alone, the first build here bakes it
once (minutes), as `lab up` would. The archive is written from the small node image (about 320 MB, seconds):
saving the 1.7 GB baked image is the same `podman save` and takes longer than this test may."""

from __future__ import annotations

import subprocess
import tarfile
import time
from pathlib import Path

from tests.conftest import ROOT
from tests.lab.conftest import clusterforge

BLUEPRINT = ROOT / "clusterforge/lab/data/blueprint.yaml"


def image_id(tag: str) -> str:
    return subprocess.run(["podman", "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True, text=True,
                          check=True).stdout.strip()


def labs_tag(tmp_path: Path) -> str:
    """The tag `lab up` gives its baked image for the bundled blueprint."""
    from clusterforge.lab import bake, cluster, image
    from clusterforge.lab.render import DEFAULT_CATALOG, data_file, render

    render(BLUEPRINT, [data_file(DEFAULT_CATALOG)], None, tmp_path / "render")
    rendered = tmp_path / "render"
    return f"{bake.BAKED_REPO}:{bake.bake_inputs(image.node_image_tag(), cluster.lab_pins(rendered), rendered)}"


def podman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=False)


def test_the_lab_blueprints_image_is_the_labs_baked_image_and_up_to_date_in_seconds(tmp_path: Path) -> None:
    tag = clusterforge("image", "build", str(BLUEPRINT), "--no-bootable", "--dry-run").stdout.split()[0]
    tags = podman("image", "inspect", "--format", "{{json .RepoTags}}", tag).stdout
    shared = tags.count(":") > 1  # the product's tag beside the lab's: drop ours, the lab's image stays
    if shared:
        assert podman("untag", tag, tag).returncode == 0
    # bakes only if no lab baked before
    first = clusterforge("image", "build", str(BLUEPRINT), "--no-bootable", timeout=1800)
    lab = labs_tag(tmp_path)
    if shared:
        assert f"{tag}  up to date (the lab's baked image {lab})" in first.stdout, first.stdout
    started = time.monotonic()
    again = clusterforge("image", "build", str(BLUEPRINT), "--no-bootable")
    took = time.monotonic() - started
    assert again.stdout.splitlines() == [f"{tag}  up to date"] and "baking" not in again.stderr
    assert took < 20, f"{took:.1f} s"
    images = podman("images", "--format", "{{.Repository}}:{{.Tag}} {{.Id}} {{.Created}}").stdout
    assert image_id(tag) == image_id(lab), (  # the very image `lab up` runs
        f"{first.stdout}{first.stderr}\nimages:\n{images}")


def test_an_oci_archive_is_written_atomically_with_the_warewulf_import_command(tmp_path: Path) -> None:
    from clusterforge.image import archive
    from clusterforge.lab import image

    node = image.ensure_node()
    out = tmp_path / "images"
    path, written = archive.save(node, out, "node.tar")
    assert written and path == out / "node.tar"
    assert sorted(p.name for p in out.iterdir()) == ["node.tar"]  # no temporary file left
    with tarfile.open(path) as tar:
        names = set(tar.getnames())
    assert {"index.json", "oci-layout"} <= {n.removeprefix("./") for n in names}
    assert archive.save(node, out, "node.tar") == (path, False)  # the same name is the same image: kept
    assert archive.warewulf_import(path, "clusterforge-node-lab-none") == (
        f"wwctl image import {path} clusterforge-node-lab-none")
