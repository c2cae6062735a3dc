"""What a sandbox may take as a whole: its `/tmp`, its processes, its memory, one reply.

Each system process is a sandbox of its own, capped as a whole:

- its private `/tmp` (also its `HOME`) is a tmpfs of `OLOPROOF_SANDBOX_TMP_MB` MiB
  (default 256);
- it runs at most `OLOPROOF_SANDBOX_PROCESSES` processes and threads at once (default
  512; the kernel counts threads as it counts processes): a pids cgroup where this
  machine lets one be made, else `RLIMIT_NPROC` (which, when oloproof runs as root,
  counts every process of uid 65534 on the machine, all sandboxes together);
- its processes together hold at most `memory_limit_mb` of memory: a memory cgroup
  where one can be made (v1, or v2 where the controller is delegated), else only each
  process's address space is capped (`RLIMIT_AS`), so the whole is bounded by that
  times the number of processes;
- one reply of a system's process (its output and artifacts) takes at most
  `OLOPROOF_SANDBOX_OUTPUT_MB` MiB (default 64): a larger one makes its case missing,
  and the parent reads past it without keeping it (`_protocol.FrameReader`).

A cap that is hit costs only the case that hit it: its error says which cap, and its
process is replaced once its cases are in, so the next case starts in a fresh sandbox.
The variables are the operator's (the parent reads them); the system cannot change them.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import shutil
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from oloproof_core.errors import OloproofError

if TYPE_CHECKING:
    from oloproof_core.cases.case import CaseError

_MIB = 1024 * 1024
_DEFAULTS = {
    "OLOPROOF_SANDBOX_TMP_MB": 256,
    "OLOPROOF_SANDBOX_PROCESSES": 512,
    "OLOPROOF_SANDBOX_OUTPUT_MB": 64,
    "OLOPROOF_SANDBOX_SCAN_LIMIT": 200_000,
}


def _setting(name: str, environ: Mapping[str, str] | None = None) -> int:
    raw = (os.environ if environ is None else environ).get(name, "").strip()
    if not raw:
        return _DEFAULTS[name]
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise OloproofError(
            f"{name}={raw!r} is not a positive whole number (default {_DEFAULTS[name]})"
        )
    return value


def output_cap_bytes(environ: Mapping[str, str] | None = None) -> int:
    """How large one reply from a system's process may be (`OLOPROOF_SANDBOX_OUTPUT_MB`)."""
    return _setting("OLOPROOF_SANDBOX_OUTPUT_MB", environ) * _MIB


@dataclass(frozen=True)
class SandboxCaps:
    """The operator's caps for every sandbox of a pool (see the module docstring)."""

    tmp_mb: int
    processes: int
    output_mb: int
    scan_limit: int

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> SandboxCaps:
        return cls(
            tmp_mb=_setting("OLOPROOF_SANDBOX_TMP_MB", environ),
            processes=_setting("OLOPROOF_SANDBOX_PROCESSES", environ),
            output_mb=_setting("OLOPROOF_SANDBOX_OUTPUT_MB", environ),
            scan_limit=_setting("OLOPROOF_SANDBOX_SCAN_LIMIT", environ),
        )

    def tmp_full(self) -> str:
        return f"the sandbox's /tmp is full (its cap is {self.tmp_mb} MiB: OLOPROOF_SANDBOX_TMP_MB)"

    def too_many_processes(self) -> str:
        return (
            f"the system started more than {self.processes} processes and threads at once, "
            "its sandbox's cap (OLOPROOF_SANDBOX_PROCESSES)"
        )


def memory_cap_hit(limit_mb: int | None, *, itself: bool) -> str:
    who = "the system's process was" if itself else "a process of the system was"
    return (
        f"{who} killed: the sandbox's processes together went past their memory cap of "
        f"{limit_mb} MiB (memory_limit_mb)"
    )


_NO_SPACE = re.compile(r"\[Errno 28\]|No space left on device")
_NO_PROCESS = re.compile(r"can't start new thread|\[Errno 11\] Resource temporarily unavailable")
_STARTING = re.compile(r"fork|spawn|Popen|start_new_thread|Thread\.start|_start_joinable")


def cap_symptom(error: CaseError, caps: SandboxCaps) -> str | None:
    """The cap a case's error shows it hit, in words, or None: a write the sandbox's
    /tmp had no room for, or a process or thread the kernel would not start."""
    text = f"{error.message}\n{error.traceback or ''}"
    if _NO_SPACE.search(error.message):
        return caps.tmp_full()
    if _NO_PROCESS.search(error.message) and ("thread" in error.message or _STARTING.search(text)):
        return caps.too_many_processes()
    return None


# -- cgroups ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Hierarchy:
    """Where this process's cgroup of one controller is, and which cgroup version."""

    controller: str
    folder: str
    version: int


@functools.cache
def cgroup_parents() -> dict[str, _Hierarchy]:
    """The memory and pids cgroups this process is in, where it may make children:
    writable, with the controller available to them, checked by making one."""
    found: dict[str, _Hierarchy] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as handle:
            own = [line.rstrip("\n").split(":", 2) for line in handle if line.count(":") >= 2]
        mounts = _cgroup_mounts()
    except OSError:
        return found
    for controller in ("memory", "pids"):
        hierarchy = _hierarchy(controller, own, mounts)
        if hierarchy is not None and _can_make_children(hierarchy):
            found[controller] = hierarchy
    return found


def _cgroup_mounts() -> list[tuple[str, str, str, set[str]]]:
    """(root inside the hierarchy, mount point, type, options) of every cgroup mount."""
    mounts = []
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        for line in handle:
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
                continue
            options = set(tail[2].split(","))
            mounts.append((_unescape(fields[3]), _unescape(fields[4]), tail[0], options))
    return mounts


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), field)


def _hierarchy(
    controller: str, own: list[list[str]], mounts: list[tuple[str, str, str, set[str]]]
) -> _Hierarchy | None:
    for _, controllers, path in own:
        if controller in controllers.split(","):  # v1: a hierarchy of its own
            for root, point, kind, options in mounts:
                if kind == "cgroup" and controller in options and _within(path, root):
                    return _Hierarchy(controller, _join(point, path, root), 1)
    for number, controllers, path in own:
        if number == "0" and controllers == "":  # v2, if the controller is delegated here
            for root, point, kind, _ in mounts:
                if kind == "cgroup2" and _within(path, root):
                    folder = _join(point, path, root)
                    if controller in _read(os.path.join(folder, "cgroup.subtree_control")):
                        return _Hierarchy(controller, folder, 2)
    return None


def _within(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


def _join(point: str, path: str, root: str) -> str:
    inside = path[len(root) :] if root != "/" else path
    return os.path.join(point, inside.lstrip("/")).rstrip("/") or "/"


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return ""


_LIMIT_FILE = {
    ("memory", 1): "memory.limit_in_bytes",
    ("memory", 2): "memory.max",
    ("pids", 1): "pids.max",
    ("pids", 2): "pids.max",
}
_names = itertools.count()


def _can_make_children(hierarchy: _Hierarchy) -> bool:
    if not os.access(hierarchy.folder, os.W_OK):
        return False
    probe = os.path.join(hierarchy.folder, f"oloproof-{os.getpid()}-probe-{next(_names)}")
    try:
        os.mkdir(probe)
    except OSError:
        return False
    try:
        limit_file = _LIMIT_FILE[hierarchy.controller, hierarchy.version]
        return os.access(os.path.join(probe, limit_file), os.W_OK) and os.access(
            os.path.join(probe, "cgroup.procs"), os.W_OK
        )
    finally:
        _remove(probe)


def _remove(folder: str) -> bool:
    try:
        os.rmdir(folder)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


class SandboxCgroups:
    """One sandbox's cgroups (memory, pids): made before its process starts, entered by
    the process's first command, removed once it has ended."""

    def __init__(self, *, memory_mb: int | None, processes: int) -> None:
        self.folders: dict[str, str] = {}
        self._killed = 0
        name = f"oloproof-{os.getpid()}-{next(_names)}"
        for controller, hierarchy in cgroup_parents().items():
            if controller == "memory" and memory_mb is None:
                continue
            folder = os.path.join(hierarchy.folder, name)
            try:
                os.mkdir(folder)
                _limit(folder, hierarchy, memory_mb, processes)
            except OSError:
                _remove(folder)
                continue
            self.folders[controller] = folder

    @property
    def procs(self) -> list[str]:
        """The files the process writes its pid to, to enter its cgroups."""
        return [os.path.join(folder, "cgroup.procs") for folder in self.folders.values()]

    def memory_kills(self) -> bool:
        """Whether the memory cgroup killed a process since this was last asked."""
        folder = self.folders.get("memory")
        if folder is None:
            return False
        text = _read(os.path.join(folder, "memory.oom_control")) or _read(
            os.path.join(folder, "memory.events")
        )
        match = re.search(r"^oom_kill (\d+)$", text, flags=re.MULTILINE)
        killed = int(match.group(1)) if match else 0
        new, self._killed = killed > self._killed, killed
        return new

    def remove(self) -> bool:
        """Remove the cgroups; False while a process is still in one."""
        for controller, folder in list(self.folders.items()):
            if _remove(folder):
                del self.folders[controller]
        return not self.folders


def _limit(folder: str, hierarchy: _Hierarchy, memory_mb: int | None, processes: int) -> None:
    if hierarchy.controller == "pids":
        _write(os.path.join(folder, "pids.max"), str(processes))
        return
    assert memory_mb is not None
    limit = str(memory_mb * _MIB)
    if hierarchy.version == 1:
        _write(os.path.join(folder, "memory.limit_in_bytes"), limit)
        swap = os.path.join(folder, "memory.memsw.limit_in_bytes")
        if os.path.exists(swap):  # no swap past the cap either
            _write(swap, limit)
    else:
        _write(os.path.join(folder, "memory.max"), limit)
        swap = os.path.join(folder, "memory.swap.max")
        if os.path.exists(swap):
            _write(swap, "0")


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(value)


def describe_cgroups(
    controllers: Collection[str], caps: SandboxCaps, memory_mb: int | None
) -> tuple[str, str]:
    """(processes, memory) lines for the provenance, `controllers` being those of the
    cgroups the sandbox's processes ran in."""
    hierarchies = cgroup_parents()

    def version(controller: str) -> str:
        return f"a {controller} cgroup, v{hierarchies[controller].version}"

    if "pids" in controllers:
        processes = f"{caps.processes} processes and threads at once ({version('pids')})"
    elif shutil.which("prlimit") is None:
        processes = "not capped: no pids cgroup can be made here, and prlimit is missing"
    else:
        processes = (
            f"{caps.processes} processes and threads at once (RLIMIT_NPROC: no pids cgroup "
            "can be made here)"
        )
    if memory_mb is None:
        memory = "not capped (memory_limit_mb is None)"
    elif "memory" in controllers:
        memory = f"{memory_mb} MiB for all its processes together ({version('memory')})"
    else:
        memory = (
            f"{memory_mb} MiB of address space per process (RLIMIT_AS), at most "
            f"{caps.processes} processes: no memory cgroup can be made here, so the "
            "sandbox as a whole is not capped more closely"
        )
    return processes, memory
