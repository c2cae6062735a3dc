"""The oloproof engine: datasets, systems, evaluators, statistics and gates.

Everything here is internal to oloproof; the public surface is the `oloproof`
package, which re-exports what users need.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("oloproof")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.1.0"
