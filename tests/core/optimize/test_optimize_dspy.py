"""dspy-gepa (and auto, which picks it for a DSPy program) finds the instruction too."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_core import InMemoryStore, load_dataset
from oloproof_core.judging.evaluators import MetricFile
from oloproof_core.optimize import Budget, InMemoryLedger, OptimizationSpec, run_optimization
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import INSTRUCTION, METRIC_FILE, SEED_PROMPT, TASK_MODEL, rows

dspy = pytest.importorskip("dspy")


@pytest.mark.parametrize("engine", ["dspy-gepa", "auto"])
def test_dspy_gepa_finds_the_instruction_for_a_dspy_program(
    engine: str, tmp_path: Path, task_models: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("OLOPROOF_SYSTEM_ENV", "LITELLM_LOCAL_MODEL_COST_MAP")  # no network
    (tmp_path / "exact.py").write_text(METRIC_FILE, encoding="utf-8")
    program = dspy.Predict(dspy.Signature("question -> answer", SEED_PROMPT))
    lm = dspy.LM(
        f"openai/{TASK_MODEL}",
        api_base=task_models.base_url,
        api_key="none",
        cache=False,
        num_retries=0,
    )
    spec = OptimizationSpec(
        system=program,
        dataset=load_dataset(rows()),
        evaluators=[MetricFile(tmp_path / "exact.py")],
        budget=Budget(metric_calls=120),
        engine=engine,
        name="calc-dspy",
        version="1",
    )
    with dspy.context(lm=lm):
        result = run_optimization(spec=spec, store=InMemoryStore(), ledger=InMemoryLedger())

    assert result.engine == engine
    assert result.settings.get("engine", engine) == "dspy-gepa"
    assert INSTRUCTION in result.winner.texts["self"]
    assert result.seed.val["estimate"] == 0.0
    assert result.winner.val["estimate"] == 1.0
    assert result.proof["winner"]["test"]["estimate"] == 1.0
    assert result.winner.version.startswith("1+opt1.")
    assert result.winner.cost_usd is not None
    assert result.winner.cost_usd > 0


def test_the_dspy_metric_passes_sub_scores_and_lets_the_metric_read_measurements(
    tmp_path: Path,
) -> None:
    from oloproof_core import dspy_metric

    (tmp_path / "observing.py").write_text(
        "from skynet import observation\n\n\n"
        "def score(input, output, expected=None):\n"
        "    seen = observation()\n"
        "    return 1.0, {'feedback': f'{seen.input_tokens} tokens', 'scores': {'format': 0.5}}\n",
        encoding="utf-8",
    )
    metric = dspy_metric(tmp_path / "observing.py")
    example = dspy.Example(question="What is 1 + 1?", answer="2").with_inputs("question")
    reply = metric(example, dspy.Prediction(answer="2"), None, "self", None)
    assert reply.score == 1.0
    assert reply.objective_scores == {"format": 0.5}
    assert reply.feedback == "0 tokens"
    # Called as dspy.Evaluate calls it: a Prediction that DSPy adds as its score, carrying
    # the sub-scores GEPA keeps.
    plain = metric(example, dspy.Prediction(answer="2"))
    assert float(plain) == 1.0
    assert plain.objective_scores == {"format": 0.5}
