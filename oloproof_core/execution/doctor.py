"""Which protections of a run's figures this machine has: `oloproof doctor`, `protections()`.

An operator should not have to trust that a sandbox was made: this asks the same probe
a run asks (`sandbox_support`), and says for each protection whether it is on here and,
when it is not, what to do about it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass
from typing import Any

from oloproof_core.execution.isolation import SANDBOX_MODES, is_secret_name, sandbox_support


@dataclass(frozen=True)
class Protection:
    name: str
    on: bool
    detail: str


@dataclass(frozen=True)
class Protections:
    """The checks, in the order they are shown; `all_on` when a run here is protected."""

    checks: tuple[Protection, ...]
    mode: str

    @property
    def all_on(self) -> bool:
        return all(check.on for check in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "all_on": self.all_on,
            "mode": self.mode,
            "checks": [asdict(check) for check in self.checks],
        }

    def __str__(self) -> str:
        width = max(len(check.name) for check in self.checks)
        lines = [
            f"  {'on ' if check.on else 'OFF'}  {check.name:<{width}}  {check.detail}"
            for check in self.checks
        ]
        lines.append(f"  mode: {self.mode}")
        lines.append(
            "All protections are on."
            if self.all_on
            else "Runs here are marked: measurements and answers not protected."
        )
        return "\n".join(lines)


def protections() -> Protections:
    """Probe this machine as a run would, and say which protections are on."""
    support = sandbox_support()
    boxed = support.available
    why_not = "needs the sandbox (above)"
    secrets = sorted(name for name in os.environ if is_secret_name(name))
    checks = (
        Protection(
            "sandbox",
            boxed,
            f"{support.version}; systems run as {support.user}" if boxed else support.reason,
        ),
        Protection(
            "answers hidden",
            boxed,
            "the dataset's file and the store's folder are covered inside the sandbox"
            if boxed
            else why_not,
        ),
        Protection(
            "network",
            boxed,
            "none inside the sandbox but the metering gateway's socket" if boxed else why_not,
        ),
        Protection(
            "other processes",
            boxed,
            "a PID namespace: no other process is visible, and all the system starts dies with it"
            if boxed
            else why_not,
        ),
        Protection(
            "parent's memory",
            sys.platform.startswith("linux"),
            "the running process is made non-dumpable before a sandbox starts"
            if sys.platform.startswith("linux")
            else f"no prctl on {sys.platform}",
        ),
        Protection(
            "secrets",
            True,
            "systems get only the variables they need and those named in "
            "OLOPROOF_SYSTEM_ENV; withheld from systems: "
            + (", ".join(secrets) if secrets else "none set here"),
        ),
    )
    return Protections(checks=checks, mode=_mode())


def _mode() -> str:
    chosen = os.environ.get("OLOPROOF_SANDBOX") or ""
    if not chosen:
        return "auto (OLOPROOF_SANDBOX unset): a sandbox where one can be made"
    if chosen not in SANDBOX_MODES:
        return f"{chosen!r} from OLOPROOF_SANDBOX is not a mode: runs will refuse it"
    if chosen == "required":
        return (
            "required (OLOPROOF_SANDBOX): a floor no run lowers; runs asking for "
            "sandbox: off or isolation: thread are refused"
        )
    return f"{chosen} (OLOPROOF_SANDBOX)"
