"""The command line read and dispatched: the parser, its subcommands, and how an error
is said. `oloproof.cli.command` starts what must start first, then calls `main`."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from typing import NoReturn

from oloproof.cli import _exit_codes
from oloproof_core import OloproofError, __version__

DESCRIPTION = "The `oloproof` command: everything the library does, driven by config files."

COMMANDS = (
    "_run",
    "_continue",
    "_optimize",
    "_gate",
    "_compare",
    "_plan",
    "_annotate",
    "_label",
    "_export",
    "_winner",
    "_runs",
    "_worker",
    "_serve",
    "_demo",
    "_user",
    "_project",
    "_token",
    "_doctor",
)
"""Each module registers one subcommand and sets `handler` to a function returning an exit code."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(_exit_codes.BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command's parser. Given the arguments, with the one subcommand they name (each
    subcommand's module, and what it imports, costs start-up time); otherwise, for help
    or a mistake, with every subcommand."""
    parser = _Parser(prog="oloproof", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"oloproof {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for name in _modules_for(argv):
        importlib.import_module(f"oloproof.cli.{name}").register(commands)
    return parser


def _modules_for(argv: Sequence[str] | None) -> Sequence[str]:
    first = next((arg for arg in argv or () if not arg.startswith("-")), None)
    named = f"_{first}"
    if argv and argv[0] == first and named in COMMANDS:
        return (named,)
    return COMMANDS


def main(argv: Sequence[str] | None = None) -> int:
    warnings.formatwarning = _plain_warning
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(arguments)
    args = parser.parse_args(arguments)
    if not hasattr(args, "handler"):
        parser.print_help()
        return _exit_codes.BAD_INPUT
    try:
        return int(args.handler(args))
    except OloproofError as exc:
        print(f"oloproof: error: {exc}", file=sys.stderr)
        return _exit_codes.BAD_INPUT
    except KeyboardInterrupt:
        print("oloproof: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader stopped early (`oloproof compare 1 2 | head`): nothing is wrong, and
        # the interpreter must not complain at exit about the output it cannot flush.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        if _refused_by_platform(exc):
            print(f"oloproof: error: {exc}", file=sys.stderr)
            return _exit_codes.BAD_INPUT
        traceback.print_exc()
        print("oloproof: internal error (above); please report it", file=sys.stderr)
        return _exit_codes.INTERNAL_ERROR


_python_warning = warnings.formatwarning


def _plain_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    """oloproof's own warnings as a line a person reads; others as Python shows them."""
    from oloproof_core import UnprotectedRunWarning

    if issubclass(category, UnprotectedRunWarning):
        return f"oloproof: warning: {message}\n"
    return _python_warning(message, category, filename, lineno, line)


def _refused_by_platform(exc: Exception) -> bool:
    """A request the platform refused (a bad config, a missing run), or settings from the
    environment it cannot use (a malformed DATABASE_URL): the user's to fix."""
    errors = sys.modules.get("runs.errors")
    if errors is not None and isinstance(exc, errors.DomainError):
        return True
    django_errors = sys.modules.get("django.core.exceptions")
    return django_errors is not None and isinstance(exc, django_errors.ImproperlyConfigured)
