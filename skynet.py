"""Helpers for metric files: `llm`, `reward`, `observation` and `service_cost`.

    from skynet import llm, reward, observation, service_cost

`llm(instructions, input=...)` asks the metric model (the reflection model when no
metric model is configured); `reward(REWARD_SPEC, accuracy, feedback)` combines
accuracy with the measured speed and cost; `observation()` and `service_cost()`
read what the engine measured for the current case.
"""

from oloproof_core import observation, reward, service_cost
from oloproof_core.models import llm

__all__ = ["llm", "observation", "reward", "service_cost"]
