"""`clusterforge image build` without containers: which images a blueprint needs, what their inputs hash follows,
`--dry-run`, and the refusal of a design the policy check rejects."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clusterforge.image.build import rendered
from clusterforge.image.plan import NodeImage
from clusterforge.policies.policy_inputs import PolicyInputs
from tests.conftest import ROOT

SHARED = Path("/work/shared/examples")
EXAMPLES = sorted(SHARED.glob("*.yaml")) if SHARED.is_dir() else sorted((ROOT / "examples").glob("*.yaml"))
LAB = ROOT / "clusterforge/lab/data/blueprint.yaml"
DGX = next(p for p in EXAMPLES if p.name == "onprem-dgx-h100.yaml")
P5 = next(p for p in EXAMPLES if p.name == "aws-p5.yaml")


def needed(blueprint: Path, sources: str = "lab", bootable: bool = True) -> list[NodeImage]:
    with rendered(blueprint, PolicyInputs(), sources, bootable) as (_, found):
        return found


def summary(found: list[NodeImage]) -> list[tuple[str, tuple[str, ...], str]]:
    return [(img.name, img.pools, img.pool_group) for img in found]


def edited(tmp_path: Path, source: Path, old: str, new: str, name: str = "bp.yaml") -> Path:
    text = source.read_text()
    assert old in text, old
    out = tmp_path / name
    out.write_text(text.replace(old, new))
    return out


def test_the_lab_needs_one_image_without_gpus_and_no_pool_vars() -> None:
    (only,) = needed(LAB)
    assert summary([only]) == [("clusterforge-node-lab-none", ("ctl", "node"), "pool_node")]
    assert only.pool_vars == {} and only.tag == f"localhost/clusterforge-node-lab-none:{only.inputs}"


def test_the_dgx_example_needs_one_nvidia_image_baked_with_its_gpu_pool_vars() -> None:
    (only,) = needed(DGX)
    assert summary([only]) == [("clusterforge-node-vision-h100-nvidia", ("gpu",), "pool_gpu")]
    assert only.pool_vars["gpu_count"] == 8 and only.pool_vars["gpu_model"] == "H100-SXM5"


def test_the_p5_example_needs_an_nvidia_image_and_one_for_its_cpu_controller() -> None:
    assert summary(needed(P5, "vendor")) == [("clusterforge-node-nlp-p5-nvidia", ("gpu",), "pool_gpu"),
                                             ("clusterforge-node-nlp-p5-none", ("controller",), "pool_controller")]


def test_the_amd_template_needs_an_amd_image_and_one_for_its_cpu_pools(cli, tmp_path: Path) -> None:
    blueprint = tmp_path / "amd.yaml"
    assert cli("new", "amd-mi300x-roce", "--set", "rocm=7.0.2", "-o", blueprint).exit_code == 0
    found = needed(blueprint, "vendor")
    assert summary(found) == [("clusterforge-node-mi300x-amd", ("gpu",), "pool_gpu"),
                              ("clusterforge-node-mi300x-none", ("ctl", "login"), "pool_ctl")]
    assert found[0].pins["rocm_version"] == "7.0.2"  # type: ignore[index]
    dry = cli("image", "build", blueprint, "--dry-run")  # --sources lab, the default
    assert dry.exit_code == 0 and "needs --sources vendor" in dry.stdout.splitlines()[0]
    refused = cli("image", "build", blueprint)  # before any host check, bake or container
    assert refused.exit_code == 2 and "no stand-ins for the amd pools' stack" in refused.stderr


def test_node_count_and_node_names_are_not_inputs(tmp_path: Path) -> None:
    before = needed(P5, "vendor")
    fewer = needed(edited(tmp_path, P5, "count: 64", "count: 8", "fewer.yaml"), "vendor")
    text = P5.read_text().replace("{name: gpu,", "{name: trainer,").replace("pools: [gpu]", "pools: [trainer]")
    assert text != P5.read_text()
    (tmp_path / "renamed.yaml").write_text(text)
    renamed = needed(tmp_path / "renamed.yaml", "vendor")
    assert [i.inputs for i in fewer] == [i.inputs for i in before] == [i.inputs for i in renamed]
    assert renamed[0].pools == ("trainer",)


def test_a_pin_is_an_input(tmp_path: Path) -> None:
    (before,) = needed(LAB)
    text = LAB.read_text()
    assert "software:" not in text
    pinned = tmp_path / "pinned.yaml"
    pinned.write_text(text + "software: {nccl: 2.26.2, cuda: \"12.9\"}\n")
    (after,) = needed(pinned)
    assert after.inputs != before.inputs and after.pins.pin("nccl_version") == "2.26.2"  # type: ignore[attr-defined]


def checkout_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the files a bake reads, which the bake then reads instead of this checkout's."""
    copy = tmp_path / "checkout"
    copy.mkdir()
    for part in ("site.yml", "roles", "plugins"):
        (shutil.copytree if (ROOT / part).is_dir() else shutil.copy)(ROOT / part, copy / part)
    monkeypatch.setattr("clusterforge.lab.bake.project_root", lambda: copy)
    return copy


def test_a_role_install_step_is_an_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (before,) = needed(LAB)
    copy = checkout_copy(tmp_path, monkeypatch)
    (same,) = needed(LAB)
    assert same.inputs == before.inputs  # the copy is the same checkout
    install = copy / "roles/munge/tasks/install.yml"
    install.write_text(install.read_text() + "\n- name: One more package\n  ansible.builtin.apt: {name: jq}\n")
    (after,) = needed(LAB)
    assert after.inputs != before.inputs


@pytest.mark.parametrize("part", ["roles/nvidia_driver/tasks/verify.yml", "roles/imex/tasks/packages.yml",
                                  "roles/health/files/clusterforge-health",
                                  "roles/health/files/clusterforge-health.d/70-mounts.sh"])
def test_what_the_bake_checks_and_copies_is_an_input(part: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The package checks and the health role's files run in the bake (`install`-tagged): an image made from an
    older copy of them must not be taken for a current one."""
    copy = checkout_copy(tmp_path, monkeypatch)
    (before,) = needed(LAB)
    changed = copy / part
    changed.write_text(changed.read_text() + "\n# changed\n")
    (after,) = needed(LAB)
    assert after.inputs != before.inputs


def test_sources_are_an_input() -> None:
    assert needed(DGX, "lab")[0].inputs != needed(DGX, "vendor")[0].inputs


def test_dry_run_lists_each_image_with_its_hash_and_state(cli) -> None:
    (image,) = needed(DGX)
    result = cli("image", "build", DGX, "--dry-run")
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"{image.tag}  inputs {image.inputs}  ")
    assert first.split("  ")[2].startswith(("would be built", "up to date"))
    assert "vendor nvidia: pools gpu; baked in every role group and pool_gpu" in result.stdout


def test_a_design_the_check_rejects_is_refused_before_anything_is_built(cli, tmp_path: Path) -> None:
    hall = ROOT / "examples/onprem-dgx-h100.yaml"
    feeds = "{name: a02-a, side: A, voltage: 415, amps: 60, phase: 3}, {name: a02-b, side: B, voltage: 415, amps: 60"
    bad = edited(tmp_path, hall, feeds, feeds.replace("voltage: 415", "voltage: 208"))  # PWR-002, as test_check_cli
    result = cli("image", "build", bad, "--dry-run")
    assert result.exit_code == 2  # as `lab up` and the stack refuse it
    assert "PWR-002" in result.stderr and "the image build refused: the policy check has 1 unwaived error" in \
        result.stderr
    assert "localhost/clusterforge-node" not in result.stdout


def test_help_names_the_sources_and_examples(cli) -> None:
    result = cli("image", "build", "--help")
    text = " ".join(result.stdout.split())
    assert result.exit_code == 0
    assert "--sources" in text and "without the vendors' repositories" in text
    assert "--dry-run" in text and "Examples:" in text


def test_pools_that_pin_their_own_software_get_an_image_of_their_own(tmp_path: Path) -> None:
    text = LAB.read_text()
    pool = "  - {name: node, hardware: lab-node, count: 2, role: compute, partition: debug}\n"
    assert pool in text and "pools: [node]" in text
    text = text.replace(pool, pool + '  - {name: big, hardware: lab-node, count: 1, role: compute, partition: debug, '
                        'software: {nccl: 2.26.2, cuda: "12.9"}}\n').replace("pools: [node]", "pools: [node, big]")
    (tmp_path / "two.yaml").write_text(text)
    plain, own = needed(tmp_path / "two.yaml")
    assert summary([plain, own]) == [("clusterforge-node-lab-none", ("ctl", "node"), "pool_node"),
                                     ("clusterforge-node-lab-none-big", ("big",), "pool_big")]
    assert plain.inputs == needed(LAB)[0].inputs
    assert own.pins.pin("nccl_version") == "2.26.2" and own.pool_vars["nccl_version"] == "2.26.2"  # type: ignore[attr-defined]


def test_the_bake_inventory_is_the_labs_and_carries_the_pool_vars_when_given(tmp_path: Path) -> None:
    from clusterforge.lab.bake import Recipe, write_inventory
    from clusterforge.render.yamlout import load

    rendered_dir = tmp_path / "render"
    (rendered_dir / "inventory/group_vars").mkdir(parents=True)
    (rendered_dir / "inventory/group_vars/all.yml").write_text("clusterforge_cluster: x\n")
    (rendered_dir / "inventory/group_vars/pool_gpu.yml").write_text("nccl_version: 2.26.2\n")
    lab = write_inventory(Recipe(rendered_dir, "localhost/x:1"), tmp_path / "lab")
    assert lab.read_text() == "all:\n  children:\n" + "".join(
        f"    {g}:\n      hosts:\n        bake: {{}}\n" for g in ("slurm_controller", "slurm_compute", "slurm_login"))
    pool = write_inventory(Recipe(rendered_dir, "localhost/x:1", pool_group="pool_gpu",
                                  pool_vars={"gpu_count": 8, "gpu_model": "{{ lookup('pipe', 'id') }}"}),
                           tmp_path / "pool")
    assert "gpu_model: !unsafe " in pool.read_text()  # a catalog's string is data, never a template
    children = load(pool.read_text())["all"]["children"]
    assert children["pool_gpu"] == {"hosts": {"bake": {}},
                                    "vars": {"gpu_count": 8, "gpu_model": "{{ lookup('pipe', 'id') }}"}}
    assert set(children) == {"slurm_controller", "slurm_compute", "slurm_login", "pool_gpu"}
    assert (tmp_path / "pool/group_vars/pool_gpu.yml").read_text() == "nccl_version: 2.26.2\n"


def test_without_podman_the_build_is_an_input_error_and_the_dry_run_still_answers() -> None:
    import subprocess
    import sys

    env = {"PATH": "/nonexistent", "HOME": str(Path.home())}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "clusterforge", "image", "build", str(DGX), *args], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=120, check=False)

    built = run()
    assert built.returncode == 2 and "missing podman" in built.stderr and "Traceback" not in built.stderr
    dry = run("--dry-run")
    assert dry.returncode == 0 and "would be built (podman is not installed here)" in dry.stdout


def test_pruning_a_repository_leaves_the_other_names_of_its_images(monkeypatch: pytest.MonkeyPatch) -> None:
    """The product's tag and the lab's name one image: pruning either repository keeps the other's tag."""
    import subprocess

    from clusterforge.lab import image, podman

    removed: list[str] = []
    listing = ("localhost/clusterforge-node-lab-none:new\nlocalhost/cf-lab-baked:abc\n"
               "localhost/clusterforge-node-lab-none:old\n")

    def run(args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        if args[0] == "rmi":
            removed.append(args[1])
        return subprocess.CompletedProcess(args, 0, listing if args[0] == "images" else "", "")

    monkeypatch.setattr(podman, "run", run)
    image.prune("localhost/clusterforge-node-lab-none", "localhost/clusterforge-node-lab-none:new")
    assert removed == ["localhost/clusterforge-node-lab-none:old"]


def test_images_are_bootable_by_default_and_bootable_is_an_input() -> None:
    (bootable,) = needed(LAB)
    (container,) = needed(LAB, bootable=False)
    assert bootable.bootable and not container.bootable
    assert bootable.inputs != container.inputs and bootable.name == container.name


def baked_recipe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bootable: bool) -> object:
    """The recipe `image build` hands the bake for the lab's blueprint, with nothing baked or started."""
    from clusterforge.image import build
    from clusterforge.lab import bake, labvars, repo
    from clusterforge.lab.paths import LabPaths

    (found,) = needed(LAB, bootable=bootable)
    recipes: list[object] = []
    monkeypatch.setattr(repo, "ensure", lambda pins, folder, say: tmp_path)
    monkeypatch.setattr(labvars, "write", lambda paths, lab_repo: None)
    monkeypatch.setattr(bake, "bake_inputs", lambda node_image, pins, rendered: "labhash")
    monkeypatch.setattr(bake, "ensure_baked",
                        lambda paths, node_image, recipe, say, on_event: recipes.append(recipe) or True)
    build._bake(LabPaths.of("cf-image-test"), "node", tmp_path, found, lambda _: None, None)
    return recipes[0]


def test_only_a_not_bootable_lab_image_is_the_labs_baked_image(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    from clusterforge.image import bootable

    container = baked_recipe(monkeypatch, tmp_path, bootable=False)
    assert container.equivalent == ("localhost/cf-lab-baked:labhash",)  # type: ignore[attr-defined]
    assert container.finish == ()  # type: ignore[attr-defined]
    server = baked_recipe(monkeypatch, tmp_path, bootable=True)
    assert server.equivalent == ()  # type: ignore[attr-defined]  # the lab's image has no kernel: bake
    assert server.finish == bootable.STEPS  # type: ignore[attr-defined]


def test_the_bootable_steps_install_the_kernel_and_make_its_initramfs() -> None:
    from clusterforge.image import bootable

    script = " ".join(" ".join(step) for step in bootable.STEPS)
    assert bootable.KERNEL == "linux-image-amd64" and bootable.KERNEL in bootable.PACKAGES
    assert {"initramfs-tools", "kmod", "udev", "ifupdown", "nfs-common"} <= set(bootable.PACKAGES)
    assert "update-initramfs -c -k" in script and "/boot/vmlinuz-" in script and "/boot/initrd.img-" in script
    assert "systemctl unmask" in script  # the lab container's masks (sysctl, modules-load) do not hold on a server


def test_dry_run_says_whether_an_image_is_bootable(cli) -> None:
    (server,) = needed(LAB)
    (container,) = needed(LAB, bootable=False)
    default = cli("image", "build", LAB, "--dry-run")
    assert default.exit_code == 0 and default.stdout.startswith(f"{server.tag}  ")
    assert "bootable: kernel linux-image-amd64" in default.stdout
    plain = cli("image", "build", LAB, "--dry-run", "--no-bootable")
    assert plain.exit_code == 0 and plain.stdout.startswith(f"{container.tag}  ")
    assert "not bootable (for containers)" in plain.stdout and "linux-image" not in plain.stdout


def test_an_image_the_labs_newer_bake_overtook_is_pointed_at_it(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    """The lab baked the same recipe again (its node image or repository changed since the product's tag was made):
    `image build` moves the product's tag to the lab's image instead of calling the old one up to date."""
    import subprocess

    from clusterforge.image import build
    from clusterforge.lab import bake, image, podman, repo

    (found,) = needed(LAB, bootable=False)
    labs = f"{bake.BAKED_REPO}:labhash"
    ids = {found.tag: "old", labs: "new", image.BASE_IMAGE: "base", "node": "node"}
    calls: list[list[str]] = []

    def run(args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        if args[0] == "tag":
            ids[args[2]] = ids[args[1]]
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(podman, "exists", lambda kind, name: name in ids)
    monkeypatch.setattr(podman, "inspect", lambda kind, name: {"Id": ids[name]})
    monkeypatch.setattr(podman, "run", run)
    monkeypatch.setattr(build, "podman_found", lambda: True)
    monkeypatch.setattr(repo, "index", lambda pins: b"")
    monkeypatch.setattr(image, "node_image_tag", lambda: "node")
    monkeypatch.setattr(bake, "bake_inputs", lambda node_image, pins, rendered: "labhash")
    (moved,) = build.build(tmp_path, [found], lambda _: None, None)
    assert moved.state == build.UP_TO_DATE and labs in moved.note
    assert ids[found.tag] == "new" and ["rmi", "old"] in calls
    calls.clear()
    (again,) = build.build(tmp_path, [found], lambda _: None, None)  # now one image: nothing to move
    assert again.note == "" and calls == []
