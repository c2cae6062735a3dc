"""Markdown tables of a `bench.scale_all` report, each target checked ✓ or ✗.

Every table reads the figures the benchmarks wrote (their JSON, kept in the report
under each step's commands) and nothing else; a step that did not run or failed
leaves its section out, named in the steps' table.
"""

from __future__ import annotations

from typing import Any

PAGE_P50_MS, PAGE_P99_MS = 150.0, 500.0
RECORDING_OVER_COPY = 0.85
"""Recording's throughput at least this share of a raw COPY of the same rows."""
EFFICIENCY_TARGET = 0.7
"""Throughput(N) / (N × throughput(1)) at or above this is ticked (`--efficiency-target`)."""
FLAT_TOLERANCE = 1.1
"""The conclusion's peak at the largest size within this of the smallest's: flat, as the
issue asks of the finalising step's memory."""

Check = dict[str, Any]


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def _check(section: str, target: str, measured: str, ok: bool) -> Check:
    return {"section": section, "target": target, "measured": measured, "ok": ok}


def _results(report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The figures of step `name`'s commands, if it ran and every command succeeded
    (a command that wrote a list has it under "rows")."""
    for step in report["steps"]:
        if step["name"] == name and step["ok"]:
            return [
                {**(c["result"] if isinstance(c["result"], dict) else {"rows": c["result"]}),
                 "params": c["params"]}
                for c in step["commands"]
            ]  # fmt: skip
    return []


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def _seconds(value: float | None) -> str:
    """A phase's seconds; none when it fell between two polls of the run (0.25 s)."""
    return "—" if value is None else str(value)


def _load(before: list[float], after: list[float]) -> str:
    return f"{' / '.join(map(str, before))} → {' / '.join(map(str, after))}"


def _steps_section(report: dict[str, Any]) -> list[str]:
    rows = [
        [step["name"], step["title"], f"{step['seconds']:,}",
         _load(step["load_before"], step["load_after"]),
         "ok" if step["ok"] else "**failed**: " + _failure(step)]
        for step in report["steps"]
    ]  # fmt: skip
    return _table(["step", "what", "seconds", "load average (1/5/15 min)", "result"], rows)


def _failure(step: dict[str, Any]) -> str:
    failed = [c for c in step["commands"] if c["returncode"] != 0]
    if not failed:
        return "a command did not run"
    tail = [line for line in failed[0].get("output_tail", []) if line.strip()]
    return f"`{failed[0]['label']}` exited {failed[0]['returncode']}: {(tail or [''])[-1][:160]}"


def _conclusion(report: dict[str, Any]) -> tuple[list[str], list[Check]]:
    results = _results(report, "conclusion")
    if not results:
        return [], []
    sizes = sorted(results[0]["rows"], key=lambda row: row["cases"])
    rows = []
    for row in sizes:
        traced, plain = row["traced"], row["plain"]
        rows.append([
            f"{row['cases']:,}", f"{row['dataset_queries']}, {row['dataset_seconds']}",
            f"{row['planning_queries']}, {row['planning_seconds']}, {row['chunks']:,}",
            f"{traced['peak_mb']:,} MB", f"{_per_case(row):.0f} B",
            f"{plain['rss_before_mb']:.0f} → {plain['rss_max_mb']:.0f} MB", plain["seconds"],
            f"{traced['estimate']:.6f}", traced["gate"],
        ])  # fmt: skip
    small, large = sizes[0], sizes[-1]
    large_peak, small_peak = large["traced"]["peak_mb"], small["traced"]["peak_mb"]
    ok = large_peak <= FLAT_TOLERANCE * small_peak
    growth = (large_peak - small_peak) * 2**20 / (large["cases"] - small["cases"])
    measured = (
        f"{large_peak:,} MB at {large['cases']:,} cases against {small_peak:,} MB at "
        f"{small['cases']:,}: {growth:.0f} bytes a case more"
    )
    target = f"flat: peak at {large['cases']:,} ≤ {FLAT_TOLERANCE}× the peak at {small['cases']:,}"
    header = ["cases", "dataset recording: statements, s", "planning: statements, s, chunks",
              "peak (tracemalloc)", "peak per case", "resident, before → most", "seconds",
              "estimate", "gate"]  # fmt: skip
    lines = [*_table(header, rows), "", f"{_mark(ok)} {target}: {measured}."]
    return lines, [_check("conclusion", target, measured, ok)]


def _per_case(row: dict[str, Any]) -> float:
    return float(row["traced"]["peak_mb"]) * 2**20 / int(row["cases"])


def _planning(report: dict[str, Any]) -> tuple[list[str], list[Check]]:
    results = _results(report, "planning")
    if not results:
        return [], []
    sizes = results[0]["planning"]
    rows = [
        [f"{row['cases']:,}", f"{row['chunks']:,}", row["submission_statements"],
         row["planning_statements"], row["planning_outcome"]]
        for row in sizes
    ]  # fmt: skip
    counts = {(row["submission_statements"], row["planning_statements"]) for row in sizes}
    ok = len(counts) == 1
    target = "statements sent by submission and by planning the same at every size"
    measured = ", ".join(f"{s} and {p}" for s, p in sorted(counts))
    header = ["cases", "chunks", "submission: statements", "planning: statements", "planning"]
    return [*_table(header, rows), "", f"{_mark(ok)} {target}: {measured}."], [
        _check("planning", target, measured, ok)
    ]


def _record(report: dict[str, Any]) -> tuple[list[str], list[Check]]:
    results = _results(report, "record")
    if not results:
        return [], []
    rows, checks = [], []
    for row in results[0]["rows"]:
        ratio = row["floor_seconds"] / row["seconds"]
        ok = ratio >= RECORDING_OVER_COPY
        rows.append([
            row["backend"], f"{row['cases']:,}", row["seconds"], f"{row['cases_per_second']:,}",
            row["floor_seconds"], f"{ratio:.2f}×", row["queries"], row["peak_memory_mb"],
            _mark(ok),
        ])  # fmt: skip
        target = f"recording's throughput ≥ {RECORDING_OVER_COPY}× a raw COPY ({row['backend']})"
        checks.append(_check("record", target, f"{ratio:.2f}×", ok))
    header = ["backend", "cases", "seconds", "cases/s", "raw COPY s", "throughput × raw COPY",
              "queries", "peak MB", f"≥ {RECORDING_OVER_COPY}×"]  # fmt: skip
    return _table(header, rows), checks


def _series(report: dict[str, Any], name: str) -> tuple[list[str], list[Check]]:
    results = _results(report, name)
    if not results:
        return [], []
    series = results[0][name]
    target = report["efficiency_target"]
    rows, checks = [], []
    for run in series["runs"]:
        efficiency = run["efficiency"]
        # CPU-bound work cannot gain from more workers than cores: no target there.
        judged = run["workers"] > 1 and (name == "io" or run["workers"] <= report["cpus"])
        ok = not judged or (efficiency is not None and efficiency >= target)
        phases = run["phases_s"]
        rows.append([
            run["workers"], run["seconds"], f"{run['cases_per_s']:,.0f}", efficiency,
            _mark(ok) if judged else "—",
            " / ".join(_seconds(phases[key]) for key in
                       ("submission", "planning", "chunks", "finalising")),
            ", ".join(map(str, run["worker_peak_rss_mb"])),
            (run["finalising_rss_mb"] or {}).get("peak", "—"),
            "yes" if run["each_case_once"] else "**no**",
            _load(run["load_before"], run["load_after"]),
        ])  # fmt: skip
        if judged:
            measured = f"{efficiency} on {run['workers']} workers"
            checks.append(_check(name, f"efficiency ≥ {target}", measured, ok))
    header = ["workers", "seconds", "cases/s", "efficiency", f"≥ {target}",
              "submission / planning / chunks / finalising s", "worker peak MB",
              "finalising peak MB", "each case once", "load average before → after"]  # fmt: skip
    caption = (
        f"{series['cases']:,} cases, chunks of {series['chunk_size']:,}"
        + (f", {series['concurrency']} cases at a time per chunk" if series["concurrency"] else "")
        + f"; {report['cpus']} cores."
    )
    return [caption, "", *_table(header, rows)], checks


def _faults(report: dict[str, Any]) -> tuple[list[str], list[Check]]:
    results = _results(report, "faults")
    if not results:
        return [], []
    rows, checks = [], []
    for result in results:
        run, at = result["faults"], result["params"]["fault_at"]
        injected = run["faults"] is not None
        ok = injected and run["case_rows"] == run["distinct_case_ids"] == run["cases"]
        fault = (
            f"{run['faults']['at_s']} s, {run['faults']['chunks_done_then']} chunks done"
            if injected
            else "**never**"
        )
        rows.append([
            f"{at:.0%}", f"{run['cases']:,}", fault, run["seconds"], "succeeded",
            f"{run['case_rows']:,}", f"{run['distinct_case_ids']:,}",
            f"{run['chunk_attempts']} / {run['chunks']}", _mark(ok),
        ])  # fmt: skip
        measured = f"{run['case_rows']:,} and {run['distinct_case_ids']:,}, run succeeded"
        target = f"fault at {at:.0%}: count(*) = count(DISTINCT case_id) = {run['cases']:,}"
        checks.append(_check("faults", target, measured, ok))
    header = ["fault after", "cases", "worker killed, broker restarted at", "seconds", "run",
              "count(*)", "count(DISTINCT case_id)", "chunk attempts / chunks", "✓"]  # fmt: skip
    return _table(header, rows), checks


def _submission(report: dict[str, Any]) -> tuple[list[str], list[Check]]:
    lines: list[str] = []
    checks = []
    for result in _results(report, "submission"):
        rows = []
        for row in result["rows"]:
            ok = row["rows"] == row["n_cases"] == row["cases"]
            rows.append([
                f"{row['cases']:,}", row["resident_before_mb"], row["resident_peak_mb"],
                row["peak_over_before_mb"], row["seconds"], f"{row['rows']:,}", _mark(ok),
            ])  # fmt: skip
            target = f"the {row['cases']:,}-case dataset recorded whole"
            checks.append(_check("submission", target, f"{row['rows']:,} rows", ok))
        lines += [
            "`runs.services.run_submit` alone, in a process of its own"
            " (`bench.submit_memory`): its resident memory before, and its peak (`VmHWM`)"
            " during the submission.",
            "",
            *_table(["cases", "resident before MB", "peak MB", "peak over before MB",
                     "seconds", "dataset rows recorded", "rows = cases"], rows),
        ]  # fmt: skip
    during = _submission_during_runs(report)
    if during:
        lines += [
            *([""] if lines else []),
            "During the runs on workers: the peak resident size (`ru_maxrss`) of the process "
            "that submitted each run; it set Django up and migrated the scratch database "
            "before.",
            "",
            *_table(["run", "cases", "submission s", "peak resident MB"], during),
        ]
    return lines, checks


def _submission_during_runs(report: dict[str, Any]) -> list[list[Any]]:
    return [
        [f"trivial, {run['workers']} worker{'s' if run['workers'] > 1 else ''}",
         f"{series['cases']:,}", run["phases_s"]["submission"],
         run["submitting_process_peak_rss_mb"]]
        for result in _results(report, "trivial")
        for series in [result["trivial"]]
        for run in series["runs"]
    ] + [
        [f"faults at {result['params']['fault_at']:.0%}", f"{result['faults']['cases']:,}",
         result["faults"]["phases_s"]["submission"],
         result["faults"]["submitting_process_peak_rss_mb"]]
        for result in _results(report, "faults")
    ]  # fmt: skip


def _pages(report: dict[str, Any]) -> tuple[list[str], list[Check]]:
    results = _results(report, "pages")
    if not results:
        return [], []
    result = results[0]
    rows, checks = [], []
    for page in result["pages"]:
        ok = page["p50_ms"] <= PAGE_P50_MS and page["p99_ms"] <= PAGE_P99_MS
        rows.append([page["page"], page["p50_ms"], page["p99_ms"], page["max_ms"],
                     page["first_ms"], page["p50_over_floor"], _mark(ok)])  # fmt: skip
        measured = f"p50 {page['p50_ms']} ms, p99 {page['p99_ms']} ms"
        target = f"{page['page']}: p50 ≤ {PAGE_P50_MS:.0f} ms, p99 ≤ {PAGE_P99_MS:.0f} ms"
        checks.append(_check("pages", target, measured, ok))
    caption = (
        f"{result['params']['runs']:,} runs and two runs of {result['large_cases']:,} cases; "
        f"{result['repeats']} rounds; load average {result['load_average_before_after'][0]} → "
        f"{result['load_average_before_after'][1]}; seeding {result['seed_s']} s."
    )
    header = ["page", "p50 ms", "p99 ms", "max ms", "first request ms", "p50 × floor",
              f"≤ {PAGE_P50_MS:.0f} / {PAGE_P99_MS:.0f} ms"]  # fmt: skip
    return [caption, "", *_table(header, rows)], checks


def markdown(report: dict[str, Any]) -> tuple[str, list[Check]]:
    """The report as markdown, and every check made."""
    sections: list[tuple[str, tuple[list[str], list[Check]]]] = [
        ("The conclusion's memory", _conclusion(report)),
        ("Planning's statements", _planning(report)),
        ("Recording against a raw COPY (PostgreSQL)", _record(report)),
        ("I/O-bound across workers", _series(report, "io")),
        ("Trivial across workers", _series(report, "trivial")),
        ("Faults at scale", _faults(report)),
        ("Submission's memory", _submission(report)),
        ("Pages at scale", _pages(report)),
    ]
    checks = [check for _, (_, found) in sections for check in found]
    lines = [
        f"`{report['command']}`: commit {report['commit'][:12]}"
        + (" (with tracked files modified)" if report["tracked_files_modified"] else "")
        + f", {report['started']} to {report['ended']}, {report['seconds'] / 60:.1f} min;"
        f" {report['machine']}; load average {_load(report['load_before'], report['load_after'])}.",
        "",
        *_steps_section(report),
        "",
        f"Targets: {sum(c['ok'] for c in checks)} of {len(checks)} met.",
        *[f"- ✗ {c['target']}: {c['measured']}" for c in checks if not c["ok"]],
    ]
    for title, (body, _) in sections:
        if body:
            lines += ["", f"### {title}", "", *body]
    return "\n".join(lines) + "\n", checks
