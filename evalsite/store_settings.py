"""Settings for the local store's own process: oloproof's settings with only the apps a
recording touches.

That process records runs and reads the verdict cache for a command or a script
(`oloproof/_store_process.py`); it serves no page, signs nobody in and collects no
static file, so the admin, sessions, messages, static files and sign-in lockout apps
are left out: Django's set-up, the longest part of a small recorded run, imports about
a sixth less. A database it migrates first gets those apps' tables from the next
process with the full settings (the dashboard, a worker, any other command), which
migrates what is still pending.
"""

from evalsite.settings import *  # noqa: F403
from evalsite.settings import INSTALLED_APPS as _ALL_APPS

RECORDING_APPS = ("django.contrib.auth", "django.contrib.contenttypes", "runs", "metrics")
INSTALLED_APPS = [app for app in _ALL_APPS if app in RECORDING_APPS]
