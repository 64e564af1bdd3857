"""Day-to-day operations of a provisioned cluster: on-demand GPU diagnostics through SLURM."""
