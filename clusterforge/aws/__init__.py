"""The AWS stack: a blueprint's Pulumi program for GPU clusters (EFA, placement, Capacity Blocks, FSx).

The design (`design`, `layout`, `addressing`, `userdata`, `guard`, `inventory`) is pure Python and imports
without Pulumi, so the CLI can turn stack outputs into an inventory on a machine without the `aws` extra.
`components` and `program` need `pulumi` and `pulumi-aws` (`pip install 'clusterforge[aws]'`).
"""
