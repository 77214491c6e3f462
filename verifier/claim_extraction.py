"""Claim extraction for the deep check: one model call per answer rewrites every cited sentence into self-contained
atomic claims (Iterative Tree Analysis' spanning step, after FActScore's decontextualised atomic facts).

The model sees the question and the whole answer, numbered, so a pronoun can be resolved from the sentences before;
the server holds its reply to a JSON schema made for this answer (one entry per cited sentence, in order, each with
one to MAX_CLAIMS claims) within a token budget stated up front (`extraction_budget`). Whatever comes back is
validated sentence by sentence: a sentence whose claims are unusable (no JSON, no entry, claims that drop part of
the sentence or say what neither it nor its context says) keeps itself as its one claim, with the reason, so the
deep check is never weaker than checking the sentence whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from generator.base import JsonChatModel, Message
from generator.errors import LLMResponseError
from generator.prompts import (
    CLAIMS_EXAMPLE_QUESTION,
    CLAIMS_EXAMPLE_REPLY,
    CLAIMS_EXAMPLE_SENTENCES,
    CLAIMS_QUESTION,
    CLAIMS_SENTENCE,
    CLAIMS_SYSTEM,
    CLAIMS_USER,
)
from indexer.stopwords import query_terms

MAX_CLAIMS = 4  # an answer sentence of two to five findings is long already; more means the model is rambling
# The stated budget: about twice a long sentence's tokens per sentence (its claims repeat its subject), plus the JSON's
# own. It bounds the call's time on a slow machine and is what a truncated reply ran into.
TOKENS_PER_SENTENCE = 110
TOKENS_BASE = 24
MAX_TOKENS = 1400
# A claim whose content words mostly appear nowhere in the sentence, the question or the sentences before it was
# made up; claims that together miss much of the sentence's content words dropped a part of it (the part that may be
# the unsupported one). Words are compared on their first STEM_CHARS letters, so "reduced" matches "reduces".
MAX_NEW_WORDS = 0.5
MIN_COVERAGE = 0.6
STEM_CHARS = 5
MAX_CLAIM_CHARS = 600


@dataclass(frozen=True)
class SentenceToSplit:
    position: int  # in the answer, from 0
    text: str  # without citation markup
    cited: bool  # only cited sentences are split; the others are context


@dataclass(frozen=True)
class SentenceClaims:
    position: int
    claims: tuple[str, ...]
    from_model: bool  # False: the model's claims were unusable and the sentence is its own one claim
    note: str = ""  # why they were unusable


@dataclass(frozen=True)
class Extraction:
    sentences: tuple[SentenceClaims, ...]  # one per cited sentence, in answer order
    raw: str  # the model's reply, kept for audit
    max_tokens: int
    model_id: str


def extraction_budget(sentences: int) -> int:
    return min(MAX_TOKENS, TOKENS_BASE + TOKENS_PER_SENTENCE * sentences)


def claims_schema(numbers: Sequence[int]) -> dict[str, Any]:
    """One entry per sentence number, in order (`prefixItems`: the grammar cannot skip or repeat a sentence)."""
    entries = [
        {
            "type": "object",
            "properties": {
                "sentence": {"const": number},
                "claims": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_CLAIMS},
            },
            "required": ["sentence", "claims"],
            "additionalProperties": False,
        }
        for number in numbers
    ]
    return {
        "type": "object",
        "properties": {"sentences": {"type": "array", "prefixItems": entries}},
        "required": ["sentences"],
        "additionalProperties": False,
    }


def _numbers_text(numbers: Sequence[int]) -> str:
    words = [str(number) for number in numbers]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _user_turn(question: str, texts: Sequence[str], numbers: Sequence[int]) -> str:
    return CLAIMS_USER.format(
        question=CLAIMS_QUESTION.format(question=" ".join(question.split())) if question.strip() else "",
        sentences="\n".join(
            CLAIMS_SENTENCE.format(number=number, text=" ".join(text.split()))
            for number, text in enumerate(texts, start=1)
        ),
        numbers=_numbers_text(numbers),
    )


def extraction_messages(question: str, sentences: Sequence[SentenceToSplit]) -> list[Message]:
    example = _user_turn(
        CLAIMS_EXAMPLE_QUESTION, CLAIMS_EXAMPLE_SENTENCES, list(range(1, len(CLAIMS_EXAMPLE_SENTENCES) + 1))
    )
    cited = [sentence.position + 1 for sentence in sentences if sentence.cited]
    return [
        {"role": "system", "content": CLAIMS_SYSTEM},
        {"role": "user", "content": example},
        {"role": "assistant", "content": CLAIMS_EXAMPLE_REPLY},
        {"role": "user", "content": _user_turn(question, [sentence.text for sentence in sentences], cited)},
    ]


def _stems(text: str) -> set[str]:
    return {term[:STEM_CHARS] for term in query_terms(text)}


def usable_claims(sentence: str, claims: object, *, context: str) -> tuple[tuple[str, ...], str]:
    """The cleaned claims and "" when they are usable for `sentence`; else () and why not. `context` is the question
    and the sentences before it, where a resolved pronoun's name comes from."""
    if not isinstance(claims, list) or not all(isinstance(claim, str) for claim in claims):
        return (), "the claims are not a list of sentences"
    cleaned = list(dict.fromkeys(" ".join(claim.split()) for claim in claims if claim.strip()))
    if not cleaned:
        return (), "no claims"
    if len(cleaned) > MAX_CLAIMS:
        return (), f"more than {MAX_CLAIMS} claims"
    if any(len(claim) > max(MAX_CLAIM_CHARS, 2 * len(sentence)) for claim in cleaned):
        return (), "a claim is far longer than the sentence"
    known = _stems(sentence) | _stems(context)
    for claim in cleaned:
        words = _stems(claim)
        if not words:
            return (), "a claim has no content words"
        if len(words - known) / len(words) > MAX_NEW_WORDS:
            return (), "a claim says what neither the sentence nor the question says"
    wanted = _stems(sentence)
    covered = wanted & set().union(*(_stems(claim) for claim in cleaned))
    if wanted and len(covered) / len(wanted) < MIN_COVERAGE:
        return (), "the claims leave out part of the sentence"
    return tuple(cleaned), ""


CUT_SHORT = "the reply was cut short by the token budget before this sentence"


def _complete_entries(raw: str) -> list[object] | None:
    """The entries a reply cut short by the token budget finished before it stopped: with the schema's order, a long
    answer's first sentences keep their claims instead of the whole answer falling back. None: not even one."""
    start = raw.find("[")
    decoder = json.JSONDecoder()
    entries: list[object] = []
    index = start + 1
    while start >= 0:
        while index < len(raw) and raw[index] in " \t\r\n,":
            index += 1
        try:
            entry, index = decoder.raw_decode(raw, index)
        except json.JSONDecodeError:
            break
        entries.append(entry)
    return entries or None


def _entries(raw: str) -> tuple[dict[int, object], str] | str:
    """Claims by sentence number from the reply, with the note for a sentence it has none for; or why the reply is
    unusable as a whole."""
    missing = "the reply has no claims for this sentence"
    try:
        reply = json.loads(raw)
    except json.JSONDecodeError:
        salvaged = _complete_entries(raw)
        if salvaged is None:
            return "the reply is not JSON (cut short by the token budget, or not constrained)"
        reply, missing = {"sentences": salvaged}, CUT_SHORT
    entries = reply.get("sentences") if isinstance(reply, dict) else None
    if not isinstance(entries, list):
        return "the reply has no list of sentences"
    found: dict[int, object] = {}
    for entry in entries:
        number = entry.get("sentence") if isinstance(entry, dict) else None
        if isinstance(number, int) and not isinstance(number, bool) and number not in found:
            found[number] = entry.get("claims")
    return found, missing


def parse_extraction(raw: str, question: str, sentences: Sequence[SentenceToSplit]) -> tuple[SentenceClaims, ...]:
    """Each cited sentence's claims from the model's reply, validated; unusable ones fall back to the sentence."""
    entries = _entries(raw)
    result = []
    for sentence in sentences:
        if not sentence.cited:
            continue
        claims: tuple[str, ...]
        if isinstance(entries, str):
            claims, note = (), entries
        elif sentence.position + 1 not in entries[0]:
            claims, note = (), entries[1]
        else:
            context = " ".join([question, *(s.text for s in sentences if s.position < sentence.position)])
            claims, note = usable_claims(sentence.text, entries[0][sentence.position + 1], context=context)
        if claims:
            result.append(SentenceClaims(position=sentence.position, claims=claims, from_model=True))
        else:
            result.append(
                SentenceClaims(position=sentence.position, claims=(sentence.text,), from_model=False, note=note)
            )
    return tuple(result)


class ClaimExtractor:
    def __init__(self, model: JsonChatModel) -> None:
        self.model = model

    @property
    def model_id(self) -> str:
        return self.model.model_id

    def extract(self, question: str, sentences: Sequence[SentenceToSplit]) -> Extraction:
        """One call for the whole answer (none when no sentence is cited). A server that refuses the request keeps
        every sentence whole; one that cannot be reached raises LLMUnavailableError, for the task to retry."""
        cited = sum(sentence.cited for sentence in sentences)
        budget = extraction_budget(cited)
        if not cited:
            return Extraction(sentences=(), raw="", max_tokens=0, model_id=self.model_id)
        schema = claims_schema([sentence.position + 1 for sentence in sentences if sentence.cited])
        try:
            raw = self.model.complete_json(extraction_messages(question, sentences), schema=schema, max_tokens=budget)
        except LLMResponseError as error:
            raw = ""
            refused = tuple(
                SentenceClaims(s.position, (s.text,), from_model=False, note=f"the model server refused: {error}")
                for s in sentences
                if s.cited
            )
            return Extraction(sentences=refused, raw=raw, max_tokens=budget, model_id=self.model_id)
        return Extraction(
            sentences=parse_extraction(raw, question, sentences), raw=raw, max_tokens=budget, model_id=self.model_id
        )
