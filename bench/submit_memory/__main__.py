"""Peak resident memory of the process that submits a run to the workers, by dataset size.

    .venv/bin/python -m bench.submit_memory [--cases 100000 1000000] [--label after]
                                            [--postgres postgresql://postgres@127.0.0.1:5432]

For each size, a process of its own sets Django up on a scratch PostgreSQL database
(`oloproof_submit_mem`, dropped after), writes the trivial project of
`bench.scale_workers` with its dataset (a fixed salt, so every measurement of a size
submits the same file), resets the kernel's high-water mark of its resident memory
(`/proc/self/clear_refs`) and calls `runs.services.run_submit`, what `oloproof run
--submit`, the API and the New-run form call: the config checked as a worker will load
it, the dataset's rows checked and recorded. It reports the resident memory before, the
peak during the submission (`VmHWM`), the seconds (and, once it is over, the seconds
of checking the file alone, `check_dataset_file`), and what was recorded: the dataset's
digest, its row count and an MD5 of its rows in order (computed by PostgreSQL), so two
measurements of the same size can be compared row for row. No worker runs: the run stays
queued, its hand-over in the data folder's filesystem broker.

Rows are merged by `--label` into bench/results/submit_memory.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._platform import drop_database, fresh_database

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results" / "submit_memory.json"
DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432"
DATABASE = "oloproof_submit_mem"
SALT = "submit-memory"

ROWS_MD5 = """
SELECT md5(string_agg(
    concat_ws('|', case_id, position, input::text, expected::text, split, cluster),
    E'\\n' ORDER BY position))
FROM runs_datasetcase WHERE dataset_id = %s
"""


def _status_mb(key: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    raise SystemExit(f"/proc/self/status has no {key}")


def _child(cases: int, work: Path) -> dict[str, Any]:
    """One submission in this process (its environment names the scratch database)."""
    import gc

    import django
    from django.core.management import call_command

    from bench.scale_workers._project import run_config, write_project

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)
    project = write_project(work / "project", kind="trivial", cases=cases, salt=SALT)
    from runs.services import run_submit

    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # the high-water mark starts again here
    before = _status_mb("VmRSS")
    started = time.perf_counter()
    run = run_submit(config=run_config("trivial", concurrency=None), base_dir=str(project))
    seconds = time.perf_counter() - started
    peak = _status_mb("VmHWM")
    assert run.dataset_id is not None
    return {
        "cases": cases,
        "resident_before_mb": before,
        "resident_peak_mb": peak,
        "peak_over_before_mb": round(peak - before, 1),
        "seconds": round(seconds, 2),
        "check_seconds": _check_seconds(project / "data.jsonl"),
        **_recorded(run.dataset_id),
    }


def _check_seconds(path: Path) -> float | None:
    """The file's check alone, once more after the submission (None: no such step)."""
    import oloproof_core as engine

    check = getattr(engine, "check_dataset_file", None)
    if check is None:
        return None
    started = time.perf_counter()
    check(path)
    return round(time.perf_counter() - started, 2)


def _recorded(dataset_id: int) -> dict[str, Any]:
    from django.db import connection

    from runs.models import Dataset, DatasetCase

    dataset = Dataset.objects.get(pk=dataset_id)
    with connection.cursor() as cursor:
        cursor.execute(ROWS_MD5, [dataset_id])
        (rows_md5,) = cursor.fetchone()
    return {
        "digest": dataset.digest,
        "n_cases": dataset.n_cases,
        "rows": DatasetCase.objects.filter(dataset_id=dataset_id).count(),
        "rows_md5": rows_md5,
    }


def measure(server: str, cases: int) -> dict[str, Any]:
    """A fresh scratch database and folder, one child process submitting, both removed."""
    url = fresh_database(server, DATABASE)
    try:
        with tempfile.TemporaryDirectory(prefix="oloproof_submit_mem_") as folder:
            env = {
                key: value
                for key, value in os.environ.items()
                if key not in ("CELERY_BROKER_URL", "OLOPROOF_MAX_CASES")
            }
            env.update(
                DATABASE_URL=url,
                OLOPROOF_DATA_DIR=str(Path(folder) / "data"),
                DJANGO_SETTINGS_MODULE="evalsite.settings",
                PYTHONPATH=str(REPO),
            )
            completed = subprocess.run(
                [sys.executable, "-m", "bench.submit_memory", "--child", str(cases), folder],
                env=env, capture_output=True, text=True, check=False, cwd=REPO,
            )  # fmt: skip
    finally:
        drop_database(server, DATABASE)
    if completed.returncode != 0:
        raise SystemExit(f"submitting {cases:,} cases failed:\n{completed.stderr[-6000:]}")
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


def _merged(label: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    by_cases = {row["cases"]: row for row in results.get(label, {}).get("runs", [])}
    by_cases.update({row["cases"]: row for row in rows})
    results[label] = {
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": [round(value, 2) for value in os.getloadavg()],
        "runs": [by_cases[cases] for cases in sorted(by_cases)],
    }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.submit_memory", description=__doc__)
    parser.add_argument("--cases", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--label", default="after", help="the results' key (before, after)")
    parser.add_argument("--postgres", default=DEFAULT_SERVER)
    parser.add_argument("--child", nargs=2, metavar=("CASES", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(int(args.child[0]), Path(args.child[1]))), flush=True)
        return
    rows = []
    for cases in args.cases:
        load = [round(value, 2) for value in os.getloadavg()]
        rows.append({**measure(args.postgres, cases), "load_before": load})
        print(json.dumps(rows[-1]), flush=True)
    RESULTS.write_text(json.dumps(_merged(args.label, rows), indent=2) + "\n")


if __name__ == "__main__":
    main()
