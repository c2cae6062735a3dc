"""A row's workspace files: paths kept inside the workspace, `files_from` read beside the
dataset, and a row that breaks a rule missing alone, with its file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_core.cases.case import CaseResult
from oloproof_core.datasets.dataset import load_dataset
from oloproof_core.datasets.file import check_dataset_file
from oloproof_core.datasets.workspace_files import (
    WorkspacePathError,
    has_workspace,
    inside_path,
)


@pytest.mark.parametrize(
    ("written", "kept"),
    [("app.py", "app.py"), ("./src//app.py", "src/app.py"), ("a/./b.txt", "a/b.txt")],
)
def test_a_relative_path_is_kept_clean(written: str, kept: str) -> None:
    assert inside_path(written) == kept


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("../evil.py", "leaves the workspace"),
        ("src/../../evil.py", "leaves the workspace"),
        ("/etc/passwd", "is absolute"),
        ("C:/x.py", "is absolute"),
        ("a\\b.py", "backslash"),
        ("./", "names no file"),
        ("", "not a file name"),
        (3, "not a file name"),
    ],
)
def test_a_path_leaving_the_workspace_is_refused_saying_how_to_write_it(
    written: object, said: str
) -> None:
    with pytest.raises(WorkspacePathError, match=said):
        inside_path(written)


def _write_rows(path: Path, rows: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_row_with_a_dotdot_path_is_missing_alone_naming_its_file_and_line(
    tmp_path: Path,
) -> None:
    source = _write_rows(
        tmp_path / "data" / "tasks.jsonl",
        [
            {"id": "fine", "input": {"files": {"app.py": "x = 1\n"}}},
            {"id": "escape", "input": {"files": {"../evil.py": "x = 1\n"}}},
            {"id": "plain", "input": {"question": "no files"}},
        ],
    )
    rows = {row.id: row for row in load_dataset(source).rows}
    assert rows["fine"].refused is None
    assert rows["plain"].refused is None
    refused = rows["escape"].refused
    assert refused is not None
    assert refused.startswith(f"{source}:2: row 'escape': input.files: the path '../evil.py'")
    assert "leaves the workspace" in refused
    assert "without '..'" in refused
    case = CaseResult.from_row(rows["escape"])
    assert case.error is not None
    assert case.error.type == "WorkspaceError"
    assert CaseResult.from_row(rows["fine"]).error is None
    # The file read a row at a time (`oloproof run` without --json) says the same.
    streamed = {row.id: row for row in check_dataset_file(source).rows()}
    assert streamed["escape"].refused == refused


def test_files_from_reads_the_folder_beside_the_dataset_into_files(tmp_path: Path) -> None:
    task = tmp_path / "data" / "tasks" / "greet"
    (task / "pkg").mkdir(parents=True)
    (task / "greet.py").write_text("def greet(n):\n    return n\n", encoding="utf-8")
    (task / "pkg" / "util.py").write_text("X = 1\n", encoding="utf-8")
    (task / "__pycache__").mkdir()
    (task / "__pycache__" / "greet.pyc").write_bytes(b"\x00\x01")
    (task / "link.py").symlink_to(task / "greet.py")
    source = _write_rows(
        tmp_path / "data" / "tasks.jsonl",
        [
            {
                "id": "greet",
                "input": {"files_from": "tasks/greet", "files": {"pkg/util.py": "X = 2\n"}},
            }
        ],
    )
    (row,) = load_dataset(source).rows
    assert row.refused is None
    assert "files_from" not in row.input
    # The row's own files win over the folder's; links and caches are left out.
    assert row.input["files"] == {
        "greet.py": "def greet(n):\n    return n\n",
        "pkg/util.py": "X = 2\n",
    }
    assert has_workspace(row.input)


@pytest.mark.parametrize(
    ("files_from", "said"),
    [("../outside", "leaves the workspace"), ("missing", "no folder 'missing' beside")],
)
def test_a_files_from_folder_that_cannot_be_read_is_refused_with_its_line(
    tmp_path: Path, files_from: str, said: str
) -> None:
    (tmp_path / "outside").mkdir()
    source = _write_rows(
        tmp_path / "data" / "tasks.jsonl", [{"id": "t", "input": {"files_from": files_from}}]
    )
    (row,) = load_dataset(source).rows
    assert row.refused is not None
    assert f"{source}:1: row 't': input.files_from:" in row.refused
    assert said in row.refused


def test_a_binary_file_in_files_from_is_refused(tmp_path: Path) -> None:
    (tmp_path / "data" / "task").mkdir(parents=True)
    (tmp_path / "data" / "task" / "blob.bin").write_bytes(b"\xff\xfe\x00")
    source = _write_rows(
        tmp_path / "data" / "tasks.jsonl", [{"id": "t", "input": {"files_from": "task"}}]
    )
    (row,) = load_dataset(source).rows
    assert row.refused is not None
    assert "'blob.bin' is not UTF-8 text" in row.refused


def test_a_file_that_is_not_text_is_refused_and_files_of_another_shape_are_input(
    tmp_path: Path,
) -> None:
    source = _write_rows(
        tmp_path / "tasks.jsonl",
        [
            {"id": "number", "input": {"files": {"a.py": 3}}},
            {"id": "names", "input": {"files": ["a.pdf", "b.pdf"]}},
            {"id": "both", "input": {"files": {"src": "x", "src/app.py": "y"}}},
        ],
    )
    rows = {row.id: row for row in load_dataset(source).rows}
    assert rows["number"].refused is not None
    assert "holds int" in rows["number"].refused
    assert rows["names"].refused is None
    assert rows["both"].refused is not None
    assert "'src' is a file and the folder of 'src/app.py'" in rows["both"].refused
    assert not has_workspace(rows["names"].input)
