"""Test support shared across the suite: stand-ins that speak real protocols."""
