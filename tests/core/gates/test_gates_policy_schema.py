"""Reading release policies: the schema, provenance, and every validation error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_core.errors import ConfigError
from oloproof_core.gates import Policy, PolicyError, load_policy
from tests.support.synthetic_runs import make_run, pass_fail

FULL = """\
version: 1
description: support bot release gate
confidence: 0.95
baseline: {run: runs/v1.json}
rules:
  - metric: exact_label
    min: 0.9
  - metric: latency_score
    max: 0.5
  - missing: {max_count: 0}
  - metric: exact_label
    missing: {max_rate: 0.05}
  - metric: exact_label
    no_regression: {margin: 0.02}
  - require: [exact_label, known_label.format]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_full_policy_loads_and_describes_itself(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, FULL))
    described = policy.describe()
    json.dumps(described)
    assert described["source"].endswith("release.yaml")
    assert len(described["digest"]) == 64
    assert described["version"] == 1
    assert described["baseline"]["run"] == str(tmp_path / "runs" / "v1.json")
    assert [rule.label for rule in policy.rules] == [
        "exact_label ≥ 0.9",
        "latency_score ≤ 0.5",
        "missing ≤ 0",
        "exact_label missing ≤ 5%",
        "exact_label vs baseline ≥ −0.02",
        "require exact_label, known_label.format",
    ]
    assert policy.needs_baseline


def test_digest_follows_meaning_not_formatting(tmp_path: Path) -> None:
    compact = "version: 1\nrules: [{metric: exact_label, min: 0.9}]\n"
    spaced = "# gate\nversion: 1\n\nrules:\n  - min: 0.9\n    metric: exact_label\n"
    changed = "version: 1\nrules: [{metric: exact_label, min: 0.95}]\n"
    first = load_policy(write(tmp_path, compact)).digest
    assert load_policy(write(tmp_path, spaced)).digest == first
    assert load_policy(write(tmp_path, changed)).digest != first
    assert (
        load_policy({"version": 1, "rules": [{"metric": "exact_label", "min": 0.9}]}).digest
        == first
    )


def test_loading_accepts_a_dict_and_passes_a_policy_through() -> None:
    policy = load_policy({"version": 1, "rules": [{"require": "exact_label"}]})
    assert isinstance(policy, Policy)
    assert load_policy(policy) is policy
    assert policy.describe()["source"] == "<policy dict>"


def test_policy_error_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_policy(write(tmp_path, "version: 2\nrules: []\n"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rules: [1, 2\n", ":2: invalid YAML"),
        ("- just a list\n", "a policy is a mapping"),
        ("version: 1\nrule: []\n", ":2: rule: unknown key 'rule'"),
        ("rules: [{require: [a]}]\n", "missing 'version: 1'"),
        ("version: 2\nrules: [{require: [a]}]\n", ":1: version: unsupported version 2"),
        ("version: true\nrules: [{require: [a]}]\n", "unsupported version True"),
        (
            "version: 1\ndescription: [x]\nrules: [{require: [a]}]\n",
            ":2: description: must be text",
        ),
        (
            "version: 1\nconfidence: 95\nrules: [{require: [a]}]\n",
            ":2: confidence: must be between 0 and 1",
        ),
        ("version: 1\n", "'rules' must be a non-empty list"),
        ("version: 1\nrules: []\n", ":2: rules: 'rules' must be a non-empty list"),
        ("version: 1\nrules:\n  - exact_label\n", ":3: rules[0]: each rule is a mapping"),
        (
            "version: 1\nrules:\n  - metric: exact_label\n    minimum: 0.9\n",
            ":4: rules[0].minimum: unknown key 'minimum'",
        ),
        (
            "version: 1\nrules:\n  - metric: a\n    min: 0.9\n    require: [a]\n",
            "exactly one of min/max, missing, no_regression or require (found: require, min)",
        ),
        ("version: 1\nrules:\n  - metric: a\n", "(found: none)"),
        (
            "version: 1\nrules:\n  - metric: 3\n    min: 0.9\n",
            ":3: rules[0].metric: must be a metric",
        ),
        ("version: 1\nrules:\n  - min: 0.9\n", "this rule needs 'metric: <name>'"),
        (
            "version: 1\nrules:\n  - metric: a\n    min: high\n",
            ":4: rules[0].min: must be a number",
        ),
        ("version: 1\nrules:\n  - metric: a\n    min: .nan\n", "must be a number"),
        ("version: 1\nrules:\n  - metric: a\n    min: 0.9\n    max: 0.5\n", "min 0.9 is above max"),
        (
            "version: 1\nrules:\n  - metric: a\n    require: [a]\n",
            "a require rule lists its metrics itself",
        ),
        ("version: 1\nrules:\n  - require: []\n", "must be a non-empty list of metric names"),
        ("version: 1\nrules:\n  - require: [a, 1]\n", "must be a non-empty list of metric names"),
        (
            "version: 1\nrules:\n  - missing: 0\n",
            "must be a mapping with max_count and/or max_rate",
        ),
        ("version: 1\nrules:\n  - missing: {max: 0}\n", "rules[0].missing.max: unknown key 'max'"),
        ("version: 1\nrules:\n  - missing: {max_count: -1}\n", "max_count: must be a whole number"),
        (
            "version: 1\nrules:\n  - missing: {max_count: 0.5}\n",
            "max_count: must be a whole number",
        ),
        ("version: 1\nrules:\n  - missing: {max_rate: 5}\n", "max_rate: must be a share"),
        (
            "version: 1\nrules:\n  - metric: a\n    no_regression: 0.02\n",
            "must be a mapping such as {margin: 0.02}",
        ),
        (
            "version: 1\nrules:\n  - metric: a\n    no_regression: {margin: -0.1}\n",
            "rules[0].no_regression.margin: must be a number > 0",
        ),
        (
            "version: 1\nrules:\n  - metric: a\n    no_regression: {tolerance: 0.1}\n",
            "unknown key 'tolerance'",
        ),
        (
            "version: 1\nbaseline: runs/v1.json\nrules: [{require: [a]}]\n",
            ":2: baseline: 'baseline' is a mapping with exactly one of",
        ),
        (
            "version: 1\nbaseline: {run: a.json, release: '1'}\nrules: [{require: [a]}]\n",
            "exactly one of",
        ),
        (
            "version: 1\nbaseline: {file: a.json}\nrules: [{require: [a]}]\n",
            "baseline.file: unknown key 'file'",
        ),
        (
            "version: 1\nbaseline: {last_approved: yes please}\nrules: [{require: [a]}]\n",
            "write 'last_approved: true'",
        ),
        (
            "version: 1\nbaseline: {release: 1}\nrules: [{require: [a]}]\n",
            "baseline.release: must be text",
        ),
    ],
)
def test_invalid_policies_name_file_line_key_and_what_is_allowed(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    message = str(caught.value)
    assert message.startswith(str(path))
    assert expected in message


def test_unknown_key_message_lists_the_allowed_keys(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="allowed keys:\n  version: ") as caught:
        load_policy(write(tmp_path, "version: 1\ngates: []\n"))
    assert "rules: list of rules" in str(caught.value)


def test_missing_file_and_wrong_source_type(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"nope\.yaml: cannot read the policy"):
        load_policy(tmp_path / "nope.yaml")
    with pytest.raises(PolicyError, match="got int"):
        load_policy(3)  # type: ignore[arg-type]


# Checks that need the run: raised by decide, still pointing at the rule's line.

RUN = make_run(
    {"exact_label": pass_fail(28, 2)},
    sub_scores={"exact_label": {"format": [1.0] * 30}},
    value_types={},
)


def decide_text(tmp_path: Path, text: str, **kwargs: object) -> str:
    policy = load_policy(write(tmp_path, text))
    with pytest.raises(PolicyError) as caught:
        policy.decide(RUN, **kwargs)  # type: ignore[arg-type]
    return str(caught.value)


def test_unknown_metric_is_reported_with_the_run_metrics(tmp_path: Path) -> None:
    message = decide_text(
        tmp_path, "version: 1\nrules:\n  - require: [x]\n  - metric: exact_labl\n    min: 0.9\n"
    )
    assert ":4: rules[1]: unknown metric 'exact_labl'" in message
    assert "exact_label, exact_label.format" in message


def test_unknown_metric_in_a_missing_rule(tmp_path: Path) -> None:
    message = decide_text(
        tmp_path, "version: 1\nrules:\n  - metric: nope\n    missing: {max_count: 0}\n"
    )
    assert ":3: rules[0]: unknown metric 'nope'" in message


def test_threshold_outside_the_metric_range(tmp_path: Path) -> None:
    message = decide_text(tmp_path, "version: 1\nrules:\n  - metric: exact_label\n    min: 90\n")
    assert "min: 90 is outside the range of 'exact_label', [0, 1]" in message


def test_margin_wider_than_the_range(tmp_path: Path) -> None:
    message = decide_text(
        tmp_path,
        "version: 1\nrules:\n  - metric: exact_label\n    no_regression: {margin: 2}\n",
        baseline=RUN,
    )
    assert "margin 2 exceeds the width" in message


def test_regression_rule_without_any_baseline(tmp_path: Path) -> None:
    message = decide_text(
        tmp_path, "version: 1\nrules:\n  - metric: exact_label\n    no_regression: {margin: 0.02}\n"
    )
    assert ":3: rules[0]: a no_regression rule needs a baseline" in message
    assert "--baseline" in message


def test_baseline_file_that_cannot_be_read(tmp_path: Path) -> None:
    message = decide_text(
        tmp_path,
        "version: 1\nbaseline: {run: missing.json}\nrules:\n"
        "  - metric: exact_label\n    no_regression: {margin: 0.02}\n",
    )
    assert ":2: baseline.run: cannot load the baseline" in message


def test_release_baseline_needs_a_store_that_finds_it(tmp_path: Path) -> None:
    text = (
        "version: 1\nbaseline: {release: 'support-bot@0'}\nrules:\n"
        "  - metric: exact_label\n    no_regression: {margin: 0.02}\n"
    )
    assert "none is available here" in decide_text(tmp_path, text)

    class EmptyStore:
        def find_baseline(self, system_name: str, release: str | None) -> None:
            assert (system_name, release) == ("support-bot", "0")

    assert "no recorded run of support-bot@0" in decide_text(tmp_path, text, store=EmptyStore())
