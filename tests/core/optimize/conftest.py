"""Optimization engine tests use `task_models` (tests.support.optimize_fixtures)."""
