"""Accounts: whether the store has any (what serving a store first asks)."""

from __future__ import annotations

from django.contrib.auth.models import User as Account


def accounts_exist() -> bool:
    """Whether any account exists, active or not: the first login is made only once."""
    return Account.objects.exists()
