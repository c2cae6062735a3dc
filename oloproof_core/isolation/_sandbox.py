"""The sandbox a system's process runs in: bubblewrap, Linux namespaces, no privileges.

A process of its own keeps a system's bugs away from the parent's clock, but not a
hostile system's reads: as the same OS user it could open the dataset's answers, the
store's file, the parent's `/proc/<pid>/environ` and `/proc/<pid>/mem`. Each system
process therefore starts inside bubblewrap (`bwrap`, Debian's `bubblewrap`), which
builds, from kernel namespaces:

- a mount namespace whose root is empty but for what the system needs, read-only: the
  operating system's programs and libraries, the Python environment, the folders on
  `sys.path` (the project's code) and this package; a private `/tmp` (also `HOME`);
- the paths it must not read (the dataset's file, the store's folder) covered by an
  unreadable file or folder, so opening them is an OS error inside the case;
- its own PID namespace with a fresh `/proc`: no other process is visible, and every
  process the system starts dies with it;
- its own network namespace: only loopback, where the gateway is relayed (`_relay`)
  through a socket bound in, so every model call is metered or fails;
- an unprivileged user: as root, bubblewrap sets up the namespaces and `setpriv`
  drops to `nobody` with no capabilities before Python starts; as any other user, a
  user namespace maps the caller's own uid, with no capabilities.

Whether a sandbox is made at all, and what a run says when none can be, is
`_sandbox_choice`'s.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Sequence
from typing import Any

SANDBOX_USER = 65534
"""The uid and gid a root parent's systems run as (`nobody` on Debian and most others)."""

GATEWAY_SOCKET = "/run/oloproof/gateway.sock"
"""Where the metering gateway's socket appears inside a sandbox."""

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = (
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

_TOO_BROAD = frozenset({"/", "/tmp", "/var", "/home", "/root", "/run", "/etc", "/proc", "/dev"})
"""Folders never bound whole, even when on `sys.path`: they hold other people's files."""


class Sandbox:
    """The bubblewrap command line for one pool's processes.

    `hidden`: paths the system must not read (covered where they lie under a bound
    folder; elsewhere they are not in the sandbox at all). `gateway_socket`: the
    gateway's Unix socket outside, bound at `GATEWAY_SOCKET` inside.
    """

    def __init__(
        self,
        *,
        tool: str | None = None,
        hidden: Iterable[str] = (),
        gateway_socket: str | None = None,
        version: str | None = None,
        user: str | None = None,
    ) -> None:
        self._tool = tool or shutil.which("bwrap") or "bwrap"
        self._hidden = _outermost(os.path.abspath(path) for path in hidden)
        self._gateway_socket = gateway_socket
        self._version, self._user = version, user
        self._as_root = os.geteuid() == 0
        self._covers: tuple[str, str] | None = None
        self.mapped_root = False
        """Whether a process ran as root's uid mapped in a user namespace (`_MAPPED_ROOT`)."""
        self.left_out: list[str] = []
        """Folders on `sys.path` too broad to bind (`_TOO_BROAD`), for the provenance."""

    def command(self, argv: Sequence[str], *, cwd: str, sys_path: Sequence[str]) -> list[str]:
        """`argv` run inside the sandbox, in `cwd`, able to import from `sys_path`."""
        binds = self._binds(sys_path)
        # Root drops to nobody, unless the code is closed to other users (a 0700 folder):
        # then its uid is mapped in a user namespace, with no capability left.
        drops = self._as_root and all(_open_to_others(path) for path in binds)
        self.mapped_root = self.mapped_root or (self._as_root and not drops)
        args = [self._tool, "--die-with-parent", "--new-session"]
        if not self._as_root:
            args += ["--unshare-all"]
        elif not drops:
            args += ["--unshare-user", "--uid", str(SANDBOX_USER), "--gid", str(SANDBOX_USER)]
            args += ["--cap-drop", "ALL", *_NAMESPACES_AS_ROOT]
        else:
            args += _NAMESPACES_AS_ROOT
        args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
        for tree in _SYSTEM_TREES:
            if os.path.islink(tree):
                args += ["--symlink", os.readlink(tree), tree]
            elif os.path.isdir(tree):
                binds.append(tree)
        binds += [path for path in _SYSTEM_FILES if os.path.exists(path)]
        binds = _outermost(binds)
        for folder in _folders_to_make([*binds, cwd], binds):
            args += ["--perms", "0755", "--dir", folder]
        for path in sorted(binds, key=_depth):
            args += ["--ro-bind", path, path]
        args += self._cover_hidden(binds)
        if self._gateway_socket is not None:
            args += ["--perms", "0755", "--dir", os.path.dirname(GATEWAY_SOCKET)]
            args += ["--ro-bind", self._gateway_socket, GATEWAY_SOCKET]
        args += ["--chdir", cwd, "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
        if drops:
            args += [
                "setpriv",
                f"--reuid={SANDBOX_USER}",
                f"--regid={SANDBOX_USER}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
            ]
        return args + list(argv)

    def describe(self) -> dict[str, Any]:
        """The provenance entry: what the system's processes ran inside."""
        described: dict[str, Any] = {
            "tool": self._version,
            "user": _MAPPED_ROOT if self.mapped_root else self._user,
            "namespaces": "mount, pid, network, ipc, uts"
            + ("" if self._as_root and not self.mapped_root else ", user"),
            "network": "none but the model gateway" if self._gateway_socket else "none",
            "hidden": list(self._hidden),
        }
        if self.left_out:
            described["not_bound"] = sorted(set(self.left_out))
        return described

    def _binds(self, sys_path: Sequence[str]) -> list[str]:
        wanted = [
            sys.prefix,
            sys.base_prefix,
            sys.exec_prefix,
            sys.base_exec_prefix,
            os.path.dirname(os.path.realpath(sys.executable)),
            _PACKAGE_ROOT,
            *sys_path,
        ]
        binds = []
        for entry in wanted:
            path = os.path.abspath(entry)
            if path in _TOO_BROAD or path == os.path.expanduser("~"):
                self.left_out.append(path)
            elif os.path.exists(path):
                binds.append(path)
        return binds

    def _cover_hidden(self, binds: Sequence[str]) -> list[str]:
        args: list[str] = []
        for hidden in self._hidden:
            for path in {hidden, os.path.realpath(hidden)}:
                if not os.path.exists(path) or not any(_within(path, bind) for bind in binds):
                    continue
                file_cover, folder_cover = self._cover_files()
                cover = folder_cover if os.path.isdir(path) else file_cover
                args += ["--ro-bind", cover, path]
        return args

    def _cover_files(self) -> tuple[str, str]:
        """An unreadable file and an unreadable folder to lay over hidden paths."""
        if self._covers is None:
            folder = tempfile.mkdtemp(prefix="oloproof-cover-")
            file_cover, folder_cover = os.path.join(folder, "file"), os.path.join(folder, "dir")
            with open(file_cover, "w"):
                pass
            os.mkdir(folder_cover)
            for path in (file_cover, folder_cover):
                os.chmod(path, 0)
            os.chmod(folder, 0o755)
            self._covers = (file_cover, folder_cover)
        return self._covers

    def close(self) -> None:
        if self._covers is not None:
            shutil.rmtree(os.path.dirname(self._covers[0]), ignore_errors=True)
            self._covers = None


_NAMESPACES_AS_ROOT = [
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
]
"""Root makes the namespaces itself; a user namespace would map the system to root."""


_MAPPED_ROOT = (
    f"uid {SANDBOX_USER} in a user namespace, with no capabilities, mapped to root outside: "
    "the system's code is in a folder closed to other users, which nobody could not read "
    "(open it to others, e.g. chmod o+rx, to have systems run as nobody)"
)


def _open_to_others(path: str) -> bool:
    """Whether a user other than the owner may read `path` (and enter it, if a folder)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return True  # not there: nothing to read
    wanted = 0o005 if os.path.isdir(path) else 0o004
    return mode & wanted == wanted


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _depth(path: str) -> int:
    return path.rstrip("/").count("/")


def _outermost(paths: Iterable[str]) -> list[str]:
    """The paths without those inside another of them (bound already with it)."""
    unique = sorted(set(paths), key=_depth)
    kept: list[str] = []
    for path in unique:
        if not any(_within(path, outer) for outer in kept):
            kept.append(path)
    return kept


def _folders_to_make(paths: Iterable[str], binds: Sequence[str]) -> list[str]:
    """Every folder above the binds (and the working folder) that no bind provides,
    made readable by all: bubblewrap's own would be closed to an unprivileged user."""
    folders: set[str] = set()
    for path in paths:
        parent = path if path not in binds and not os.path.isfile(path) else None
        for folder in _ancestors(path) + ([parent] if parent else []):
            if folder != "/" and not any(_within(folder, bind) for bind in binds):
                folders.add(folder)
    return sorted(folders, key=_depth)


def _ancestors(path: str) -> list[str]:
    parts = path.rstrip("/").split("/")[1:-1]
    return ["/" + "/".join(parts[: index + 1]) for index in range(len(parts))]
