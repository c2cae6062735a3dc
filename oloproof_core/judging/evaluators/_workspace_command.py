"""WorkspaceCommand: a command run in a copy of the case's workspace passes when it exits 0.

It judges in a process of its own like any evaluator that runs code the run did not
write (the task's tests are such code): in that process's sandbox, in a temporary copy
of the workspace as the system left it, with a time limit of its own inside the
verdict's.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from oloproof_core.cases.verdict import PASSED, Verdict
from oloproof_core.errors import ContractError, DeclarationError
from oloproof_core.judging.evaluators._base import Evaluator
from oloproof_core.judging.evaluators._case_view import CaseView

_PYTHONS = ("python", "python3")
_SHOWN_OUTPUT = 2_000


class WorkspaceCommand(Evaluator):
    """Passes when `command`, run in a copy of the case's workspace, exits with status 0.

    `command` is a list of arguments (or one string, split as a shell would, never run
    by one); a first argument `python` means the interpreter oloproof runs with, so the
    project's packages (pytest, say) are there. Past `timeout_s` the command is killed
    and the case fails.
    """

    def __init__(
        self, *, criterion: str = "workspace_command", command: Any, timeout_s: float = 60.0
    ) -> None:
        super().__init__(criterion=criterion, reads=("workspace",))
        owner = f"WorkspaceCommand(criterion={criterion!r})"
        self.command = _checked_command(command, owner)
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
            raise DeclarationError(f"{owner}: timeout_s is a number of seconds above 0")
        self.timeout_s = float(timeout_s)

    def parameters(self) -> dict[str, Any]:
        return {"command": list(self.command), "timeout_s": self.timeout_s}

    def judge(self, case: CaseView) -> Verdict:
        workspace = case.workspace
        if workspace is None:
            raise ContractError(
                f"case {case.id!r} has no workspace: WorkspaceCommand judges tasks whose rows "
                'carry files, e.g. "input": {"files": {"test_app.py": "..."}}'
            )
        argv = [sys.executable if self.command[0] in _PYTHONS else self.command[0]]
        argv += self.command[1:]
        try:
            done = subprocess.run(
                argv,
                cwd=workspace.path,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=self.timeout_s,
                check=False,
            )
        except FileNotFoundError:
            raise ContractError(
                f"the command {self.command[0]!r} was not found in the evaluator's sandbox; "
                "name a program its PATH holds, or 'python'"
            ) from None
        except subprocess.TimeoutExpired:
            return Verdict(value=0.0, feedback=self._said(f"ran past its {self.timeout_s:g} s"))
        if done.returncode == 0:
            return PASSED
        output = done.stdout.decode("utf-8", "replace")[-_SHOWN_OUTPUT:]
        said = self._said(f"exited with status {done.returncode}")
        left_out = "; ".join(workspace.left_out)
        return Verdict(
            value=0.0,
            feedback=said
            + (f"\n{output}" if output else "")
            + (f"\n(not in the workspace's copy: {left_out})" if left_out else ""),
        )

    def _said(self, what: str) -> str:
        return f"`{shlex.join(self.command)}` {what} in the workspace"


def _checked_command(command: Any, owner: str) -> tuple[str, ...]:
    if isinstance(command, str):
        command = shlex.split(command)
    if (
        not isinstance(command, Sequence)
        or not command
        or not all(isinstance(part, str) and part for part in command)
    ):
        raise DeclarationError(
            f"{owner}: command is a list of arguments, e.g. "
            f"command=['python', '-m', 'pytest', '-q'], got {command!r}"
        )
    return tuple(command)
