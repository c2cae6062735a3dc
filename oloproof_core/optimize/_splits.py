"""Train, val and test: which cases the optimizer learns from, selects on, and never sees.

A dataset whose rows name their split (`"split": "train" | "val" | "test"`) is
split as it says. A dataset without splits is split here, deterministically: each
case's group (its `cluster`, or else its id) is hashed with SHA-256, and the hash,
read as a number in [0, 1), puts the whole group in train, val or test by the
target fractions. The same case always lands in the same split, adding cases never
moves others, and a cluster is never divided between splits (a test case whose
cluster-mate was trained on would flatter the winner). If hashing leaves a split
empty (tiny datasets), the groups are dealt in hash order by cumulative size
instead, still whole.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oloproof_core.datasets.rows import Row
from oloproof_core.errors import ConfigError
from oloproof_core.evaluation.repeats import repeated_rows

SPLITS = ("train", "val", "test")
DEFAULT_FRACTIONS: Mapping[str, float] = {"train": 0.5, "val": 0.25, "test": 0.25}


@dataclass(frozen=True, slots=True)
class Splits:
    """The three splits of one optimization's dataset, and how they were made."""

    train: tuple[Row, ...]
    val: tuple[Row, ...]
    test: tuple[Row, ...]
    source: str
    """"dataset" when the rows named their splits, "hashed" or "dealt" when split here."""
    fractions: Mapping[str, float]
    repeats: int = 1
    """How many times each case runs: each split holds its cases' repeats (`<id>#r<j>`)."""

    def rows(self, split: str) -> tuple[Row, ...]:
        return {"train": self.train, "val": self.val, "test": self.test}[split]

    def repeated(self, repeats: int) -> Splits:
        """These splits with each case `repeats` times: a case and its repeats stay in one
        split, as the cases were split before they were repeated."""
        if repeats == 1:
            return self
        return Splits(
            train=tuple(repeated_rows(self.train, repeats)),
            val=tuple(repeated_rows(self.val, repeats)),
            test=tuple(repeated_rows(self.test, repeats)),
            source=self.source,
            fractions=self.fractions,
            repeats=repeats,
        )

    def record(self) -> dict[str, Any]:
        """What is kept with the optimization: the rule, the counts and every case's split."""
        record: dict[str, Any] = {
            "source": self.source,
            "fractions": dict(self.fractions),
            "counts": {name: len(self.rows(name)) for name in SPLITS},
            "ids": {name: [row.id for row in self.rows(name)] for name in SPLITS},
        }
        if self.repeats > 1:
            record["repeats"] = self.repeats
        return record


def check_fractions(fractions: Mapping[str, Any] | None) -> dict[str, float]:
    if fractions is None:
        return dict(DEFAULT_FRACTIONS)
    if not isinstance(fractions, Mapping) or set(fractions) != set(SPLITS):
        raise ConfigError(
            "splits: give the fraction of each of train, val and test, "
            "e.g. {train: 0.5, val: 0.25, test: 0.25}"
        )
    checked: dict[str, float] = {}
    for name in SPLITS:
        value = fractions[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise ConfigError(f"splits: {name} must be a fraction between 0 and 1, got {value!r}")
        checked[name] = float(value)
    if abs(sum(checked.values()) - 1.0) > 1e-6:
        raise ConfigError(f"splits: the fractions must add up to 1, got {sum(checked.values()):g}")
    return checked


def split_rows(rows: Sequence[Row], *, fractions: Mapping[str, float] | None = None) -> Splits:
    """The dataset's own splits if its rows name them, else a deterministic split by group."""
    wanted = check_fractions(fractions)
    named = {row.split for row in rows if row.split is not None}
    if named:
        return _declared(rows, named, wanted)
    groups: dict[str, list[Row]] = {}
    for row in rows:
        group = row.cluster if row.cluster is not None else f"id:{row.id}"
        groups.setdefault(group, []).append(row)
    ordered = sorted(groups, key=_position)
    hashed = _by_threshold(ordered, groups, wanted)
    if all(hashed.values()):
        return _made(hashed, "hashed", wanted)
    dealt = _by_count(ordered, groups, wanted, len(rows))
    if not all(dealt.values()):
        raise ConfigError(
            f"the dataset has too few cases or clusters ({len(groups)}) to split "
            "into train, val and test; add cases or give each row a split"
        )
    return _made(dealt, "dealt", wanted)


def _declared(rows: Sequence[Row], named: set[str], wanted: Mapping[str, float]) -> Splits:
    unknown = sorted(str(name) for name in named if name not in SPLITS)
    if unknown:
        raise ConfigError(
            f"the dataset names splits {', '.join(unknown)}; an optimization "
            "needs its rows in train, val and test (or no splits at all)"
        )
    parts = {name: [row for row in rows if row.split == name] for name in SPLITS}
    missing = [name for name in SPLITS if not parts[name]]
    if missing:
        raise ConfigError(
            f"the dataset's splits have no {' or '.join(missing)} rows; an "
            "optimization needs train, val and test"
        )
    return _made(parts, "dataset", wanted)


def _position(group: str) -> float:
    digest = hashlib.sha256(group.encode("utf-8")).hexdigest()
    return int(digest[:15], 16) / 16**15


def _by_threshold(
    ordered: list[str], groups: Mapping[str, list[Row]], wanted: Mapping[str, float]
) -> dict[str, list[Row]]:
    parts: dict[str, list[Row]] = {name: [] for name in SPLITS}
    for group in ordered:
        at = _position(group)
        name = (
            "train"
            if at < wanted["train"]
            else ("val" if at < wanted["train"] + wanted["val"] else "test")
        )
        parts[name].extend(groups[group])
    return parts


def _by_count(
    ordered: list[str], groups: Mapping[str, list[Row]], wanted: Mapping[str, float], total: int
) -> dict[str, list[Row]]:
    parts: dict[str, list[Row]] = {name: [] for name in SPLITS}
    bounds = {"train": wanted["train"] * total, "val": (wanted["train"] + wanted["val"]) * total}
    taken = 0
    for index, group in enumerate(ordered):
        left = len(ordered) - index
        if not parts["train"] or (taken < bounds["train"] and left > 2):
            name = "train"
        elif not parts["val"] or (taken < bounds["val"] and left > 1):
            name = "val"
        else:
            name = "test"
        parts[name].extend(groups[group])
        taken += len(groups[group])
    return parts


def _made(parts: Mapping[str, list[Row]], source: str, wanted: Mapping[str, float]) -> Splits:
    return Splits(
        train=tuple(parts["train"]),
        val=tuple(parts["val"]),
        test=tuple(parts["test"]),
        source=source,
        fractions=dict(wanted),
    )
