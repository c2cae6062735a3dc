"""Every help page of the command prints: `oloproof --help`, each command and each action."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

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


def test_asking_how_to_run_makes_no_store_where_it_is_asked(tmp_path: Path) -> None:
    """`oloproof run --help` in any folder prints the help and leaves the folder as it
    was: no data folder, no migrations (a store is made for a run, not for its help)."""
    from tests.journeys.conftest import run_user

    done = run_user(["oloproof", "run", "--help"], tmp_path)

    assert done.returncode == 0, done.stderr
    assert "--repeats" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_the_help_of_the_one_command_asked_for_is_its_own() -> None:
    """The command builds only the subcommand it is asked for; its help is unchanged."""
    whole = next(p for p in _every_parser(build_parser()) if p.prog == "oloproof run")
    alone = next(
        p for p in _every_parser(build_parser(["run", "--help"])) if p.prog == "oloproof run"
    )
    assert alone.format_help() == whole.format_help()
