"""pass@k and pass^k against brute-force enumeration of every draw of k tries."""

from __future__ import annotations

import itertools
import math

import pytest

from oloproof_core.stats import pass_all_k, pass_at_k


def _draws(n: int, c: int, k: int) -> list[tuple[bool, ...]]:
    tries = [True] * c + [False] * (n - c)
    return [tuple(tries[i] for i in chosen) for chosen in itertools.combinations(range(n), k)]


@pytest.mark.parametrize("n", range(1, 9))
def test_matches_the_share_of_draws_with_a_pass_and_with_all_passing(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            draws = _draws(n, c, k)
            assert pass_at_k(n, c, k) == pytest.approx(
                sum(any(d) for d in draws) / len(draws), abs=1e-12
            )
            assert pass_all_k(n, c, k) == pytest.approx(
                sum(all(d) for d in draws) / len(draws), abs=1e-12
            )


def test_large_n_agrees_with_the_binomial_formula() -> None:
    n, c, k = 200, 37, 10
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))
    assert pass_all_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k))


def test_one_try_is_the_pass_rate() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_all_k(5, 2, 1) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("n", "c", "k", "says"),
    [
        (3, 1, 4, "at least k tries"),
        (3, 1, 0, "k must be between 1"),
        (3, 4, 1, "c \\(passes\\)"),
        (3, -1, 1, "c \\(passes\\)"),
        (3, 1, True, "k must be a whole number"),
        (3.0, 1, 1, "n must be a whole number"),
    ],
)
def test_refuses_k_above_the_tries_and_impossible_counts(n, c, k, says) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=says):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError, match=says):
        pass_all_k(n, c, k)
