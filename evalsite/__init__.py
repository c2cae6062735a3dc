"""The oloproof Django project: settings, URLs, the Celery app and the REST API."""

# Loaded with Django so that `@shared_task` tasks bind to this app (and its broker)
# in every process that enqueues work, not only in workers.
from evalsite.celery import app as celery_app

__all__ = ["celery_app"]
