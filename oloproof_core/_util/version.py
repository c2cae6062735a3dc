"""The package's version: its one source, which the build reads too (pyproject.toml).

A literal rather than a lookup in the installed metadata: that lookup
(`importlib.metadata`) cost a fifth of `import oloproof`.
"""

__version__ = "0.1.0"
