"""The first login `oloproof serve` offers: made on the embedded store, asked for on a server."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from oloproof.cli._serve import _first_login
from runs.selectors.accounts import accounts_exist


@pytest.mark.django_db
def test_a_server_database_without_accounts_is_told_how_to_make_one(
    settings: Any,
) -> None:
    settings.EMBEDDED_DATABASE = False
    assert not accounts_exist()
    assert _first_login() == [
        "no account yet: make one with `oloproof user create NAME --approver`"
    ]
    assert not accounts_exist()  # a server's accounts are made on purpose, never here
    User.objects.create(username="ada", is_active=False)
    assert accounts_exist()
    assert _first_login() == []


@pytest.mark.django_db
def test_the_embedded_store_makes_its_admin_once(settings: Any) -> None:
    settings.EMBEDDED_DATABASE = True
    first = _first_login()
    assert first[0].startswith("login       admin / ")
    assert _first_login() == []
    assert list(User.objects.values_list("username", flat=True)) == ["admin"]
