"""Stateless network boot of a node image: what a provisioning server serves so a server with no disk boots the
baked image (its kernel, a small initramfs that loads the image into memory, the image as a squashfs) and the
overlays that make it one particular node. The provisioning role (roles/provisioning) serves them; `lab up --metal`
boots its virtual machines from them."""
