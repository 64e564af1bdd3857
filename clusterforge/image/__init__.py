"""Node images: the blueprint's roles baked once into an image per accelerator vendor (`clusterforge image build`).

`plan` decides which images a blueprint needs and names them by their inputs, `build` bakes them through
lab/bake.py, `archive` writes them as OCI archives for a provisioning server (docs/images.md).
"""
