"""The accelerator vendors: one module or package here per vendor, exporting an `ACCELERATOR`; found at run time by
the registry (clusterforge/accelerator_kernel). Nothing here is imported by the layers below."""
