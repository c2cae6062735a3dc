"""A run that lets its cases go: batches recorded as they finish, the same figures kept.

`run_evaluation(keep_cases=False)` runs the dataset in batches, hands each judged batch
to a store that records as it goes and keeps of each case only what the figures, the
gate and the report read. These tests hold it against the same run keeping its cases,
through a store written here that keeps what it is handed, as a database would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import oloproof_core as engine
from oloproof_core.evaluation import recording_as_it_goes
from oloproof_core.judging.evaluators import ExactMatch, evaluator

N = 4_500  # four batches: 750, 1,500, 2,000, and the last 250 (too few to cut)
POLICY = {"version": 1, "rules": [{"metric": "label", "min": 0.5}]}


@evaluator(criterion="polite", reads=("output",), value_type="score", score_range=(0, 1))
def polite(case: Any) -> float:
    return 0.25 if case.output["label"] == "other" else 1.0


def answer(case: dict[str, Any]) -> dict[str, str]:
    if case["q"].endswith(("13",)) and int(case["q"].rsplit("#", 1)[1]) % 100 == 13:
        raise RuntimeError("backend down")
    return {"label": "refund" if "refund" in case["q"] else "other"}


def rows(n: int = N) -> list[dict[str, Any]]:
    return [
        {
            "id": f"c{i:05d}",
            "input": {"q": f"{'refund' if i % 3 else 'parcel'} #{i}"},
            "expected": {"label": "refund" if i % 3 else "other"},
            "cluster": f"user-{i % 40}",
        }
        for i in range(n)
    ]


class BatchStore(engine.InMemoryStore):
    """The verdict cache in memory, and runs recorded as they go: what each call got."""

    def __init__(self, *, fail_on_batch: int | None = None) -> None:
        super().__init__()
        self.openings: list[engine.RunOpening] = []
        self.batches: list[tuple[int, list[engine.CaseResult]]] = []
        self.closed: list[engine.Result] = []
        self.abandoned: list[str] = []
        self._fail_on_batch = fail_on_batch

    def run_open(self, opening: engine.RunOpening) -> str:
        self.openings.append(opening)
        return "as-it-goes-1"

    def run_cases_add(self, run_id: str, cases: Sequence[engine.CaseResult], first: int) -> None:
        if len(self.batches) == self._fail_on_batch:
            raise OSError("disk full")
        self.batches.append((first, list(cases)))

    def run_close(self, run_id: str, result: engine.Result) -> str:
        self.closed.append(result)
        return run_id

    def run_abandon(self, run_id: str, reason: str) -> None:
        self.abandoned.append(reason)


def evaluate(store: engine.Store, *, keep_cases: bool, **extra: Any) -> engine.Result:
    return engine.run_evaluation(
        system=engine.system(name="batch-bot", version="1")(answer),
        dataset=rows(),
        evaluators=[ExactMatch(criterion="label", field="label"), polite],
        store=store,
        policy=POLICY,
        isolation="thread",
        keep_cases=keep_cases,
        **extra,
    )


def figures(result: engine.Result) -> list[tuple[Any, ...]]:
    return [
        (m.metric, m.estimate, str(m.interval), m.n_observed, m.n_missing, m.n_clusters)
        for m in result.metrics
    ]


def test_the_batches_carry_every_case_once_in_order_and_the_figures_match() -> None:
    kept = evaluate(engine.InMemoryStore(), keep_cases=True)
    store = BatchStore()
    let_go = evaluate(store, keep_cases=False)

    assert [first for first, _ in store.batches] == [0, 750, 2250, 4250]
    sent = [case for _, batch in store.batches for case in batch]
    assert [case.id for case in sent] == [case.id for case in kept.cases]
    # The store is handed whole cases: outputs, inputs, feedback.
    assert sent[1].output == {"label": "refund"}
    assert sent[1].input == {"q": "refund #1"}
    assert sent[0].verdicts["polite"].value == 0.25
    assert store.openings[0].dataset["n_cases"] == N
    assert store.openings[0].system["name"] == "batch-bot"

    assert figures(let_go) == figures(kept)
    assert str(let_go.gate) == str(kept.gate)
    assert let_go.run_id == "as-it-goes-1"
    assert store.closed == [let_go]
    assert store.abandoned == []


def test_the_run_is_opened_as_its_cases_start_not_after_its_first_batch() -> None:
    """A long run is on record (and on the dashboard) while its first batch runs."""
    store = BatchStore()
    opened_before: list[int] = []

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "system" and not opened_before:
            opened_before.append(len(store.openings))

    evaluate(store, keep_cases=False, progress=progress)
    assert opened_before == [1]
    assert len(store.openings) == 1


def test_the_result_keeps_only_what_the_figures_and_the_report_read() -> None:
    result = evaluate(BatchStore(), keep_cases=False)
    case = result.cases[13]
    assert case.error is not None
    assert case.error.message == "backend down"
    assert case.error.traceback == ""
    assert case.verdicts["label"].value is None
    assert case.verdicts["label"].error
    plain = result.cases[1]
    assert plain.output is None
    assert plain.input == {}
    assert plain.expected is None
    assert plain.verdicts["label"].value == 1.0
    assert plain.verdicts["label"].feedback is None
    assert plain.cluster == "user-1"
    assert plain.latency_ms is not None
    failing = [f"c{i:05d}" for i in range(N) if i % 100 == 13]
    assert result.error_summary() == [("RuntimeError", len(failing), failing[0])]


def test_a_run_that_stops_is_abandoned_on_record_with_the_reason() -> None:
    store = BatchStore(fail_on_batch=1)
    with pytest.raises(OSError, match="disk full"):
        evaluate(store, keep_cases=False)
    assert [first for first, _ in store.batches] == [0]
    assert store.closed == []
    assert store.abandoned == ["the run stopped before it finished: OSError: disk full"]


def test_without_recording_nothing_is_opened_and_the_cases_are_still_slim() -> None:
    store = BatchStore()
    result = evaluate(store, keep_cases=False, record=False)
    assert store.openings == []
    assert store.batches == []
    assert result.run_id is None
    assert result.cases[1].output is None
    assert figures(result) == figures(evaluate(engine.InMemoryStore(), keep_cases=True))


def test_a_dataset_the_run_loaded_is_let_go_of_batch_by_batch_and_a_callers_is_not() -> None:
    loaded = engine.load_dataset(rows(5000))
    seen: list[int] = []

    def process(batch: Sequence[engine.Row], _progress: Any) -> list[engine.CaseResult]:
        seen.append(len(loaded.rows) + len(rows_left))  # what the run still holds
        return [engine.CaseResult.from_row(row) for row in batch]

    rows_left = loaded.rows
    kept = recording_as_it_goes.process_in_batches(loaded, process, None, None, owned=True)
    assert len(kept) == 5000
    assert loaded.rows == []
    assert rows_left == []
    # Before each batch, the rows not yet taken (the batch itself is taken out first).
    assert seen == [4250, 2750, 750, 187, 0]

    callers = engine.load_dataset(rows(5000))
    before = list(callers.rows)
    recording_as_it_goes.process_in_batches(
        callers, lambda batch, _: [engine.CaseResult.from_row(r) for r in batch], None, None,
        owned=False,
    )  # fmt: skip
    assert callers.rows == before


def test_batches_grow_from_a_first_small_one_and_end_in_a_quarter_of_the_last_stretch() -> None:
    """The store writes a batch while the next one runs. The first batch is small, so
    the store starts writing soon after it opened; the batches then double up to
    `BATCH`; only the last is left to write when the cases are done, so it is small
    too. A stretch too short to repay a second round trip to the store stays whole."""
    bounds = recording_as_it_goes.batch_bounds
    assert recording_as_it_goes.FIRST_BATCH == 750
    assert bounds(0) == []
    assert bounds(399) == [(0, 399)]
    assert bounds(1000) == [(0, 750), (750, 1000)]
    assert bounds(4150) == [(0, 750), (750, 2250), (2250, 3675), (3675, 4150)]
    assert [end - start for start, end in bounds(10_000)] == [
        750, 1500, 2000, 2000, 2000, 1313, 437
    ]  # fmt: skip
    for total in (1, 400, 1999, 2000, 2001, 10_000, 123_457):
        spans = bounds(total)
        assert [start for start, _ in spans] == [0, *(end for _, end in spans[:-1])]
        assert spans[-1][1] == total
        assert all(0 < end - start <= recording_as_it_goes.BATCH for start, end in spans)


def test_cases_pickle_as_their_fields_and_come_back_equal() -> None:
    import pickle

    result = evaluate(engine.InMemoryStore(), keep_cases=True)
    for case in result.cases[:20]:
        again = pickle.loads(pickle.dumps(case))
        assert again == case
        assert again.part_digest("input") == case.part_digest("input")
