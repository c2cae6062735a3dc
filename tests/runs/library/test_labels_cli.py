"""`oloproof label` and the library's `label`, `import_labels`, `labels` and `calibration`,
in this process on the test database: forms, files, the report, and every mistake
answered with exit code 3, a message naming what to fix, no traceback, nothing changed.
(tests/faces/test_label_command.py runs them in fresh processes on a user's project.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import oloproof
from oloproof.cli import main
from runs.models import Label, Run
from tests.support.case_runs import ticket_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run() -> Run:
    return ticket_run()


def command(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def labels_stored() -> list[tuple[Any, ...]]:
    return list(Label.objects.order_by("id").values_list("key", "value", "note", "updated_at"))


def test_the_command_labels_imports_and_shows(run, tmp_path: Path, capsys) -> None:
    number = str(run.pk)
    code, out, err = command(
        capsys, "label", number, "ticket-03", "exact_label", "fail", "--note", "wrong"
    )
    assert code == 0, err
    assert "ticket-03  exact_label = 0  by " in out
    assert "@command-line  wrong" in out
    table = tmp_path / "labels.csv"
    table.write_text(
        'case_id,value,note\nticket-01,pass,\n\nticket-02,fail,"curt, and\nwrong"\n'
        "ticket-03,pass,second thoughts\n",
        encoding="utf-8",
    )
    code, out, err = command(
        capsys, "label", "import", str(table), "--run", number, "--metric", "exact_label"
    )
    assert code == 0, err
    assert f"3 labels saved from {table} for run #{number}" in out
    lines = tmp_path / "more.jsonl"
    lines.write_text(
        '{"case_id": "ticket-04", "metric": "reply_quality", "value": 0.5}\n\n'
        '{"case_id": "ticket-06", "metric": "exact_label", "value": true, "note": "ok"}\n',
        encoding="utf-8",
    )
    assert command(capsys, "label", "import", str(lines), "--run", f"#{number}")[0] == 0
    code, out, err = command(capsys, "label", "show", number, "exact_label", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["labelled_cases"] == 4
    assert report["calibration"]["n"] == 4
    assert report["judge_only"]["interval"]["lower"] < report["judge_only"]["estimate"]
    code, out, _ = command(capsys, "label", "show", number, "exact_label")
    assert "judge only:" in out
    # Imported labels count as the queue's draws reach their cases (the seed is random).
    if report["labelled"] is None:
        assert "no labelled draws yet: the figure assumes the judge is right" in out
        assert f"(label {report['next_case']}, the queue's first draw)" in out
    else:
        assert f"from {report['labelled']['n_labels']} labelled draws" in out
        assert report["labelled"]["cases_left"] == 7
    assert "judge vs people on 4 cases: agreement" in out
    listed = {item["case_id"]: item for item in oloproof.labels(run.pk, "exact_label")}
    assert listed["ticket-02"]["labels"][0]["note"] == "curt, and\nwrong"
    assert listed["ticket-03"]["labels"][0]["value"] == 1.0, "the import edited the label"


def test_a_bad_file_is_refused_whole_naming_each_line(run, tmp_path: Path, capsys) -> None:
    oloproof.label(run.pk, "ticket-07", "exact_label", "fail", note="kept")
    before = labels_stored()
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "case_id,metric,value\nticket-07,exact_label,pass\nticket-05,exact_label,pass\n"
        "ticket-08,exact_label,7\nticket-99,exact_label,pass\n",
        encoding="utf-8",
    )
    code, _, err = command(capsys, "label", "import", str(bad), "--run", str(run.pk))
    assert code == 3, err
    assert "3 bad rows, so no label was saved" in err
    assert f"bad.csv line 3: case 'ticket-05' of run {run.pk} failed (RuntimeError)" in err
    assert "bad.csv line 4: value '7' is not a pass/fail value of 'exact_label'" in err
    assert f"bad.csv line 5: run {run.pk} has no case 'ticket-99'" in err
    assert "Traceback" not in err
    assert labels_stored() == before, "a refused file changed the labels"


def test_mistakes_are_exit_code_3_with_what_to_fix(run, tmp_path: Path, capsys) -> None:
    odd_csv, odd_jsonl = tmp_path / "odd.csv", tmp_path / "odd.jsonl"
    odd_csv.write_text("case,value\nticket-01,pass\n", encoding="utf-8")
    odd_jsonl.write_text('{"case_id": "ticket-01", "value": 1}\n[1]\n', encoding="utf-8")
    no_metric = tmp_path / "no_metric.csv"
    no_metric.write_text("case_id,value\nticket-01,pass\n", encoding="utf-8")
    number = str(run.pk)
    for args, message in (
        (
            ("label", "import", str(odd_csv), "--run", number),
            "odd.csv line 1: unknown column 'case'",
        ),
        (
            ("label", "import", str(odd_jsonl), "--run", number),
            "odd.jsonl line 2: a line is an object",
        ),
        (
            ("label", "import", str(no_metric), "--run", number),
            "no 'metric' column: add it to the header (or name the metric",
        ),
        (
            ("label", "import", str(tmp_path / "l.txt"), "--run", number),
            "name the file .csv or .jsonl",
        ),
        (("label", "import", str(tmp_path / "gone.csv"), "--run", number), "cannot read the file"),
        (("label", "import", str(odd_csv)), "give the run the labels are for: --run RUN"),
        (("label", number, "ticket-01", "exact_label", "maybe"), "give pass or fail"),
        (("label", number, "ticket-01", "reply_quality", "-1"), "give a number from 0 to 1"),
        (("label", number, "ticket-01", "tone", "1"), f"run {number} has no metric 'tone'"),
        (
            ("label", number, "ticket-01", "exact_label"),
            "`oloproof label` takes RUN CASE METRIC VALUE",
        ),
        (("label", "show", number), "`oloproof label show` takes RUN METRIC"),
        (
            ("label", "show", number, "exact_label", "--note", "x"),
            "--note does not go with this form",
        ),
        (("label", "x1", "ticket-01", "exact_label", "1"), "a run is named by its id"),
        (("label", "999", "ticket-01", "exact_label", "1"), "no run with id 999"),
        (("label", number, "ticket-01", "exact_label", "1", "--by", "ghost"), "no account 'ghost'"),
    ):
        code, _, err = command(capsys, *args)
        assert code == 3, (args, err)
        assert message in err, (args, err)
        assert "Traceback" not in err
    assert Label.objects.count() == 0


def test_the_library_acts_as_an_account_when_told(run, teammate, viewer) -> None:
    saved = oloproof.label(run.pk, "ticket-09", "exact_label", "pass", by="bob")
    assert saved["author"] == "bob"
    with pytest.raises(oloproof.OloproofError, match="needs the runner role"):
        oloproof.label(run.pk, "ticket-09", "exact_label", "pass", by="victor")
    figures = oloproof.calibration(f"#{run.pk}", "exact_label")
    assert figures.calibration is not None
    assert figures.calibration.n == 1
    # The label counts at once if the queue's first draw is its case (the seed is random).
    if figures.labelled is None:
        assert figures.labels_needed() is None
    else:
        assert figures.labelled.n_labels >= 1
        assert (figures.labels_needed() or 0) <= figures.labelled.cases_left == 10
    assert figures.to_dict()["judge_only"]["method"]
