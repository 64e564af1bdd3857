"""The metal lab (`lab up --metal`): the lab's compute servers are libvirt/QEMU virtual machines with no disk,
powered through BMCs (sushy-tools' libvirt driver), booting the baked image over the network from the
provisioning service the controller runs (roles/provisioning), as OpenStack Ironic's and Metal3's CI test bare
metal without hardware. The controller stays a container; everything else is the on-prem path as a site runs it."""
