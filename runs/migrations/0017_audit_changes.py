"""The audit list's changes: projects, members, code roots, accounts, API tokens, runs."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0016_labels_queue_drawn_on_read"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Change",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("actor_name", models.CharField(max_length=150)),
                (
                    "action",
                    models.CharField(
                        choices=[
                            ("project.create", "project made"),
                            ("member.set", "member's role set"),
                            ("member.remove", "member removed"),
                            ("code_root.register", "code root registered"),
                            ("code_root.remove", "code root removed"),
                            ("account.create", "account made"),
                            ("account.disable", "account disabled"),
                            ("account.enable", "account enabled"),
                            ("account.password_reset", "new password"),
                            ("token.create", "API token made"),
                            ("token.revoke", "API token revoked"),
                            ("run.delete", "run deleted"),
                        ],
                        max_length=30,
                    ),
                ),
                ("subject", models.CharField(max_length=500)),
                ("detail", models.TextField(blank=True, default="")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "actor",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="changes_made",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="changes",
                        to="runs.project",
                    ),
                ),
            ],
            options={
                "ordering": ("-created_at", "-id"),
                "indexes": [
                    models.Index(fields=["project", "-created_at"], name="change_project_created")
                ],
            },
        ),
    ]
