"""Metrics: evaluators, the verdict cache, per-case verdicts and per-run metric estimates."""
