"""The installed package's version (the source tree's own when it was never installed)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("oloproof")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.1.0"
