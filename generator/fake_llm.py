"""A deterministic fake language model, for fast tests only: registered as "fake", never the default of any profile.

It does what the prompts ask, by word overlap instead of a model. Asked a question over abstracts (either prompt
style), it answers with the sentence of each abstract that shares most words with the question, each ending with
(PUBMED:<pmid>), or says the abstracts do not answer when none shares a word. Asked to judge a claim (the LLM judge's
prompt), it replies with `overlap_label`. Asked to rewrite a follow-up (generator/follow_up.py), it replies with the
follow-up and, in brackets, the thread's last earlier question. Asked for an answer's claims as JSON (the deep
check's extraction), it splits compound sentences (generator/fake_claims.py). Asked for one token with logit biases
(`generator.yes_no_reading`), it gives "No" a logit of +1 over "Yes" when exactly one of the question and the
abstract is negated and -1 otherwise, adds the biases, and answers the likeliest biased word. Text streams a word at
a time, at most `max_tokens` pieces, and is the same on every call. Its token counter counts words and punctuation
marks, and gives each an id.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

from generator.base import LLMSettings, Message, SamplingOptions
from generator.fake_claims import claims_reply
from indexer.sentences import sentence_texts
from indexer.stopwords import query_terms

MODEL_ID = "fake-llm"
REFUSAL = "The abstracts do not answer this question."
MOST_ABSTRACTS_CITED = 3
# A claim is judged on the evidence when at least this share of its words appears there.
OVERLAP_FOR_A_VERDICT = 0.5
_NEGATIONS = frozenset({"no", "not", "never", "none", "neither", "nor", "without", "cannot", "didn", "doesn", "don"})

# Both prompt styles start each abstract with `abstract_id: PUBMED:<pmid>` (VerifAI's first one after a ``` fence);
# the chat style labels title and abstract.
_ABSTRACT = re.compile(
    r"^(?:```)?abstract_id: PUBMED:(?P<pmid>\S+)\n(?:title: )?.*\n(?:abstract: )?(?P<text>.*)$", re.M
)
_QUESTION = re.compile(r"^(?:Question|Instruction): (?P<question>.*)$", re.M)
_JUDGE = re.compile(r"Claim: (?P<claim>.*)\nEvidence: (?P<evidence>.*)\nAnswer:", re.S)
_READING = re.compile(r"^Abstract: (?P<abstract>.*)\n\nQuestion: (?P<question>.*)\n\nAnswer with", re.S)
_STANCE = re.compile(r"^Question: .*\nAnswer: (?P<answer>.*)\nStance \(yes, no or maybe\):$", re.S)
# A bottom line given first (generator.prompts.BOTTOM_LINE_NOTES) asks the answer to open with its words.
_OPENING_ASKED = re.compile(r'Begin your answer with "(?P<opening>[^"]+)"')
_FOLLOW_UP = re.compile(r"^Follow-up question: (?P<follow_up>.*)\nStandalone question:$", re.M)
_EARLIER_QUESTION = re.compile(r"^Earlier question: (?P<question>.*)$", re.M)
_WORD = re.compile(r"[^\W_]+")
_PIECE = re.compile(r"\S+\s*")
_TOKEN = re.compile(r"[^\W_]+|[^\w\s]")


def word_overlap(claim: str, text: str) -> float:
    """The share of the claim's words (stopwords aside) that `text` contains: 0 to 1."""
    claim_terms = set(query_terms(claim))
    return len(claim_terms & set(query_terms(text))) / len(claim_terms) if claim_terms else 0.0


def overlap_label(claim: str, evidence: str) -> tuple[str, float]:
    """SUPPORT when most of the claim's words are in the evidence, CONTRADICT when moreover exactly one of the two
    is negated, NO_EVIDENCE otherwise; with the claim's `word_overlap` with the evidence."""
    shared = word_overlap(claim, evidence)
    if shared < OVERLAP_FOR_A_VERDICT:
        return "NO_EVIDENCE", shared
    negated = _is_negated(claim) != _is_negated(evidence)
    return ("CONTRADICT" if negated else "SUPPORT"), shared


def _is_negated(text: str) -> bool:
    return bool(_NEGATIONS & set(_WORD.findall(text.lower())))


def answer_from_prompt(prompt: str) -> str:
    """For each abstract in the prompt, best first, its sentence sharing most words with the question, cited; opened
    with the words a bottom line given first asks for."""
    question = _QUESTION.search(prompt)
    asked = set(query_terms(question.group("question"))) if question else set()
    sentences = []
    for abstract in _ABSTRACT.finditer(prompt):
        candidates = sentence_texts(abstract.group("text"))
        overlaps = [len(asked & set(query_terms(candidate))) for candidate in candidates]
        if not candidates or max(overlaps) == 0:
            continue
        best = candidates[overlaps.index(max(overlaps))].rstrip(".!?")
        sentences.append(f"{best} (PUBMED:{abstract.group('pmid')}).")
        if len(sentences) == MOST_ABSTRACTS_CITED:
            break
    if not sentences:
        return REFUSAL
    asked_opening = _OPENING_ASKED.search(prompt)
    return " ".join([asked_opening.group("opening"), *sentences] if asked_opening else sentences)


def rewritten_follow_up(prompt: str, follow_up: str) -> str:
    """The follow-up with the thread's last earlier question in brackets: "Is it safe (Does X work)?"."""
    earlier = _EARLIER_QUESTION.findall(prompt)
    if not earlier:
        return follow_up
    return f"{follow_up.rstrip(' ?.')} ({earlier[-1].rstrip(' ?.')})?"


def _pieces(text: str, limit: int) -> list[str]:
    return _PIECE.findall(text)[: max(limit, 0)]


def _last_user_turn(messages: list[Message]) -> str:
    return next((message["content"] for message in reversed(messages) if message["role"] == "user"), "")


class FakeLLM:
    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings

    @property
    def model_id(self) -> str:
        return MODEL_ID

    def stream_chat(self, messages: list[Message], options: SamplingOptions) -> Iterator[str]:
        # The chat prompt's earlier turns hold a worked example: only the last question is answered.
        yield from _pieces(self._reply(_last_user_turn(messages)), options.max_tokens)

    def stream_completion(self, prompt: str, options: SamplingOptions) -> Iterator[str]:
        yield from _pieces(self._reply(prompt), options.max_tokens)

    def complete_chat(self, messages: list[Message], *, max_tokens: int, temperature: float = 0.0) -> str:
        return "".join(_pieces(self._reply(_last_user_turn(messages)), max_tokens)).strip()

    def choose_token(self, messages: list[Message], *, logit_bias: Mapping[int, float]) -> str:
        if not logit_bias:
            return next(iter(_pieces(self._reply(_last_user_turn(messages)), 1)), "").strip()
        reading = _READING.search(_last_user_turn(messages))
        negated = reading is not None and _is_negated(reading.group("question")) != _is_negated(reading["abstract"])
        logits = {word: 0.0 for word in ("Yes", "yes")} | {word: 1.0 if negated else -1.0 for word in ("No", "no")}
        ids = {fake_token_id(word): word for word in logits}
        biased = {
            ids.get(token, f"token{token}"): logits.get(ids.get(token, ""), 0.0) + bias
            for token, bias in logit_bias.items()
        }
        return max(biased, key=biased.__getitem__)

    def complete_json(self, messages: list[Message], *, schema: dict[str, Any], max_tokens: int) -> str:
        # Cut at `max_tokens` pieces like any reply, so a small budget gives the truncated JSON a real server would.
        return "".join(_pieces(claims_reply(_last_user_turn(messages)), max_tokens)).strip()

    def _reply(self, prompt: str) -> str:
        judged = _JUDGE.search(prompt)
        if judged:
            return overlap_label(judged.group("claim"), judged.group("evidence"))[0]
        stance = _STANCE.search(prompt)
        if stance:  # the answer's stance (generator.answer_model_stance): a negated answer says no
            return "no" if _is_negated(stance.group("answer")) else "yes"
        follow_up = _FOLLOW_UP.search(prompt)
        if follow_up:
            return rewritten_follow_up(prompt, follow_up.group("follow_up"))
        return answer_from_prompt(prompt)


class FakeTokenCounter:
    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings

    def count(self, text: str) -> int:
        """Words and punctuation marks: about what a BPE tokenizer makes of English prose."""
        return len(_TOKEN.findall(text))

    def token_ids(self, text: str) -> list[int]:
        """One id per word or punctuation mark; a leading space makes a word two tokens."""
        return [fake_token_id(token) for token in _TOKEN.findall(text)] + ([0] if text[:1].isspace() else [])


def fake_token_id(token: str) -> int:
    return zlib.crc32(token.encode("utf-8"))
