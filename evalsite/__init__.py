"""The oloproof Django project: settings, URLs, the Celery app and the REST API.

The Celery app (`evalsite.celery`) is not loaded with the project: `runs.workers.dispatch`
loads it, by the name in `settings.OLOPROOF_CELERY_APP`, when work is first handed to
the workers, and `oloproof worker` loads it to serve.
"""
