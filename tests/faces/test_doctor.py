"""`oloproof doctor` and `oloproof.protections()`: the same probe a run makes."""

from __future__ import annotations

import json

import pytest

import oloproof
from oloproof.cli import main
from oloproof_core.execution.isolation import sandbox_support


@pytest.fixture
def fresh_probe():
    sandbox_support.cache_clear()
    yield
    sandbox_support.cache_clear()


def test_the_report_names_each_protection_and_the_exit_code_says_all_on(fresh_probe, capsys):
    code = main(["doctor", "--json"])

    report = json.loads(capsys.readouterr().out)
    names = [check["name"] for check in report["checks"]]
    assert names[:4] == ["sandbox", "answers hidden", "network", "other processes"]
    assert report["all_on"] == sandbox_support().available
    assert code == (0 if report["all_on"] else 6)
    assert oloproof.protections().to_dict() == report


def test_without_bubblewrap_the_report_says_what_to_install(fresh_probe, capsys, monkeypatch):
    monkeypatch.setenv("PATH", "/nowhere")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-kept-here")

    code = main(["doctor"])

    printed = capsys.readouterr().out
    assert code == 6
    assert "OFF  sandbox" in printed
    assert "apt-get install bubblewrap" in printed
    assert "withheld from systems: " in printed
    assert "OPENAI_API_KEY" in printed
    assert "sk-kept-here" not in printed
    assert "not protected" in printed


def test_a_mode_that_is_not_one_is_named(fresh_probe, capsys, monkeypatch):
    monkeypatch.setenv("OLOPROOF_SANDBOX", "maybe")

    main(["doctor"])

    assert "'maybe' from OLOPROOF_SANDBOX is not a mode" in capsys.readouterr().out


def test_a_check_started_early_is_the_answer_a_run_then_gets(fresh_probe):
    from oloproof_core.execution.isolation import check_sandbox_support_early

    check_sandbox_support_early()
    early = sandbox_support()  # waits for the check under way instead of making another

    assert sandbox_support() is early
    sandbox_support.cache_clear()
    assert sandbox_support() == early
