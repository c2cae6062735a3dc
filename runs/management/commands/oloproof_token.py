"""`python manage.py oloproof_token create --user NAME`: issue, list or revoke API tokens."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from runs.models import ApiToken
from runs.tokens import api_token_create, api_token_revoke


class Command(BaseCommand):
    help = "Create, list or revoke personal API tokens (Authorization: Bearer <token>)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="issue a token; it is printed only once")
        create.add_argument("--user", required=True, help="username the token acts as")
        create.add_argument("--name", default="", help="a label, e.g. 'ci'")
        listing = actions.add_parser("list", help="a user's tokens (prefixes only)")
        listing.add_argument("--user", required=True)
        revoke = actions.add_parser("revoke", help="revoke a token by its prefix")
        revoke.add_argument("prefix", help="the first 12 characters shown by 'list'")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "revoke":
            tokens = list(ApiToken.objects.filter(prefix=options["prefix"]))
            if len(tokens) != 1:
                raise CommandError(f"no single token with prefix {options['prefix']!r}")
            api_token_revoke(token=tokens[0])
            self.stdout.write(f"revoked {tokens[0].prefix}…")
            return
        user_model = get_user_model()
        try:
            user = user_model.objects.get(**{user_model.USERNAME_FIELD: options["user"]})
        except user_model.DoesNotExist:
            raise CommandError(
                f"no user {options['user']!r}; create one with `python manage.py createsuperuser`"
            ) from None
        if action == "create":
            _, token = api_token_create(user=user, name=options["name"])
            self.stdout.write(token)
            return
        for record in ApiToken.objects.filter(user=user):
            state = "revoked" if record.revoked_at else "active"
            used = record.last_used_at.isoformat() if record.last_used_at else "never"
            self.stdout.write(f"{record.prefix}…  {state}  last used {used}  {record.name}")
