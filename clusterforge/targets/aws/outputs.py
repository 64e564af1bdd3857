"""The stack's outputs (`pulumi stack output --json`): the contract between the Pulumi program and the
inventory. The program builds them with these field names; `inventory` reads them back with this model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

OUTPUTS_VERSION = 1


class _Output(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)  # newer stacks may add outputs


class NodeOutput(_Output):
    name: str
    pool: str
    role: str
    instance_type: str
    instance_id: str
    private_ip: str


class LaunchTemplateOutput(_Output):
    """A pool slurmctld launches: its launch template, and how many nodes it may run (none are in `nodes`)."""

    pool: str
    name: str
    launch_template_id: str
    instance_type: str
    nodes: int


class ControllerOutput(_Output):
    """The controller the stack built; or a hybrid's on-prem controller (`on_premises`), whose address is the
    stack config's `controllerAddress` (None: not given) and whose AWS identity is the IAM user `iam_user`."""

    name: str
    private_ip: str | None = None
    on_premises: bool = False
    iam_user: str | None = None
    boot_bucket: str | None = None  # where its resume program writes the launch batches' node maps


class LustreOutput(_Output):
    file_system_id: str
    dns_name: str
    mount_name: str
    mount: str
    data_path: str | None = None  # where the data repository appears under the mount
    checkpoint_path: str | None = None


class StackOutputs(_Output):
    outputs_version: int
    cluster: str
    region: str
    nodes: list[NodeOutput]  # the instances the stack runs
    controller: ControllerOutput
    launch_templates: list[LaunchTemplateOutput] = []  # stacks before these were made gave every node an instance
    lustre: LustreOutput | None = None
    checkpoint_bucket: str | None = None
    onprem_pools: list[str] = []  # a hybrid's pools the stack does not build: their hosts are the render's

    @property
    def controller_type(self) -> str | None:
        """The controller's instance type, so a render plans the controller the stack actually built."""
        return next((n.instance_type for n in self.nodes if n.name == self.controller.name), None)
