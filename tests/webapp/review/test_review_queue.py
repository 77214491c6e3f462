"""The review queue and flag pages: who may see them, filters, closing flags and the agreement figures."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.webapp.factories import answer_with_three_verdicts, unclear_sentence
from webapp.accounts.roles import RESEARCHER, REVIEWER
from webapp.qa.models import Question
from webapp.review.models import Flag
from webapp.review.selectors import flag_agreement
from webapp.review.services import flag_close, flag_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def question(role_users: dict[str, User]) -> Question:
    return answer_with_three_verdicts(user=role_users[RESEARCHER])


def _flag(question: Question, position: int, reason: str = "unsupported", **extra: str) -> Flag:
    researcher = User.objects.get(username="researcher-user")
    return flag_create(question=question, sentence_position=position, reason=reason, user=researcher, **extra)


def _rows(page: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr data-flag="(\d+)">', page)]


def test_researchers_get_403_and_anonymous_visitors_the_sign_in_page(
    researcher_client: Client, client: Client, question: Question
) -> None:
    flag = _flag(question, 0)
    for url in ("/review/", f"/review/flags/{flag.pk}/", "/review/export/claims.jsonl", "/review/export/corpus.jsonl"):
        assert researcher_client.get(url).status_code == 403, url
        anonymous = client.get(url)
        assert anonymous.status_code == 302, url
        assert anonymous["Location"].startswith("/accounts/login/")
    assert researcher_client.post(f"/review/flags/{flag.pk}/", {"status": "dismissed"}).status_code == 403
    assert Flag.objects.get(pk=flag.pk).status == Flag.Status.OPEN


def test_the_queue_shows_open_flags_by_default(reviewer_client: Client, question: Question) -> None:
    first, second = _flag(question, 0), _flag(question, 1)
    closed = _flag(question, 2)
    flag_close(flag_id=closed.pk, status="dismissed", user=User.objects.get(username="reviewer-user"))
    response = reviewer_client.get("/review/")
    assert response.status_code == 200
    page = response.content.decode()
    assert sorted(_rows(page)) == sorted([first.pk, second.pk])
    assert "Metformin did not cause lactic acidosis." in page
    assert f'href="/questions/{question.pk}/"' in page
    assert f'href="/review/flags/{first.pk}/"' in page
    assert "researcher-user" in page
    assert "✔</span> Supported" in page, "the verdict reads as an icon and words"
    assert sorted(_rows(reviewer_client.get("/review/?status=all").content.decode())) == sorted(
        [first.pk, second.pk, closed.pk]
    )
    assert _rows(reviewer_client.get("/review/?status=dismissed").content.decode()) == [closed.pk]


def test_the_queue_filters_by_reason_verdict_and_dates(reviewer_client: Client, question: Question) -> None:
    old = _flag(question, 0, reason="unsupported")
    middle = _flag(question, 1, reason="wrong_verdict")
    recent = _flag(question, 2, reason="wrong_citation")
    for flag, day in ((old, 1), (middle, 15), (recent, 28)):
        Flag.objects.filter(pk=flag.pk).update(created_at=datetime(2025, 3, day, 12, tzinfo=UTC))

    def rows(query: str) -> list[int]:
        response = reviewer_client.get("/review/?" + query)
        assert response.status_code == 200, query
        return sorted(_rows(response.content.decode()))

    assert rows("reason=wrong_verdict") == [middle.pk]
    assert rows("verdict=SUPPORT") == [old.pk]
    assert rows("verdict=NO_REFERENCE") == [recent.pk]
    assert rows("created_from=2025-03-15") == sorted([middle.pk, recent.pk])
    assert rows("created_to=2025-03-15") == sorted([old.pk, middle.pk])
    assert rows("created_from=2025-03-02&created_to=2025-03-27") == [middle.pk]
    assert rows("reason=unsupported&verdict=CONTRADICT") == []


def test_a_bad_filter_is_reported_not_a_500(reviewer_client: Client, question: Question) -> None:
    _flag(question, 0)
    response = reviewer_client.get("/review/?created_from=yesterday&reason=nonsense")
    assert response.status_code == 400
    page = response.content.decode()
    assert "Enter a valid date." in page
    assert "Select a valid choice." in page
    assert _rows(page) == []


def test_hostile_comment_text_is_escaped_on_the_queue_and_flag_pages(
    reviewer_client: Client, question: Question
) -> None:
    hostile = "<script>alert('x')</script><img src=x onerror=alert(1)>"
    flag = _flag(question, 0, comment=hostile)
    for url in ("/review/", f"/review/flags/{flag.pk}/"):
        page = reviewer_client.get(url).content.decode()
        assert hostile not in page, url
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page, url


def test_the_flag_page_shows_verdicts_and_the_abstract_with_evidence_marked(
    reviewer_client: Client, question: Question
) -> None:
    first = _flag(question, 0, pmid="111")
    page = reviewer_client.get(f"/review/flags/{first.pk}/").content.decode()
    assert "Metformin did not cause lactic acidosis." in page
    assert "confidence 0.93" in page
    assert 'Metformin was given to 5,000 patients. <mark class="evidence">No lactic acidosis occurred.</mark>' in page
    assert "&lt;b&gt;Metformin&lt;/b&gt; safety" in page, "abstract titles are escaped"
    assert 'name="status" value="resolved"' in page

    second = _flag(question, 1)
    page = reviewer_client.get(f"/review/flags/{second.pk}/").content.decode()
    assert "PMID 111" in page, "every cited abstract, with its own verdict"
    assert "PMID 222" in page
    assert "No evidence" in page
    assert "Contradicted" in page
    # Sentence indices alone (no stored character offsets) still mark the evidence.
    assert '<mark class="evidence">The complex inhibits mTORC1.</mark>' in page

    third = _flag(question, 2)
    page = reviewer_client.get(f"/review/flags/{third.pk}/").content.decode()
    assert "This PMID is not in the corpus" in page


def test_an_unknown_flag_is_404(reviewer_client: Client) -> None:
    assert reviewer_client.get("/review/flags/999/").status_code == 404


def test_resolving_and_dismissing_update_status_and_agreement(
    reviewer_client: Client, question: Question, role_users: dict[str, User]
) -> None:
    supported = _flag(question, 0)  # verifier: SUPPORT
    contradicted = _flag(question, 1)  # verifier: CONTRADICT
    also_supported = _flag(question, 0, reason="other")
    no_reference = _flag(question, 2)  # verifier: NO_REFERENCE
    _flag(question, 1)  # stays open

    response = reviewer_client.post(
        f"/review/flags/{supported.pk}/", {"status": "resolved", "reviewer_label": "NO_EVIDENCE", "note": "overstated"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/review/"
    flag = Flag.objects.get(pk=supported.pk)
    assert (flag.status, flag.reviewer_label, flag.resolution_note) == ("resolved", "NO_EVIDENCE", "overstated")
    assert flag.resolved_by == role_users[REVIEWER]
    assert flag.resolved_at is not None
    assert flag.verifier_confirmed is False

    # Dismissing without a label confirms the verifier's verdict.
    assert reviewer_client.post(f"/review/flags/{contradicted.pk}/", {"status": "dismissed"}).status_code == 302
    assert Flag.objects.get(pk=contradicted.pk).reviewer_label == "CONTRADICT"
    reviewer_client.post(f"/review/flags/{also_supported.pk}/", {"status": "dismissed", "reviewer_label": "SUPPORT"})
    # NO_REFERENCE is not a label a reviewer can confirm: closed, but not counted as labelled.
    reviewer_client.post(f"/review/flags/{no_reference.pk}/", {"status": "dismissed"})

    figures = flag_agreement()
    assert (figures.open, figures.resolved, figures.dismissed) == (1, 1, 3)
    assert (figures.closed, figures.labelled, figures.confirmed) == (4, 3, 2)
    assert figures.share == pytest.approx(2 / 3)
    per_verdict = {row.verdict: (row.closed, row.labelled, row.confirmed) for row in figures.per_verdict}
    assert per_verdict == {"SUPPORT": (2, 2, 1), "CONTRADICT": (1, 1, 1), "NO_REFERENCE": (1, 0, 0)}

    page = reviewer_client.get("/review/").content.decode()
    assert "Flag " + str(no_reference.pk) + " dismissed." in page, "the last close is confirmed on the queue"
    assert '<span id="count-open">1</span>' in page
    assert '<span id="count-resolved">1</span>' in page
    assert '<span id="count-dismissed">3</span>' in page
    assert "2 of 3 confirmed the verifier's verdict (67%)" in page
    supported_row = page[page.index('<tr data-verdict="SUPPORT">') :]
    assert re.match(r'<tr data-verdict="SUPPORT">.*?<td>2</td><td>2</td><td>1</td>\s*<td>50%</td>', supported_row, re.S)


def test_an_unclear_flag_is_its_own_agreement_row_and_is_never_confirmed(
    reviewer_client: Client, question: Question
) -> None:
    unclear_sentence(question=question, position=3, pmid="111")
    labelled = _flag(question, 3, reason="wrong_verdict", pmid="111")
    unlabelled = _flag(question, 3)
    supported = _flag(question, 0)
    assert labelled.verifier_verdict == "UNCLEAR"
    # The reviewer says what the abstract supports; the verifier said nothing it could be confirmed on.
    reviewer_client.post(f"/review/flags/{labelled.pk}/", {"status": "resolved", "reviewer_label": "SUPPORT"})
    # Dismissed without a label: there is no verdict of the verifier's to keep, so no label is recorded.
    reviewer_client.post(f"/review/flags/{unlabelled.pk}/", {"status": "dismissed"})
    reviewer_client.post(f"/review/flags/{supported.pk}/", {"status": "dismissed"})
    assert Flag.objects.get(pk=unlabelled.pk).reviewer_label == ""
    assert Flag.objects.get(pk=labelled.pk).verifier_confirmed is False

    figures = flag_agreement()
    per_verdict = {row.verdict: (row.closed, row.labelled, row.confirmed) for row in figures.per_verdict}
    assert per_verdict == {"SUPPORT": (1, 1, 1), "UNCLEAR": (2, 1, 0)}
    assert (figures.closed, figures.labelled, figures.confirmed) == (3, 2, 1)

    page = reviewer_client.get("/review/").content.decode()
    unclear_row = page[page.index('<tr data-verdict="UNCLEAR">') :]
    assert re.match(
        r'<tr data-verdict="UNCLEAR">\s*<th scope="row"><span class="review-verdict verdict-UNCLEAR">'
        r'<span aria-hidden="true">~</span> Unclear</span></th>\s*<td>2</td><td>1</td><td>0</td>\s*<td>0%</td>',
        unclear_row,
    )
    assert "1 of 2 confirmed the verifier's verdict (50%)" in page


def test_the_queue_filters_unclear_flags_and_shows_their_leaning(reviewer_client: Client, question: Question) -> None:
    unclear_sentence(question=question, position=3, pmid="111")
    unclear = _flag(question, 3, pmid="111")
    _flag(question, 0)
    queue = reviewer_client.get("/review/?verdict=UNCLEAR").content.decode()
    assert _rows(queue) == [unclear.pk]
    assert '<option value="UNCLEAR" selected>Unclear</option>' in queue
    assert '<span aria-hidden="true">~</span> Unclear</span>' in queue

    page = reviewer_client.get(f"/review/flags/{unclear.pk}/").content.decode()
    assert "no cited abstract gave a verdict confident enough to show; best confidence 0.48" in page
    assert '<span class="meta review-leaning">leans Supported</span>' in page
    assert "confidence 0.48" in page
    assert '<mark class="evidence">No lactic acidosis occurred.</mark>' in page, "the evidence it leaned on"
    assert "there is none to keep" in page


def test_closing_a_flag_twice_is_refused(reviewer_client: Client, question: Question) -> None:
    flag = _flag(question, 0)
    assert reviewer_client.post(f"/review/flags/{flag.pk}/", {"status": "dismissed"}).status_code == 302
    again = reviewer_client.post(f"/review/flags/{flag.pk}/", {"status": "resolved", "reviewer_label": "CONTRADICT"})
    assert again.status_code == 400
    assert f"flag {flag.pk} is already dismissed" in again.content.decode()
    flag.refresh_from_db()
    assert (flag.status, flag.reviewer_label) == ("dismissed", "SUPPORT")


def test_a_close_without_a_valid_status_or_label_changes_nothing(reviewer_client: Client, question: Question) -> None:
    flag = _flag(question, 0)
    for data in ({"status": "open"}, {"status": "resolved", "reviewer_label": "MAYBE"}, {}):
        response = reviewer_client.post(f"/review/flags/{flag.pk}/", data)
        assert response.status_code == 400, data
        assert "check the fields below" in response.content.decode()
    assert Flag.objects.get(pk=flag.pk).status == Flag.Status.OPEN


def test_the_agreement_share_is_absent_before_any_label(question: Question) -> None:
    _flag(question, 0)
    figures = flag_agreement()
    assert (figures.open, figures.closed, figures.labelled) == (1, 0, 0)
    assert figures.share is None
    assert figures.per_verdict == ()


def test_the_admin_lists_filters_and_searches_flags(site_admin_client: Client, question: Question) -> None:
    flag = _flag(question, 0, comment="dose wrong")
    _flag(question, 1, reason="wrong_verdict")
    listing = site_admin_client.get("/admin/review/flag/?status__exact=open&reason__exact=unsupported&q=dose")
    assert listing.status_code == 200
    assert listing.context["cl"].result_count == 1
    assert site_admin_client.get(f"/admin/review/flag/{flag.pk}/change/").status_code == 200


def test_long_queues_are_paged_and_page_links_keep_the_filters(reviewer_client: Client, question: Question) -> None:
    for _ in range(51):
        _flag(question, 0, reason="other")
    first = reviewer_client.get("/review/?reason=other").content.decode()
    assert len(_rows(first)) == 50
    assert 'href="?reason=other&amp;page=2"' in first
    assert len(_rows(reviewer_client.get("/review/?reason=other&page=2").content.decode())) == 1
