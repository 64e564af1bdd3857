#!/usr/bin/python
"""Ansible module: one QOS, account or user in SLURM's accounting database, made to match (idempotent).

sacctmgr adds and modifies but has no "ensure": this module reads the entity first (`sacctmgr show ...
--parsable2`), compares the requested options with what the database holds, and runs `add` or `modify` only
when they differ, so a second run reports no change. Supports check mode.
"""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: slurm_sacctmgr
short_description: Ensure a SLURM cluster, QOS, account or user exists with the given options
description:
  - Reads the entity with C(sacctmgr show), compares, and adds or modifies it only when it differs.
options:
  kind:
    description: What to manage.
    type: str
    required: true
    choices: [cluster, qos, account, user]
  name:
    description: QOS, account or user name.
    type: str
    required: true
  cluster:
    description: Cluster of the association (accounts and users).
    type: str
  account:
    description: Account of a user's association.
    type: str
  options:
    description: >-
      sacctmgr options as strings, keyed as sacctmgr spells them (Priority, Preempt, MaxWall, GrpTRES, Fairshare,
      QOS, DefaultQOS, Description, Organization). List options (QOS, Preempt, Flags) compare as sets.
    type: dict
    default: {}
author: clusterforge
"""

EXAMPLES = r"""
- name: QOS high preempts low
  clusterforge.cluster.slurm_sacctmgr:
    kind: qos
    name: high
    options: {Priority: "1000", Preempt: low}
"""

RETURN = r"""
differences:
  description: The options whose value differed, with the value found (absent entity -> all of them).
  type: dict
  returned: always
"""

import shutil  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

# Options that are sets of names (order and case do not matter).
SET_OPTIONS = frozenset({"qos", "preempt", "flags"})
# Account options stored on the account record, not on its association.
ACCOUNT_RECORD = frozenset({"description", "organization"})
# Names sacctmgr's `format=` uses where they differ from the `set` option names.
FORMAT_NAMES = {"defaultqos": "DefaultQOS"}


def normalise(key, value):
    text = (value or "").strip()
    if key.lower() in SET_OPTIONS:
        return ",".join(sorted(v.strip().lower() for v in text.split(",") if v.strip()))
    return text.lower()


def show(module, sacctmgr, command, keys):
    """The entity's current values for `keys` (None when it does not exist)."""
    fields = ",".join(FORMAT_NAMES.get(k.lower(), k) for k in keys) or "Name"
    rc, out, err = module.run_command([sacctmgr, "--noheader", "--parsable2", "--readonly", *command,
                                       f"format={fields}"])
    if rc != 0:
        module.fail_json(msg=f"sacctmgr show failed: {err.strip() or out.strip()}", rc=rc)
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines:
        return None
    values = lines[0].split("|")
    return dict(zip(keys, values, strict=False)) if keys else {}


def current(module, sacctmgr, params):
    kind, name, cluster, options = params["kind"], params["name"], params["cluster"], params["options"]
    if kind == "qos":
        return show(module, sacctmgr, ["show", "qos", "where", f"name={name}"], list(options))
    if kind == "cluster":
        # the cluster's own options live on its root association
        if show(module, sacctmgr, ["show", "cluster", "where", f"name={name}"], ["Cluster"]) is None:
            return None
        if not options:
            return {}
        return show(module, sacctmgr, ["show", "association", "where", f"cluster={name}", "account=root",
                                       "user="], list(options))
    if kind == "account":
        assoc_keys = [k for k in options if k.lower() not in ACCOUNT_RECORD]
        record_keys = [k for k in options if k.lower() in ACCOUNT_RECORD]
        record = show(module, sacctmgr, ["show", "account", "where", f"name={name}"], record_keys)
        if record is None:
            return None
        assoc = show(module, sacctmgr, ["show", "association", "where", f"cluster={cluster}", f"account={name}",
                                        "user="], assoc_keys)
        return None if assoc is None else {**record, **assoc}
    return show(module, sacctmgr, ["show", "association", "where", f"cluster={cluster}",
                                   f"account={params['account']}", f"user={name}"], list(options))


def change_command(params, found, differences):
    kind, name, cluster, options = params["kind"], params["name"], params["cluster"], params["options"]
    pairs = [f"{k}={v}" for k, v in options.items() if found is None or k in differences]
    if found is None:
        if kind == "cluster":
            return ["add", "cluster", name]
        where = {"qos": [], "account": [f"cluster={cluster}"],
                 "user": [f"cluster={cluster}", f"account={params['account']}"]}[kind]
        return ["add", kind, name, *where, *pairs]
    if kind == "qos":
        return ["modify", "qos", "where", f"name={name}", "set", *pairs]
    if kind == "cluster":
        return ["modify", "account", "where", "name=root", f"cluster={name}", "set", *pairs]
    if kind == "account":
        return ["modify", "account", "where", f"name={name}", f"cluster={cluster}", "set", *pairs]
    return ["modify", "user", "where", f"name={name}", f"cluster={cluster}", f"account={params['account']}",
            "set", *pairs]


def run(module, sacctmgr, command):
    rc, out, err = module.run_command([sacctmgr, "--immediate", *command])
    if rc != 0:
        module.fail_json(msg=f"sacctmgr {' '.join(command[:2])} failed: {err.strip() or out.strip()}", rc=rc)


def main():
    module = AnsibleModule(
        argument_spec={
            "kind": {"type": "str", "required": True, "choices": ["cluster", "qos", "account", "user"]},
            "name": {"type": "str", "required": True},
            "cluster": {"type": "str"},
            "account": {"type": "str"},
            "options": {"type": "dict", "default": {}},
        },
        required_if=[("kind", "account", ["cluster"]), ("kind", "user", ["cluster", "account"])],
        supports_check_mode=True,
    )
    params = module.params
    params["options"] = {str(k): str(v) for k, v in (params["options"] or {}).items()}
    sacctmgr = shutil.which("sacctmgr") or module.fail_json(msg="sacctmgr is not installed")
    found = current(module, sacctmgr, params)
    if found is None:
        differences = dict.fromkeys(params["options"], None)
    else:
        differences = {k: found.get(k) for k, v in params["options"].items()
                       if normalise(k, found.get(k)) != normalise(k, v)}
    changed = found is None or bool(differences)
    if changed and not module.check_mode:
        run(module, sacctmgr, change_command(params, found, differences))
        if found is None and params["kind"] == "cluster" and params["options"]:
            run(module, sacctmgr, change_command(params, {}, differences))
    module.exit_json(changed=changed, differences=differences)


if __name__ == "__main__":
    main()
