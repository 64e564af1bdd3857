"""The node image as the engine sees it: Image Builder bakes the roles' install steps from the base AMI, the
launch templates boot the result, and nodes run the boot phase from user data with the munge key from SSM, which
the first controller to boot makes: no resource of the stack, and so nothing in its state, holds the key."""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.powersave.payload import controller_modules
from clusterforge.targets.aws.bake import bake_hash
from clusterforge.targets.aws.image_bundle import digest, roles_bundle
from clusterforge.targets.aws.userdata import NodeIdentity, cloud_config
from clusterforge.targets.aws.userdata_boot import BootSource, boot_script
from tests.aws.blueprints import example, write
from tests.aws.conftest import (
    DLAMI,
    EXAMPLES,
    PINNED,
    ROOT,
    Recorder,
    Run,
    baked_ami,
    build_blueprint,
    build_example,
    run_main,
)
from tests.aws.test_trainium import trn2

LT = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
COMPONENT = "aws:imagebuilder/component:Component"
RECIPE = "aws:imagebuilder/imageRecipe:ImageRecipe"
INFRA = "aws:imagebuilder/infrastructureConfiguration:InfrastructureConfiguration"
IMAGE = "aws:imagebuilder/image:Image"
PARAMETER = "aws:ssm/parameter:Parameter"
OBJECT = "aws:s3/bucketObjectv2:BucketObjectv2"
Stack = Callable[..., Run]


def arn(typ: str, name: str) -> str:
    return f"arn:aws:mock:::{typ}/{name}-id"  # the recorder's ARN for a resource


def document(rec: Recorder, name: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(rec.one(COMPONENT, name).inputs["data"])
    return data


def steps(rec: Recorder) -> dict[str, Any]:
    return {step["name"]: step for step in document(rec)["phases"][0]["steps"]}


def commands(rec: Recorder) -> str:
    return "\n".join(c for step in steps(rec).values() if step["action"] == "ExecuteBash"
                     for c in step["inputs"]["commands"])


def bake_vars(rec: Recorder, name: str) -> str:
    """The build vars object of an image, as the build downloads it."""
    return base64.b64decode(rec.one(OBJECT, name).inputs["contentBase64"]).decode()


def members(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def test_the_image_is_baked_from_the_base_ami_and_boots_every_pool(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    recipe = rec.one(RECIPE)
    assert recipe.inputs["parentImage"] == DLAMI
    assert recipe.inputs["components"] == [{"componentArn": arn(COMPONENT, "compute-image-nvidia-component")}]
    image = rec.one(IMAGE, "compute-image-nvidia")
    assert image.inputs["imageRecipeArn"] == arn(RECIPE, "compute-image-nvidia-recipe")
    assert image.inputs["infrastructureConfigurationArn"] == arn(INFRA, "compute-image-infrastructure")
    ami = image.outputs["outputResources"][0]["amis"][0]["image"]
    templates = rec.of_type(LT)
    assert len(templates) == 2 and {t.inputs["imageId"] for t in templates} == {ami}
    assert ami == baked_ami("compute-image-nvidia")


def test_the_component_runs_the_install_steps_locally_then_removes_identity(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    build = steps(rec)
    bundle = build["RolesBundle"]["inputs"][0]
    assert bundle["source"] == f"s3://nlp-p5-boot-20261121/roles/{digest(roles_bundle())[:16]}.tar.gz"
    roles = rec.one(OBJECT, "compute-image-roles").inputs
    assert roles["key"] == bundle["source"].split("/", 3)[3] and base64.b64decode(roles["contentBase64"]) == (
        roles_bundle())
    files = {f["path"]: f["content"] for f in build["BakeVars"]["inputs"]}
    hosts = yaml.safe_load(files["/opt/clusterforge/bake/inventory/hosts.yml"])["all"]["children"]
    assert set(hosts) == {"slurm_controller", "slurm_compute", "slurm_login"}  # stands in for every host
    [_, downloaded] = build["RolesBundle"]["inputs"]
    assert downloaded["destination"] == "/opt/clusterforge/bake/inventory/group_vars/all.yml"
    group_vars = bake_vars(rec, "compute-image-nvidia-vars")
    key = rec.one(OBJECT, "compute-image-nvidia-vars").inputs["key"]
    assert downloaded["source"] == f"s3://nlp-p5-boot-20261121/{key}" and key.startswith("bake-vars/nvidia-")
    assert "nvidia_driver_version: !unsafe 595.91.07" in group_vars and "gpu_count: 8" in group_vars
    [install] = [c for c in build["Install"]["inputs"]["commands"] if "ansible-playbook" in c]
    assert " -c local " in install and " site.yml --tags install" in install
    cleanup = "\n".join(build["Identity"]["inputs"]["commands"])
    assert "/etc/ssh/ssh_host_*" in cleanup and "/etc/munge/munge.key" in cleanup and "/etc/machine-id" in cleanup
    assert list(build) == ["Ansible", "RolesBundle", "Unpack", "BakeVars", "Install", "Identity"]


def test_the_build_runs_in_the_stacks_subnet_with_its_own_role(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    infra = rec.one(INFRA).inputs
    assert infra["subnetId"] == "network-private-use1-az4-id"
    assert infra["securityGroupIds"] == ["network-cluster-sg-id"] and infra["instanceTypes"] == ["c7i.2xlarge"]
    assert infra["instanceProfileName"] == "compute-image-build-profile-auto"
    assert infra["instanceMetadataOptions"] == {"httpTokens": "required", "httpPutResponseHopLimit": 1}
    attached = {a.inputs["policyArn"] for a in rec.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                if a.inputs["role"] == "compute-image-build-role-auto"}
    assert attached == {"arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
                        "arn:aws:iam::aws:policy/EC2InstanceProfileForImageBuilder"}
    [read] = json.loads(rec.one("aws:iam/rolePolicy:RolePolicy", "compute-image-build-roles-bundle")
                        .inputs["policy"])["Statement"]
    assert read["Action"] == "s3:GetObject" and read["Resource"][0] == "arn:aws:s3:::nlp-p5-boot-20261121/roles/*"
    tags = {"clusterforge:cluster": "nlp-p5", "managed-by": "clusterforge", "clusterforge:team": "nlp"}
    for typ in (COMPONENT, RECIPE, INFRA, IMAGE):
        assert tags.items() <= rec.one(typ).inputs["tags"].items(), typ
    assert tags.items() <= rec.one(RECIPE).inputs["amiTags"].items() and infra["resourceTags"] == tags
    big = stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml"), "imageInstanceType": "c7i.4xlarge"}))
    assert big.recorder.one(INFRA).inputs["instanceTypes"] == ["c7i.4xlarge"]  # the stack config's


def test_a_pinned_ami_bakes_nothing_and_keeps_identity_only_user_data(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["aws"]["ami"] = PINNED
    rec = stack(build_blueprint(write(tmp_path, data))).recorder
    assert not [r for r in rec.resources if r.typ.startswith("aws:imagebuilder/")]
    assert not rec.of_type(PARAMETER) and not rec.of_type(OBJECT)
    assert {t.inputs["imageId"] for t in rec.of_type(LT)} == {PINNED}
    user_data = yaml.safe_load(rec.named("compute-gpu-0001").inputs["userData"])
    assert "runcmd" not in user_data and len(user_data["write_files"]) == 1


def bundle_root(tmp_path: Path) -> Path:
    """A copy of the checkout's roles (CLUSTERFORGE_ANSIBLE_DIR), so a test can change an install step."""
    root = tmp_path / "checkout"
    for name in ("site.yml", "ansible.cfg", *controller_modules(ROOT)):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, root / name)
    for name in ("roles", "plugins"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_the_bake_name_follows_the_install_steps_not_the_node_count(stack: Stack, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERFORGE_ANSIBLE_DIR", str(bundle_root(tmp_path)))
    data = example("aws-p5")

    def recipe_name(count: int) -> str:
        data["pools"][0]["count"] = count
        rec = stack(build_blueprint(write(tmp_path, data))).recorder
        name = rec.one(RECIPE).inputs["name"]
        assert rec.one(COMPONENT).inputs["name"] == name and rec.one(RECIPE).inputs["version"] == "1.0.0"
        assert isinstance(name, str) and name.startswith("nlp-p5-nvidia-")
        return name

    first = recipe_name(64)
    assert recipe_name(32) == first  # fewer nodes: the same image
    install = tmp_path / "checkout" / "roles" / "munge" / "tasks" / "install.yml"
    install.write_text(install.read_text() + "\n# a changed install step\n")
    changed = recipe_name(32)
    assert changed != first
    assert bake_hash("document", DLAMI) != bake_hash("document", PINNED)  # and a new parent image


def test_the_roles_bundle_is_deterministic_and_holds_every_role() -> None:
    bundle = roles_bundle()
    assert roles_bundle() == bundle
    names = members(bundle)
    roles = sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir())
    assert len(roles) > 10
    plugin = "collections/ansible_collections/clusterforge/cluster/plugins/filter/packages.py"  # beside site.yml
    assert {"site.yml", "ansible.cfg", plugin} <= set(names)
    assert all(f"roles/{role}/tasks/main.yml" in names for role in roles)
    assert names["site.yml"] == (ROOT / "site.yml").read_bytes()
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    with tarfile.open(fileobj=io.BytesIO(bundle), mode="r:gz") as tar:
        assert {(m.mtime, m.uid, m.gid) for m in tar.getmembers()} == {(0, 0, 0)}


def test_nodes_boot_the_roles_boot_phase_and_never_carry_the_munge_key(stack: Stack) -> None:
    """The controller's own user data and the GPU pool's launch template (one for all its nodes) both run the
    boot phase; neither carries a key, both fit EC2's 16 KB."""
    rec = stack(build_example("aws-p5")).recorder
    [controller] = rec.of_type(INSTANCE)
    pool = base64.b64decode(rec.one(LT, "compute-gpu-lt").inputs["userData"]).decode()
    for text in (controller.inputs["userData"], pool):
        assert len(text.encode()) < 16 * 1024  # EC2's user-data limit
        files = {f["path"]: f["content"] for f in yaml.safe_load(text)["write_files"]}
        script = files["/usr/local/sbin/clusterforge-boot"].replace("\\\n", "")
        [run] = [line for line in script.splitlines() if "bin/ansible-playbook" in line]
        assert " -c local " in run and ' site.yml --skip-tags install --limit "$CLUSTERFORGE_NODE" ' in run
    node = yaml.safe_load(pool)
    env = node["write_files"][0]["content"]
    assert "CLUSTERFORGE_MUNGE_PARAMETER=/clusterforge/nlp-p5/munge-key\n" in env
    assert "CLUSTERFORGE_BOOT_BUCKET=nlp-p5-boot-20261121\n" in env  # the mock names it by its prefix
    inventory = yaml.safe_load(node["write_files"][1]["content"])["all"]["children"]
    assert inventory == {"slurm_compute": {"children": {"pool_gpu": {}}},
                         "pool_gpu": {"hosts": {"clusterforge-node-name": {}}}}  # the identify script fills it in
    assert node["runcmd"] == [["sh", "-c",
                               "/usr/local/sbin/clusterforge-identify && /usr/local/sbin/clusterforge-boot"]]
    assert any("169.254.169.254" in " ".join(c) and "--uid-owner 0" in " ".join(c) for c in node["bootcmd"])
    own = yaml.safe_load(controller.inputs["userData"])
    assert own["runcmd"] == [["/usr/local/sbin/clusterforge-boot"]] and own["hostname"] == "controller-0001"


def test_no_resource_holds_a_munge_key(stack: Stack) -> None:
    """Whatever the program declares reaches the state, which every role that previews the stack can decrypt:
    no parameter, no secret, no input that looks like a key."""
    rec = stack(build_example("aws-p5")).recorder
    assert not rec.of_type(PARAMETER) and not [r for r in rec.resources if r.typ.startswith("aws:secretsmanager")]
    for resource in rec.resources:  # a secret reaches the engine wrapped under Pulumi's signature key
        assert SECRET_SIGNATURE not in json.dumps(resource.inputs, default=str), resource.name


SECRET_SIGNATURE = "1b47061264138c4ac30d75fd1eb44270"  # pulumi.runtime.rpc: what marks a secret value


def _policy(rec: Recorder, name: str) -> list[dict[str, Any]]:
    statements: list[dict[str, Any]] = json.loads(rec.one("aws:iam/rolePolicy:RolePolicy", name).inputs["policy"])[
        "Statement"]
    return statements


MUNGE_ARN = "arn:aws:ssm:us-east-1:*:parameter/clusterforge/nlp-p5/munge-key"


def test_nodes_read_the_config_and_the_key_and_change_neither(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    assert [(s["Action"], s["Resource"]) for s in _policy(rec, "compute-nodes-boot")] == [
        ("s3:GetObject", ["arn:aws:s3:::nlp-p5-boot-20261121/node-config.tar.gz",
                          "arn:aws:s3:::nlp-p5-boot-20261121/node-map/*"]),  # its name: its batch's map
        ("ssm:GetParameter", MUNGE_ARN)]


def test_only_the_controllers_may_make_the_key_and_never_replace_it(stack: Stack, tmp_path: Path) -> None:
    rec = stack(build_example("aws-p5")).recorder
    made = _policy(rec, "compute-controller-boot")
    assert made[:2] == _policy(rec, "compute-nodes-boot")
    assert made[2:] == [{"Sid": "WriteNodeMaps", "Effect": "Allow", "Action": "s3:PutObject",
                         "Resource": "arn:aws:s3:::nlp-p5-boot-20261121/node-map/*"},
                        {"Sid": "MakeMungeKeyOnce", "Effect": "Allow", "Action": "ssm:PutParameter",
                         "Resource": MUNGE_ARN, "Condition": {"StringEquals": {"ssm:Overwrite": "false"}}}]
    profile = rec.one(LT, "compute-controller-lt").inputs["iamInstanceProfile"]["arn"]
    assert profile == arn("aws:iam/instanceProfile:InstanceProfile", "compute-controller-profile")
    keyed = stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml"), "kmsKeyArn": KMS})).recorder
    assert _policy(keyed, "compute-controller-boot")[-1] == {
        "Sid": "EncryptMungeKey", "Effect": "Allow", "Action": "kms:Encrypt", "Resource": KMS}
    env = yaml.safe_load(keyed.of_type(INSTANCE)[0].inputs["userData"])["write_files"][0]["content"]
    assert f"CLUSTERFORGE_MUNGE_KMS_KEY={KMS}\n" in env
    data = example("aws-p5")  # no pool SLURM launches: the controllers still get a role of their own
    for pool in data["pools"]:
        pool.pop("max_count", None)
    rec = stack(build_blueprint(write(tmp_path, data))).recorder
    assert "compute-controller-boot" in {r.name for r in rec.of_type("aws:iam/rolePolicy:RolePolicy")}


KMS = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def test_the_node_config_holds_the_vars_and_the_slurm_files(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    config = rec.one(OBJECT, "compute-image-config").inputs
    assert config["key"] == "node-config.tar.gz"
    files = members(base64.b64decode(config["contentBase64"]))
    assert set(files) == {"inventory/group_vars/all.yml", "inventory/group_vars/pool_gpu.yml",
                          "inventory/group_vars/pool_controller.yml", "slurm/slurm.conf", "slurm/cgroup.conf",
                          "slurm/gres.conf", "slurm/plugstack.conf", "slurm/clusterforge-powersave.json"}
    assert b"gpu_count: 8" in files["inventory/group_vars/pool_gpu.yml"]
    assert b"NodeName=gpu-[0001-0064]" in files["slurm/slurm.conf"]
    assert b"State=CLOUD" in files["slurm/slurm.conf"]  # slurmctld launches them: the controller's programs
    [group] = json.loads(files["slurm/clusterforge-powersave.json"])["groups"]
    assert group["launch"]["launch_template"] == "nlp-p5-gpu"


def test_one_image_per_accelerator_vendor(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["pools"].append(trn2()["pools"][0])
    rec = stack(build_blueprint(write(tmp_path, data))).recorder
    assert sorted(i.name for i in rec.of_type(IMAGE)) == ["compute-image-aws", "compute-image-nvidia"]
    images = {t.inputs["tags"]["clusterforge:pool"]: t.inputs["imageId"] for t in rec.of_type(LT)}
    assert images == {"gpu": baked_ami("compute-image-nvidia"), "controller": baked_ami("compute-image-nvidia"),
                      "trn": baked_ami("compute-image-aws")}
    trainium = bake_vars(rec, "compute-image-aws-vars")
    assert "gpu_vendor: !unsafe aws" in trainium and "gpu_count: 16" in trainium


def test_the_boot_script_is_valid_shell_and_drains_on_failure(tmp_path: Path) -> None:
    script = tmp_path / "boot"
    script.write_text(boot_script())
    assert subprocess.run(["sh", "-n", str(script)], capture_output=True).returncode == 0
    text = script.read_text()
    assert "/var/log/clusterforge-boot.log" in text and "State=DRAIN" in text and 'rm -f "$SECRETS"' in text
    identity = NodeIdentity("c", "controller-0001", "controller", "controller", "controller-0001", None)
    own = yaml.safe_load(cloud_config(identity, BootSource("us-east-1", "b", "node-config.tar.gz", "/p")))
    assert yaml.safe_load(own["write_files"][1]["content"])["all"]["children"] == {
        "slurm_controller": {"hosts": {"controller-0001": {}}}, "pool_controller": {"hosts": {"controller-0001": {}}}}


def test_no_blueprint_text_reaches_the_build_document(stack: Stack, tmp_path: Path) -> None:
    """AWSTOE resolves `{{ ... }}` in a component's step inputs: the blueprint's free text travels in the vars
    object the build downloads as bytes, never in the document."""
    data = example("aws-p5")
    data["description"] = "{{ build.Ansible.outputs.stdout }} and {{ aws:secretsmanager:x }}"
    rec = stack(build_blueprint(write(tmp_path, data))).recorder
    assert "{{" not in rec.one(COMPONENT).inputs["data"]
    assert '!unsafe "{{ build.Ansible.outputs.stdout }}' in bake_vars(rec, "compute-image-nvidia-vars")
    read = json.loads(rec.one("aws:iam/rolePolicy:RolePolicy", "compute-image-build-roles-bundle").inputs["policy"])
    assert read["Statement"][0]["Resource"] == ["arn:aws:s3:::nlp-p5-boot-20261121/roles/*",
                                                "arn:aws:s3:::nlp-p5-boot-20261121/bake-vars/*"]
