"""Where target aws's rules also run, for the rule reference (docs/policies.md): its CrossGuard pack, which
`pulumi preview` runs from the same rules. The reference asks this module through the kernel
(`target_kernel.stage_function`)."""

from __future__ import annotations


def sections() -> list[str]:
    """The reference's sections on the pack, as lines of Markdown."""
    from clusterforge.targets.aws.crossguard.reference import crossguard  # the pack's reference: read on use

    return crossguard()
