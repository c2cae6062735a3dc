"""A staticfiles finder that serves the minified plotly.js of the installed plotly package.

The dashboard's charts need plotly.js in the browser; taking it from the Python
package keeps the pages working offline and the JavaScript in step with the
Python library that builds the figures. Only that one file is exposed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import CheckMessage, Error
from django.core.files.storage import FileSystemStorage

PLOTLY_STATIC_PATH = "vendor/plotly.min.js"
"""Where the pages load plotly.js from, under STATIC_URL."""


def plotly_js_file() -> Path:
    import plotly

    return Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"


class PlotlyFinder(BaseFinder):
    def check(self, **kwargs: Any) -> list[CheckMessage]:
        if plotly_js_file().is_file():
            return []
        return [
            Error(
                f"plotly.min.js not found at {plotly_js_file()}",
                hint="reinstall plotly: .venv/bin/pip install --force-reinstall plotly",
                id="oloproof.E001",
            )
        ]

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:
        if path != PLOTLY_STATIC_PATH or not plotly_js_file().is_file():
            return [] if find_all else None
        found = str(plotly_js_file())
        return [found] if find_all else found

    def list(self, ignore_patterns: Any) -> Iterator[tuple[str, FileSystemStorage]]:
        source = plotly_js_file()
        if source.is_file():
            # collectstatic copies `path` from `storage`; a storage rooted at the
            # package folder, with the file renamed via a prefix, does that.
            storage = FileSystemStorage(location=str(source.parent))
            storage.prefix = str(Path(PLOTLY_STATIC_PATH).parent)  # type: ignore[attr-defined]
            yield source.name, storage
