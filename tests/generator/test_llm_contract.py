"""The LLM and TokenCounter contract, run against every adapter generator.registry builds: the OpenAI-compatible
client against the real llama.cpp server and (`make vllm-check`) the real vLLM server, and the fake. Same assertions,
different fixture."""

from __future__ import annotations

import json
import re

import pytest

from generator.answer import answer_prompt
from generator.base import LLM, LLMSettings, Message, SamplingOptions, TokenCounter
from generator.generate import generate_answer
from generator.registry import build_llm, build_token_counter
from generator.yes_no_reading import LIFT, NO_SPELLINGS, SPAN, YES_SPELLINGS, YesNoReader, reading_messages
from indexer.adapter_registry import UnknownAdapterError
from tests.generator.everolimus import ABSTRACTS, GIVEN, QUESTION
from tests.support import TEST_LLM_MODEL
from verifier.claim_extraction import SentenceToSplit, claims_schema, extraction_messages

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

CHAT = list(answer_prompt("chat", QUESTION, ABSTRACTS, abstract_chars=1500).messages)
COMPLETION = answer_prompt("verifai", QUESTION, ABSTRACTS, abstract_chars=1500).text

ADAPTERS = [
    pytest.param("llama.cpp", marks=pytest.mark.model),
    pytest.param("vllm", marks=pytest.mark.vllm),
    "fake",
]


def settings_for(kind: str, request: pytest.FixtureRequest) -> LLMSettings:
    if kind == "fake":
        return LLMSettings(base_url="", model="unused", server_kind="fake")
    base_url = request.getfixturevalue("vllm_base_url" if kind == "vllm" else "llm_base_url")
    return LLMSettings(base_url=base_url, model=TEST_LLM_MODEL, timeout_seconds=300, server_kind=kind)  # type: ignore[arg-type]


@pytest.fixture(params=ADAPTERS)
def llm(request: pytest.FixtureRequest) -> LLM:
    return build_llm(settings_for(request.param, request))


@pytest.fixture(params=[adapter for adapter in ADAPTERS if adapter != "fake"])
def served_llm(request: pytest.FixtureRequest) -> LLM:
    """The adapters that talk to a server: what only a server decides (its option names) is checked on them."""
    return build_llm(settings_for(request.param, request))


@pytest.fixture(params=ADAPTERS)
def counter(request: pytest.FixtureRequest) -> TokenCounter:
    return build_token_counter(settings_for(request.param, request))


def test_it_names_its_model(llm: LLM) -> None:
    assert isinstance(llm.model_id, str)
    assert llm.model_id


def test_stream_chat_yields_non_empty_deltas_that_join_into_a_reply(llm: LLM) -> None:
    deltas = list(llm.stream_chat(CHAT, SamplingOptions(max_tokens=20)))

    assert len(deltas) >= 3
    assert all(isinstance(delta, str) and delta for delta in deltas)
    assert "".join(deltas).strip()


def test_stream_chat_writes_at_most_max_tokens_deltas(llm: LLM) -> None:
    assert 1 <= len(list(llm.stream_chat(CHAT, SamplingOptions(max_tokens=4)))) <= 4


def test_the_same_prompt_gives_the_same_text_at_temperature_zero(llm: LLM) -> None:
    first = "".join(llm.stream_chat(CHAT, SamplingOptions(max_tokens=10)))
    second = "".join(llm.stream_chat(CHAT, SamplingOptions(max_tokens=10)))

    assert first == second


def test_stream_completion_continues_a_plain_prompt(llm: LLM) -> None:
    deltas = list(llm.stream_completion(COMPLETION, SamplingOptions(max_tokens=12)))

    assert len(deltas) >= 3
    assert all(isinstance(delta, str) and delta for delta in deltas)


def test_a_repetition_penalty_is_taken_under_the_servers_own_name(served_llm: LLM) -> None:
    """llama.cpp calls it repeat_penalty and vLLM repetition_penalty; an option a server does not know is either
    refused (400) or silently ignored, so the penalised reply must differ from the unpenalised one on a prompt that
    invites repeating itself."""
    # Both packaged models continue this list unpenalised and break it off penalised; asked to "write mTOR twenty
    # times", the 0.5B model echoed the request either way.
    messages: list[Message] = [{"role": "user", "content": "Continue the list: mTOR, mTOR, mTOR, mTOR,"}]

    plain = "".join(served_llm.stream_chat(messages, SamplingOptions(max_tokens=24)))
    penalised = "".join(served_llm.stream_chat(messages, SamplingOptions(max_tokens=24, repetition_penalty=2.0)))

    assert plain.strip()
    assert penalised.strip()
    assert penalised != plain


def test_complete_chat_honours_a_system_prompt_and_max_tokens(llm: LLM) -> None:
    messages: list[Message] = [
        {"role": "system", "content": "Reply with exactly one word: YES or NO."},
        {"role": "user", "content": "Is water wet?"},
    ]

    reply = llm.complete_chat(messages, max_tokens=3)

    assert reply.strip()
    assert len(reply.split()) <= 3


def test_complete_json_follows_the_schema_it_is_given(llm: LLM) -> None:
    """The deep check's claim extraction (verifier/claim_extraction.py): one sentence split, held to its schema."""
    sentence = SentenceToSplit(0, "Everolimus binds FKBP12, and it inhibits mTORC1.", cited=True)
    reply = llm.complete_json(extraction_messages(QUESTION, [sentence]), schema=claims_schema([1]), max_tokens=120)

    entries = json.loads(reply)["sentences"]
    assert [entry["sentence"] for entry in entries] == [1]
    assert 1 <= len(entries[0]["claims"]) <= 4
    assert all(isinstance(claim, str) and claim.strip() for claim in entries[0]["claims"])


def test_a_closed_stream_leaves_the_model_ready_for_the_next_request(llm: LLM) -> None:
    stream = llm.stream_chat(CHAT, SamplingOptions(max_tokens=200))
    received = [next(stream) for _ in range(2)]
    stream.close()  # type: ignore[attr-defined]

    assert len(received) == 2
    assert "".join(llm.stream_chat(CHAT, SamplingOptions(max_tokens=3))).strip()


def test_an_answer_cites_only_the_abstracts_it_was_given(llm: LLM) -> None:
    prompt = answer_prompt("chat", QUESTION, ABSTRACTS, abstract_chars=1500)

    answer = generate_answer(llm, prompt, SamplingOptions(max_tokens=60), given_pmids=GIVEN)

    assert not answer.cancelled
    assert not answer.cannot_answer
    assert "mtor" in answer.raw_text.lower()
    assert answer.normalized.citations, answer.raw_text
    assert {citation.pmid for citation in answer.normalized.citations} <= {*GIVEN, None}
    assert answer.ttft_ms is not None


def test_a_stop_request_ends_the_answer_early_and_marks_it_cancelled(llm: LLM) -> None:
    prompt = answer_prompt("chat", QUESTION, ABSTRACTS, abstract_chars=1500)

    answer = generate_answer(
        llm, prompt, SamplingOptions(max_tokens=400), given_pmids=GIVEN, should_stop=lambda: True,
        check_every_seconds=0.0,
    )  # fmt: skip

    assert answer.cancelled
    assert answer.chunks <= 2  # asked after the first token
    assert not answer.cannot_answer  # a cut-short answer is not taken for a refusal


def test_the_token_count_grows_with_the_text(counter: TokenCounter) -> None:
    short = counter.count("Metformin lowers HbA1c.")
    longer = counter.count("Metformin lowers HbA1c. " * 10)

    assert 3 <= short <= 12
    assert 9 * short <= longer <= 11 * short + 2
    assert counter.count("Metformin lowers HbA1c.") == short


# The registry


@pytest.mark.parametrize("kind", ["llama.cpp", "vllm"])
def test_both_servers_get_the_openai_compatible_client_without_connecting(kind: str) -> None:
    from generator.llm import OpenAICompatibleLLM, ServerTokenCounter

    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="some-model", server_kind=kind)  # type: ignore[arg-type]

    assert isinstance(build_llm(settings), OpenAICompatibleLLM)
    assert build_llm(settings).model_id == "some-model"
    assert isinstance(build_token_counter(settings), ServerTokenCounter)


def test_an_unknown_server_kind_is_refused_with_the_known_ones() -> None:
    settings = LLMSettings(base_url="", model="m", server_kind="ollama")  # type: ignore[arg-type]

    known = re.escape("(available: llama.cpp, vllm, fake)")
    with pytest.raises(UnknownAdapterError, match=f"unknown LLM server kind 'ollama' {known}"):
        build_llm(settings)
    with pytest.raises(UnknownAdapterError, match=known):
        build_token_counter(settings)


@pytest.fixture(params=ADAPTERS)
def model_and_tokenizer(request: pytest.FixtureRequest) -> tuple[LLM, TokenCounter]:
    settings = settings_for(request.param, request)
    return build_llm(settings), build_token_counter(settings)


READING_QUESTION = "Does everolimus prolong survival in advanced renal cell carcinoma?"
READING_ABSTRACT = (
    "In a randomised trial of 410 patients with advanced renal cell carcinoma, everolimus did not prolong overall "
    "survival compared with placebo (14.8 versus 14.4 months)."
)


def test_token_ids_are_the_tokens_the_count_counts(model_and_tokenizer: tuple[LLM, TokenCounter]) -> None:
    _, tokenizer = model_and_tokenizer
    for text in ("yes", "No", "Everolimus did not prolong survival."):
        ids = tokenizer.token_ids(text)
        assert all(isinstance(token, int) for token in ids)
        assert len(ids) == tokenizer.count(text)


def test_a_logit_bias_decides_the_one_token_chosen(model_and_tokenizer: tuple[LLM, TokenCounter]) -> None:
    """The server adds the biases it is given, by token id: lifting "Yes" and "No" far above every other token, the
    one lifted more is the reply, whichever the model prefers."""
    llm, tokenizer = model_and_tokenizer
    (yes,), (no,) = tokenizer.token_ids("Yes"), tokenizer.token_ids("No")
    messages = reading_messages(READING_QUESTION, READING_ABSTRACT)
    assert llm.choose_token(messages, logit_bias={yes: 60.0, no: 40.0}).strip() == "Yes"
    assert llm.choose_token(messages, logit_bias={yes: 40.0, no: 60.0}).strip() == "No"


def test_the_yes_no_reading_is_where_the_servers_answer_flips(model_and_tokenizer: tuple[LLM, TokenCounter]) -> None:
    """The bisected log-odds are the server's: a bias on "no" a little above minus the reading turns the answer to
    no, a little below leaves it yes."""
    llm, tokenizer = model_and_tokenizer
    reader = YesNoReader(llm, tokenizer)
    log_odds = reader.log_odds_no(READING_QUESTION, "", READING_ABSTRACT)
    assert -SPAN < log_odds < SPAN
    yes_ids = {ids[0] for ids in map(tokenizer.token_ids, YES_SPELLINGS) if len(ids) == 1}
    no_ids = {ids[0] for ids in map(tokenizer.token_ids, NO_SPELLINGS) if len(ids) == 1}
    messages = reading_messages(READING_QUESTION, READING_ABSTRACT)
    for margin, expected in ((0.4, "no"), (-0.4, "yes")):
        bias = {token: LIFT for token in yes_ids} | {token: LIFT - log_odds + margin for token in no_ids}
        assert llm.choose_token(messages, logit_bias=bias).strip().lower() == expected
