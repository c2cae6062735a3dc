"""Runs: systems, releases, datasets, runs, case results, gates and approvals."""
