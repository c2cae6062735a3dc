"""Every figure of the scale benchmarks from one command: `python -m bench.scale_all`."""
