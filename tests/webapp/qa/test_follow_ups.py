"""Follow-up questions on the answer page: who may ask one, the rewrite off the web process and each way it fails
(the person's text is always kept and askable), asking the confirmed question into the thread, the earlier answers'
sources given to the model again, the history grouped by thread, and `parent`/`thread` in the JSON and the API."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.support import free_port
from tests.webapp.factories import (
    answer_with_references,
    article_retracted,
    follow_up_draft,
    follow_up_of,
)
from tests.webapp.qa.test_backend_faults import broker_down  # noqa: F401 (a fixture)
from webapp.accounts.roles import RESEARCHER, REVIEWER, user_assign_role
from webapp.corpus.models import Article
from webapp.qa import follow_ups
from webapp.qa.context import generation_context
from webapp.qa.models import FollowUpDraft, Question, RetrievedDocument
from webapp.qa.pipeline import PipelineSettings, RetrievalFilters, default_pipeline_settings
from webapp.qa.selectors import question_payload
from webapp.qa.services import admission, generate
from webapp.qa.tasks import follow_up_rewrite_task
from webapp.qa.threads import question_ancestors, thread_turns

pytestmark = pytest.mark.django_db

FOLLOW_UP = "Is it safe in children?"
ROOT_TEXT = "Does metformin cause lactic acidosis?"  # answer_with_references's question
FALLBACK = f"{FOLLOW_UP} (following: {ROOT_TEXT})"


@pytest.fixture
def fake_llm(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_SERVER_KIND="fake")


@pytest.fixture
def root(role_users: dict[str, User]) -> Question:
    """The researcher's answered question; its answer cites 10000001 and 10000002 (and 999, never given)."""
    return answer_with_references(user=role_users[RESEARCHER])


@pytest.fixture
def other_researcher() -> User:
    user = User.objects.create_user("other-researcher", password="another-long-password")
    user_assign_role(user=user, role=RESEARCHER)
    return user


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _start(client: Client, question: Question, text: str = FOLLOW_UP) -> Any:
    return client.post(f"/questions/{question.pk}/follow-up", {"follow_up": text})


def _textarea(page: str, name: str) -> str:
    found = re.search(rf'<textarea[^>]*name="{name}"[^>]*>(.*?)</textarea>', page, re.S)
    assert found, f"no {name} text box on the page"
    return found.group(1)


# --- Who may follow up


def test_only_the_owner_is_offered_a_follow_up_of_an_answered_question(
    root: Question, researcher_client: Client, reviewer_client: Client
) -> None:
    own = researcher_client.get(f"/questions/{root.pk}/").content.decode()
    assert f'action="/questions/{root.pk}/follow-up"' in own
    assert "Ask a follow-up" in own

    reviewing = reviewer_client.get(f"/questions/{root.pk}/")
    assert reviewing.status_code == 200, "a reviewer may read it"
    assert "Ask a follow-up" not in reviewing.content.decode()

    Question.objects.filter(pk=root.pk).update(status=Question.Status.GENERATING)
    assert "Ask a follow-up" not in researcher_client.get(f"/questions/{root.pk}/").content.decode()


def test_a_shared_page_shows_no_follow_ups(root: Question, researcher_client: Client) -> None:
    follow_up_of(parent=root, text="Is metformin safe in children?")
    researcher_client.post(f"/questions/{root.pk}/share")
    root.refresh_from_db()

    shared = researcher_client.get(f"/shared/{root.share_token}/").content.decode()

    assert 'id="follow-up"' not in shared
    assert "Is metformin safe in children?" not in shared


@pytest.mark.parametrize("who", ["other", "reviewer"])
def test_nobody_else_can_start_or_ask_a_follow_up(
    who: str, root: Question, role_users: dict[str, User], other_researcher: User
) -> None:
    client = _client(other_researcher if who == "other" else role_users[REVIEWER])
    draft = follow_up_draft(parent=root)

    assert _start(client, root).status_code == 404
    asked = client.post(f"/questions/{root.pk}/follow-ups/{draft.pk}/ask", {"question": "Is metformin safe?"})
    assert asked.status_code == 404
    assert client.get(f"/questions/{root.pk}/follow-ups/{draft.pk}.json").status_code == 404
    assert FollowUpDraft.objects.get().status == FollowUpDraft.Status.REWRITING
    assert not Question.objects.filter(parent=root).exists()


def test_an_unanswered_question_cannot_be_followed_up(root: Question, researcher_client: Client) -> None:
    Question.objects.filter(pk=root.pk).update(status=Question.Status.FAILED)

    assert _start(researcher_client, root).status_code == 404
    assert not FollowUpDraft.objects.exists()


# --- Starting a follow-up, and its rewrite


def test_starting_a_follow_up_offers_the_fallback_at_once_and_queues_the_rewrite(
    root: Question, researcher_client: Client, django_capture_on_commit_callbacks: Callable[..., object]
) -> None:
    with django_capture_on_commit_callbacks() as callbacks:
        response = _start(researcher_client, root)

    assert response.status_code == 302
    assert response["Location"] == f"/questions/{root.pk}/#follow-up"
    assert len(callbacks) == 1, "the rewrite is queued once the draft is committed"
    draft = FollowUpDraft.objects.get()
    assert (draft.text, draft.proposal, draft.status) == (FOLLOW_UP, FALLBACK, FollowUpDraft.Status.REWRITING)
    page = researcher_client.get(f"/questions/{root.pk}/").content.decode()
    assert _textarea(page, "question") == FALLBACK, "editable and askable before the rewrite comes"
    assert "Rewriting your follow-up as a standalone question" in page
    assert f'data-json-url="/questions/{root.pk}/follow-ups/{draft.pk}.json"' in page


def test_an_empty_follow_up_is_refused_with_a_message(root: Question, researcher_client: Client) -> None:
    response = _start(researcher_client, root, "   ")

    assert response.status_code == 400
    assert "Please type a follow-up question." in response.content.decode()
    assert not FollowUpDraft.objects.exists()


def test_a_person_over_the_hourly_limit_is_told_before_any_rewrite_and_keeps_the_text(
    settings: Settings, root: Question, researcher_client: Client
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_QUESTIONS_PER_HOUR=1)  # the root question is this hour's one

    response = _start(researcher_client, root, "Is it <b>safe</b> in children?")

    assert response.status_code == 429
    page = response.content.decode()
    assert "You have asked 1 questions in the last hour" in page
    assert _textarea(page, "follow_up") == "Is it &lt;b&gt;safe&lt;/b&gt; in children?"
    assert not FollowUpDraft.objects.exists()


def test_a_new_follow_up_replaces_the_one_not_asked_yet(root: Question, researcher_client: Client) -> None:
    first = follow_up_draft(parent=root, text="What about children?")

    _start(researcher_client, root, "What about pregnancy?")

    assert not FollowUpDraft.objects.filter(pk=first.pk).exists()
    assert FollowUpDraft.objects.get().text == "What about pregnancy?"
    follow_up_rewrite_task.apply(args=(first.pk,))  # its queued rewrite finds nothing to do


def test_the_rewrite_proposes_the_models_standalone_question(
    fake_llm: None, root: Question, researcher_client: Client
) -> None:
    draft = follow_up_draft(parent=root)

    assert follow_up_rewrite_task.apply(args=(draft.pk,)).successful()

    draft.refresh_from_db()
    assert draft.status == FollowUpDraft.Status.PROPOSED
    assert draft.proposal == "Is it safe in children (Does metformin cause lactic acidosis)?"
    assert (draft.note, draft.model) == ("", "fake-llm")
    polled = researcher_client.get(f"/questions/{root.pk}/follow-ups/{draft.pk}.json").json()
    assert polled == {
        "id": draft.pk,
        "status": "proposed",
        "text": FOLLOW_UP,
        "proposal": draft.proposal,
        "note": "",
        "asked": None,
    }
    page = researcher_client.get(f"/questions/{root.pk}/").content.decode()
    assert _textarea(page, "question") == draft.proposal
    assert "Rewritten from this thread as a standalone question" in page


def test_a_rewrite_with_the_model_server_down_offers_the_fallback_with_the_reason(
    settings: Settings, root: Question, researcher_client: Client
) -> None:
    settings.VERIMED = settings.VERIMED.replace(
        VERIMED_LLM_BASE_URL=f"http://127.0.0.1:{free_port()}/v1"
    )  # nothing listens there
    draft = follow_up_draft(parent=root)

    assert follow_up_rewrite_task.apply(args=(draft.pk,)).successful()

    draft.refresh_from_db()
    assert draft.status == FollowUpDraft.Status.FALLBACK
    assert draft.proposal == FALLBACK
    assert draft.note.startswith("the rewrite could not be made: ")
    assert "unreachable" in draft.note
    page = researcher_client.get(f"/questions/{root.pk}/").content.decode()
    assert "The rewrite could not be made: " in page
    assert _textarea(page, "question") == FALLBACK


@pytest.mark.parametrize(
    ("error", "reason"),
    [(SoftTimeLimitExceeded(), "it took too long"), (RuntimeError("boom"), "an internal error: boom")],
)
def test_a_rewrite_that_does_not_finish_offers_the_fallback_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, root: Question, error: Exception, reason: str
) -> None:
    def fails(*, draft_id: int) -> None:
        raise error

    monkeypatch.setattr(follow_ups, "follow_up_rewrite", fails)
    draft = follow_up_draft(parent=root)

    follow_up_rewrite_task.apply(args=(draft.pk,))

    draft.refresh_from_db()
    assert (draft.status, draft.proposal) == (FollowUpDraft.Status.FALLBACK, FALLBACK)
    assert draft.note == f"the rewrite could not be made: {reason}"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("broker_down")
def test_a_broker_down_leaves_the_fallback_and_says_the_queue_is_unreachable(
    root: Question, researcher_client: Client
) -> None:
    response = _start(researcher_client, root)

    assert response.status_code == 302
    draft = FollowUpDraft.objects.get()
    assert (draft.status, draft.proposal) == (FollowUpDraft.Status.FALLBACK, FALLBACK)
    assert draft.note == "the rewrite could not be made: the task queue is unreachable"


def test_a_late_rewrite_never_overwrites_a_follow_up_already_asked(fake_llm: None, root: Question) -> None:
    draft = follow_up_draft(parent=root, status=FollowUpDraft.Status.ASKED, proposal="Is metformin safe in children?")

    follow_up_rewrite_task.apply(args=(draft.pk,))

    draft.refresh_from_db()
    assert (draft.status, draft.proposal) == (FollowUpDraft.Status.ASKED, "Is metformin safe in children?")


def test_the_rewrite_reads_the_whole_line_of_questions_it_follows(root: Question) -> None:
    middle = follow_up_of(parent=root, text="Does metformin lower HbA1c?", answer_text="It does (PUBMED:10000001).")
    last = follow_up_of(parent=middle, text="Is metformin safe in pregnancy?")
    follow_up_of(parent=root, text="A branch the last one does not follow?")

    assert question_ancestors(question=last) == [root, middle]
    assert [turn.question for turn in thread_turns(question=last)] == [ROOT_TEXT, middle.text, last.text]
    assert thread_turns(question=middle)[-1].answer == "It does (PUBMED:10000001)."


# --- Asking the confirmed question


def test_asking_creates_the_follow_up_in_the_thread_and_queues_it(
    root: Question, researcher_client: Client, django_capture_on_commit_callbacks: Callable[..., object]
) -> None:
    filters = RetrievalFilters(year_from=2005, include_retracted=True)
    Question.objects.filter(pk=root.pk).update(settings={"filters": filters.model_dump(mode="json")})
    draft = follow_up_draft(parent=root, status=FollowUpDraft.Status.PROPOSED, proposal="Is metformin safe?")

    with django_capture_on_commit_callbacks() as callbacks:
        response = researcher_client.post(
            f"/questions/{root.pk}/follow-ups/{draft.pk}/ask", {"question": "  Is metformin safe in children?  "}
        )

    asked = Question.objects.get(parent=root)
    assert response.status_code == 302
    assert response["Location"] == f"/questions/{asked.pk}/"
    assert (asked.text, asked.thread_id, asked.user_id, asked.status) == (
        "Is metformin safe in children?",
        root.pk,
        root.user_id,
        Question.Status.QUEUED,
    )
    assert PipelineSettings.model_validate(asked.settings).filters == filters, "it searches as the thread did"
    assert len(callbacks) == 1, "the pipeline is queued once the question is committed"
    draft.refresh_from_db()
    assert (draft.status, draft.asked_id) == (FollowUpDraft.Status.ASKED, asked.pk)

    again = researcher_client.post(f"/questions/{root.pk}/follow-ups/{draft.pk}/ask", {"question": "Twice?"})
    assert again["Location"] == f"/questions/{asked.pk}/", "a double click asks once"
    assert Question.objects.filter(parent=root).count() == 1


def test_a_follow_up_of_a_follow_up_stays_in_the_first_questions_thread(root: Question) -> None:
    middle = follow_up_of(parent=root, text="Does metformin lower HbA1c?")
    draft = follow_up_draft(parent=middle)

    asked = follow_ups.follow_up_ask(draft=draft, text="Does metformin lower HbA1c in children?", user=root.user)

    assert (asked.parent_id, asked.thread_id) == (middle.pk, root.pk)


@pytest.mark.parametrize(
    ("text", "status", "message"),
    [("   ", 400, "Please type a question."), ("why " * 600, 400, "limited to 2,000 characters")],
)
def test_a_question_the_ask_service_refuses_keeps_the_draft_and_the_edited_text(
    root: Question, researcher_client: Client, text: str, status: int, message: str
) -> None:
    draft = follow_up_draft(parent=root, status=FollowUpDraft.Status.FALLBACK, note="the rewrite could not be made: x")

    response = researcher_client.post(f"/questions/{root.pk}/follow-ups/{draft.pk}/ask", {"question": text})

    assert response.status_code == status
    page = response.content.decode()
    assert message in page
    assert _textarea(page, "question") == text
    assert not Question.objects.filter(parent=root).exists()
    assert FollowUpDraft.objects.get().status == FollowUpDraft.Status.FALLBACK


def test_asking_over_the_hourly_limit_is_refused_like_any_question(
    settings: Settings, root: Question, researcher_client: Client
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_QUESTIONS_PER_HOUR=1)
    draft = follow_up_draft(parent=root)

    response = researcher_client.post(f"/questions/{root.pk}/follow-ups/{draft.pk}/ask", {"question": "Safe?!"})

    assert response.status_code == 429
    assert "the most allowed" in response.content.decode()
    assert not Question.objects.filter(parent=root).exists()


def test_a_follow_up_can_be_discarded(root: Question, researcher_client: Client) -> None:
    draft = follow_up_draft(parent=root)

    response = researcher_client.post(f"/questions/{root.pk}/follow-ups/{draft.pk}/ask", {"discard": "1"})

    assert response.status_code == 302
    assert not FollowUpDraft.objects.exists()
    page = researcher_client.get(f"/questions/{root.pk}/").content.decode()
    assert _textarea(page, "follow_up") == "", "the empty follow-up form is back"


# --- The thread on the answer page and in the history


def test_a_follow_up_links_to_the_questions_earlier_in_its_thread(root: Question, researcher_client: Client) -> None:
    middle = follow_up_of(parent=root, text="Does metformin lower HbA1c?")
    last = follow_up_of(parent=middle, text="Is metformin safe in pregnancy?", status=Question.Status.QUEUED)

    page = researcher_client.get(f"/questions/{last.pk}/").content.decode()
    earlier = page[page.index('id="thread-earlier"') :]
    assert earlier.index(f'href="/questions/{root.pk}/"') < earlier.index(f'href="/questions/{middle.pk}/"')
    assert "Ask a follow-up" not in page, "not before it is answered"

    first = researcher_client.get(f"/questions/{root.pk}/").content.decode()
    assert "Earlier in this thread" not in first
    assert f'<a href="/questions/{middle.pk}/">Does metformin lower HbA1c?</a>' in first


def _history_rows(page: str) -> list[str]:
    """The texts of the top-level rows and, indented, of the follow-ups under them."""
    rows = []
    for item in re.finditer(r'<li class="history-(thread|follow-up)"[^>]*>\s*<a href="[^"]+">([^<]*)</a>', page):
        rows.append(("  " if item.group(1) == "follow-up" else "") + item.group(2))
    return rows


def test_the_history_lists_a_follow_up_under_its_thread_not_as_a_row_of_its_own(
    root: Question, researcher_client: Client, role_users: dict[str, User]
) -> None:
    Question.objects.create(text="An unrelated question asked in between?", user=role_users[RESEARCHER])
    middle = follow_up_of(parent=root, text="Is metformin safe in children?")
    follow_up_of(parent=middle, text="And in pregnancy?")

    page = researcher_client.get("/history/").content.decode()

    assert _history_rows(page) == [
        "An unrelated question asked in between?",
        ROOT_TEXT,
        "  Is metformin safe in children?",
        "  And in pregnancy?",
    ]
    assert "4 questions." in page


def test_a_follow_up_found_by_a_search_is_shown_under_its_thread(root: Question, researcher_client: Client) -> None:
    follow_up_of(parent=root, text="Is metformin safe in pregnancy?")
    follow_up_of(parent=root, text="Is metformin safe in children?")

    page = researcher_client.get("/history/", {"q": "pregnancy"}).content.decode()

    assert _history_rows(page) == [ROOT_TEXT, "  Is metformin safe in pregnancy?"]
    assert "1 question matching" in page


# --- The earlier answers' sources


def _follow_up_retrieved(root: Question, *pmids: str) -> Question:
    asked = follow_up_of(parent=root, text="Is metformin safe in children?", status=Question.Status.QUEUED)
    for rank, pmid in enumerate(pmids, start=1):
        RetrievedDocument.objects.create(
            question=asked, rank=rank, pmid=pmid, score=1 / rank, lexical_score=1.0, semantic_score=0.0
        )
    return asked


@pytest.fixture
def third_article(db: None) -> Article:
    return Article.objects.create(
        pmid="10000003", title="Metformin in children.", abstract="Metformin was given to 80 children. It was safe."
    )


@pytest.fixture
def whole_abstracts(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(
        VERIMED_SENTENCES_PER_ABSTRACT=0
    )  # nothing to focus: no embedding model is loaded


def test_a_follow_up_is_given_the_abstracts_its_thread_cited_after_its_own_once_each(
    whole_abstracts: None, root: Question, third_article: Article
) -> None:
    asked = _follow_up_retrieved(root, "10000003", "10000002")
    pipeline = default_pipeline_settings()

    context = generation_context(asked, pipeline)

    # Its own hits first; then what the root's answer cited that they lack (10000002 was found again; 999 was never
    # given to the root's model, so it is no source).
    assert [item.pmid for item in context] == ["10000003", "10000002", "10000001"]
    assert [item.pmid for item in generation_context(root, pipeline)] == ["10000001", "10000002"]


def test_an_earlier_source_retracted_since_is_left_out_unless_retracted_papers_are_asked_for(
    whole_abstracts: None, root: Question, third_article: Article
) -> None:
    article_retracted(pmid="10000001")
    asked = _follow_up_retrieved(root, "10000003")
    pipeline = default_pipeline_settings()

    assert [item.pmid for item in generation_context(asked, pipeline)] == ["10000003", "10000002"]
    including = pipeline.model_copy(update={"filters": RetrievalFilters(include_retracted=True)})
    assert [item.pmid for item in generation_context(asked, including)] == ["10000003", "10000001", "10000002"]


def test_the_answer_cites_an_earlier_source_and_the_page_lists_it_as_from_the_thread(
    fake_llm: None, settings: Settings, whole_abstracts: None, root: Question, third_article: Article
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_ABSTRACTS_IN_PROMPT=1)
    asked = admission.question_create(text="Is metformin safe in children?", parent=root, enqueue=False)
    RetrievedDocument.objects.create(
        question=asked, rank=1, pmid="10000003", score=1.0, lexical_score=1, semantic_score=0
    )

    generate.question_generate(question_id=asked.pk)

    asked.refresh_from_db()
    assert asked.context["given"] == ["10000003", "10000001", "10000002"]
    payload = question_payload(asked)
    assert [doc["pmid"] for doc in payload["retrieved"]] == ["10000003"]
    assert [source["pmid"] for source in payload["thread_sources"]] == ["10000001", "10000002"]
    assert payload["thread_sources"][0]["source"]["title"] == "Metformin and lactic acidosis."


# --- parent and thread in the JSON and the API


def test_the_question_json_names_the_parent_and_the_thread(root: Question, researcher_client: Client) -> None:
    middle = follow_up_of(parent=root, text="Does metformin lower HbA1c?")
    last = follow_up_of(parent=middle, text="Is metformin safe in pregnancy?")
    standalone = Question.objects.create(text="A question of its own?", user=root.user, status=Question.Status.DONE)

    def json(question: Question) -> dict[str, object]:
        payload: dict[str, object] = researcher_client.get(f"/questions/{question.pk}.json").json()
        return {key: payload[key] for key in ("parent", "thread", "thread_questions", "thread_sources")}

    thread = [root.pk, middle.pk, last.pk]
    assert json(root) == {"parent": None, "thread": None, "thread_questions": thread, "thread_sources": []}
    assert json(last) == {"parent": middle.pk, "thread": root.pk, "thread_questions": thread, "thread_sources": []}
    assert json(standalone) == {"parent": None, "thread": None, "thread_questions": [], "thread_sources": []}


def _api(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def test_the_api_shows_parent_and_thread_and_asks_a_follow_up(
    root: Question, role_users: dict[str, User], django_capture_on_commit_callbacks: Callable[..., object]
) -> None:
    api = _api(role_users[RESEARCHER])
    middle = follow_up_of(parent=root, text="Does metformin lower HbA1c?")

    detail = api.get(f"/api/v1/questions/{middle.pk}").json()
    assert (detail["parent"], detail["thread"], detail["thread_questions"]) == (root.pk, root.pk, [root.pk, middle.pk])
    listed = {row["id"]: (row["parent"], row["thread"]) for row in api.get("/api/v1/questions").json()["results"]}
    assert listed == {root.pk: (None, None), middle.pk: (root.pk, root.pk)}

    with django_capture_on_commit_callbacks():
        created = api.post("/api/v1/questions", {"question": "Is metformin safe in children?", "parent": middle.pk})
    assert created.status_code == 201, created.content
    asked = Question.objects.get(pk=created.json()["id"])
    assert (asked.parent_id, asked.thread_id) == (middle.pk, root.pk)


def test_the_api_refuses_a_parent_that_is_not_the_callers_answered_question(
    root: Question, role_users: dict[str, User], other_researcher: User
) -> None:
    unanswered = follow_up_of(parent=root, text="Still running?", status=Question.Status.GENERATING)
    message = "No such question of yours with an answer (status done) to follow up."

    for client, parent in ((_api(other_researcher), root.pk), (_api(role_users[RESEARCHER]), unanswered.pk)):
        refused = client.post("/api/v1/questions", {"question": "Is metformin safe in children?", "parent": parent})
        assert refused.status_code == 400
        assert refused.json() == {"parent": [message]}
    assert Question.objects.filter(parent__isnull=False).count() == 1
