"""Settings for the local store's own process: oloproof's settings with only the apps a
recording touches.

That process records runs and reads the verdict cache for a command or a script
(`oloproof/_store_process.py`); it serves no page, signs nobody in and collects no
static file, so the admin, sessions, messages, static files and sign-in lockout apps
are left out: Django's set-up, the longest part of a small recorded run, imports about
a sixth less. A database it migrates first gets those apps' tables from the next
process with the full settings (the dashboard, a worker, any other command), which
migrates what is still pending.

Nor does it configure logging: Django's default configuration alone imports its error
pages for the admins' mail handler. What the process has to say reaches the run as an
answer on its pipe; a warning logged there still reaches standard error through
Python's own last-resort handler.
"""

from evalsite.settings import *  # noqa: F403
from evalsite.settings import INSTALLED_APPS as _ALL_APPS

RECORDING_APPS = ("django.contrib.auth", "django.contrib.contenttypes", "runs", "metrics")
INSTALLED_APPS = [app for app in _ALL_APPS if app in RECORDING_APPS]
LOGGING_CONFIG = None
