"""`oloproof compare BASELINE CANDIDATE [CANDIDATE ...]`: runs compared case by case.

Two runs: the paired comparison, its notes and its export. Three to eight: each
candidate against the first run, side by side, as the dashboard's compare page shows
them (`oloproof_core.results.compare.compare_side_by_side`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from oloproof._results import load
from oloproof._transcripts import transcript_difference
from oloproof.cli import _exit_codes
from oloproof_core import ConfigError

if TYPE_CHECKING:
    from oloproof_core.results.compare import Comparison, StepDifference

    StepsFound = tuple[str, StepDifference | None]


class _CompareChoices:
    """An option's choices, read from `oloproof_core.results.compare` only when argparse asks.

    Building the parser happens for every command; importing the comparison (and the
    statistics under it) then would slow `oloproof run` down for nothing. Each option
    names a metavar: without one, argparse lists the choices as the parser is built.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def _values(self) -> tuple[str, ...]:
        import oloproof_core.results.compare as compare

        return tuple(getattr(compare, self.name))

    def __contains__(self, value: object) -> bool:
        return value in self._values()

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "compare",
        help="compare recorded runs on the same cases (paired by case id)",
        description="Pair runs by case id (each a result file written by 'oloproof run "
        "--json' or a run number in the project's store) and "
        "show, per metric, both estimates, the paired difference (candidate − baseline) with "
        "its interval and p-value, and the regressed and improved cases. The first run is "
        "the baseline; with up to seven candidates after it, each is compared with it, side "
        "by side, with the pairs, complete pairs and clusters each figure is over. With one "
        "candidate, --export writes "
        "one row per case (both outputs, each metric's values and change) to a .csv or "
        ".jsonl file. When the runs repeated their cases, each case is also judged against "
        "its own noise (regressed, improved, flaky, ...), and --cases lists one status. "
        "Exit codes: 0 compared, 3 bad input (runs of different datasets "
        "included), 4 internal error.",
    )
    parser.add_argument("baseline", help="the baseline run: a result JSON file or a run number")
    parser.add_argument(
        "candidates",
        nargs="+",
        metavar="candidate",
        help="the candidate run(s), at most seven: result JSON files or run numbers",
    )
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="confidence level (default 0.95)"
    )
    parser.add_argument(
        "--no-fdr",
        dest="fdr",
        action="store_false",
        help="flag metrics on plain p-values instead of Benjamini–Hochberg q-values",
    )
    parser.add_argument(
        "--export",
        metavar="FILE",
        help="also write the cases, one row each, to FILE (.csv or .jsonl)",
    )
    parser.add_argument(
        "--steps",
        metavar="CASE_ID",
        help="also show where the two runs' transcripts of this case first differ, with "
        "both steps (latency, tokens and cost left out of the comparison)",
    )
    _export_options(parser)
    parser.set_defaults(handler=handle)


def _export_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--show",
        choices=_CompareChoices("CASE_FILTERS"),
        metavar="CASES",
        default="all",
        help="with --export: which cases, one of %(choices)s (default all)",
    )
    parser.add_argument(
        "--cases",
        choices=_CompareChoices("REPEAT_FILTERS"),
        metavar="STATUS",
        help="list only the cases with this status against their own noise, one of "
        "%(choices)s (with --export, export only their rows): regressed and improved need "
        "a change beyond the case's repeats' noise (exact test per case, family-wise error "
        "across cases at most 1 − --confidence)",
    )
    parser.add_argument(
        "--metric", help="judge --show, --order and --cases on this metric (default: all)"
    )
    parser.add_argument(
        "--order",
        choices=_CompareChoices("CASE_ORDERS"),
        metavar="ORDER",
        default="case",
        help="with --export: case (the runs' order), change (largest drop first) or -change",
    )


def _checked(args: argparse.Namespace) -> None:
    from oloproof_core.results.compare import check_side_by_side

    if not 0 < args.confidence < 1:
        raise ConfigError(
            f"--confidence must be between 0 and 1 (e.g. 0.95), got {args.confidence}"
        )
    check_side_by_side(1 + len(args.candidates))
    if args.export and len(args.candidates) > 1:
        raise ConfigError("--export writes one pair's cases: name one candidate with it")
    if args.cases and len(args.candidates) > 1:
        raise ConfigError("--cases lists one pair's cases: name one candidate with it")
    if args.steps and len(args.candidates) > 1:
        raise ConfigError("--steps compares one pair's transcripts: name one candidate with it")


def handle(args: argparse.Namespace) -> int:
    _checked(args)
    from oloproof._side_by_side import compare_side_by_side, different_datasets
    from oloproof_core.results.compare import compare_runs  # the statistics: only when comparing

    if len(args.candidates) > 1:
        both = compare_side_by_side(
            args.baseline, args.candidates, confidence=args.confidence, fdr=args.fdr
        )
        print(json.dumps(both.to_dict(), indent=2, ensure_ascii=False) if args.json else both)
        return _exit_codes.OK
    baseline, candidate = load(args.baseline), load(args.candidates[0])
    problem = different_datasets(baseline, candidate)
    if problem:
        print(f"oloproof: error: {problem}", file=sys.stderr)
        return _exit_codes.BAD_INPUT
    comparison = compare_runs(baseline, candidate, confidence=args.confidence, fdr=args.fdr)
    if args.export:
        written = comparison.export(
            args.export,
            baseline=baseline,
            candidate=candidate,
            show=args.show,
            metric=args.metric,
            order=args.order,
            repeat_status=args.cases or "all",
        )
        # stderr, so that --json output on stdout stays one JSON document.
        print(f"wrote {written} cases to {args.export}", file=sys.stderr)
    steps = None
    if args.steps:
        steps = (args.steps, transcript_difference(baseline, candidate, args.steps))
    _print_pair(comparison, args, steps)
    return _exit_codes.OK


def _print_pair(
    comparison: Comparison, args: argparse.Namespace, steps: StepsFound | None = None
) -> None:
    """The comparison, its cases against their own noise when the runs repeated them or
    `--cases` asks for them, and where one case's transcripts part (`--steps`)."""
    from oloproof_core.results.compare import difference_lines, repeat_case_lines

    wanted = args.cases is not None or max(comparison.repeats) > 1
    cases = comparison.repeat_cases(metric=args.metric) if wanted else None
    if args.json:
        found = comparison.to_dict()
        if cases is not None:
            found["repeat_cases"] = cases.to_dict()
            if args.cases is not None:
                kept = {case.case_id for case in cases.filter(args.cases)}
                found["repeat_cases"]["cases"] = [
                    case for case in found["repeat_cases"]["cases"] if case["case_id"] in kept
                ]
                found["repeat_cases"]["shown"] = args.cases
        if steps is not None:
            case_id, difference = steps
            found["transcript_difference"] = {
                "case_id": case_id,
                "difference": None if difference is None else difference.to_dict(),
            }
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return
    print(comparison)
    if cases is not None:
        print("\n".join(repeat_case_lines(cases, args.cases)))
    if steps is not None:
        print("\n".join(difference_lines(*steps)))
