"""Whether a pool's processes get a sandbox: the probe, the modes, the warning.

`sandbox_support` runs one sandbox once per process, as every run would; `SandboxChoice`
turns the mode asked for (`SANDBOX_MODES`) into a `Sandbox` or a reason there is none,
warning (`UnprotectedRunWarning`) or refusing (`required`) where none can be made.
Beside the sandbox, the parent keeps its memory private (`keep_memory_private`) and
registers the paths every sandbox must hide (`keep_from_systems`, from `_kept_paths`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from oloproof_core.errors import ConfigError, SandboxFloorError
from oloproof_core.execution.isolation._caps import SandboxCaps
from oloproof_core.execution.isolation._kept_paths import kept_from_systems
from oloproof_core.execution.isolation._sandbox import SANDBOX_USER, Sandbox

SANDBOX_MODES = ("auto", "required", "off")
"""`auto`: a sandbox where one can be made, else a run marked not protected; `required`:
refuse to run without one; `off`: processes without a sandbox (marked not protected)."""

_PROBE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class SandboxSupport:
    """Whether this machine can make a sandbox, and with what; `reason` says why not."""

    available: bool
    reason: str
    tool: str | None = None
    version: str | None = None
    user: str | None = None

    def describe(self) -> dict[str, Any]:
        return {
            "available": self.available,
            "tool": self.version,
            "user": self.user,
            "reason": None if self.available else self.reason,
        }


class _CheckedOnce:
    """`sandbox_support`: the machine checked once per process. A caller waits for a check
    already under way (`check_sandbox_support_early`'s) and takes its answer;
    `cache_clear()` forgets it (a test that changes the machine's PATH)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answer: SandboxSupport | None = None
        self._under_way = False

    def __call__(self) -> SandboxSupport:
        """Probe once per process: find bubblewrap and run a sandbox that runs `true`."""
        with self._lock:
            if self._answer is None:
                self._answer = _checked_support()
            return self._answer

    @property
    def known(self) -> bool:
        return self._answer is not None

    def check_in_background(self) -> None:
        """Start the check in a thread of its own, unless it is known or under way (the
        command starts it as it begins, and a run asks again as it reads its config)."""
        if self._answer is None and not self._under_way:
            self._under_way = True
            threading.Thread(target=self, name="oloproof-sandbox-check", daemon=True).start()

    def cache_clear(self) -> None:
        with self._lock:
            self._answer = None
            self._under_way = False


sandbox_support = _CheckedOnce()


def check_sandbox_support_early() -> None:
    """Start `sandbox_support` in a thread of its own now, for a command that will ask it
    soon: its trial sandbox (bubblewrap started twice, tens of milliseconds of waiting)
    then runs while the command reads its config instead of before its first process."""
    if os.environ.get("OLOPROOF_SANDBOX") != "off":
        sandbox_support.check_in_background()


def _checked_support() -> SandboxSupport:
    if not sys.platform.startswith("linux"):
        return SandboxSupport(
            False, f"sandboxes are made with Linux namespaces; this is {sys.platform}"
        )
    tool = shutil.which("bwrap")
    if tool is None:
        return SandboxSupport(
            False,
            "bubblewrap is not installed (Debian and Ubuntu: apt-get install bubblewrap; "
            "Fedora: dnf install bubblewrap)",
        )
    as_root = os.geteuid() == 0
    if as_root and shutil.which("setpriv") is None:
        return SandboxSupport(
            False, "setpriv (util-linux) is missing: it drops root before the system starts"
        )
    user = f"uid {SANDBOX_USER} (nobody), dropped from root" if as_root else f"uid {os.getuid()}"
    version = _version(tool)
    # The default caps: a setting the run will refuse is the run's to report, not the probe's.
    sandbox = Sandbox(tool=tool, scan=False, caps=SandboxCaps.from_environment({}))
    try:
        finished = subprocess.run(
            sandbox.command(["true"], cwd="/", sys_path=[]),
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxSupport(False, f"bubblewrap could not be run: {exc}", tool, version)
    finally:
        sandbox.close()
    if finished.returncode != 0:
        said = (finished.stderr.strip().splitlines() or ["no message"])[-1]
        return SandboxSupport(False, f"bubblewrap failed: {said}. {_NAMESPACE_HINT}", tool, version)
    return SandboxSupport(True, "", tool, version, user)


_NAMESPACE_HINT = (
    "The kernel must allow namespaces: user namespaces for a user other than root "
    "(sysctl user.max_user_namespaces > 0; kernel.unprivileged_userns_clone = 1 on older "
    "Debian; kernel.apparmor_restrict_unprivileged_userns = 0 or an AppArmor profile for "
    "bwrap on Ubuntu 24.04), and in a container, a seccomp profile that permits them"
)


def _version(tool: str) -> str:
    try:
        said = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap"
    return said.stdout.strip() or "bubblewrap"


def sandbox_mode(sandbox: str | None, isolation: str = "process") -> str:
    """The mode asked for, else the operator's `OLOPROOF_SANDBOX`, else "auto".

    `OLOPROOF_SANDBOX=required` is a floor that no run lowers: there `sandbox: off` and
    `isolation: thread` are refused before anything runs, and `auto` means required.
    Every face plans its runs here (evaluate(), the CLI, the submission check, workers),
    and a run config's code is read in its sandbox under the same mode.
    """
    operator = os.environ.get("OLOPROOF_SANDBOX") or "auto"
    chosen = sandbox if sandbox is not None else operator
    if chosen not in SANDBOX_MODES:
        origin = "sandbox" if sandbox is not None else "OLOPROOF_SANDBOX"
        raise ConfigError(
            f"{origin} must be auto (a sandbox where one can be made), required (refuse to "
            f"run without one) or off (trusted code), got {chosen!r}"
        )
    if operator != "required":
        return chosen
    if isolation == "thread":
        raise SandboxFloorError("isolation", "thread", "runs the system in oloproof's process")
    if chosen == "off":
        raise SandboxFloorError("sandbox", "off", "runs the system without a sandbox")
    return "required"


class UnprotectedRunWarning(UserWarning):
    """A run whose system's processes run without a sandbox (said before its cases)."""


class SandboxChoice:
    """What a pool runs its processes in: a `Sandbox`, or none and why.

    `choose(mode)` applies `SANDBOX_MODES`: "auto" warns (`UnprotectedRunWarning`) when
    no sandbox can be made, "required" raises `IsolationError`, "off" asks for none.
    """

    def __init__(self, sandbox: Sandbox | None, reason: str, *, required: bool = False) -> None:
        self.sandbox = sandbox
        self.reason = reason
        self.required = required
        self.unavailable = False
        """Asked for ("auto") where none can be made: the run is said to be unprotected."""

    @classmethod
    def without(cls, reason: str = "not asked for (isolation without a sandbox)") -> SandboxChoice:
        return cls(None, reason)

    @classmethod
    def choose(
        cls,
        mode: str,
        *,
        hidden: Iterable[str] = (),
        gateway_socket: Callable[[], str] | None = None,
    ) -> SandboxChoice:
        if mode not in SANDBOX_MODES:
            raise ValueError(
                f"sandbox must be one of {', '.join(SANDBOX_MODES)} (auto: a sandbox where one "
                f"can be made), got {mode!r}"
            )
        if mode == "off":
            return cls.without("switched off (sandbox: off)")
        support = sandbox_support()
        if not support.available:
            if mode == "required":
                from oloproof_core.execution.isolation._errors import IsolationError

                raise IsolationError(
                    f"sandbox: required, but no sandbox can be made here: {support.reason}. "
                    "Run `oloproof doctor` to see which protections this machine has."
                )
            choice = cls.without(support.reason)
            choice.unavailable = True
            choice.say_if_unprotected(stacklevel=3)
            return choice
        keep_memory_private()
        socket_path = gateway_socket() if gateway_socket is not None else None
        hidden = [*hidden, *kept_from_systems()]
        sandbox = Sandbox(
            tool=support.tool,
            hidden=hidden,
            gateway_socket=socket_path,
            version=support.version,
            user=support.user,
        )
        return cls(sandbox, "", required=mode == "required")

    def say_if_unprotected(self, *, stacklevel: int = 2) -> None:
        """Warn that the system runs without a sandbox, unless it was switched off."""
        if self.unavailable:
            warnings.warn(
                "the system runs without a sandbox, so its measurements and answers are "
                f"not protected: {self.reason} (`oloproof doctor` says more)",
                UnprotectedRunWarning,
                stacklevel=stacklevel + 1,
            )

    def describe(self) -> dict[str, Any]:
        if self.sandbox is None:
            return {"on": False, "reason": self.reason}
        return {"on": True, **self.sandbox.describe()}

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()


_PR_SET_DUMPABLE = 4


def keep_memory_private() -> None:
    """Make this process non-dumpable: no process of another user, and none of ours
    without the right to trace, may read its memory or environment through `/proc` (the
    provider keys are in both). A sandbox already hides `/proc`; this holds beside it."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
