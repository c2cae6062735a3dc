from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The tasks are registered with the Celery app when it loads (`runs.workers.dispatch`).
        from runs.selectors import _sqlite_digest
        from runs.store import _sqlite_limits
        from runs.store.data_folder import data_folder_prepare, keep_store_from_systems

        data_folder_prepare()
        _sqlite_limits.connect()
        _sqlite_digest.connect()
        keep_store_from_systems()
