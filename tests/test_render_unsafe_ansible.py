"""Blueprint text with Jinja in it reaches Ansible as data: real `ansible-inventory` and a local play over the
rendered inventory read every value back literally, and the command inside never runs. Fast: no containers.

The description passes the model as it is (free text); the other values are put past the model (model_copy,
a replaced plan) so the renderer's own defence is what is tested, whatever the model accepts.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clusterforge.blueprint.load import Loaded, load_blueprint
from clusterforge.plan import build_plan
from clusterforge.policies.config_file import load_policy_config
from clusterforge.render import RenderContext, write
from clusterforge.target_kernel import load_catalog
from tests.conftest import EXAMPLES, ROOT

BIN = Path(sys.executable).parent


def payloads(marker: Path) -> dict[str, str]:
    return {
        "pipe": f"{{{{ lookup('pipe', 'touch {marker}') }}}}",
        "statement": f"{{% set x = lookup('pipe', 'touch {marker}') %}}done {{# note #}}",
        "file": "{{ lookup('file', '/etc/shadow') }}",
    }


def render_hostile(tmp_path: Path, marker: Path) -> tuple[Path, dict[str, str]]:
    """The example blueprint with a payload in the description, the Lustre mount options and the GPU model."""
    texts = payloads(marker)
    source = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
    blueprint = tmp_path / "bp.yaml"
    described = f"name: vision-h100\ndescription: {json.dumps(texts['pipe'])}\n"
    blueprint.write_text(source.replace("name: vision-h100\n", described, 1))
    loaded = load_blueprint(blueprint, load_catalog([]))
    assert loaded.cluster.description == texts["pipe"]
    lustre = loaded.cluster.storage.lustre
    assert lustre is not None
    storage = loaded.cluster.storage.model_copy(
        update={"lustre": lustre.model_copy(update={"mount_options": texts["statement"]})})
    cluster = loaded.cluster.model_copy(update={"storage": storage})
    plan = build_plan(cluster, loaded.catalog, load_policy_config(None))
    plan = dataclasses.replace(plan, nodes=tuple(dataclasses.replace(p, gpu_model=texts["file"]) for p in plan.nodes))
    out = tmp_path / "render"
    write(RenderContext(Loaded(cluster, loaded.source, loaded.catalog), plan, out / "pulumi"), out)
    return out, texts


def ansible_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "ansible-home"
    return {**os.environ, "ANSIBLE_HOME": str(home), "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
            "ANSIBLE_REMOTE_TEMP": str(home / "remote"), "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
            "ANSIBLE_ROLES_PATH": str(ROOT / "roles"), "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(home / "facts"),
            "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0"}


PLAY = """\
- name: Values from the rendered inventory, as the roles use them
  hosts: gpu-0001
  connection: local
  gather_facts: false
  vars:
    ansible_python_interpreter: "{{ ansible_playbook_python }}"
  tasks:
    - name: The common role writes its login banner
      ansible.builtin.include_role:
        name: common
        tasks_from: motd
      vars:
        common_motd_path: "{{ probe_dir }}/motd"
    - name: Values are joined, compared and written into a file as the roles do
      ansible.builtin.copy:
        dest: "{{ probe_dir }}/values.json"
        content: "{{ {'description': clusterforge_description, 'options': lustre_client_mount_options,
                      'model': gpu_model, 'joined': [clusterforge_description, gpu_model] | join('|'),
                      'same': clusterforge_description == clusterforge_description ~ '',
                      'config_dir': slurm_config_dir} | to_json }}"
        mode: "0600"
"""


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    marker = tmp_path / "marker"
    out, texts = render_hostile(tmp_path, marker)
    return out, texts, marker


def test_ansible_inventory_reads_every_value_literally(hostile, tmp_path: Path) -> None:
    out, texts, marker = hostile
    result = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(out / "inventory" / "hosts.yml"), "--list"],
                            capture_output=True, text=True, check=False, env=ansible_env(tmp_path))
    assert result.returncode == 0, result.stderr
    host = json.loads(result.stdout)["_meta"]["hostvars"]["gpu-0001"]
    assert host["clusterforge_description"] == {"__ansible_unsafe": texts["pipe"]}
    assert host["lustre_client_mount_options"] == {"__ansible_unsafe": texts["statement"]}
    assert host["gpu_model"] == {"__ansible_unsafe": texts["file"]}
    assert not marker.exists()


def test_a_play_sees_the_literal_text_and_runs_nothing(hostile, tmp_path: Path) -> None:
    out, texts, marker = hostile
    probe = tmp_path / "probe"
    probe.mkdir()
    playbook = tmp_path / "play.yml"
    playbook.write_text(PLAY)
    result = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(out / "inventory" / "hosts.yml"), "-l", "gpu-0001",
         "-e", json.dumps({"probe_dir": str(probe)}), str(playbook)],
        capture_output=True, text=True, check=False, env=ansible_env(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (probe / "motd").read_text() == f"clusterforge cluster vision-h100\n{texts['pipe']}\n"
    values = json.loads((probe / "values.json").read_text())
    assert values == {"description": texts["pipe"], "options": texts["statement"], "model": texts["file"],
                      "joined": f"{texts['pipe']}|{texts['file']}", "same": True,
                      "config_dir": str(out / "inventory" / ".." / "slurm")}
    assert not marker.exists()
    assert "root:" not in (probe / "values.json").read_text() + result.stdout
