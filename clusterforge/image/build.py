"""`clusterforge image build`: check the design, render it, and bake each image it needs that does not exist yet.

The design must pass the policy check first (as `lab up` and the stack refuse one the check rejects). The render
goes to a temporary folder; the bake (lab/bake.py) runs in containers named `cf-image-<pid>-*` on a network of
the same name, removed at the end. A bootable image (the default) gets the kernel's steps after the boot phase
(image/bootable.py). With `--sources lab` and `--no-bootable`, an image the lab baked from exactly the same recipe
(same node image, roles, pins and repository; no pool vars of its own) is tagged instead of baked again: the lab's
baked image has no kernel, so a bootable image is never it.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.image import bootable
from clusterforge.image.plan import LAB_SOURCES, NodeImage, images, lab_gaps, lab_serves
from clusterforge.lab import bake, host, image, labvars, nodes, podman, repo
from clusterforge.lab.paths import LabPaths
from clusterforge.policies.policy_inputs import PolicyInputs
from clusterforge.provision.runner import EventHandler

Say = Callable[[str], None]
UP_TO_DATE, WOULD_BUILD, BUILT = "up to date", "would be built", "built"


@dataclass(frozen=True)
class Status:
    image: NodeImage
    state: str  # UP_TO_DATE, WOULD_BUILD or BUILT
    note: str = ""
    seconds: float = 0.0  # how long its bake took


def with_lab_catalog(inputs: PolicyInputs, sources: str) -> PolicyInputs:
    """`--sources lab` loads the lab's catalog too (its `lab-node` entry), as `lab up` does."""
    if sources != LAB_SOURCES:
        return inputs
    from clusterforge.lab.render import DEFAULT_CATALOG, data_file

    lab = data_file(DEFAULT_CATALOG)
    others = tuple(c for c in inputs.catalogs if c.resolve() != lab.resolve())
    return dataclasses.replace(inputs, catalogs=(lab, *others))


@contextmanager
def rendered(blueprint: Path, inputs: PolicyInputs, sources: str,
             boot: bool = True) -> Iterator[tuple[Path, list[NodeImage]]]:
    """The design checked (refused on unwaived errors) and rendered into a temporary folder, with the images it
    needs; the folder is removed afterwards."""
    from clusterforge.pipeline import analysis
    from clusterforge.render import RenderContext, write
    from clusterforge.target_kernel import project_dir

    policy = analysis.read_policy(with_lab_catalog(inputs, sources))
    result = analysis.analyze(analysis.load(blueprint, policy), policy)
    result.refuse_on_errors("the image build")
    with tempfile.TemporaryDirectory(prefix="clusterforge-image-") as tmp:
        out = Path(tmp) / "render"
        write(RenderContext(result.loaded, result.plan, project_dir(result.cluster)), out)
        yield out, images(result.plan, out, sources, boot)


def podman_found() -> bool:
    return shutil.which("podman") is not None


def status(found: NodeImage) -> Status:
    """Whether an image exists (no podman here: it would be built, and cannot be)."""
    if found.sources == LAB_SOURCES and not lab_serves(found.vendor):
        return Status(found, WOULD_BUILD, "needs --sources vendor: the lab's repository has no stand-ins for it")
    if not podman_found():
        return Status(found, WOULD_BUILD, "podman is not installed here")
    return Status(found, UP_TO_DATE if podman.exists("image", found.tag) else WOULD_BUILD)


def build(rendered_dir: Path, found: Sequence[NodeImage], say: Say, on_event: EventHandler | None) -> list[Status]:
    """Bake every image of `found` that does not exist yet; each one's status."""
    missing = [img for img in found if not podman_found() or not podman.exists("image", img.tag)]
    done = [_caught_up(img, rendered_dir) for img in found if img not in missing]
    if not missing:
        return done
    for img in missing:
        if img.sources == LAB_SOURCES and not lab_serves(img.vendor):
            raise ClusterforgeError(Problem(
                f"{img.tag}: the lab's repository has no stand-ins for the {img.vendor} pools' stack",
                "--sources", hint="use --sources vendor: the repositories the render names"))
    host.require(need_mmdebstrap=not (podman_found() and podman.exists("image", image.BASE_IMAGE)))
    node_image = image.ensure_node(say)
    paths = LabPaths.of(f"cf-image-{os.getpid()}")
    nodes.ensure_ssh_key(paths)
    try:
        for img in missing:
            done.append(_bake(paths, node_image, rendered_dir, img, say, on_event))
    finally:
        if podman.exists("network", paths.network):
            podman.run(["network", "rm", "--force", paths.network], check=False)
        shutil.rmtree(paths.root, ignore_errors=True)
    order = {img.tag: i for i, img in enumerate(found)}
    return sorted(done, key=lambda s: order[s.image.tag])


def _is_labs_recipe(img: NodeImage) -> bool:
    """The lab's recipe exactly (its sources, no pool vars, no kernel): the lab's baked image is this one."""
    return img.sources == LAB_SOURCES and not img.pool_vars and not img.bootable


def _labs_baked(node_image: str, img: NodeImage, rendered_dir: Path) -> str:
    assert isinstance(img.pins, repo.Pins)
    return f"{bake.BAKED_REPO}:{bake.bake_inputs(node_image, img.pins, rendered_dir)}"


def _caught_up(img: NodeImage, rendered_dir: Path) -> Status:
    """An existing image, pointed at the lab's own bake of the same recipe when that is a different image.

    The product's tag follows the recipe (roles, pins, sources); the lab's also follows this machine's node image
    and repository. When those changed since the product's tag was made, the lab baked again and its image is the
    newer build of the same recipe: the product's tag moves to it (the old image is removed if nothing uses it),
    so `image build` and `lab up` keep naming one image."""
    if not (_is_labs_recipe(img) and podman.exists("image", image.BASE_IMAGE)
            and isinstance(img.pins, repo.Pins) and repo.index(img.pins) is not None):
        return Status(img, UP_TO_DATE)
    node_image = image.node_image_tag()
    labs = _labs_baked(node_image, img, rendered_dir) if podman.exists("image", node_image) else ""
    if not labs or not podman.exists("image", labs):
        return Status(img, UP_TO_DATE)
    ours = podman.inspect("image", img.tag)["Id"]
    if podman.inspect("image", labs)["Id"] == ours:
        return Status(img, UP_TO_DATE)
    podman.run(["tag", labs, img.tag])
    podman.run(["rmi", ours], check=False)  # refused while another tag or a container holds it
    return Status(img, UP_TO_DATE, f"now the lab's newer bake of the same recipe, {labs}")


def _bake(paths: LabPaths, node_image: str, rendered_dir: Path, img: NodeImage, say: Say,
          on_event: EventHandler | None) -> Status:
    vars_files: tuple[Path, ...] = ()
    equivalent: tuple[str, ...] = ()
    if img.sources == LAB_SOURCES:
        assert isinstance(img.pins, repo.Pins)
        labvars.write(paths, repo.ensure(img.pins, paths.repo, say))
        vars_files = (paths.extra_vars,)
        if _is_labs_recipe(img):
            equivalent = (_labs_baked(node_image, img, rendered_dir),)
    recipe = bake.Recipe(rendered_dir, img.tag, pool_group=img.pool_group if img.pool_vars else None,
                         pool_vars=img.pool_vars, vars_files=vars_files, equivalent=equivalent,
                         extra_vars={**(lab_gaps() if img.sources == LAB_SOURCES and img.pool_vars else {}),
                                     **(bootable.SERVER_VARS if img.bootable else {})},
                         finish=bootable.STEPS if img.bootable else ())
    started = time.monotonic()
    if not bake.ensure_baked(paths, node_image, recipe, say, on_event):
        return Status(img, UP_TO_DATE, f"the lab's baked image {equivalent[0]}" if equivalent else "")
    return Status(img, BUILT, seconds=time.monotonic() - started)
