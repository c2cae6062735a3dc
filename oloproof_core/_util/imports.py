"""Loading user code by reference: `package.module:attribute` or `path/to/file.py:attribute`.

A project's modules are imported under names unique to the project's folder:
`bot:answer` from folder F becomes the module `oloproof_code_<digest of F>.bot`, so
two projects that both name `bot:answer` never share a `sys.modules` entry, and a
module planted in one folder cannot stand in for a same-named module of another.
The folder is never put on `sys.path`. While a project's code is being imported,
its top-level imports of sibling modules (`import helpers` next to `bot.py`) are
served from the same folder under the same namespace; names that are not the
project's (installed packages, the standard library) import as usual.

With `roots`, every file a reference resolves to (links resolved) must lie inside
one of those folders, or the reference is a ConfigError.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading
import traceback
import types
from collections.abc import Iterator, Sequence
from typing import Any

from oloproof_core._util.install import INSTALL_ROOT
from oloproof_core.errors import ConfigError

NAMESPACE_PREFIX = "oloproof_code_"
_OLOPROOF_CODE = tuple(
    os.path.join(INSTALL_ROOT, package, "") for package in ("oloproof_core", "oloproof")
)
_lock = threading.RLock()


def load_object(
    reference: str, *, base_dir: str = ".", what: str = "object", roots: Sequence[str] | None = None
) -> Any:
    """Import and return the object a reference names; relative files resolve from base_dir."""
    module_part, sep, attribute = reference.partition(":")
    if not sep or not module_part or not attribute:
        raise ConfigError(f"{what} {reference!r} must look like 'module:name' or 'file.py:name'")
    module = load_module(module_part, base_dir=base_dir, what=what, roots=roots)
    target: Any = module
    for name in attribute.split("."):
        try:
            target = getattr(target, name)
        except AttributeError:
            raise ConfigError(
                f"{what} {reference!r}: {module_part} has no attribute {attribute!r}"
                + _close_names(name, target)
            ) from None
    return target


def _close_names(wanted: str, namespace: Any) -> str:
    """The public names of `namespace` that look like a misspelt `wanted`, as a hint."""
    public = [name for name in dir(namespace) if not name.startswith("_")]
    close = difflib.get_close_matches(wanted, public, n=3)
    return f" (did you mean {' or '.join(repr(name) for name in close)}?)" if close else ""


def namespace_for(folder: str) -> str:
    """The package name a folder's modules are imported under."""
    digest = hashlib.sha256(os.path.abspath(folder).encode("utf-8", "surrogatepass"))
    return NAMESPACE_PREFIX + digest.hexdigest()[:16]


def plain_module_name(name: str) -> str:
    """A module's name as the project wrote it (`bot`), without its folder's namespace."""
    if name.startswith(NAMESPACE_PREFIX):
        return name.partition(".")[2] or name
    return name


def path_within(path: str, roots: Sequence[str]) -> bool:
    """True when `path`, links resolved, is one of `roots` or lies inside one."""
    resolved = os.path.realpath(path)
    for root in roots:
        real_root = os.path.realpath(root)
        with contextlib.suppress(ValueError):
            if os.path.commonpath([resolved, real_root]) == real_root:
                return True
    return False


def confine(path: str, roots: Sequence[str] | None, *, what: str) -> str:
    """`path` unchanged if it lies inside `roots` (or no roots are given), else a ConfigError."""
    if roots is not None and not path_within(path, roots):
        raise ConfigError(
            f"{what}: {path} is outside the project's registered code roots "
            f"({', '.join(roots) or 'none registered'})"
        )
    return path


def load_module(
    name_or_path: str,
    *,
    base_dir: str = ".",
    what: str = "module",
    roots: Sequence[str] | None = None,
) -> Any:
    base = os.path.abspath(base_dir)
    if name_or_path.endswith(".py"):
        return _load_file(os.path.abspath(os.path.join(base, name_or_path)), what, roots)
    top = name_or_path.split(".")[0]
    if not _is_project_module(base, top):
        if roots is not None:
            raise ConfigError(
                f"{what}: module {name_or_path!r} is not in the run's folder "
                f"{base}; a run may import only its project's code"
            )
        try:
            return importlib.import_module(name_or_path)
        except ModuleNotFoundError as exc:
            raise ConfigError(
                f"{what}: cannot import module {name_or_path!r} ({exc}); is it "
                f"installed, or next to the config file in {base}?"
            ) from None
    confine(base, roots, what=what)
    with project_imports(base):
        try:
            module = importlib.import_module(f"{namespace_for(base)}.{name_or_path}")
        except Exception as exc:
            raise ConfigError(f"{what}: importing {name_or_path!r} failed: {_where(exc)}") from None
    confine(getattr(module, "__file__", None) or base, roots, what=what)
    return module


def _load_file(path: str, what: str, roots: Sequence[str] | None) -> Any:
    if not os.path.isfile(path):
        raise ConfigError(f"{what}: file {path} not found")
    confine(path, roots, what=what)
    folder = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    module_name = f"{namespace_for(folder)}.{_identifier(stem)}"
    cached = sys.modules.get(module_name)
    if cached is not None and getattr(cached, "__file__", None) == path:
        return cached
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{what}: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    with project_imports(folder):
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(module_name, None)
            raise ConfigError(f"{what}: {path} failed to import: {_where(exc)}") from None
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
    return module


def _where(exc: BaseException) -> str:
    """The error and the user's line it came from, without the import machinery's frames."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}: SyntaxError: {exc.msg}"
    # The user's own line: not the import machinery's, nor oloproof's (a declaration it
    # refused is the user's line that declared it).
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if "importlib" not in frame.filename and not frame.filename.startswith(_OLOPROOF_CODE)
    ] or traceback.extract_tb(exc.__traceback__)[-1:]
    at = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    return f"{at}{type(exc).__name__}: {exc}"


def _identifier(stem: str) -> str:
    cleaned = "".join(char if char.isalnum() or char == "_" else "_" for char in stem)
    return cleaned if cleaned.isidentifier() else f"m_{cleaned}"


def _is_project_module(folder: str, top: str) -> bool:
    if not top.isidentifier():
        return False
    candidate = os.path.join(folder, top)
    return os.path.isfile(candidate + ".py") or os.path.isdir(candidate)


def _namespace_package(folder: str) -> types.ModuleType:
    name = namespace_for(folder)
    package = sys.modules.get(name)
    if package is None:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [folder]
        package = importlib.util.module_from_spec(spec)
        package.__path__ = [folder]
        sys.modules[name] = package
    return package


@contextlib.contextmanager
def project_imports(folder: str) -> Iterator[None]:
    """While importing a project's code: its sibling modules come from its own namespace.

    One project at a time (a lock), so the temporary plain-name entries a sibling
    import leaves in `sys.modules` are removed before another project's code runs.
    """
    with _lock:
        _namespace_package(folder)
        finder = _SiblingFinder(folder)
        sys.meta_path.insert(0, finder)
        try:
            yield
        finally:
            sys.meta_path.remove(finder)
            for name in finder.aliased:
                if sys.modules.get(name) is finder.aliased[name]:
                    del sys.modules[name]


class _SiblingFinder(importlib.abc.MetaPathFinder):
    """Serves `import x` (x a module of the folder) as the folder's namespaced `x`."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.namespace = namespace_for(folder)
        self.thread = threading.get_ident()
        self.aliased: dict[str, types.ModuleType] = {}

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        # Only the importing thread's imports: another thread importing a module of the
        # same name at the same moment must get its own.
        if threading.get_ident() != self.thread or fullname.startswith(NAMESPACE_PREFIX):
            return None
        if not _is_project_module(self.folder, fullname.split(".")[0]):
            return None
        module = importlib.import_module(f"{self.namespace}.{fullname}")
        self.aliased[fullname] = module
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), is_package=hasattr(module, "__path__")
        )


class _AliasLoader(importlib.abc.Loader):
    """Hands back the namespaced module, already executed, under the plain name."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self.spec  # the import system set the alias's spec on it
