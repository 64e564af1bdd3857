"""The local lab: a multi-node SLURM cluster in podman containers, provisioned by the bare-metal roles.

Modules: `paths` (where things live), `podman` (the one place that runs podman), `host` (prerequisites),
`image` (mmdebstrap base, node and baked images), `repo` (the local apt repository for vendor packages),
`state` (what a running lab is made of), `nodes` (containers and SSH), `cluster` (up, provision, down).
"""
