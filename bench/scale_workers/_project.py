"""The measured projects: an I/O-bound async system and a trivial one, with their datasets.

Every measurement writes its own dataset (a salt in every input), so no run is helped by
the verdict cache of an earlier one. Datasets are written into a temporary folder, line
by line, never held whole in this process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SLEEP_MS = 50

IO_SYSTEM = f"""
import asyncio

from oloproof import system


@system(name="io-bound-bot", version="1")
async def answer(case):
    await asyncio.sleep({SLEEP_MS} / 1000)
    return {{"label": case["label"]}}
"""

TRIVIAL_SYSTEM = """
from oloproof import system


@system(name="trivial-bot", version="1")
def answer(case):
    return case
"""

SYSTEMS = {"io": IO_SYSTEM, "trivial": TRIVIAL_SYSTEM}


def run_config(kind: str, *, concurrency: int | None) -> dict[str, Any]:
    """The run config submitted (the keys of oloproof.yaml)."""
    config: dict[str, Any] = {
        "system": "bot.py:answer",
        "dataset": "data.jsonl",
        "evaluators": [{"ExactMatch": {"criterion": "exact_label", "field": "label"}}],
    }
    if concurrency is not None:
        config["concurrency"] = concurrency
    return config


def write_project(folder: Path, *, kind: str, cases: int, salt: str) -> Path:
    """The system and its dataset in `folder`; one case in ten is answered wrongly."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(SYSTEMS[kind], encoding="utf-8")
    dumps = json.dumps
    with (folder / "data.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(cases):
            label = "refund" if i % 2 else "other"
            answered = "billing" if i % 10 == 0 else label
            row = {
                "id": f"c{i:07d}",
                "input": {"question": f"question #{i} {salt}", "label": answered},
                "expected": {"label": label},
            }
            handle.write(dumps(row) + "\n")
    return folder
