"""`oloproof doctor`: which protections of a run's figures this machine has."""

from __future__ import annotations

import argparse
import json

from oloproof.cli import _exit_codes


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "doctor",
        help="say which protections of a run's figures this machine has",
        description="Probe this machine as a run does: can a sandbox be made for the "
        "system's processes (bubblewrap and kernel namespaces), so that the system reads "
        "no answers, no store, no other process and no network but the model gateway? "
        "Exit codes: 0 every protection on, 6 some are off (runs are then marked not "
        "protected). The library's oloproof.protections() returns the same report.",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from oloproof_core import protections

    report = protections()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print("What protects a run's figures on this machine:")
        print(report)
    return _exit_codes.OK if report.all_on else _exit_codes.PROTECTIONS_OFF
