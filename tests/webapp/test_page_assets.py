"""Every static file a page refers to exists, and each page names its own icon: a browser otherwise asks for
/favicon.ico, which the site does not serve, and the answer page's log shows a 404 on every visit."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from webapp.qa.services import admission

pytestmark = pytest.mark.django_db

STATIC_REFERENCE = re.compile(r'(?:src|href)="/static/([^"?#]+)"')


def _static_files(page: str) -> list[str]:
    return STATIC_REFERENCE.findall(page)


def test_the_answer_and_ask_pages_refer_only_to_static_files_that_exist(site_admin_client: Client) -> None:
    question = admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)
    for url in ("/", f"/questions/{question.pk}/", "/history/"):
        page = site_admin_client.get(url).content.decode()
        referenced = _static_files(page)
        assert "verimed.css" in referenced, url
        missing = [name for name in referenced if finders.find(name) is None]
        assert missing == [], url


def test_every_page_names_its_icon_so_no_browser_asks_for_favicon_ico(site_admin_client: Client) -> None:
    question = admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)
    page = site_admin_client.get(f"/questions/{question.pk}/").content.decode()
    assert re.search(r'<link rel="icon" href="/static/favicon\.svg"', page)
    assert finders.find("favicon.svg") is not None
    assert site_admin_client.get("/favicon.ico").status_code == 404  # nothing there: the link above is needed
