"""Helpers the engine's packages share: canonical JSON, YAML and text files read safely,
user code loaded by reference, storage limits, process start and exit.
"""
