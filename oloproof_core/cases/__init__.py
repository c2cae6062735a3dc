"""The case as it moves through a run: its row, output, measurements, model usage and
errors, and what code inside a system or evaluator may read of it.
"""
