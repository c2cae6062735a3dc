from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from runs import _sqlite_limits

        _sqlite_limits.connect()
