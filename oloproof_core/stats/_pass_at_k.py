"""pass@k and pass^k: how often a case passes at least once, or every time, in k tries.

From n ≥ k independent tries of one case with c passes:

- pass@k, the chance that at least one of k tries passes, estimated without bias by
  ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021, "Evaluating Large Language Models
  Trained on Code", arXiv:2107.03374, §2.1), computed as a product so that large n
  neither overflows nor loses precision;
- pass^k, the chance that all k tries pass, estimated without bias by
  ``C(c, k) / C(n, k)`` (Yao et al. 2024, "τ-bench", arXiv:2406.12045, §4).

Each is a per-case value in [0, 1]; a release's figure is their mean over cases, whose
interval is a bounded-mean interval over the cases (``_missing.mean_interval``), the
cases being the independent units whatever happens between a case's tries.
"""

from __future__ import annotations

import math

__all__ = ["pass_all_k", "pass_at_k"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from `n` tries of which `c` passed."""
    _check(n, c, k)
    if n - c < k:  # every draw of k tries holds a pass
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_all_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass^k (all of k tries pass) from `n` tries, `c` passed."""
    _check(n, c, k)
    if c < k:
        return 0.0
    return math.prod((c - i) / (n - i) for i in range(k))


def _check(n: int, c: int, k: int) -> None:
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
    if not 0 <= c <= n:
        raise ValueError(f"c (passes) must be between 0 and n={n} (tries), got {c}")
    if not 1 <= k <= n:
        raise ValueError(
            f"k must be between 1 and the tries per case (n={n}), got {k}: pass@k needs at "
            "least k tries of each case; run with repeats of at least k"
        )
