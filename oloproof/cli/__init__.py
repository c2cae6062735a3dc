"""The `oloproof` command: everything the library does, driven by config files.

`command` is the installed command's entry point. It starts what takes longest before
anything else is loaded: the local store's process (Django's set-up, a few tenths of a
second) and, for a run, the trial of a sandbox; then `main` (in `_main`) reads the
command line and dispatches to a subcommand.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from oloproof.cli._main import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "build_parser", "command", "main"]


def command() -> NoReturn:
    """The `oloproof` command: `main` on the process's arguments, then a quick exit."""
    arguments = sys.argv[1:]
    asks_help = not {"-h", "--help"}.isdisjoint(arguments)
    # `run --no-record` still reads and keeps the verdict cache in the store;
    # `optimize --no-record` keeps everything in memory.
    uses_store = {
        "run": "--submit" not in arguments,
        "optimize": not {"--submit", "--no-record"} & set(arguments),
    }
    named = arguments[0] if arguments else ""
    runs_here = uses_store.get(named, False) and not asks_help
    if runs_here:
        # Opening the store takes longest: its process starts before the command line
        # is read and the subcommands are loaded (one never used is stopped at exit).
        # A data folder it cannot use is said by the command, as its error.
        from oloproof._store import start_store_early
        from oloproof_core import OloproofError

        with contextlib.suppress(OloproofError):
            start_store_early()
    if runs_here and named == "run":
        # A run's code is read, and its system run, in a sandbox: whether one can be made
        # here is tried (bubblewrap started twice) while the subcommand is loaded.
        from oloproof_core import check_sandbox_support_early

        check_sandbox_support_early()
    from oloproof.cli._main import main
    from oloproof_core import end_process

    end_process(main())


def __getattr__(name: str) -> Any:
    """`main`, `build_parser` and `COMMANDS`, from `_main`, loaded when first asked for."""
    if name in {"main", "build_parser", "COMMANDS"}:
        from oloproof.cli import _main

        return getattr(_main, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
