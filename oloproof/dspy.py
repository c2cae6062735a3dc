"""DSPy integration (optional extra `oloproof[dspy]`).

    from oloproof.dspy import dspy_system, dspy_metric, dspy_examples

`dspy_system(program, name=..., version=...)` makes a DSPy program the system under
test; `dspy_metric("metric.py")` hands a metric file to `dspy.Evaluate` or
`dspy.GEPA`; `dspy_examples(dataset)` turns dataset rows into `dspy.Example`s.
"""

from oloproof_core import DspyMetric, dspy_examples, dspy_metric, dspy_system

__all__ = ["DspyMetric", "dspy_examples", "dspy_metric", "dspy_system"]
