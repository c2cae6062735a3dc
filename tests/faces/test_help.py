"""Every help page of the command prints: `oloproof --help`, each command and each action."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from oloproof.cli import COMMANDS, _exit_codes, build_parser


def _every_parser(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found.extend(_every_parser(child))
    return found


@pytest.mark.parametrize("parser", _every_parser(build_parser()), ids=lambda p: p.prog)
def test_each_help_page_formats(parser: argparse.ArgumentParser) -> None:
    assert parser.prog in parser.format_help()


def test_the_command_help_lists_every_command_and_exits_cleanly() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "oloproof", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    for name in COMMANDS:
        assert f"    {name.removeprefix('_')} " in done.stdout


def test_the_command_without_a_command_prints_its_help_as_a_mistake() -> None:
    done = subprocess.run([sys.executable, "-m", "oloproof"], capture_output=True, text=True)
    assert done.returncode == _exit_codes.BAD_INPUT
    assert "Traceback" not in done.stderr
    assert "commands:" in done.stdout
