"""`python manage.py oloproof_demo`: record the example history and its accounts."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from runs.management.demo import demo_record, demo_users_ensure


class Command(BaseCommand):
    help = (
        "Record three releases of the example support bot (examples/support_bot/) with "
        "their release gates, and create the demo approver and viewer accounts. "
        "Safe to run again: nothing is recorded twice."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        recorded = demo_record(log=lambda line: self.stderr.write(f"oloproof demo: {line}"))
        demo_users_ensure()
        self.stderr.write(
            f"oloproof demo: demo history: {recorded} run(s) recorded now"
            if recorded
            else "oloproof demo: demo history: already recorded, nothing added"
        )
