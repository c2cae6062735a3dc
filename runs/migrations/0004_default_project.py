"""Put every existing system and run in the `default` project and make decisions final.

Members: every account that held `runs.approve_gate` becomes an approver of the
default project, every account with `runs.add_run` a runner, every other active
account a viewer, so nobody loses what they could see or do on the way to
per-project roles. A gate decided more than once keeps its latest decision standing;
each earlier one gets a revocation naming why.
"""

from django.db import migrations

SUPERSEDED = (
    "superseded by a later decision on the same gate, recorded before decisions were "
    "final (migration 0004)"
)


def forwards(apps, schema_editor):
    Project = apps.get_model("runs", "Project")
    project, _ = Project.objects.get_or_create(slug="default", defaults={"name": "Default"})
    apps.get_model("runs", "System").objects.filter(project__isnull=True).update(project=project)
    apps.get_model("runs", "Run").objects.filter(project__isnull=True).update(project=project)
    _members(apps, project)
    _number_decisions(apps)


def _members(apps, project):
    User = apps.get_model("auth", "User")
    Membership = apps.get_model("runs", "Membership")
    for user in User.objects.filter(is_active=True).prefetch_related("user_permissions"):
        codenames = {perm.codename for perm in user.user_permissions.all()}
        role = (
            "admin"
            if user.is_superuser
            else "approver"
            if "approve_gate" in codenames
            else "runner"
            if "add_run" in codenames
            else "viewer"
        )
        Membership.objects.get_or_create(project=project, user=user, defaults={"role": role})


def _number_decisions(apps):
    Approval = apps.get_model("runs", "Approval")
    Revocation = apps.get_model("runs", "ApprovalRevocation")
    by_gate = {}
    for approval in Approval.objects.order_by("gate_id", "created_at", "id"):
        by_gate.setdefault(approval.gate_id, []).append(approval)
    for decisions in by_gate.values():
        for sequence, approval in enumerate(decisions):
            # The historical model has no immutability guard: a plain update is allowed here.
            Approval.objects.filter(pk=approval.pk).update(sequence=sequence)
        for approval in decisions[:-1]:
            Revocation.objects.create(approval=approval, user=None, reason=SUPERSEDED)


class Migration(migrations.Migration):
    dependencies = [("runs", "0003_projects"), ("auth", "0012_alter_user_first_name_max_length")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
