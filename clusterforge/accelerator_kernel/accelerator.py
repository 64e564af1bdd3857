"""What clusterforge knows about one accelerator vendor: everything that differs by vendor, in one declaration.

The catalog's `gpus.vendor` names an entry; the software rules, gres.conf, the group vars and the day-two effects
ask the entry instead of spelling a vendor themselves, so a new vendor is one module in this package.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Devices:
    """How the vendor's kernel driver names its devices, as gres.conf's `File=` lists them: `prefix` then a number
    per device from `first`; `flags` is gres.conf's `Flags=` for its lines ("" for none)."""

    prefix: str
    first: int = 0
    flags: str = ""

    def files(self, count: int) -> str:
        """`<prefix><first>` for one device, `<prefix>[<first>-<last>]` for several."""
        return f"{self.prefix}{self.first}" if count == 1 else f"{self.prefix}[{self.first}-{self.first + count - 1}]"


@dataclass(frozen=True)
class PinVar:
    """A pin the vendor's roles install: the blueprint's `software:` field, the role variable that carries it, and
    what a change to it takes. `reboot`: a kernel module, loaded by rebooting the vendor's hosts; otherwise a
    library jobs load, replaced on idle GPU hosts. `why` is the reason a day-two diff shows."""

    pin: str
    var: str
    reboot: bool
    why: str


@dataclass(frozen=True)
class Accelerator:
    """One vendor (the catalog's `gpus.vendor`).

    - `title`: how messages name the vendor ("AMD MI300X").
    - `stack`, `stack_title`: the software stack its devices run (`software.stack`'s value) and how messages name it;
      `pins`: the `software:` fields a pool of this vendor must pin (SW-002, SW-004).
    - `devices`: its gres.conf device files and flags.
    - `pin_vars`: the role variables its pins are rendered to; the default vendor's are always written, another
      vendor's when its GPUs, its stack or its first pin are in the blueprint.
    - `enable_var`: the variable an inventory sets to run its driver role on a host without GPUs (day two counts
      such hosts among the vendor's), or None.
    - `default`: the vendor the roles assume when no `gpu_vendor` is rendered (exactly one).
    - `instance_default`: the vendor of an instance type's `accelerators:` that name none (a cloud's own chips).
    - `versions`: the default version of each of its pins that has one (the roles' default vendor pins a current
      set; the others' pins are unset until a blueprint gives them).
    - `domain_title`, `domain_var`: how messages name the GPUs' scale-up domain that spans several nodes (a
      rack-scale device's trays, one SLURM block), and the host variable that names each node's domain for its
      roles.

    Its pins (`pins`, then those only `pin_vars` name) are fields of the blueprint's `software:` and of each pool's
    override: the blueprint model is composed with every registered vendor's (`software_fields`).
    """

    name: str
    title: str
    stack: str
    stack_title: str
    pins: tuple[str, ...]
    devices: Devices
    pin_vars: tuple[PinVar, ...] = ()
    enable_var: str | None = None
    default: bool = False
    instance_default: bool = False
    versions: tuple[tuple[str, str], ...] = ()
    domain_title: str = "scale-up domain"
    domain_var: str = "scale_up_domain"

    @property
    def software_fields(self) -> tuple[str, ...]:
        """Its `software:` fields, in order: the pins its pools must give, then those only its roles read."""
        return tuple(dict.fromkeys((*self.pins, *(p.pin for p in self.pin_vars))))
