"""Django settings, all from the environment.

With nothing set, oloproof runs embedded: SQLite and a file-system message broker
in the data folder, so a laptop needs no server. The data folder is found from the
project the process runs in (`evalsite.project`: `OLOPROOF_DATA_DIR`, else the nearest
`.oloproof/` or project root upward), so every command shares one store.
Production sets `DATABASE_URL` (PostgreSQL), `CELERY_BROKER_URL` (Redis),
`DJANGO_SECRET_KEY`, `DJANGO_ALLOWED_HOSTS` and `DJANGO_DEBUG=0`; secrets
may come from files (`DJANGO_SECRET_KEY_FILE`, `DATABASE_URL_FILE`). `.env.example`
lists every variable.
"""

from __future__ import annotations

import importlib.util
import secrets
from datetime import timedelta
from pathlib import Path

from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from evalsite._env import (
    env_bool,
    env_int,
    env_list,
    env_secret,
    env_str,
    parse_database_url,
)
from evalsite.project import data_dir, data_dir_reason

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = data_dir()
DATA_DIR_REASON = data_dir_reason()
"""Why this data folder: OLOPROOF_DATA_DIR, or the project it was found from."""


SECRET_KEY_FILE = DATA_DIR / "secret_key"
"""Where the embedded default keeps the key it generated, when DJANGO_SECRET_KEY is unset."""


def _secret_key() -> str:
    """The key from the environment, or the one kept in the data folder.

    Reading only: when neither exists yet, a fresh key serves this process and the
    runs app writes it to the data folder at start-up (`runs.store.data_folder`).
    """
    configured = env_secret("DJANGO_SECRET_KEY")
    if configured:
        return configured
    try:
        return SECRET_KEY_FILE.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return secrets.token_urlsafe(50)


SECRET_KEY_FROM_ENVIRONMENT = bool(env_secret("DJANGO_SECRET_KEY"))
SECRET_KEY = _secret_key()
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

_NINJA = importlib.util.find_spec("ninja")
if _NINJA is None or not _NINJA.submodule_search_locations:
    raise ImproperlyConfigured("django-ninja is not installed: pip install -e .")
NINJA_DIR = Path(next(iter(_NINJA.submodule_search_locations)))
"""django-ninja's folder: its API docs page's template and static files are used from
there rather than by installing it as an app, which would import all of ninja (and
pydantic) whenever Django is set up, 0.2 s of every run recorded (evalsite.api_docs)."""

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",
    "runs",
    "metrics",
]

OLOPROOF_SERVER_TIMING = env_bool("OLOPROOF_SERVER_TIMING", False)
"""Add `Server-Timing: app;dur=<ms>` to every response (evalsite/server_timing.py)."""

MIDDLEWARE = [
    # First, so its figure covers every other layer; absent unless OLOPROOF_SERVER_TIMING.
    "evalsite.server_timing.ServerTimingMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Serves /static/ from the WSGI process itself, compressed and cached for a year
    # under hashed names (evalsite.static_files), so the dashboard needs no CDN and no
    # separate file server.
    "evalsite.static_files.StaticFilesMiddleware",
    # Text no supported database can store (NUL, lone surrogates) is a 400, never a 500.
    "runs.access.input_guard.UnstorableInputMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Direction controls in user strings are shown, never obeyed (names cannot be spoofed).
    "runs.views.bidi.BidiControlsMiddleware",
    # The Content-Security-Policy header, with a fresh nonce per response for the
    # inline chart scripts (`request.csp_nonce`).
    "csp.middleware.CSPMiddleware",
    # Locks out repeated failed sign-ins; last, as django-axes asks.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "evalsite.urls"
WSGI_APPLICATION = "evalsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates", NINJA_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "runs.views.navigation.navigation",
            ],
        },
    },
]

_DATABASE_URL = env_secret("DATABASE_URL") or ""
if _DATABASE_URL:
    _database = parse_database_url(_DATABASE_URL)
else:
    _database = {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(DATA_DIR / "oloproof.sqlite3"),
    }
if _database["ENGINE"].endswith("sqlite3"):
    _database["OPTIONS"] = {
        # WAL lets the dashboard read while a worker writes; IMMEDIATE takes the write
        # lock up front so concurrent writers wait (timeout) instead of failing.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": env_int("OLOPROOF_SQLITE_TIMEOUT", 30),
    }
else:
    _database["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", 60)
    _database["CONN_HEALTH_CHECKS"] = True
DATABASES = {"default": _database}
EMBEDDED_DATABASE = not _DATABASE_URL
"""True when the database is the SQLite file in the data folder (migrated automatically)."""
PRODUCTION = not DEBUG and not EMBEDDED_DATABASE
"""A served deployment (a database server, no debug): secrets and transport are enforced."""

PLACEHOLDER_SECRET_KEYS = frozenset({"change-me-to-50-random-characters", "change-me", "secret"})
"""Keys that appear in examples; a production site refuses them."""
if PRODUCTION and (
    SECRET_KEY in PLACEHOLDER_SECRET_KEYS
    or SECRET_KEY.startswith(("change-me", "django-insecure-"))
    or len(SECRET_KEY) < 32
):
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY is a placeholder or shorter than 32 characters; set it to a long "
        "random value, e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    # Refuses a locked-out sign-in before the password is even checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("OLOPROOF_LOGIN_LOCKOUT", True)
AXES_FAILURE_LIMIT = env_int("OLOPROOF_LOGIN_FAILURES", 5)
"""Wrong passwords for one username from one address before sign-in is locked."""
AXES_COOLOFF_TIME = timedelta(minutes=env_int("OLOPROOF_LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_IPWARE_PROXY_COUNT = 1 if env_bool("DJANGO_BEHIND_PROXY", False) else None

OLOPROOF_TOKEN_DAYS = env_int("OLOPROOF_TOKEN_DAYS", 90)
"""Days a new API token is valid."""
OLOPROOF_TOKEN_FAILURES = env_int("OLOPROOF_TOKEN_FAILURES", 20)
"""Wrong API tokens from one address, within the window, before its token calls answer 429."""
OLOPROOF_TOKEN_FAILURE_WINDOW = env_int("OLOPROOF_TOKEN_FAILURE_WINDOW", 300)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TZ", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
STATICFILES_DIRS.append(NINJA_DIR / "static")
# The charts' plotly.js is static/vendor/plotly-basic.min.js, so the pages never need a CDN.
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
]
STATIC_ROOT = Path(env_str("OLOPROOF_STATIC_ROOT", str(DATA_DIR / "static")))

SESSION_COOKIE_HTTPONLY = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed, compressed names once collected (`oloproof serve` collects at start);
    # plain names through the finders before that (evalsite/static_files.py).
    "staticfiles": {"BACKEND": "evalsite.static_files.StaticFilesStorage"},
}
# Unhashed names still resolve and files are found where the apps keep them, so the
# embedded default serves every asset without a collectstatic step.
WHITENOISE_MANIFEST_STRICT = False
WHITENOISE_USE_FINDERS = True

SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto (the usual deployment).
if env_bool("DJANGO_BEHIND_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", False)
# One year of HSTS by default in production (sent on HTTPS responses only).
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31_536_000 if PRODUCTION else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Scripts only from this site, plus the inline chart scripts carrying the response's
# nonce; styles may be inline (Plotly styles its figures, progress bars set a width).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# Celery: the embedded default is kombu's file-system transport in the data folder,
# which needs no server; production points CELERY_BROKER_URL at Redis.
# The host part is unused by the file transport; naming it keeps kombu from warning.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://localhost/")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = DATA_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Without it kombu keeps its exchange tables in ./control of whatever folder
        # the worker was started from.
        "control_folder": str(_broker_dir / "control"),
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "store_processed": False,
        "polling_interval": 0.2,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)
    }
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", "") or None
# A task is acknowledged only once it has finished, so a killed worker's task is
# delivered again; tasks are idempotent, so a redelivery never duplicates work.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker that loses its broker keeps trying (after 2, 4, 6 ... s, then every 30 s) rather
# than exiting after Celery's hundred attempts: a worker is a service, and a broker back
# after an hour should find it waiting. Before it first connects, `oloproof worker` waits
# for the database and the broker itself, one line per attempt (runs.workers.worker_start).
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# The chunk in hand when the broker goes away runs to its end and is recorded (its
# claim and transaction are the database's); its message, left unacknowledged, comes
# back and is skipped. Cancelling it instead (Celery 6's default) would waste the work.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
OLOPROOF_CELERY_APP = "evalsite.celery.app"
"""The Celery app work is handed to: loaded on the first hand-over (`runs.workers.dispatch`),
not with Django, so a command that hands nothing over never pays for Celery."""

OLOPROOF_CHUNK_SIZE = env_int("OLOPROOF_CHUNK_SIZE", 500)
"""Cases per chunk task when a submitted run is split for the workers."""
OLOPROOF_CHUNK_STALE_AFTER = env_int("OLOPROOF_CHUNK_STALE_AFTER", 60)
"""Seconds without a heartbeat after which a claimed chunk's worker is taken for dead."""
OLOPROOF_SWEEP_INTERVAL = env_int("OLOPROOF_SWEEP_INTERVAL", 30)
"""Seconds between a worker's checks for stale chunks and stalled or lost runs."""

OLOPROOF_RECORD_CHUNK_SIZE = env_int("OLOPROOF_RECORD_CHUNK_SIZE", 2000)
"""Cases written per batch when a run is recorded."""
OLOPROOF_MAX_CASES = env_int("OLOPROOF_MAX_CASES", 1_000_000)
"""The most cases a run submitted to the workers may have: a larger dataset is refused at
submission, naming this setting (runs.workers.run_code.run_config_verify)."""

# One line per record on stderr, where containers and process managers collect it.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "line": {"format": "%(asctime)s %(levelname)s %(name)s [%(process)d] %(message)s"}
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "line"}},
    "root": {"handlers": ["console"], "level": env_str("OLOPROOF_LOG_LEVEL", "WARNING")},
    "loggers": {
        # Server errors (500s) are logged even when the rest is kept quiet.
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
    },
}
