"""The package's version, as `clusterforge --version`, the editor schema and SARIF's tool name it (and
`clusterforge.__version__`)."""

__version__ = "0.2.0"
