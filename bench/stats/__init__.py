"""Simulations of the statistics in ``oloproof_core.stats``: coverage, width, gate error."""
