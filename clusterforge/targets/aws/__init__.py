"""Target aws: a blueprint's Pulumi program for GPU clusters (EFA, placement, Capacity Blocks, FSx).

The design (`design`, `layout`, `addressing`, `userdata`, `guard`, `inventory`) is pure Python and imports
without Pulumi, so the CLI can turn stack outputs into an inventory on a machine without the `aws` extra.
`components` and `program` need `pulumi` and `pulumi-aws` (`pip install 'clusterforge[aws]'`).
The target's own rules (EFA, FSx, security) are in `rules`, the CrossGuard pack in `crossguard`. Its part of the
catalog is here too: its kind of instance type (`instance`), software tables (`software`) and price tables
(`prices`), filled from `data/` (instance types, prices, software rows, each with its source); so is the power-save
provider the controller's programs launch its instances with (`powersave`).
"""

from __future__ import annotations

from clusterforge.target_kernel.protocol import Target
from clusterforge.targets.aws.instance import Ec2Instance

TARGET = Target(name="aws", title="AWS", hardware=Ec2Instance)
