"""Closed, labelled flags export as verifier training data that `train_verifier --extra` and `read_scifact_pairs`
read back, less what dev holds."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from indexer.sentences import sentence_texts
from tests.webapp.factories import REVIEW_ABSTRACT_A, answer_with_three_verdicts, unclear_sentence
from verifier.datasets import read_scifact_pairs
from verifier.reviewed_flags import read_reviewed_file
from verifier.training_run import reviewed_pairs
from webapp.accounts.roles import RESEARCHER, REVIEWER
from webapp.qa.models import AnswerSentence, Question
from webapp.review.models import Flag
from webapp.review.services import flag_close, flag_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def question(role_users: dict[str, User]) -> Question:
    return answer_with_three_verdicts(user=role_users[RESEARCHER])


@pytest.fixture
def closed_flags(question: Question, role_users: dict[str, User]) -> dict[str, Flag]:
    researcher, reviewer = role_users[RESEARCHER], role_users[REVIEWER]

    def closed(position: int, status: str, label: str, pmid: str = "") -> Flag:
        flag = flag_create(question=question, sentence_position=position, reason="other", pmid=pmid, user=researcher)
        return flag_close(flag_id=flag.pk, status=status, reviewer_label=label, user=reviewer)

    return {
        # Sentence 0 on 111: the verifier's SUPPORT confirmed; the rationale is the stored evidence sentence.
        "confirmed": closed(0, "dismissed", "SUPPORT", pmid="111"),
        # Sentence 1, no PMID named: one line per cited abstract, each labelled NO_EVIDENCE by the reviewer.
        "no_evidence": closed(1, "resolved", "NO_EVIDENCE"),
        # Sentence 1 on 222: the reviewer says the abstract supports it after all.
        "overturned": closed(1, "resolved", "SUPPORT", pmid="222"),
        # Sentence 2 cites a paper outside the corpus: nothing to train on.
        "outside": closed(2, "resolved", "NO_EVIDENCE"),
    }


def _download(client: Client, tmp_path: Path) -> tuple[Path, Path]:
    claims, corpus = tmp_path / "claims.jsonl", tmp_path / "corpus.jsonl"
    for name, path in (("claims", claims), ("corpus", corpus)):
        response = client.get(f"/review/export/{name}.jsonl")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("application/x-ndjson")
        assert f'filename="{name}.jsonl"' in response["Content-Disposition"]
        path.write_bytes(response.content)
    return claims, corpus


def test_the_exported_files_read_back_as_the_right_training_pairs(
    reviewer_client: Client, closed_flags: dict[str, Flag], question: Question, tmp_path: Path
) -> None:
    # Flags that are open or closed without a label are left out.
    flag_create(question=question, sentence_position=0, reason="unsupported", user=None)
    unlabelled = flag_create(question=question, sentence_position=1, reason="unsupported", user=None)
    flag_close(flag_id=unlabelled.pk, status="resolved", user=User.objects.get(username="reviewer-user"))

    pairs = read_scifact_pairs(*_download(reviewer_client, tmp_path))

    got = sorted((pair.claim_id, pair.document.doc_id, pair.claim, pair.label, pair.rationale) for pair in pairs)
    ids = {name: f"flag-{flag.pk}" for name, flag in closed_flags.items()}
    assert got == sorted(
        [
            (ids["confirmed"], "111", "Metformin did not cause lactic acidosis.", "SUPPORT", (1,)),
            (ids["no_evidence"], "111", "Everolimus activates mTORC1.", "NO_EVIDENCE", ()),
            (ids["no_evidence"], "222", "Everolimus activates mTORC1.", "NO_EVIDENCE", ()),
            (ids["overturned"], "222", "Everolimus activates mTORC1.", "SUPPORT", (1,)),
        ]
    )
    metformin = next(pair.document for pair in pairs if pair.document.doc_id == "111")
    assert metformin.title == "<b>Metformin</b> safety"
    assert metformin.sentences == tuple(sentence_texts(REVIEW_ABSTRACT_A))


def test_unclear_flags_train_on_the_reviewers_label_and_never_on_unclear(
    reviewer_client: Client, question: Question, role_users: dict[str, User], tmp_path: Path
) -> None:
    unclear_sentence(question=question, position=3, pmid="111")
    researcher, reviewer = role_users[RESEARCHER], role_users[REVIEWER]
    flags = [flag_create(question=question, sentence_position=3, reason="other", user=researcher) for _ in range(3)]
    labelled = flag_close(flag_id=flags[0].pk, status="resolved", reviewer_label="SUPPORT", user=reviewer)
    flag_close(flag_id=flags[1].pk, status="dismissed", user=reviewer)  # no label of the verifier's to keep
    # A label no reviewer can give (written past the services) is still no training label.
    flag_close(flag_id=flags[2].pk, status="resolved", reviewer_label="NO_EVIDENCE", user=reviewer)
    Flag.objects.filter(pk=flags[2].pk).update(reviewer_label="UNCLEAR")

    claims, corpus = _download(reviewer_client, tmp_path)
    assert "UNCLEAR" not in claims.read_text()
    pairs = read_scifact_pairs(claims, corpus)
    assert [(pair.claim_id, pair.label, pair.rationale) for pair in pairs] == [(f"flag-{labelled.pk}", "SUPPORT", (1,))]


def test_the_claim_lines_have_the_scifact_shape(
    reviewer_client: Client, closed_flags: dict[str, Flag], tmp_path: Path
) -> None:
    claims, corpus = _download(reviewer_client, tmp_path)
    lines = [json.loads(line) for line in claims.read_text().splitlines()]
    confirmed = next(line for line in lines if line["id"] == f"flag-{closed_flags['confirmed'].pk}")
    assert confirmed == {
        "id": f"flag-{closed_flags['confirmed'].pk}",
        "claim": "Metformin did not cause lactic acidosis.",
        "cited_doc_ids": ["111"],
        "evidence": {"111": [{"label": "SUPPORT", "sentences": [1]}]},
    }
    no_evidence = [line for line in lines if line["id"] == f"flag-{closed_flags['no_evidence'].pk}"]
    assert [line["evidence"] for line in no_evidence] == [{}, {}]
    assert sorted(json.loads(line)["doc_id"] for line in corpus.read_text().splitlines()) == ["111", "222"]


def test_the_command_writes_the_same_files_as_the_download(
    reviewer_client: Client, closed_flags: dict[str, Flag], tmp_path: Path
) -> None:
    downloaded_claims, downloaded_corpus = _download(reviewer_client, tmp_path)
    downloaded_rows = _download_rows(reviewer_client, tmp_path)
    claims, corpus = tmp_path / "cmd-claims.jsonl", tmp_path / "cmd-corpus.jsonl"
    rows = tmp_path / "cmd-flags.jsonl"
    out = StringIO()
    call_command("export_flags", "--output", str(rows), "--claims", str(claims), "--corpus", str(corpus), stdout=out)
    assert claims.read_bytes() == downloaded_claims.read_bytes()
    assert corpus.read_bytes() == downloaded_corpus.read_bytes()
    assert rows.read_bytes() == downloaded_rows.read_bytes()
    assert "4 training rows" in out.getvalue()
    assert "4 claims" in out.getvalue()
    assert "2 abstracts" in out.getvalue()


def test_the_command_needs_a_file_to_write(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="give --output FILE"):
        call_command("export_flags")
    with pytest.raises(CommandError, match="--claims and --corpus go together"):
        call_command("export_flags", "--claims", str(tmp_path / "claims.jsonl"))


def test_an_empty_export_is_two_empty_files(reviewer_client: Client, tmp_path: Path) -> None:
    claims, corpus = _download(reviewer_client, tmp_path)
    assert claims.read_text() == corpus.read_text() == ""
    assert read_scifact_pairs(claims, corpus) == []


def _download_rows(client: Client, tmp_path: Path) -> Path:
    response = client.get("/review/export/flags.jsonl")
    assert response.status_code == 200
    assert 'filename="flags.jsonl"' in response["Content-Disposition"]
    path = tmp_path / "flags.jsonl"
    path.write_bytes(response.content)
    return path


def test_the_training_file_reads_back_as_the_reviewers_pairs_with_their_provenance(
    reviewer_client: Client, closed_flags: dict[str, Flag], question: Question, tmp_path: Path
) -> None:
    pairs = read_reviewed_file(_download_rows(reviewer_client, tmp_path))

    got = sorted((p.pair.claim_id, p.pair.document.doc_id, p.pair.claim, p.pair.label, p.pair.rationale) for p in pairs)
    ids = {name: f"flag-{flag.pk}" for name, flag in closed_flags.items()}
    # The same pairs as the SciFact export (test above), each with the abstract it is about.
    assert got == sorted(
        [
            (ids["confirmed"], "111", "Metformin did not cause lactic acidosis.", "SUPPORT", (1,)),
            (ids["no_evidence"], "111", "Everolimus activates mTORC1.", "NO_EVIDENCE", ()),
            (ids["no_evidence"], "222", "Everolimus activates mTORC1.", "NO_EVIDENCE", ()),
            (ids["overturned"], "222", "Everolimus activates mTORC1.", "SUPPORT", (1,)),
        ]
    )
    assert {p.question for p in pairs} == {question.text}
    metformin = next(p.pair.document for p in pairs if p.pair.document.doc_id == "111")
    assert (metformin.title, metformin.sentences) == (
        "<b>Metformin</b> safety",
        tuple(sentence_texts(REVIEW_ABSTRACT_A)),
    )
    first = json.loads((tmp_path / "flags.jsonl").read_text().splitlines()[0])
    flag = Flag.objects.get(pk=first["flag_id"])
    assert (first["question_id"], first["sentence_position"]) == (flag.question_id, flag.sentence.position)


def test_flags_on_a_dev_claim_or_a_dev_question_do_not_train(
    reviewer_client: Client, role_users: dict[str, User], tmp_path: Path
) -> None:
    data = settings.VERIMED.paths.data_dir
    with (data / "scifact" / "claims_dev.jsonl").open(encoding="utf-8") as handle:
        dev_claim = json.loads(handle.readline())["claim"]
    with (data / "bioasq" / "benchmark" / "questions_dev.jsonl").open(encoding="utf-8") as handle:
        dev_question = json.loads(handle.readline())["body"]
    researcher, reviewer = role_users[RESEARCHER], role_users[REVIEWER]
    benchmark = answer_with_three_verdicts(user=researcher, text=dev_question)
    ordinary = answer_with_three_verdicts(user=researcher, text="Is metformin safe for the kidneys?")
    # The answer said a SciFact dev claim word for word (it happens: the LLM read the same abstracts).
    AnswerSentence.objects.filter(question=ordinary, position=1).update(display_text=dev_claim)
    for question, position in ((benchmark, 0), (ordinary, 0), (ordinary, 1)):
        flag = flag_create(question=question, sentence_position=position, reason="other", pmid="111", user=researcher)
        flag_close(flag_id=flag.pk, status="resolved", reviewer_label="NO_EVIDENCE", user=reviewer)

    used, [count] = reviewed_pairs(data, [_download_rows(reviewer_client, tmp_path)], training=[])

    assert [(pair.claim, pair.label) for pair in used] == [("Metformin did not cause lactic acidosis.", "NO_EVIDENCE")]
    assert (count.read, count.used, count.dropped["dev_claim"], count.dropped["dev_question"]) == (3, 1, 1, 1)


def test_train_verifier_refuses_an_unlabelled_row_by_its_line_before_training(
    reviewer_client: Client, closed_flags: dict[str, Flag], tmp_path: Path
) -> None:
    rows = _download_rows(reviewer_client, tmp_path)
    lines = rows.read_text().splitlines()
    edited = {**json.loads(lines[1]), "label": ""}  # a hand-edited file: the reviewer's label removed
    rows.write_text("\n".join([lines[0], json.dumps(edited), *lines[2:]]) + "\n")

    with pytest.raises(CommandError, match=r"flags\.jsonl:2: no reviewer label"):
        call_command("train_verifier", "--extra", "bioasq", "--extra", str(rows), "--output", str(tmp_path / "m"))
    assert not (tmp_path / "m").exists()
