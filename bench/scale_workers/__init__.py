"""Runs at scale across Celery workers (see __main__)."""
