"""The known answer of clusterforge-gpu-perf (roles/health/files/clusterforge-gpu-perf.cu), computed on the CPU.

The program multiplies two N x N matrices of entries in {-1, 0, 1} made by splitmix64 and hashes the product. Every
partial sum is a small integer, exact in fp32 in any order, so the product and its hash are the same on every
healthy GPU; this module recomputes them from the program's definition with numpy, so that the checksum the role
records (health_perf_checksum) is known to be the right answer rather than whatever one GPU printed.
"""

from __future__ import annotations

import numpy as np

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 over an array of uint64, wrapping as the C++ does."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def trits(which: int, n: int) -> np.ndarray:
    """Matrix `which` (0: A, 1: B) as the program lays it out: column-major entries in {-1, 0, 1}."""
    index = np.arange(n * n, dtype=np.uint64)
    flat = (splitmix64((np.uint64(which) << np.uint64(40)) ^ index) % np.uint64(3)).astype(np.int64) - 1
    return flat.reshape(n, n).T  # element [row, column] of the column-major array


def product(n: int) -> np.ndarray:
    """C = A x B exactly (float32 sums of integers below 2^24 are exact)."""
    return trits(0, n).astype(np.float32) @ trits(1, n).astype(np.float32)


def checksum(c: np.ndarray) -> str:
    """The program's hash of C: sum over column-major positions of splitmix64(position << 32 | value as uint32)."""
    values = c.T.reshape(-1).astype(np.int64).astype(np.uint32).astype(np.uint64)
    positions = np.arange(values.size, dtype=np.uint64)
    mixed = splitmix64((positions << np.uint64(32)) | values)
    with np.errstate(over="ignore"):
        total = int(mixed.sum(dtype=np.uint64)) & int(_MASK)
    return f"{total:016x}"


if __name__ == "__main__":  # print the checksum for a size: python3 benchmarks/gpu_perf_reference.py 4096 (numpy)
    import sys

    print(checksum(product(int(sys.argv[1]) if len(sys.argv) > 1 else 4096)))
