"""`oloproof token create|list|revoke` on the test database: the token it prints opens the
API (in its project only, when limited to one), `list` shows it by prefix, `revoke`
closes it; each change is on the audit list; mistakes are exit code 3."""

from __future__ import annotations

import pytest
from django.test import Client

from oloproof.cli import main
from runs.models import Change
from tests.runs.conftest import member

pytestmark = pytest.mark.django_db


def command(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def api_status(token: str, path: str = "/api/runs") -> int:
    return Client().get(path, HTTP_AUTHORIZATION=f"Bearer {token}").status_code


def test_a_token_made_on_the_command_line_opens_the_api_until_revoked(capsys) -> None:
    member("bob", "runner")
    code, out, err = command(capsys, "token", "create", "bob", "--name", "ci", "--days", "7")
    assert code == 0, err
    token = out.strip()
    assert token.startswith("olo_")
    assert "\n" not in token
    assert f"made token {token[:12]}… for bob (all of its projects; expires" in err
    assert api_status(token) == 200

    code, out, _ = command(capsys, "token", "list", "bob")
    assert code == 0
    assert out.startswith(f"{token[:12]}  bob  project all  active  expires ")
    assert out.rstrip().endswith("ci")

    code, _, err = command(capsys, "token", "revoke", token[:12])
    assert code == 0
    assert f"revoked {token[:12]}… of bob" in err
    assert api_status(token) == 401
    assert "revoked" in command(capsys, "token", "list")[1]
    tokens = Change.objects.filter(action__startswith="token.").order_by("id")
    assert list(tokens.values_list("action", "actor_name")) == [
        ("token.create", "command line"),
        ("token.revoke", "command line"),
    ]


def test_a_token_limited_to_a_project_needs_a_membership_there(capsys) -> None:
    member("ada", "viewer", project="support")
    code, _, err = command(capsys, "token", "create", "ada", "--project", "default")
    assert code == 3
    assert "no project 'default'" in err
    code, out, err = command(capsys, "token", "create", "ada", "--project", "support")
    assert code == 0, err
    assert "(project support;" in err
    assert api_status(out.strip()) == 200


def test_mistakes_are_exit_code_3_with_what_to_fix(capsys) -> None:
    code, _, err = command(capsys, "token", "create", "nobody")
    assert code == 3
    assert "no account 'nobody': make it with `oloproof user create nobody`" in err
    code, _, err = command(capsys, "token", "revoke", "olo_notatoken")
    assert code == 3
    assert "no single API token 'olo_notatoken'" in err
    member("bob", "runner")
    assert command(capsys, "token", "create", "bob", "--days", "0")[0] == 3
