"""A finished deep check is exported with its answer: the Markdown export lists each cited sentence's claims with
their verdicts and the papers that decided them; claims are model output, escaped like every other text."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.webapp.factories import answer_with_three_verdicts, deep_check_stored
from webapp.deepcheck.models import DeepCheck

pytestmark = pytest.mark.django_db


def test_the_markdown_export_carries_the_claims_escaped(role_users: dict[str, User], researcher_client: Client) -> None:
    question = answer_with_three_verdicts(user=role_users["researcher"])
    deep_check_stored(question=question)

    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()

    deep = markdown[markdown.index("## Deep check") : markdown.index("## References")].splitlines()
    assert deep[2] == (
        "*Each cited sentence split into claims (claims by qwen-test; verdicts by cross-encoder-test). A sentence is "
        "supported only when every claim is supported by an abstract it cites.*"
    )
    assert "- Sentence 1 — **Supported**" in deep
    assert "  - Metformin did not cause lactic acidosis. — **Supported** (PMID 111)" in deep
    assert "- Sentence 2 — **Contradicted**" in deep
    assert "  - Everolimus binds FKBP12. — **Supported by another paper** (PMID 333 (not cited))" in deep
    assert (
        "  - Everolimus \\<b onmouseover=\"alert('claim')\"\\>activates\\</b\\> mTORC1 \\_everywhere\\_. — "
        "**Contradicted** (PMID 222)"
    ) in deep
    assert (
        "- Sentence 3 — **Not a retrieved paper** (checked as one claim: the reply has no claims for this sentence)"
    ) in deep


@pytest.mark.parametrize("status", [DeepCheck.Status.RUNNING, DeepCheck.Status.FAILED, None])
def test_an_answer_without_a_finished_deep_check_exports_as_before(
    role_users: dict[str, User], researcher_client: Client, status: str | None
) -> None:
    question = answer_with_three_verdicts(user=role_users["researcher"])
    if status is not None:
        deep_check_stored(question=question, status=status)

    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()

    assert "## Deep check" not in markdown
    assert "## References" in markdown
