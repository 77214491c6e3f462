"""Rewriting a follow-up as a standalone question: the thread the model reads, the checks on its reply, and every way
it can fail, each of which offers the person's own follow-up back with a note instead of losing it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from generator.base import ChatModel, LLMSettings, Message
from generator.fake_llm import FakeLLM, FakeTokenCounter
from generator.follow_up import (
    NOTE_PREFIX,
    FollowUpRewrite,
    RewriteRejectedError,
    ThreadTurn,
    fallback_question,
    rewrite_messages,
    standalone_question,
    thread_excerpt,
    validated_rewrite,
)
from generator.llm import OpenAICompatibleLLM
from tests.support import free_port

FAKE = LLMSettings(base_url="http://fake", model="fake", server_kind="fake")
COUNTER = FakeTokenCounter(FAKE)
MAX_CHARS = 2000
ROOT = ThreadTurn(
    question="Does metformin cause lactic acidosis?",
    answer="No cases of lactic acidosis occurred in 5,000 patients (PUBMED:10000001).",
)
SECOND = ThreadTurn(
    question="Does metformin lower HbA1c in type 2 diabetes?",
    answer="HbA1c fell by 1.1 points (PUBMED:10000001; PUBMED:10000002).",
)
FOLLOW_UP = "Is it safe in children?"


class ScriptedModel:
    """Replies with a set text and records what it was sent: the model's side of a rewrite, scripted."""

    model_id = "scripted"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.sent: list[list[Message]] = []

    def complete_chat(self, messages: list[Message], *, max_tokens: int, temperature: float = 0.0) -> str:
        self.sent.append(messages)
        return self.reply


def _rewrite(llm: ChatModel, *, follow_up: str = FOLLOW_UP, turns: tuple[ThreadTurn, ...] = (ROOT,)) -> FollowUpRewrite:
    return standalone_question(llm, turns=turns, follow_up=follow_up, counter=COUNTER, max_chars=MAX_CHARS)


def test_it_proposes_the_models_standalone_question() -> None:
    rewrite = standalone_question(FakeLLM(FAKE), turns=[ROOT], follow_up=FOLLOW_UP, counter=COUNTER, max_chars=2000)

    assert rewrite.rewritten
    assert rewrite.question == "Is it safe in children (Does metformin cause lactic acidosis)?"
    assert rewrite.note == ""


def test_the_model_reads_the_thread_without_citations_and_the_follow_up_last() -> None:
    model = ScriptedModel("Is metformin safe in children with type 2 diabetes?")

    _rewrite(model, turns=(ROOT, SECOND))

    (messages,) = model.sent
    last = messages[-1]["content"]
    assert last.index("Does metformin cause lactic acidosis?") < last.index("Does metformin lower HbA1c")
    assert "No cases of lactic acidosis occurred in 5,000 patients." in last
    assert "PUBMED" not in last, "citation markup is the answer's, not the question's"
    assert last.endswith("Follow-up question: Is it safe in children?\nStandalone question:")
    assert messages[0]["role"] == "system"
    assert messages[2]["role"] == "assistant", "a worked example comes first"


@pytest.mark.parametrize(
    "reply",
    [
        "Is metformin safe in children?",
        "Rewritten question: Is metformin safe in children?",
        "**Standalone question:** Is metformin safe in children?",
        '"Is metformin safe in children?"',
        "Here is the standalone question:\nIs metformin safe in children?",
        "Is metformin safe in children?\n\nThis names the drug the thread is about.",
        "```\nIs metformin safe in children?\n```",
    ],
)
def test_it_keeps_the_question_from_a_padded_reply(reply: str) -> None:
    assert validated_rewrite(reply, earlier_questions=[ROOT.question], follow_up=FOLLOW_UP, max_chars=MAX_CHARS) == (
        "Is metformin safe in children?"
    )


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "empty"),
        ("  \n \n", "empty"),
        ("```\n```", "empty"),
        ("Question:", "too short"),
        ("Yes.", "too short"),
        ("Metformin is safe in children (PUBMED:10000001).", "PubMed citations"),
        ("Is metformin safe? See PMID 10000001", "PubMed citations"),
        ("Does metformin cause lactic acidosis?", "repeated the earlier question"),
        ("Standalone question: does metformin cause LACTIC acidosis", "repeated the earlier question"),
        ("Is it " + "really " * 400 + "safe?", "longer than 2,000 characters"),
    ],
)
def test_it_rejects_a_reply_that_is_not_a_usable_question(reply: str, why: str) -> None:
    with pytest.raises(RewriteRejectedError, match=why):
        validated_rewrite(reply, earlier_questions=[ROOT.question], follow_up=FOLLOW_UP, max_chars=MAX_CHARS)


def test_a_follow_up_that_repeats_the_earlier_question_may_be_rewritten_as_itself() -> None:
    again = "Does metformin cause lactic acidosis?"

    assert validated_rewrite(again, earlier_questions=[again], follow_up=again, max_chars=MAX_CHARS) == again


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "the language model's reply was empty"),
        ("No.", "too short to be a question"),
        ("Children were not studied (PUBMED:10000001).", "answered with PubMed citations"),
        (ROOT.question, "repeated the earlier question"),
    ],
)
def test_an_unusable_reply_offers_the_follow_up_with_its_thread_and_says_why(reply: str, why: str) -> None:
    rewrite = _rewrite(ScriptedModel(reply))

    assert not rewrite.rewritten
    assert rewrite.question == f"{FOLLOW_UP} (following: {ROOT.question})"
    assert rewrite.note.startswith(NOTE_PREFIX)
    assert why in rewrite.note


def test_a_server_that_is_down_offers_the_follow_up_and_says_so() -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    llm = OpenAICompatibleLLM(LLMSettings(base_url=base_url, model="m", timeout_seconds=2, max_retries=0))

    rewrite = _rewrite(llm)

    assert not rewrite.rewritten
    assert rewrite.question == f"{FOLLOW_UP} (following: {ROOT.question})"
    assert rewrite.note.startswith(NOTE_PREFIX)
    assert "unreachable" in rewrite.note


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts connections and never answers: a model server stuck behind a long generation."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    thread.join()
    for connection in accepted:
        connection.close()
    listener.close()


def test_a_server_that_times_out_offers_the_follow_up_and_says_so(silent_server: str) -> None:
    llm = OpenAICompatibleLLM(LLMSettings(base_url=silent_server, model="m", timeout_seconds=0.5, max_retries=0))

    rewrite = _rewrite(llm)

    assert not rewrite.rewritten
    assert rewrite.question == f"{FOLLOW_UP} (following: {ROOT.question})"
    assert rewrite.note.startswith(NOTE_PREFIX)


def test_a_follow_up_over_the_limit_is_offered_back_whole_without_asking_the_model() -> None:
    model = ScriptedModel("Is metformin safe in children?")
    long_follow_up = "And " + "what about it " * 200 + "?"

    rewrite = _rewrite(model, follow_up=long_follow_up)

    assert model.sent == []
    assert rewrite.question == long_follow_up.strip()
    assert "longer than 2,000 characters" in rewrite.note


def test_an_empty_follow_up_or_no_thread_does_not_ask_the_model() -> None:
    model = ScriptedModel("Is metformin safe in children?")

    empty = _rewrite(model, follow_up="   ")
    alone = _rewrite(model, turns=())

    assert model.sent == []
    assert (empty.question, empty.note) == ("", NOTE_PREFIX + "the follow-up is empty")
    assert alone.question == FOLLOW_UP
    assert "no earlier question" in alone.note


def test_the_fallback_is_the_follow_up_alone_when_the_thread_would_make_it_too_long() -> None:
    assert fallback_question(" Is it safe? ", previous="Does X work?", max_chars=100) == (
        "Is it safe? (following: Does X work?)"
    )
    assert fallback_question("Is it safe?", previous="Does X work? " * 20, max_chars=100) == "Is it safe?"
    assert fallback_question("Is it safe?", previous="", max_chars=100) == "Is it safe?"


def test_the_thread_keeps_its_latest_turns_within_the_budget() -> None:
    turns = [ThreadTurn(question=f"Question number {n}?", answer="An answer of several words. " * 3) for n in range(9)]
    one_turn = COUNTER.count(thread_excerpt(turns[-1:], counter=COUNTER, budget_tokens=10_000))

    excerpt = thread_excerpt(turns, counter=COUNTER, budget_tokens=3 * one_turn + 3)

    assert [line for line in excerpt.splitlines() if line.startswith("Earlier question")] == [
        "Earlier question: Question number 6?",
        "Earlier question: Question number 7?",
        "Earlier question: Question number 8?",
    ]


def test_the_latest_turn_is_kept_with_a_shorter_answer_when_it_alone_is_over_the_budget() -> None:
    turn = ThreadTurn(question="Does metformin cause lactic acidosis?", answer="Patients were followed. " * 100)

    shorter = thread_excerpt([turn], counter=COUNTER, budget_tokens=60)
    question_only = thread_excerpt([turn], counter=COUNTER, budget_tokens=5)

    assert shorter.startswith("Earlier question: Does metformin cause lactic acidosis?\nAnswer: Patients were")
    assert COUNTER.count(shorter) <= 60
    assert question_only == "Earlier question: Does metformin cause lactic acidosis?\nAnswer: (none)"


def test_the_prompt_is_system_example_then_this_thread() -> None:
    messages = rewrite_messages("Earlier question: Q?\nAnswer: A.", "And B?")

    assert [message["role"] for message in messages] == ["system", "user", "assistant", "user"]
    assert messages[-1]["content"] == (
        "Conversation:\nEarlier question: Q?\nAnswer: A.\n\nFollow-up question: And B?\nStandalone question:"
    )
