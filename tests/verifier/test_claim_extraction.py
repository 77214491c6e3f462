"""Claim extraction: the request (one call, a schema with one entry per cited sentence, a stated token budget) and
the validation that keeps a sentence whole when the model's claims for it cannot be used.

The model is the registry's deterministic fake (it splits compound sentences) or a stand-in that replies with a
given text; the real model's single call is exercised end to end in tests/e2e/test_deep_check.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.base import LLMSettings, Message
from generator.errors import LLMResponseError, LLMUnavailableError
from generator.fake_llm import FakeLLM
from verifier.claim_extraction import (
    CUT_SHORT,
    MAX_CLAIMS,
    ClaimExtractor,
    SentenceToSplit,
    claims_schema,
    extraction_budget,
    extraction_messages,
    parse_extraction,
    usable_claims,
)

QUESTION = "Does zorvistatin lower blood pressure?"
SENTENCES = [
    SentenceToSplit(0, "Zorvistatin lowered blood pressure by 12 mmHg, and it reduced mortality.", cited=True),
    SentenceToSplit(1, "More trials are needed.", cited=False),
    SentenceToSplit(2, "It was well tolerated over 24 weeks.", cited=True),
]


class Replying:
    """A model that replies with `reply` (or raises it) and records what it was asked."""

    model_id = "replying"

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.calls: list[tuple[list[Message], dict[str, Any], int]] = []

    def complete_chat(self, messages: list[Message], *, max_tokens: int, temperature: float = 0.0) -> str:
        raise AssertionError("extraction asks for JSON")

    def complete_json(self, messages: list[Message], *, schema: dict[str, Any], max_tokens: int) -> str:
        self.calls.append((messages, schema, max_tokens))
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def _reply(*entries: tuple[int, object]) -> str:
    return json.dumps({"sentences": [{"sentence": number, "claims": claims} for number, claims in entries]})


def test_one_call_asks_for_the_cited_sentences_in_order_within_the_stated_budget() -> None:
    model = Replying(
        _reply(
            (1, ["Zorvistatin lowered blood pressure by 12 mmHg.", "Zorvistatin reduced mortality."]),
            (3, ["Zorvistatin was well tolerated over 24 weeks."]),
        )
    )
    extraction = ClaimExtractor(model).extract(QUESTION, SENTENCES)

    assert len(model.calls) == 1
    messages, schema, max_tokens = model.calls[0]
    assert max_tokens == extraction.max_tokens == extraction_budget(2)
    entries = schema["properties"]["sentences"]["prefixItems"]
    assert [entry["properties"]["sentence"]["const"] for entry in entries] == [1, 3]
    assert entries[0]["properties"]["claims"]["maxItems"] == MAX_CLAIMS
    # The whole answer is shown, numbered, so "it" can be resolved; only the cited sentences are asked for.
    assert "[2] More trials are needed." in messages[-1]["content"]
    assert "Split sentences 1 and 3 into claims." in messages[-1]["content"]
    assert messages[-1]["content"].startswith(f"Question: {QUESTION}")
    assert [claims.position for claims in extraction.sentences] == [0, 2]


def test_the_fake_model_splits_a_compound_sentence_and_resolves_nothing_it_cannot() -> None:
    fake = FakeLLM(LLMSettings(base_url="", model="fake", server_kind="fake"))
    extraction = ClaimExtractor(fake).extract(QUESTION, SENTENCES)

    first, third = extraction.sentences
    assert first.from_model
    assert first.claims == ("Zorvistatin lowered blood pressure by 12 mmHg.", "It reduced mortality.")
    assert third.claims == ("It was well tolerated over 24 weeks.",)


def test_a_reply_that_is_not_json_keeps_every_sentence_whole() -> None:
    extraction = ClaimExtractor(Replying('{"sentences": [{"sentence": 1, "claims": ["Zorvi')).extract(
        QUESTION, SENTENCES
    )

    assert [claims.claims for claims in extraction.sentences] == [(SENTENCES[0].text,), (SENTENCES[2].text,)]
    assert not any(claims.from_model for claims in extraction.sentences)
    assert "not JSON" in extraction.sentences[0].note


def test_a_reply_cut_short_by_the_token_budget_keeps_every_sentence_whole() -> None:
    fake = FakeLLM(LLMSettings(base_url="", model="fake", server_kind="fake"))
    messages = extraction_messages(QUESTION, SENTENCES)
    # The fake stops at its budget as a server does, mid-JSON.
    cut = Replying(fake.complete_json(messages, schema=claims_schema([1, 3]), max_tokens=8))

    extraction = ClaimExtractor(cut).extract(QUESTION, SENTENCES)

    assert not any(claims.from_model for claims in extraction.sentences)
    assert "cut short" in extraction.sentences[0].note


def test_a_long_answer_cut_short_keeps_the_claims_of_the_sentences_it_finished() -> None:
    full = _reply(
        (1, ["Zorvistatin lowered blood pressure by 12 mmHg.", "Zorvistatin reduced mortality."]),
        (3, ["Zorvistatin was well tolerated over 24 weeks."]),
    )
    cut = full[: full.index('{"sentence": 3') + 20]  # the budget ran out inside the second entry

    first, third = parse_extraction(cut, QUESTION, SENTENCES)

    assert first.from_model
    assert first.claims == ("Zorvistatin lowered blood pressure by 12 mmHg.", "Zorvistatin reduced mortality.")
    assert (third.from_model, third.claims, third.note) == (False, (SENTENCES[2].text,), CUT_SHORT)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ('["a list, not an object"]', "no list of sentences"),
        ('{"sentences": "none"}', "no list of sentences"),
        (_reply((3, ["Zorvistatin was well tolerated over 24 weeks."])), "no claims for this sentence"),
        (_reply((1, "one string, not a list"), (3, [])), "not a list"),
        (_reply((1, [" ", ""]), (3, [7])), "no claims"),
    ],
)
def test_wrong_json_keeps_the_sentence_whole_with_the_reason(reply: str, reason: str) -> None:
    first = parse_extraction(reply, QUESTION, SENTENCES)[0]

    assert first.claims == (SENTENCES[0].text,)
    assert not first.from_model
    assert reason in first.note


def test_claims_that_drop_part_of_the_sentence_are_unusable() -> None:
    claims, why = usable_claims(SENTENCES[0].text, ["Zorvistatin lowered blood pressure."], context=QUESTION)

    assert claims == ()
    assert "leave out part" in why


def test_claims_that_say_what_the_sentence_does_not_are_unusable() -> None:
    claims, why = usable_claims(
        "It was well tolerated.", ["Aspirin prevents colon cancer in elderly smokers."], context=QUESTION
    )

    assert claims == ()
    assert "neither the sentence nor the question" in why


def test_a_pronoun_resolved_from_the_question_and_a_changed_verb_form_are_usable() -> None:
    claims, why = usable_claims(
        "It reduced mortality.", ["Zorvistatin reduces mortality."], context=QUESTION + " " + SENTENCES[0].text
    )

    assert (claims, why) == (("Zorvistatin reduces mortality.",), "")


def test_too_many_claims_and_duplicates() -> None:
    many = [f"Zorvistatin lowered blood pressure by {n} mmHg and reduced mortality." for n in range(MAX_CLAIMS + 1)]
    assert usable_claims(SENTENCES[0].text, many, context="")[1] == f"more than {MAX_CLAIMS} claims"
    twice = ["Zorvistatin lowered blood pressure by 12 mmHg.", "Zorvistatin  lowered blood pressure by 12 mmHg.",
             "Zorvistatin reduced mortality."]  # fmt: skip
    assert usable_claims(SENTENCES[0].text, twice, context="")[0] == (twice[0], twice[2])


def test_a_refusing_server_keeps_every_sentence_whole_and_an_unreachable_one_raises() -> None:
    refused = ClaimExtractor(Replying(LLMResponseError("400: no grammar"))).extract(QUESTION, SENTENCES)
    assert [claims.claims for claims in refused.sentences] == [(SENTENCES[0].text,), (SENTENCES[2].text,)]
    assert "refused" in refused.sentences[0].note

    with pytest.raises(LLMUnavailableError):
        ClaimExtractor(Replying(LLMUnavailableError("down"))).extract(QUESTION, SENTENCES)


def test_an_answer_without_cited_sentences_costs_no_call() -> None:
    model = Replying("never read")
    extraction = ClaimExtractor(model).extract(QUESTION, [SentenceToSplit(0, "Nothing is known.", cited=False)])

    assert extraction.sentences == ()
    assert model.calls == []


def test_the_schema_is_one_object_per_sentence_with_no_other_keys() -> None:
    schema = claims_schema([2])
    entry = schema["properties"]["sentences"]["prefixItems"][0]
    assert entry["required"] == ["sentence", "claims"]
    assert entry["additionalProperties"] is False
    assert schema["additionalProperties"] is False
