"""A table shipped as YAML data (a change table, a classification) read into its pydantic model, every mistake a
Problem naming the file: one reader for every such table, so a row without its source fails alike everywhere."""

from __future__ import annotations

from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from clusterforge.core.errors import ClusterforgeError, Problem

M = TypeVar("M", bound=BaseModel)


def validated_table(model: type[M], text: str, name: str) -> M:
    """`text` as `model`; not YAML, or any other shape, is an input problem naming `name` (and the field)."""
    try:
        return model.model_validate(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise ClusterforgeError(Problem(f"is not YAML: {exc}".splitlines()[0], name)) from None
    except ValidationError as exc:
        raise ClusterforgeError([Problem(error["msg"], name, path=".".join(str(p) for p in error["loc"]))
                                 for error in exc.errors()]) from None
