"""A few-shot LLM judge that labels a claim against evidence sentences: SUPPORT, CONTRADICT or NO_EVIDENCE."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from generator.base import ChatModel
from generator.prompts import JUDGE_EXAMPLES, JUDGE_SYSTEM, JUDGE_USER
from generator.registry import build_llm
from verifier.base import Classification, ClassifierOptions

LABELS = ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")
# Word-bounded, so "UNSUPPORTED" is not read as SUPPORT; a negated label ("NOT SUPPORTED") is caught first.
_LABEL = re.compile(r"\b(?:SUPPORT|CONTRADICT|NO[_ ]EVIDENCE|REFUTE)", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:NOT|NO)\s+SUPPORT", re.IGNORECASE)


@dataclass(frozen=True)
class Judgement:
    label: str
    raw: str  # what the model said, kept for audit


def parse_label(reply: str) -> str:
    """The first label word in the reply; an unparseable reply is NO_EVIDENCE (never a false SUPPORT)."""
    match = _LABEL.search(reply)
    if not match or (match.group(0).upper() == "SUPPORT" and _NEGATED.search(reply)):
        return "NO_EVIDENCE"
    word = match.group(0).upper().replace(" ", "_")
    return "CONTRADICT" if word == "REFUTE" else word


def judge_messages(claim: str, evidence: str) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": JUDGE_SYSTEM}]
    for example_claim, example_evidence, label in JUDGE_EXAMPLES:
        messages.append({"role": "user", "content": JUDGE_USER.format(claim=example_claim, evidence=example_evidence)})
        messages.append({"role": "assistant", "content": label})
    messages.append({"role": "user", "content": JUDGE_USER.format(claim=claim, evidence=evidence)})
    return messages


class LlmJudge:
    def __init__(self, model: ChatModel) -> None:
        self.model = model

    @classmethod
    def from_options(cls, options: ClassifierOptions) -> LlmJudge:
        return cls(build_llm(options.required_llm()))

    @property
    def model_id(self) -> str:
        return f"llm-judge:{self.model.model_id}"

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Classification]:
        """The PairClassifier interface: one judge call per pair (llama.cpp reuses the shared few-shot prefix)."""
        results = []
        for claim, passage in pairs:
            judgement = self.judge(claim, passage)
            results.append(Classification(label=judgement.label, confidence=None, probabilities={}, raw=judgement.raw))
        return results

    def judge(self, claim: str, evidence: str) -> Judgement:
        reply = self.model.complete_chat(judge_messages(claim, evidence), max_tokens=6, temperature=0.0)
        return Judgement(label=parse_label(reply), raw=reply.strip())
