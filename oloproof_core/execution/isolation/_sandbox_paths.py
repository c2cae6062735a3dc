"""Which paths a sandbox binds, where, and which of them hold the system's code.

Every path is resolved through its links first (`os.path.realpath`) and bound at its
real path, so a link on `sys.path` shows inside exactly what it shows outside, and a
path hidden at its real path is hidden whichever link reaches it. A link on `sys.path`
is made again inside the sandbox, pointing at the real path, unless it lies in a bound
folder already (it is there) or in another such link (it is reached through it). A
folder on `sys.path` inside a hidden path, or inside a store (`.oloproof`), is not bound.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from oloproof_core._util.install import INSTALL_ROOT
from oloproof_core.execution.isolation._scan import STORE_FOLDER

PACKAGE_ROOT = INSTALL_ROOT
SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/mime.types",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
)
"""What programs read at start-up; no secret is among them (`/etc/shadow` is not)."""

TOO_BROAD = frozenset({"/", "/tmp", "/var", "/home", "/root", "/run", "/etc", "/proc", "/dev"})
"""Folders never bound whole, even when on `sys.path`: they hold other people's files."""


@dataclass
class BindPlan:
    """What a sandbox binds for one process (see `plan_binds`)."""

    binds: list[str] = field(default_factory=list)
    links: dict[str, str] = field(default_factory=dict)
    code: list[str] = field(default_factory=list)
    """The binds that hold the system's code: not the Python environment."""
    environments: set[str] = field(default_factory=set)
    left_out: list[str] = field(default_factory=list)


def plan_binds(sys_path: Sequence[str], hidden: Iterable[str]) -> BindPlan:
    """The real paths to bind for the Python environment, this package and `sys_path`,
    the links to them to make (link -> target), and which of them hold code."""
    prefixes = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    wanted = [*prefixes, os.path.dirname(os.path.realpath(sys.executable))]
    plan = BindPlan(environments={os.path.realpath(prefix) for prefix in prefixes})
    secrets = [os.path.realpath(path) for path in hidden]
    home = {os.path.expanduser("~"), os.path.realpath(os.path.expanduser("~"))}
    for index, entry in enumerate([*wanted, PACKAGE_ROOT, *sys_path]):
        path = os.path.abspath(entry)
        real = os.path.realpath(path)
        if {path, real} & (TOO_BROAD | home):
            plan.left_out.append(path)
        elif any(within(real, secret) for secret in secrets) or STORE_FOLDER in real.split("/"):
            plan.left_out.append(path)  # inside a hidden path: binding it would show it
        elif os.path.exists(real):
            plan.binds.append(real)
            if real != path:
                plan.links[path] = real
            if index >= len(wanted) and not any(within(real, e) for e in plan.environments):
                plan.code.append(real)
    return plan


def with_system_paths(binds: Sequence[str]) -> tuple[list[str], list[str]]:
    """`binds` with the system's trees and files (outermost only), and the arguments that
    make the trees that are links (`/bin` -> `usr/bin`)."""
    args: list[str] = []
    added = list(binds)
    for tree in SYSTEM_TREES:
        if os.path.islink(tree):
            args += ["--symlink", os.readlink(tree), tree]
        elif os.path.isdir(tree):
            added.append(tree)
    added += [path for path in SYSTEM_FILES if os.path.exists(path)]
    return outermost(added), args


def code_roots(binds: Sequence[str], plan: BindPlan) -> list[str]:
    """The binds that hold code, to walk for oloproof's files (`_scan`)."""
    return [
        bind
        for bind in binds
        if any(within(folder, bind) for folder in plan.code)
        and not any(within(bind, env) for env in plan.environments)
        and not any(within(bind, tree) for tree in SYSTEM_TREES)
    ]


def open_to_others(path: str) -> bool:
    """Whether a user other than the owner may read `path` (and enter it, if a folder)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return True  # not there: nothing to read
    wanted = 0o005 if os.path.isdir(path) else 0o004
    return mode & wanted == wanted


def within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def depth(path: str) -> int:
    return path.rstrip("/").count("/")


def outermost(paths: Iterable[str]) -> list[str]:
    """The paths without those inside another of them (bound already with it)."""
    unique = sorted(set(paths), key=depth)
    kept: list[str] = []
    for path in unique:
        if not any(within(path, outer) for outer in kept):
            kept.append(path)
    return kept


def folders_to_make(
    paths: Iterable[str], binds: Sequence[str], links: Iterable[str] = ()
) -> list[str]:
    """Every folder above the binds, the links (and the working folder) that no bind
    provides, made readable by all: bubblewrap's own would be closed to an unprivileged
    user."""
    folders: set[str] = set()
    for path in paths:
        parent = path if path not in binds and not os.path.isfile(path) else None
        for folder in ancestors(path) + ([parent] if parent else []):
            if folder != "/" and not any(within(folder, bind) for bind in binds):
                folders.add(folder)
    for link in links:
        folders.update(folder for folder in ancestors(link) if folder != "/")
    return sorted(folders, key=depth)


def links_to_make(links: dict[str, str], binds: Sequence[str]) -> dict[str, str]:
    """The links (a path on `sys.path` -> its real path) the sandbox must make: not those
    inside a bound folder (there already) or inside another link (reached through it)."""
    return {
        link: target
        for link, target in sorted(links.items(), key=lambda item: depth(item[0]))
        if not any(within(link, bind) for bind in binds)
        and not any(link != other and within(link, other) for other in links)
    }


def ancestors(path: str) -> list[str]:
    parts = path.rstrip("/").split("/")[1:-1]
    return ["/" + "/".join(parts[: index + 1]) for index in range(len(parts))]
