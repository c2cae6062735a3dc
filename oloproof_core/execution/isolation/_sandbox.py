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
  user namespace maps the caller's own uid, with no capabilities;
- every path resolved through its links before it is bound or covered, so a link on
  `sys.path` reaches nothing a hidden path holds; beside the run's dataset and store,
  every store and result file oloproof wrote in the code folders is covered (`_scan`);
- caps on the sandbox as a whole (`_caps`): a `/tmp` of bounded size, a number of
  processes, memory for all its processes together where a cgroup can be made; the
  rest of its file system read-only;
- a seccomp filter (`_seccomp`): no keyring, no user namespace of its own.

Whether a sandbox is made at all, and what a run says when none can be, is
`_sandbox_choice`'s.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import time
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from oloproof_core.execution.isolation._caps import (
    SandboxCaps,
    SandboxCgroups,
    cgroup_parents,
    describe_cgroups,
)
from oloproof_core.execution.isolation._errors import IsolationError
from oloproof_core.execution.isolation._sandbox_paths import (
    BindPlan,
    code_roots,
    depth,
    folders_to_make,
    links_to_make,
    open_to_others,
    outermost,
    plan_binds,
    with_system_paths,
    within,
)
from oloproof_core.execution.isolation._scan import FolderScan, scan_folder
from oloproof_core.execution.isolation._seccomp import seccomp_filter

SANDBOX_USER = 65534
"""The uid and gid a root parent's systems run as (`nobody` on Debian and most others)."""

GATEWAY_SOCKET = "/run/oloproof/gateway.sock"
"""Where the metering gateway's socket appears inside a sandbox."""


class Sandbox:
    """The bubblewrap command line for one pool's processes.

    `hidden`: paths the system must not read (covered where they lie under a bound
    folder; elsewhere they are not in the sandbox at all). `gateway_socket`: the
    gateway's Unix socket outside, bound at `GATEWAY_SOCKET` inside. `caps`: the
    operator's caps (`_caps`, from the environment by default); `memory_limit_mb`, set
    by the pool, caps the memory of all of a sandbox's processes together. `scan=False`
    does not look for oloproof's files in the code folders (the probe, which runs `true`).
    """

    def __init__(
        self,
        *,
        tool: str | None = None,
        hidden: Iterable[str] = (),
        gateway_socket: str | None = None,
        version: str | None = None,
        user: str | None = None,
        caps: SandboxCaps | None = None,
        scan: bool = True,
    ) -> None:
        self._tool = tool or shutil.which("bwrap") or "bwrap"
        self._hidden = outermost(os.path.abspath(path) for path in hidden)
        self._gateway_socket = gateway_socket
        self._version, self._user = version, user
        self._as_root = os.geteuid() == 0
        self.caps = caps or SandboxCaps.from_environment()
        self._scan_code = scan
        self.memory_limit_mb: int | None = None
        self._made = _Leftovers()
        weakref.finalize(self, self._made.remove, 0)  # if never closed: at the latest, at exit
        self._controllers: set[str] = set()
        self._started = False
        self._filter: str | None = None
        self._scans: dict[tuple[str, bool], FolderScan] = {}
        self._found: set[str] = set()
        self._closed: set[str] = set()
        self._latest: SandboxCgroups | None = None
        self.mapped_root = False
        """Whether a process ran as root's uid mapped in a user namespace (`_MAPPED_ROOT`)."""
        self.left_out: list[str] = []
        """Folders on `sys.path` not bound (too broad, or inside a hidden path)."""

    def command(self, argv: Sequence[str], *, cwd: str, sys_path: Sequence[str]) -> list[str]:
        """`argv` run inside the sandbox, in `cwd`, able to import from `sys_path`."""
        plan = plan_binds(sys_path, self._hidden)
        self.left_out += plan.left_out
        # Root drops to nobody, unless the code is closed to other users (a 0700 folder):
        # then its uid is mapped in a user namespace, with no capability left, and what
        # nobody could not read inside the code folders is covered.
        drops = self._as_root and all(open_to_others(path) for path in plan.binds)
        mapped = self._as_root and not drops
        self.mapped_root = self.mapped_root or mapped
        args = [self._tool, "--die-with-parent", "--new-session"]
        if not self._as_root:
            args += ["--unshare-all"]
        elif mapped:
            args += ["--unshare-user", "--uid", str(SANDBOX_USER), "--gid", str(SANDBOX_USER)]
            args += ["--cap-drop", "ALL", *_NAMESPACES_AS_ROOT]
        else:
            args += _NAMESPACES_AS_ROOT
        args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777"]
        args += ["--size", str(self.caps.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp"]
        args += self._mounts(plan, cwd, closed=mapped)
        args += ["--chdir", cwd, "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
        if drops:
            args += _DROP_TO_NOBODY
        cgroups = self._new_cgroups()
        if "pids" not in cgroups.folders and (prlimit := shutil.which("prlimit")):
            nproc = self.caps.processes
            args += [prlimit, f"--nproc={nproc}:{nproc}"]
        return _entering(cgroups.procs, self._filter_file()) + args + list(argv)

    @property
    def hidden(self) -> tuple[str, ...]:
        """The paths this sandbox hides from every process it starts."""
        return tuple(self._hidden)

    def claim(self) -> SandboxCgroups | None:
        """The cgroups of the process just started from the last `command()`."""
        cgroups, self._latest = self._latest, None
        return cgroups

    def release(self, cgroups: SandboxCgroups | None) -> None:
        """The process in these cgroups has ended: remove them (now, or when closing)."""
        if cgroups is not None and cgroups.remove() and cgroups in self._made.cgroups:
            self._made.cgroups.remove(cgroups)

    def describe(self) -> dict[str, Any]:
        """The provenance entry: what the system's processes ran inside."""
        hidden = list(dict.fromkeys([*self._hidden, *sorted(self._found)]))
        processes, memory = describe_cgroups(
            self._controllers if self._started else set(cgroup_parents()),
            self.caps,
            self.memory_limit_mb,
        )
        described: dict[str, Any] = {
            "tool": self._version,
            "user": _MAPPED_ROOT if self.mapped_root else self._user,
            "namespaces": "mount, pid, network, ipc, uts"
            + ("" if self._as_root and not self.mapped_root else ", user"),
            "network": "none but the model gateway" if self._gateway_socket else "none",
            "hidden": hidden[:_LISTED]
            + ([f"… and {len(hidden) - _LISTED} more"] if len(hidden) > _LISTED else []),
            "caps": {
                "tmp": f"{self.caps.tmp_mb} MiB",
                "processes": processes,
                "memory": memory,
                "reply": f"{self.caps.output_mb} MiB",
            },
            "system_calls": "keyctl, add_key, request_key and new user namespaces refused"
            if seccomp_filter() is not None
            else "not filtered: no seccomp filter for this architecture",
        }
        if self._closed:
            described["closed_to_others_covered"] = len(self._closed)
        if self.left_out:
            described["not_bound"] = sorted(set(self.left_out))
        return described

    def _mounts(self, plan: BindPlan, cwd: str, *, closed: bool) -> list[str]:
        """The folders, binds, links and covers, then everything but /tmp read-only."""
        binds, args = with_system_paths(plan.binds)
        links = links_to_make(plan.links, binds)
        covers = self._covers(binds, plan, closed=closed)
        for folder in folders_to_make([*binds, cwd], binds, links):
            args += ["--perms", "0755", "--dir", folder]
        for path in sorted(binds, key=depth):
            args += ["--ro-bind", path, path]
        for link, target in links.items():
            args += ["--symlink", target, link]
        file_cover, folder_cover = self._cover_files() if covers else ("", "")
        for path in covers:
            args += ["--ro-bind", folder_cover if os.path.isdir(path) else file_cover, path]
        if self._gateway_socket is not None:
            args += ["--perms", "0755", "--dir", os.path.dirname(GATEWAY_SOCKET)]
            args += ["--ro-bind", self._gateway_socket, GATEWAY_SOCKET]
        # Nothing but its /tmp is the system's to write: not the root bubblewrap builds,
        # nor /dev (both its own in a user namespace).
        return [*args, "--remount-ro", "/dev", "--remount-ro", "/"]

    def _covers(self, binds: Sequence[str], plan: BindPlan, *, closed: bool) -> list[str]:
        """What to lay an unreadable file or folder over: the hidden paths, oloproof's
        stores and result files in the code folders, and, in a closed folder bound with
        root's uid mapped, whatever a user other than its owner could not read."""
        covers = [
            real
            for path in self._hidden
            if os.path.exists(real := os.path.realpath(path))
            and any(within(real, bind) for bind in binds)
        ]
        roots = code_roots(binds, plan)
        for root in roots if self._scan_code else []:
            scan = self._scan(root, plan, closed)
            found = scan.stores + scan.results
            self._found.update(found)
            covers += found
            if closed:
                self._closed.update(scan.closed)
                covers += scan.closed
        covers = outermost(covers)
        if len(covers) > _MOST_COVERS:
            raise IsolationError(
                f"the system's code folders ({', '.join(roots)}) hold {len(covers)} files and "
                f"folders its sandbox would have to cover, more than {_MOST_COVERS}: they are "
                "closed to other users (e.g. made with umask 077). Open them to others "
                "(chmod -R o+rX on the code folders) so systems run as nobody."
            )
        return covers

    def _scan(self, root: str, plan: BindPlan, closed: bool) -> FolderScan:
        key = (root, closed)
        if key not in self._scans:
            skip = [env for env in plan.environments if within(env, root)]
            scan = scan_folder(root, skip=skip, limit=self.caps.scan_limit, closed=closed)
            if not scan.complete:
                raise IsolationError(
                    f"{root}, a folder the system's sandbox binds, holds more than "
                    f"{self.caps.scan_limit} files and folders to check for oloproof's stores "
                    "and result files before a system may see it. Keep the system's code in "
                    "a smaller folder, or raise OLOPROOF_SANDBOX_SCAN_LIMIT."
                )
            self._scans[key] = scan
        return self._scans[key]

    def _new_cgroups(self) -> SandboxCgroups:
        cgroups = SandboxCgroups(memory_mb=self.memory_limit_mb, processes=self.caps.processes)
        self._made.cgroups.append(cgroups)
        self._controllers.update(cgroups.folders)
        self._started = True
        self._latest = cgroups
        return cgroups

    def _private_folder(self) -> str:
        if self._made.folder is None:
            self._made.folder = tempfile.mkdtemp(prefix="oloproof-sandbox-")
            os.chmod(self._made.folder, 0o755)
        return self._made.folder

    def _cover_files(self) -> tuple[str, str]:
        """An unreadable file and an unreadable folder to lay over hidden paths."""
        folder = self._private_folder()
        file_cover, folder_cover = os.path.join(folder, "file"), os.path.join(folder, "dir")
        if not os.path.exists(folder_cover):
            with open(file_cover, "w"):
                pass
            os.mkdir(folder_cover)
            for path in (file_cover, folder_cover):
                os.chmod(path, 0)
        return file_cover, folder_cover

    def _filter_file(self) -> str | None:
        """The seccomp filter (`_seccomp`), written once, or None where there is none."""
        if self._filter is None:
            program = seccomp_filter()
            if program is None:
                return None
            path = os.path.join(self._private_folder(), "seccomp.bpf")
            with open(path, "wb") as handle:
                handle.write(program)
            self._filter = path
        return self._filter

    def close(self) -> None:
        self._made.remove()
        self._filter = None


class _Leftovers:
    """What a sandbox made outside itself: its private folder (the covers, the filter)
    and its processes' cgroups."""

    def __init__(self) -> None:
        self.folder: str | None = None
        self.cgroups: list[SandboxCgroups] = []

    def remove(self, patience_s: float = 0.5) -> None:
        # A sandbox's processes end a millisecond or two after the one the pool waited
        # for, and every run waits here before its conclusion: so ask again soon at
        # first, then less often (a fixed 10 ms step cost each run about 10 ms).
        give_up, pause = time.monotonic() + patience_s, 0.0005
        while True:
            self.cgroups = [cgroups for cgroups in self.cgroups if not cgroups.remove()]
            if not self.cgroups or time.monotonic() >= give_up:
                break
            time.sleep(pause)
            pause = min(2 * pause, 0.01)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


_LISTED = 100
"""Hidden paths named in the provenance; past that, how many more."""
_MOST_COVERS = 4096


def _entering(procs: Sequence[str], filter_file: str | None) -> list[str]:
    """A shell that puts itself in the sandbox's cgroups and opens the seccomp filter
    before it becomes bubblewrap (its first argument): every process of the sandbox
    starts in them, and bubblewrap reads the filter (`--seccomp N`) from a descriptor the
    shell opens on a number the pipes to the system's process do not use."""
    if not procs and filter_file is None:
        return []
    steps = [f"echo $$ > {shlex.quote(path)}" for path in procs]
    if filter_file is None:
        steps.append('exec "$@"')
    else:
        steps.append("for n in 9 8 7 6 5 4 3; do [ -e /proc/self/fd/$n ] || break; done")
        steps.append(f"f={shlex.quote(filter_file)}")
        steps.append(r't=$1 && shift && eval "exec \"\$t\" --seccomp $n \"\$@\" $n< \"\$f\""')
    return [shutil.which("sh") or "/bin/sh", "-c", " && ".join(steps), "oloproof-sandbox"]


_NAMESPACES_AS_ROOT = [
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
]
"""Root makes the namespaces itself; a user namespace would map the system to root."""

_DROP_TO_NOBODY = [
    "setpriv",
    f"--reuid={SANDBOX_USER}",
    f"--regid={SANDBOX_USER}",
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--no-new-privs",
    "--",
]


_MAPPED_ROOT = (
    f"uid {SANDBOX_USER} in a user namespace, with no capabilities, mapped to root outside: "
    "the system's code is in a folder closed to other users, which nobody could not read; "
    "inside it, every file and folder a user other than its owner could not read is covered "
    "(open the folder to others, e.g. chmod o+rx, to have systems run as nobody)"
)
