"""The build hook that makes the wheel a whole release: the tree every command reads beside the package (site.yml,
the roles as the clusterforge.cluster collection, the Pulumi program and policy pack, the team templates, the
lab's job) is copied into the package as `clusterforge/bundled/`, where clusterforge.files.checkout finds it when
no checkout is around the package. Everything else is in pyproject.toml."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# Relative to the checkout; MANIFEST.in puts the same into the sdist, from which the wheel is built.
BUNDLED = ("site.yml", "provisioning.yml", "ansible.cfg", "galaxy.yml", "meta", "roles", "plugins", "stacks/aws",
           "policy-pack", "templates", "examples/jobs", "requirements/lock.txt", "CHANGELOG.md")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", "venv", ".venv", "Pulumi.*.yaml")


def controller_modules() -> tuple[str, ...]:
    """What a controller gets to run the power-save programs (clusterforge/powersave/payload.py, loaded by path:
    the build need not import the package). The bundled tree holds them beside site.yml, where the slurm role
    copies them from (slurm_power_save_source), as in a checkout."""
    spec = importlib.util.spec_from_file_location("payload", HERE / "clusterforge" / "powersave" / "payload.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: tuple[str, ...] = module.controller_modules(HERE)
    return found


class BuildWithTheTree(build_py):
    """build_py, then the tree copied under the built package."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "clusterforge" / "bundled"
        for relative in (*BUNDLED, *controller_modules()):
            source, copy = HERE / relative, target / relative
            if source.is_dir():
                shutil.copytree(source, copy, ignore=SKIPPED, dirs_exist_ok=True)
            elif source.is_file():
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, copy)
            else:
                raise FileNotFoundError(f"the release needs {relative}, which this tree lacks")


setup(cmdclass={"build_py": BuildWithTheTree})
