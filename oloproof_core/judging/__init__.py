"""Judging: evaluators (`evaluators/`) over every case, cache first, some in processes of
their own (`contained/`), each giving a verdict.
"""
