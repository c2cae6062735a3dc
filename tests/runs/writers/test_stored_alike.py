"""What one database stores, the other stores too: texts PostgreSQL refuses are refused
up front, with the limit named, or kept as both keep them.

A NUL in an evaluator's feedback makes that verdict missing with a ContractError; a NUL
in an evaluator's error message is kept with the NUL replaced; a criterion over 200
characters is refused when it is declared, and a sub-score whose metric name passes 300
is that verdict's ContractError. Run on SQLite by default and on PostgreSQL with
DATABASE_URL set: the run records and reads back the same on both.
"""

from __future__ import annotations

import pytest

from oloproof import evaluate
from oloproof.evaluators import ExactMatch, evaluator
from oloproof_core import DeclarationError
from runs.models import Run
from runs.selectors.results import run_result
from runs.store import DjangoStore
from tests.runs.conftest import support_rows
from tests.support.unstorable_texts import answer, long_sub, nul_error, nul_feedback, short_sub

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_texts_postgresql_refuses_are_refused_or_kept_alike(isolation: str) -> None:
    result = evaluate(
        answer,
        support_rows(6),
        [
            ExactMatch(criterion="exact_label", field="label"),
            nul_feedback,
            nul_error,
            long_sub,
            short_sub,
        ],
        store=DjangoStore(),
        isolation=isolation,
    )
    stored = run_result(run=Run.objects.get(pk=int(str(result.run_id))))
    for case in stored.cases:
        verdicts = case.verdicts
        assert verdicts["exact_label"].value == 1.0
        assert verdicts["nul_feedback"].value is None
        assert "feedback contains a NUL character" in str(verdicts["nul_feedback"].error)
        assert verdicts["nul_error"].value is None
        assert verdicts["nul_error"].error == "ValueError: upstream said \ufffd and stopped"
        assert verdicts["long_sub"].value is None
        assert "a metric has at most 300" in str(verdicts["long_sub"].error)
        assert verdicts["short_sub"].scores == {"s" * 250: 1.0}
    assert [metric.metric for metric in stored.metrics][-1] == "short_sub." + "s" * 250


def test_a_criterion_over_its_columns_length_is_refused_when_declared() -> None:
    with pytest.raises(
        DeclarationError, match="is 300 characters long; a criterion has at most 200"
    ):
        ExactMatch(criterion="b" * 300, field="label")
    with pytest.raises(DeclarationError, match="a criterion has at most 200"):
        evaluator(criterion="a" * 201)(lambda case: True)
