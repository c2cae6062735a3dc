"""What a sandbox hides and caps, tried by hostile systems in real bubblewrap sandboxes.

Each test gives a system one way past the sandbox that a process of its own still had:
another store or result file in its code folder, a link on `sys.path` to the dataset,
a secret under a name no deny-list knows, the sandbox's room (its /tmp, its processes,
its memory, one reply), root's files in a closed code folder, the parent's keyring, and
a reply for a case not yet sent. Each is an error of that case alone.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

import pytest

from oloproof import evaluate
from oloproof.evaluators import evaluator
from oloproof_core.execution.isolation import sandbox_support
from oloproof_core.execution.isolation._caps import cgroup_parents
from oloproof_core.execution.isolation._seccomp import seccomp_filter
from tests.core.execution.isolation import sandbox_probes as probes

pytestmark = pytest.mark.skipif(
    not sandbox_support().available,
    reason=f"no sandbox on this machine: {sandbox_support().reason}",
)

ANSWERED = evaluator(criterion="answered", reads=("output",))(lambda case: True)


def run(target, rows, **options):
    options.setdefault("sandbox", "required")
    return evaluate(target, rows, [ANSWERED], record=False, **options)


def by_id(result):
    return {case.id: case for case in result.cases}


def test_stores_and_result_files_in_a_code_folder_are_hidden(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / ".oloproof").mkdir(parents=True)  # an earlier store of this project
    (project / ".oloproof" / "oloproof.sqlite3").write_text("every answer")
    other = project / "vendored" / "data"  # another project's, placed by OLOPROOF_DATA_DIR
    other.mkdir(parents=True)
    (other / "oloproof.sqlite3").write_text("every answer")
    (other / "notes.txt").write_text("beside the store: its broker, its secret key")
    earlier = run(probes.read_path, [{"id": "x", "input": {"path": "/etc/hostname"}}])
    earlier.to_json(str(project / "out.json"))  # oloproof run --json out.json
    old = {
        "run_id": None,
        "metrics": [],
        "cases": [{"id": "x", "expected": {"label": "the answer"}}],
    }
    (project / "old-result.json").write_text(json.dumps(old, indent=2))  # before the mark
    (project / "config.json").write_text('{"run_id": "mine", "colour": "blue"}')
    monkeypatch.syspath_prepend(str(project))
    paths = {
        "store": project / ".oloproof" / "oloproof.sqlite3",
        "other_store": other / "oloproof.sqlite3",
        "result": project / "out.json",
        "old_result": project / "old-result.json",
        "config": project / "config.json",
        "notes": other / "notes.txt",
    }

    result = run(probes.read_path, [{"id": k, "input": {"path": str(p)}} for k, p in paths.items()])

    cases = by_id(result)
    # A folder holding a store is covered as one: what lies beside the store (the data
    # folder's broker and secret key) too, and its journal may come and go meanwhile.
    for name in ("store", "other_store", "result", "old_result", "notes"):
        assert cases[name].error is not None, (name, cases[name].output)
        assert cases[name].error.type == "PermissionError", (name, cases[name].error)
    assert cases["config"].output == {"read": '{"run_id": "mine", "colour": "blue"}'}
    hidden = result.provenance["execution"]["sandbox"]["hidden"]
    for name in ("result", "old_result"):
        assert str(paths[name]) in hidden, (name, hidden)
    assert str(other) in hidden
    assert str(project / ".oloproof") in hidden


def test_a_linked_folder_on_sys_path_does_not_reach_the_covered_dataset(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    dataset = real / "cases.jsonl"
    row = {
        "id": "a",
        "input": {"path": str(link / "cases.jsonl")},
        "expected": {"label": "the answer"},
    }
    dataset.write_text(json.dumps(row) + "\n")
    (real / "helper.txt").write_text("code beside the data")
    monkeypatch.syspath_prepend(str(link))

    result = evaluate(probes.read_path, str(dataset), [ANSWERED], record=False, sandbox="required")

    (case,) = result.cases
    assert case.error is not None, case.output
    assert case.error.type == "PermissionError"
    helper = run(probes.read_path, [{"id": "h", "input": {"path": str(link / "helper.txt")}}])
    assert helper.cases[0].output == {"read": "code beside the data"}


SECRETS = {
    "PGPASSWORD": "pg-secret",
    "SECRET_KEY": "flask-secret",
    "SENTRY_DSN": "https://key@sentry.example/1",
    "AMQP_URL": "amqp://user:pass@rabbit/",
    "MONGODB_URI": "mongodb://user:pass@mongo/db",
    "MYSQL_PWD": "mysql-secret",
    "GITHUB_PAT": "ghp_secret",
    "HTTPS_PROXY": "http://proxy.example:3128",
    "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
}


def test_a_system_gets_only_the_variables_it_needs_and_those_the_operator_names(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    monkeypatch.setenv("HF_HOME", "/models")
    monkeypatch.setenv("ORG_SETTING_A", "a")
    monkeypatch.setenv("OLOPROOF_SYSTEM_ENV", "HF_HOME, ORG_*")

    (case,) = run(probes.environment_dump, [{"id": "e", "input": {}}]).cases

    environment = case.output["environment"]
    leaked = sorted(name for name in SECRETS if name in environment)
    assert leaked == [], leaked
    assert environment["LANG"] == "C.UTF-8"
    assert environment["PYTHONHASHSEED"] == "7"
    assert environment["HF_HOME"] == "/models"
    assert environment["ORG_SETTING_A"] == "a"
    assert environment["HOME"] == environment["TMPDIR"] == "/tmp"
    assert "PATH" in environment


def test_a_full_tmp_loses_only_the_case_that_filled_it(monkeypatch):
    monkeypatch.setenv("OLOPROOF_SANDBOX_TMP_MB", "8")
    rows = [
        {"id": "fill", "input": {"name": "big", "mb": 64}},
        {"id": "after", "input": {"name": "small", "mb": 2}},
    ]

    result = run(probes.fill_tmp, rows, concurrency=1)

    cases = by_id(result)
    assert cases["fill"].error is not None, cases["fill"].output
    assert "the sandbox's /tmp is full (its cap is 8 MiB" in cases["fill"].error.message
    assert cases["after"].error is None, cases["after"].error
    execution = result.provenance["execution"]
    assert execution["restarts"] == 1  # a fresh /tmp for the next case
    assert execution["sandbox"]["caps"]["tmp"] == "8 MiB"


def test_too_many_processes_lose_only_the_case_that_started_them(monkeypatch):
    monkeypatch.setenv("OLOPROOF_SANDBOX_PROCESSES", "32")
    rows = [
        {"id": "many", "input": {"count": 100}},
        {"id": "few", "input": {"count": 4}},
    ]

    result = run(probes.start_processes, rows, concurrency=1)

    cases = by_id(result)
    assert cases["many"].error is not None, cases["many"].output
    assert "the system started more than 32 processes" in cases["many"].error.message
    assert cases["few"].output == {"started": 4}
    assert "32 processes" in result.provenance["execution"]["sandbox"]["caps"]["processes"]


@pytest.mark.skipif("memory" not in cgroup_parents(), reason="no memory cgroup can be made here")
def test_memory_held_across_forked_children_is_capped_for_the_sandbox_as_a_whole():
    rows = [
        {"id": "spread", "input": {"children": 4, "each_mb": 150}},
        {"id": "small", "input": {"children": 1, "each_mb": 10}},
    ]

    result = run(probes.spread_memory, rows, concurrency=1, memory_limit_mb=256)

    cases = by_id(result)
    assert cases["spread"].error is not None, cases["spread"].output
    assert "memory cap of 256 MiB" in cases["spread"].error.message, cases["spread"].error
    assert cases["small"].output == {"held_mb": 10}
    caps = result.provenance["execution"]["sandbox"]["caps"]
    assert caps["memory"].startswith("256 MiB for all its processes together")


def _sandbox_leftovers(temp: str) -> set[str]:
    """This process's sandbox cgroups, and the sandboxes' private folders in `temp`."""
    mine = f"oloproof-{os.getpid()}-"
    cgroups = {
        os.path.join(parent.folder, name)
        for parent in cgroup_parents().values()
        for name in os.listdir(parent.folder)
        if name.startswith(mine)
    }
    made = {os.path.join(temp, name) for name in os.listdir(temp) if "oloproof-sandbox-" in name}
    return cgroups | made


def test_a_run_leaves_no_cgroup_or_folder_of_its_sandbox_behind(monkeypatch):
    # This process's temporary files go to a folder of the test's own: other tests run
    # sandboxes beside it, in processes of their own, under the shared one. A short
    # path: the run's gateway listens on a socket in it.
    temp = tempfile.mkdtemp(prefix="leftovers-")
    os.chmod(temp, 0o755)
    monkeypatch.setattr(tempfile, "tempdir", temp)
    rows = [{"id": f"c{i}", "input": {"count": 2}} for i in range(3)]
    try:
        result = run(probes.start_processes, rows, concurrency=2)
        left = _sandbox_leftovers(temp)
    finally:
        shutil.rmtree(temp, ignore_errors=True)

    assert [case.output for case in result.cases] == [{"started": 2}] * 3
    assert result.provenance["execution"]["sandbox"]["caps"]["processes"]
    assert left == set()


def test_an_output_over_the_reply_cap_is_missing_and_never_kept(monkeypatch):
    monkeypatch.setenv("OLOPROOF_SANDBOX_OUTPUT_MB", "4")
    rows = [{"id": "big", "input": {"mb": 20}}, {"id": "small", "input": {"mb": 0}}]

    result = run(probes.big_output, rows, concurrency=1)

    cases = by_id(result)
    assert cases["big"].output is None
    assert cases["big"].error.type == "OutputTooLarge"
    assert "over the 4 MiB a reply may take" in cases["big"].error.message
    assert cases["small"].output == {"text": ""}
    assert result.provenance["execution"]["restarts"] == 0
    # The parent reads past such a reply a chunk at a time and holds none of it.
    from oloproof_core.execution.isolation._protocol import FrameReader, Oversized

    reader = FrameReader(limit=1 << 20)
    header = (1 << 30).to_bytes(4, "big") + b'[7,"ok","'
    assert [type(m) for m in reader.feed(header + b"x" * 65536)] == [Oversized]
    for _ in range(64):
        assert reader.feed(b"x" * 65536) == []
        assert not reader.partial


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's code may be mapped to root")
def test_a_closed_code_folder_shows_nothing_nobody_could_not_read(tmp_path, monkeypatch):
    folder = tmp_path / "closed"
    folder.mkdir(mode=0o700)
    os.chmod(folder, 0o700)
    (folder / "notes.txt").write_text("open to all")
    os.chmod(folder / "notes.txt", 0o644)
    secret = folder / "root-only.txt"
    secret.write_text("root's secret")
    os.chmod(secret, 0o600)
    private = folder / "private"
    private.mkdir()
    (private / "inside.txt").write_text("behind a closed folder")
    os.chmod(private, 0o700)
    monkeypatch.syspath_prepend(str(folder))
    paths = {"notes": folder / "notes.txt", "secret": secret, "inside": private / "inside.txt"}

    result = run(probes.read_path, [{"id": k, "input": {"path": str(p)}} for k, p in paths.items()])

    cases = by_id(result)
    assert cases["notes"].output == {"read": "open to all"}
    for name in ("secret", "inside"):
        assert cases[name].error is not None, (name, cases[name].output)
        assert cases[name].error.type == "PermissionError", cases[name].error
    sandbox = result.provenance["execution"]["sandbox"]
    assert "mapped to root outside" in sandbox["user"]
    assert sandbox["closed_to_others_covered"] >= 2


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's code may be mapped to root")
def test_a_folder_of_private_files_in_closed_code_is_covered_whole(tmp_path, monkeypatch):
    """A test database of hundreds of private files (Hypothesis keeps one beside the
    code) is covered with one mount, not one per file: the start stays as quick."""
    from oloproof_core.execution.isolation._scan import scan_folder

    folder = tmp_path / "closed"
    folder.mkdir(mode=0o700)
    os.chmod(folder, 0o700)
    examples = folder / "examples"
    examples.mkdir()
    for index in range(300):
        (examples / f"{index:03d}").write_text("private")
        os.chmod(examples / f"{index:03d}", 0o600)
    mixed = folder / "mixed"
    mixed.mkdir()
    (mixed / "open.txt").write_text("open to all")
    os.chmod(mixed / "open.txt", 0o644)
    (mixed / "private.txt").write_text("root's")
    os.chmod(mixed / "private.txt", 0o600)

    scan = scan_folder(str(folder), limit=10_000, closed=True)

    assert sorted(scan.closed) == [str(examples), str(mixed / "private.txt")]
    monkeypatch.syspath_prepend(str(folder))
    paths = {"inside": examples / "007", "open": mixed / "open.txt"}
    result = run(probes.read_path, [{"id": k, "input": {"path": str(p)}} for k, p in paths.items()])
    cases = by_id(result)
    assert cases["open"].output == {"read": "open to all"}
    assert cases["inside"].error is not None, cases["inside"].output
    assert cases["inside"].error.type in (
        "PermissionError",
        "IsADirectoryError",
        "NotADirectoryError",
        "FileNotFoundError",
    ), cases["inside"].error


@pytest.mark.skipif(seccomp_filter() is None, reason="no seccomp filter for this architecture")
def test_the_keyring_and_user_namespaces_are_refused():
    (case,) = run(probes.keyring, [{"id": "k", "input": {}}]).cases

    assert case.error is None, case.error
    assert case.output == {
        "keyctl": "EPERM",
        "add_key": "EPERM",
        "request_key": "EPERM",
        "user_namespace": "EPERM",
        "thread_and_process": 0,
    }


def test_a_reply_for_a_case_not_yet_sent_stops_its_process_and_loses_only_that_case():
    rows = [
        {"id": "forger", "input": {"n": 1, "forge": True}},
        {"id": "next", "input": {"n": 2}},
        {"id": "last", "input": {"n": 3}},
    ]

    result = run(probes.forge_replies, rows, concurrency=1)

    cases = by_id(result)
    assert all(case.output != {"n": "forged"} for case in result.cases)
    assert all(
        case.measurements.latency_ms is None or case.measurements.latency_ms >= 0
        for case in result.cases
    )
    assert cases["next"].error is not None, cases["next"].output
    assert "it replied for a case it was not running" in cases["next"].error.message
    assert cases["forger"].output == {"n": 1}
    assert cases["last"].output == {"n": 3}
