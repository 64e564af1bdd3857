"""The Pulumi project a team keeps in its own repository (`clusterforge stack new aws DIR`).

It is the release's own project, `stacks/aws` (Pulumi.yaml with its config schema, the three-line `__main__.py`
that runs `clusterforge.targets.aws.stack_main`) and policy pack (`policy-pack/`: PulumiPolicy.yaml and its
`__main__.py`), copied as the checkout or the installed release ships them, with requirements pinned to this
release: `clusterforge[aws]==<version>`, under the release's lock as constraints, so the team's stack runs the
program and the rules it was tested with, and upgrading is changing one pin. A README says how to set it up.
"""

from __future__ import annotations

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.checkout import shipped

SUMMARY = "a Pulumi project for clusters on AWS, with the CrossGuard policy pack"
EXTRA = "aws"  # the release's extra the program and the pack need (pulumi, pulumi-aws, pulumi-policy, boto3)
# What the project copies from the release as it ships them: (where in the project, where in the release)
COPIED = (("Pulumi.yaml", "stacks/aws/Pulumi.yaml"), ("__main__.py", "stacks/aws/__main__.py"),
          ("policy-pack/PulumiPolicy.yaml", "policy-pack/PulumiPolicy.yaml"),
          ("policy-pack/__main__.py", "policy-pack/__main__.py"))
LOCK = "requirements/lock.txt"


def _shipped_text(relative: str) -> str:
    found = shipped(relative)
    if found is None or not found.is_file():
        raise ClusterforgeError(Problem(f"this clusterforge does not ship {relative}", hint=(
            "reinstall clusterforge from its wheel (it carries the Pulumi project), or run from a checkout")))
    return found.read_text(encoding="utf-8")


def requirements(version: str, constraints: str) -> str:
    return (f"# clusterforge {version}'s program and policy pack (its aws extra: pulumi, pulumi-aws, pulumi-policy).\n"
            "# To upgrade, run `clusterforge stack new aws <this project> --force` with the new release: it rewrites\n"
            "# both requirements.txt files and constraints.txt.\n"
            f"-c {constraints}\n"
            f"clusterforge[{EXTRA}]=={version}\n")


def files(name: str, version: str) -> dict[str, str]:
    """The project's files by their path in it, for a project folder called `name` and clusterforge `version`."""
    copied = {path: _shipped_text(source) for path, source in COPIED}
    return {
        "Pulumi.yaml": copied["Pulumi.yaml"], "__main__.py": copied["__main__.py"],
        "requirements.txt": requirements(version, "constraints.txt"),
        "constraints.txt": f"# clusterforge {version}'s lock: the releases its tests ran with.\n" + _shipped_text(LOCK),
        "README.md": README.format(name=name, version=version),
        ".gitignore": "venv/\npolicy-pack/venv/\n__pycache__/\n",
        "policy-pack/PulumiPolicy.yaml": copied["policy-pack/PulumiPolicy.yaml"],
        "policy-pack/__main__.py": copied["policy-pack/__main__.py"],
        "policy-pack/requirements.txt": requirements(version, "../constraints.txt"),
    }


README = """\
# {name}

The Pulumi project of our GPU clusters on AWS, written by `clusterforge stack new aws` (clusterforge {version}).
The program is the installed release's: `__main__.py` runs `clusterforge.targets.aws.stack_main` for this
folder, and `requirements.txt` pins the release. `policy-pack/` runs the same rules as `clusterforge check` at
`pulumi preview` and `pulumi up`.

## Set up once

```sh
python3 -m venv venv && venv/bin/pip install -r requirements.txt    # or: pulumi install
export PATH="$PWD/venv/bin:$PATH"       # the policy pack runs the python3 on PATH: it needs clusterforge too
pulumi login "s3://<state-bucket>?region=us-east-1&awssdk=v2"        # or `pulumi login --local` for a try
pulumi stack init nlp-p5 --secrets-provider "awskms://alias/<key>?region=us-east-1"
```

## A stack's config

Paths are relative to this folder. Only `blueprint` is required; `Pulumi.yaml` declares every key, so a
misspelt one is an error.

```sh
pulumi config set blueprint ../clusters/nlp-p5.yaml
pulumi config set natGateway true                      # the node image's build reaches its packages
pulumi config set --path 'catalogs[0]' ../site/catalog.yaml   # optional: as `clusterforge check --catalog`
pulumi config set policyConfig ../policy/config.yaml   # optional: as --policy-config
pulumi config set waivers ../policy/waivers.yaml       # optional: as --waivers
```

`Pulumi.nlp-p5.yaml` then holds the stack's config (commit it), for example:

```yaml
config:
  clusterforge-aws:blueprint: ../clusters/nlp-p5.yaml
  clusterforge-aws:natGateway: true
```

The project's name, `clusterforge-aws`, is the config's namespace: keep it. `clusterforge render` writes a
stack's config as `pulumi/Pulumi.<cluster>.yaml` for a project at `stacks/aws` under the folder it runs in.

## Every change

```sh
clusterforge check ../clusters/nlp-p5.yaml                  # offline, the same verdict
pulumi preview --policy-pack policy-pack --diff
pulumi up --policy-pack policy-pack
pulumi stack output --json > outputs.json
clusterforge render ../clusters/nlp-p5.yaml -o ../deploy/nlp-p5 --from-outputs outputs.json
```

A blueprint with unwaived policy errors is refused before any resource is declared.

## Upgrading clusterforge

With the new release installed, `clusterforge stack new aws . --force` here rewrites the files it wrote, the pins
included (your stacks' config and anything else in this folder stay as they are); then `pulumi preview`.
"""
