"""A run's result: its metrics (`estimate`), its cases whole or as columns (`columns/`),
its file's shape and reading back, its renderings, where runs and verdicts are kept
(`store`), and comparisons of two results (`compare/`).
"""
