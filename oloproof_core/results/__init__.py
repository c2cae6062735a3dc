"""A run's result: its data, its file's shape and reading back, its renderings, where runs
and verdicts are kept (`store`), and comparisons of two results (`compare/`).
"""
