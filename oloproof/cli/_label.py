"""`oloproof label`: label a case's metric, import a file of labels, show what they say.

    oloproof label RUN CASE METRIC VALUE [--note T] [--by USER]
    oloproof label import FILE --run RUN [--metric M] [--by USER]
    oloproof label show RUN METRIC [--width W] [--json]

The work is the library's (`oloproof.label`, `import_labels`, `calibration`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from oloproof._labels import calibration, import_labels, label
from oloproof.cli import _exit_codes

USAGE = (
    "oloproof label RUN CASE METRIC VALUE [--note TEXT] [--by USER]\n"
    "       oloproof label import FILE --run RUN [--metric METRIC] [--by USER]\n"
    "       oloproof label show RUN METRIC [--width W] [--json]"
)
FORMS = {"import": ("FILE",), "show": ("RUN", "METRIC")}
LABEL_FORM = ("RUN", "CASE", "METRIC", "VALUE")
OPTIONS = {
    "label": {"note", "by"},
    "import": {"run", "metric", "by"},
    "show": {"width", "json"},
}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "label",
        help="label a case's metric, import labels from a file, or show what labels say",
        usage=USAGE,
        description="A label is the value of a metric a person judges right for what a run "
        "judged (its input, output and expected value): a later run with the same output "
        "reuses it. Pass/fail takes pass or fail (1 or 0); a score, a number in its range. "
        "Labels come from the command line as `<login>@command-line` unless --by names an "
        "account, whose runner role in the run's project is checked. A file is CSV (header "
        "case_id,metric,value,note) or JSON Lines with the same keys; one bad row refuses "
        "the whole file. `show` prints the judge-only figure, the figure with labels, the "
        "judge's calibration and how many more labels reach a width. Exit codes: 0 done, "
        "3 refused (unknown run, case or metric, a value out of range, a bad file).",
    )
    parser.add_argument("words", nargs="+", metavar="ARG", help="see the forms above")
    parser.add_argument("--note", help="why (label)")
    parser.add_argument("--by", metavar="USER", help="label as this account")
    parser.add_argument("--run", help="the run the file's labels are for (import)")
    parser.add_argument("--metric", help="the metric of every row without one (import)")
    parser.add_argument("--width", type=float, help="the interval width to reach (show)")
    parser.add_argument("--json", action="store_true", help="print JSON (show)")
    parser.set_defaults(handler=handle)


def _refuse(message: str) -> int:
    print(f"oloproof label: error: {message}\nusage: {USAGE}", file=sys.stderr)
    return _exit_codes.BAD_INPUT


def handle(args: argparse.Namespace) -> int:
    form = args.words[0] if args.words[0] in FORMS else "label"
    words = args.words[1:] if form in FORMS else args.words
    expected = FORMS.get(form, LABEL_FORM)
    if len(words) != len(expected):
        name = f"label {form}" if form in FORMS else "label"
        return _refuse(f"`oloproof {name}` takes {' '.join(expected)}")
    given = {
        name
        for name in OPTIONS["import"] | OPTIONS["label"] | OPTIONS["show"]
        if getattr(args, name) not in (None, False)
    }
    stray = sorted(given - OPTIONS[form])
    if stray:
        return _refuse(f"--{stray[0]} does not go with this form")
    if form == "import":
        if args.run is None:
            return _refuse("give the run the labels are for: --run RUN")
        count = import_labels(words[0], run=args.run, metric=args.metric, by=args.by)
        print(f"{count} label{'s' if count != 1 else ''} saved from {words[0]} for run #{args.run}")
        return _exit_codes.OK
    if form == "show":
        report = calibration(words[0], words[1]).to_dict(width=args.width)
        print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else _shown(report))
        return _exit_codes.OK
    run, case, metric, value = words
    saved = label(run, case, metric, value, note=args.note or "", by=args.by)
    note = f"  {saved['note']}" if saved["note"] else ""
    print(f"{case}  {saved['metric']} = {saved['value']:g}  by {saved['author']}{note}")
    return _exit_codes.OK


def _interval(item: dict[str, Any]) -> str:
    return f"[{item['lower']:.3g}, {item['upper']:.3g}]"


def _figure(name: str, item: dict[str, Any]) -> str:
    if item.get("value") is None:
        return f"{name} n/a"
    return f"{name} {item['value']:.3g} {_interval(item)}"


def _shown(report: dict[str, Any]) -> str:
    low, high = report["score_range"]
    judge = report["judge_only"]
    kind = f"{report['value_type']}, {low:g} to {high:g}"
    lines = [
        f"{report['metric']} of run #{report['run_id']} ({kind})",
        f"  judge only:   {_number(judge['estimate'])}  {_interval(judge['interval'])}  "
        f"({judge['method']})",
    ]
    labelled = report["labelled"]
    if labelled is None:
        first = report.get("next_case") if report["labelled_cases"] else None
        then = f" (label {first}, the queue's first draw)" if first else ""
        lines.append(
            "  with labels:  no labelled draws yet: the figure assumes the judge is right" + then
        )
    elif labelled.get("known"):
        missing = labelled["n_missing"]
        lines.append(
            f"  with labels:  {_number(labelled['estimate'])}  {_interval(labelled['interval'])}  "
            f"known: people labelled all {labelled['n_labels']} cases"
            + (f" ({missing} missing)" if missing else "")
            + ", so this is their figure, exact, not an estimate"
        )
        lines.append(f"  judge's bias (people minus judge): {labelled['judge_bias']['lower']:+.3g}")
    else:
        lines.append(
            f"  with labels:  {_number(labelled['estimate'])}  {_interval(labelled['interval'])}  "
            f"from {labelled['n_labels']} labelled draws"
            + (", split by the judge's two verdicts (exact)" if labelled.get("by_verdict") else "")
        )
        lines.append(f"  judge's bias (people minus judge): {_interval(labelled['judge_bias'])}")
    lines.append(_calibration_line("judge vs people", report["calibration"]))
    if report["people"] is not None:
        lines.append(_calibration_line("person vs person", report["people"]))
    lines.append(_needed_line(report))
    return "\n".join(lines)


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _calibration_line(title: str, found: dict[str, Any] | None) -> str:
    if found is None:
        return f"  {title}: no labelled case yet"
    names = (
        "agreement",
        "kappa",
        "false_pass_rate",
        "false_fail_rate",
        "correlation",
        "mean_abs_difference",
    )
    parts = [_figure(name.replace("_", " "), found[name]) for name in names if name in found]
    return f"  {title} on {found['n']} cases: " + ", ".join(parts)


def _needed_line(report: dict[str, Any]) -> str:
    labelled = report["labelled"]
    if labelled is None:
        return "  label the queue's first draws to see how many more labels narrow the interval"
    width, needed, left = report["width"], report["labels_needed"], labelled["cases_left"]
    if labelled.get("known"):
        if labelled["n_missing"]:
            return "  no case is left to label: only the missing cases keep the interval open"
        return "  no case is left to label: no interval is left to narrow"
    if needed is None:
        return f"  labels alone cannot bring the interval to width {width:.3g}"
    plural = "s" if left != 1 else ""
    return (
        f"  about {needed} more labelled draws bring the interval to width {width:.3g} "
        f"({left} case{plural} left to label)"
    )
