from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registered at start-up, so `runs.dispatch` finds them by name in any process.
        from runs import _sqlite_limits, tasks  # noqa: F401
        from runs.data_folder import data_folder_prepare

        data_folder_prepare()
        _sqlite_limits.connect()
