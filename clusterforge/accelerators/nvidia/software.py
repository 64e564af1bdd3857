"""NVIDIA's software tables: CUDA's minimum driver per release and per major version (minor-version compatibility),
and the CUDA versions each NCCL release is built for. The rows are data with a source each (data/software.yaml
beside this file); SW-001 checks a CUDA pool's pins against them (software_checks.py)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from clusterforge.catalog.software import Release, Row


class CudaRow(Row):
    KEY = "cuda"
    DOC = ("`cuda`, `min_driver`", "the driver is at least the release's minimum")
    cuda: Release
    min_driver: Release = Field(description="oldest Linux driver of the release (CUDA release notes, Table 3)")


class CudaMajorRow(Row):
    """The driver branch minimum of a CUDA major version: under minor-version compatibility every release of the
    major runs on it (with the limits NVIDIA lists), so a newer minor than the `cuda` table knows is checked against
    it and warned about instead of refused."""

    KEY = "cuda_major"
    AFTER = "cuda"
    DOC = ("`cuda_major`, `min_driver`", "a CUDA release newer than the `cuda` rows of its major: the driver is at "
           "least the major's branch minimum (minor-version compatibility); a warning that the tables are behind when "
           "it is, an error when it is not")
    cuda_major: Release = Field(description="the major version, e.g. 13")
    min_driver: Release = Field(description="oldest Linux driver of the major (CUDA release notes, Table 2)")


class NcclRow(Row):
    KEY = "nccl"
    AFTER = "cuda_major"
    DOC = ("`nccl`, `cuda` (list)", "NCCL has a build for the pinned CUDA (same major, not newer)")
    nccl: Release
    cuda: Annotated[list[Release], Field(min_length=1, max_length=50,
                                            description="CUDA versions NVIDIA builds this NCCL for")]


TABLES = (CudaRow, CudaMajorRow, NcclRow)
