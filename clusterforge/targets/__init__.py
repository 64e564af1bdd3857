"""The target packages: one folder per place a cluster runs (`aws`, `onprem`, `lab`), each exporting a `TARGET`.

The registry that finds them and the `Target` declaration they export are the kernel, clusterforge/target_kernel
(`registered()`, `target_of(cluster)`); it lists this package's path at run time, so a new target is a new folder
here and nothing else. Keep this file free of code: on a controller the power-save providers are copied without it
(clusterforge.powersave.payload), where this package is a namespace package.
"""
