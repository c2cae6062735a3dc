"""A case's workspace in the system's process (seeded, the working directory, packed and
removed) and as it travels to an evaluator (checked, unpacked into a copy of its own)."""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path

import pytest

from oloproof_core.cases.workspace import CaseWorkspace, WorkspaceError
from oloproof_core.cases.workspace_pack import (
    MAX_PACKED_BYTES,
    WorkspaceCopy,
    checked_workspace,
    pack_workspace,
)


def test_no_files_no_workspace() -> None:
    assert CaseWorkspace.open({"question": "hi"}) is None
    assert CaseWorkspace.open({"files": ["a.pdf"]}) is None


def test_a_workspace_is_seeded_entered_packed_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    workspace = CaseWorkspace.open({"files": {"app.py": "x = 1\n", "tests/test_app.py": "ok\n"}})
    assert workspace is not None
    assert Path(workspace.path, "tests", "test_app.py").read_text() == "ok\n"
    workspace.enter()
    assert os.getcwd() == os.path.realpath(workspace.path)
    Path("app.py").write_text("x = 2\n")
    Path("blob.bin").write_bytes(b"\xff\x00\x01")
    os.symlink("/etc/hostname", "link")
    os.mkdir("__pycache__")
    packed = workspace.finish()
    assert os.getcwd() == str(tmp_path)
    assert not os.path.exists(workspace.path)
    assert packed["files"] == [
        ["app.py", "text", "x = 2\n"],
        ["blob.bin", "base64", base64.b64encode(b"\xff\x00\x01").decode()],
        ["tests/test_app.py", "text", "ok\n"],
    ]
    assert packed["bytes"] == 6 + 3 + 3
    assert any("link" in said and "not followed" in said for said in packed["left_out"])
    assert any("__pycache__" in said for said in packed["left_out"])


def test_each_workspace_is_a_fresh_folder_and_a_closed_folder_is_removed_too() -> None:
    first = CaseWorkspace.open({"files": {"a.txt": "1"}})
    second = CaseWorkspace.open({"files": {"a.txt": "2"}})
    assert first is not None
    assert second is not None
    assert first.path != second.path
    closed = Path(first.path, "closed")
    closed.mkdir()
    (closed / "inside.txt").write_text("x")
    closed.chmod(0)
    first.finish()
    second.finish()
    assert not os.path.exists(first.path)
    assert not os.path.exists(second.path)


@pytest.mark.parametrize("path", ["../evil.py", "/tmp/evil.py", "a/../../evil.py"])
def test_a_path_leaving_the_workspace_is_never_written(path: str) -> None:
    with pytest.raises(WorkspaceError, match=r"input\.files: the path"):
        CaseWorkspace.open({"files": {"fine.py": "", path: "x"}})


def test_a_file_that_is_also_a_folder_is_a_clear_error_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(WorkspaceError, match="could not be seeded"):
        CaseWorkspace.open({"files": {"src": "x", "src/app.py": "y"}})
    assert list(tmp_path.iterdir()) == []


def test_files_past_the_cap_are_left_out_and_said(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"\x00" * (MAX_PACKED_BYTES - 10))
    (tmp_path / "small.txt").write_text("0123456789abc")
    packed = pack_workspace(str(tmp_path))
    assert [path for path, _, _ in packed["files"]] == ["big.bin"]
    assert any("small.txt" in said and "past the cap" in said for said in packed["left_out"])


def test_what_a_process_sends_is_checked_as_if_it_lied() -> None:
    assert checked_workspace(None) is None
    for lie in (
        {"files": [["../escape.py", "text", "x"]]},
        {"files": [["a.py", "pickle", "x"]]},
        {"files": "everything"},
        ["not", "a", "workspace"],
    ):
        said = checked_workspace(lie)
        assert said == {"files": [], "bytes": 0, "left_out": ["the workspace sent was malformed"]}
    fine = checked_workspace({"files": [["./a.py", "text", "x"]], "bytes": 1, "left_out": []})
    assert fine == {"files": [["a.py", "text", "x"]], "bytes": 1, "left_out": []}


def test_a_copy_is_unpacked_into_a_folder_of_its_own_and_removed() -> None:
    packed = {
        "files": [["src/app.py", "text", "x = 1\n"], ["b.bin", "base64", "/wAB"]],
        "left_out": ["1 __pycache__ folders"],
    }
    copy = WorkspaceCopy(packed)
    assert Path(copy, "src", "app.py").read_text() == "x = 1\n"
    assert Path(copy.path, "b.bin").read_bytes() == b"\xff\x00\x01"
    assert copy.files == ("src/app.py", "b.bin")
    assert copy.left_out == ("1 __pycache__ folders",)
    other = WorkspaceCopy(packed)
    assert other.path != copy.path
    folder = copy.path
    del copy
    assert not os.path.exists(folder)
    other.remove()
    assert not os.path.exists(other.path)
