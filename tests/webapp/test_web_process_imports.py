"""The web process serves pages without loading a model library: adapters are imported only where a setting chooses
them, and only the workers that embed, classify or tag ever choose one."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support import REPO

# Routes whose views reach the question pipeline (services -> verification -> the verifier's registry), the API and
# the index pages; each view's module is imported, as the first request to it would.
SCRIPT = """
import importlib, sys
import django
django.setup()
from django.urls import resolve
import webapp.urls
for url in ("/", "/questions/1/", "/questions/1.json", "/api/v1/questions", "/review/", "/index/", "/healthz"):
    importlib.import_module(resolve(url).func.__module__)
import webapp.qa.services.admission, webapp.qa.services.retrieve, webapp.qa.services.generate
import webapp.qa.services.verify, webapp.qa.verification, webapp.qa.llm, webapp.corpus.engines
print(",".join(sorted(name for name in ("torch", "transformers", "sentence_transformers") if name in sys.modules)))
"""


def test_importing_the_url_conf_and_the_views_leaves_torch_unloaded() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.django_settings"}

    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300
    )

    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "", f"the web process imported {done.stdout.strip()}"
