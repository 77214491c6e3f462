"""A question's stages in the order they ran, with the wait for a worker first: what the answer page draws as a bar
each, and what the API returns as `stage_timings`."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from webapp.qa import selectors
from webapp.qa.models import Question
from webapp.qa.services import admission, retrieve
from webapp.qa.stage_timings import STAGES, stage_timings

STATIC = Path(__file__).resolve().parents[3] / "static"
AFTER_THE_ANSWER = {
    "retrieval": 250.0,
    "context": 12.0,
    "generation": 9000.0,
    "generation_ttft": 6000.0,
    "generation_tokens": 100,
    "generation_tokens_per_s": 20.1,
    "verification": 800.0,
    "consensus": 4000.0,
    "queue": 1500.0,
}


def test_stages_come_in_the_order_they_ran_whatever_order_they_were_stored_in() -> None:
    timings = stage_timings(AFTER_THE_ANSWER, bottom_line_first=False)

    assert [timing["stage"] for timing in timings] == [
        "queue", "retrieval", "context", "first_token", "writing", "verification", "consensus",
    ]  # fmt: skip


def test_the_generation_is_split_at_its_first_token_and_speed_figures_are_not_stages() -> None:
    timings = {timing["stage"]: timing["ms"] for timing in stage_timings(AFTER_THE_ANSWER, bottom_line_first=False)}

    assert timings["first_token"] == 6000.0
    assert timings["writing"] == 3000.0
    assert not {"generation", "generation_ttft", "generation_tokens", "generation_tokens_per_s"} & set(timings)
    # The bars add up to the time the stages took.
    assert sum(timings.values()) == sum(
        AFTER_THE_ANSWER[stage]
        for stage in ("queue", "retrieval", "context", "generation", "verification", "consensus")
    )


def test_a_bottom_line_decided_first_comes_before_the_answer_and_its_stance_after() -> None:
    stored = {**AFTER_THE_ANSWER, "answer_stance": 300.0}

    order = [timing["stage"] for timing in stage_timings(stored, bottom_line_first=True)]

    assert order == ["queue", "retrieval", "consensus", "context", "first_token", "writing", "verification",
                     "answer_stance"]  # fmt: skip


def test_an_answer_stopped_before_its_first_token_keeps_its_generation_whole() -> None:
    timings = stage_timings({"retrieval": 10.0, "generation": 700.0, "generation_ttft": None}, bottom_line_first=False)

    assert timings == [{"stage": "retrieval", "ms": 10.0}, {"stage": "generation", "ms": 700.0}]
    assert {timing["stage"] for timing in timings} <= set(STAGES)


@pytest.mark.django_db
def test_a_question_not_searched_yet_has_no_stages(site_admin_client: Client) -> None:
    question = admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)

    payload = site_admin_client.get(f"/questions/{question.pk}.json").json()

    assert payload["stage_timings"] == []


@pytest.mark.django_db
def test_the_wait_for_a_worker_is_recorded_when_the_search_starts_and_shown_first(
    own_index: Path, settings: Settings, site_admin_client: Client
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_EMBEDDING_BACKEND="fake")
    question = admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)
    # Asked three seconds before a worker took it.
    Question.objects.filter(pk=question.pk).update(created_at=question.created_at - timedelta(seconds=3))

    retrieve.question_retrieve(question_id=question.pk)

    question.refresh_from_db()
    assert question.timings_ms["queue"] >= 3000
    payload = site_admin_client.get(f"/questions/{question.pk}.json").json()
    assert [timing["stage"] for timing in payload["stage_timings"]] == ["queue", "retrieval"]
    assert payload["stage_timings"][0]["ms"] == question.timings_ms["queue"]
    assert payload["stage_timings"] == selectors.question_payload(question, viewer_id=None)["stage_timings"]
    # The API returns the same list, through the serializer its schema is made from.
    assert site_admin_client.get(f"/api/v1/questions/{question.pk}").json()["stage_timings"] == payload["stage_timings"]


def test_every_stage_the_payload_can_name_has_its_words_on_the_page() -> None:
    script = (STATIC / "stage-bars.js").read_text()
    words = dict(re.findall(r'^\s+([a-z_]+): "([^"]+)",$', script, re.M))

    assert set(words) == set(STAGES)


@pytest.mark.django_db
def test_the_answer_page_loads_the_bars_before_the_script_that_draws_them(site_admin_client: Client) -> None:
    question = admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)

    page = site_admin_client.get(f"/questions/{question.pk}/").content.decode()

    assert 'id="stage-bars"' in page
    assert page.index("stage-bars.js") < page.index("verimed.js")
