"""Tests for the OpenAI-compatible client: error mapping, and streaming, tokenizing and cancelling against the real
llama.cpp server."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from generator.base import LLMSettings, Message, SamplingOptions
from generator.errors import GenerationError, LLMResponseError, LLMUnavailableError
from generator.llm import OpenAICompatibleLLM, ServerTokenCounter
from tests.support import TEST_LLM_MODEL, free_port

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

QUESTION: list[Message] = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
LONGER_QUESTION: list[Message] = [{"role": "user", "content": "Name the three primary colours, separated by commas."}]


def unreachable_client() -> tuple[OpenAICompatibleLLM, str]:
    base_url = f"http://127.0.0.1:{free_port()}/v1"  # a port nobody listens on
    settings = LLMSettings(base_url=base_url, model=TEST_LLM_MODEL, timeout_seconds=2, max_retries=0)
    return OpenAICompatibleLLM(settings), base_url


def test_model_id_is_the_configured_model_name() -> None:
    llm = OpenAICompatibleLLM(LLMSettings(base_url="http://127.0.0.1:9/v1", model="some-model"))

    assert llm.model_id == "some-model"


def test_stream_chat_to_a_closed_port_raises_a_transient_error_when_iterated() -> None:
    llm, base_url = unreachable_client()
    stream = llm.stream_chat(QUESTION, SamplingOptions(max_tokens=5))  # nothing is sent before iteration

    with pytest.raises(LLMUnavailableError) as raised:
        list(stream)

    assert raised.value.transient is True
    assert base_url in str(raised.value)


def test_complete_chat_to_a_closed_port_raises_a_transient_error() -> None:
    llm, base_url = unreachable_client()

    with pytest.raises(LLMUnavailableError) as raised:
        llm.complete_chat(QUESTION, max_tokens=5)

    assert raised.value.transient is True
    assert isinstance(raised.value, GenerationError)
    assert base_url in str(raised.value)


class _StatusHandler(BaseHTTPRequestHandler):
    """Answers every request with the status code the server was created for and an OpenAI-style error body."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status: int = self.server.status  # type: ignore[attr-defined]
        body = json.dumps({"error": {"message": f"status {status}", "type": "test"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def status_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StatusHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def client_for(server: ThreadingHTTPServer, status: int) -> OpenAICompatibleLLM:
    server.status = status  # type: ignore[attr-defined]
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    return OpenAICompatibleLLM(LLMSettings(base_url=base_url, model="m", timeout_seconds=5, max_retries=0))


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_server_failures_and_rate_limits_are_transient(status_server: ThreadingHTTPServer, status: int) -> None:
    llm = client_for(status_server, status)

    with pytest.raises(LLMUnavailableError, match=str(status)) as raised:
        llm.complete_chat(QUESTION, max_tokens=5)
    assert raised.value.transient is True

    with pytest.raises(LLMUnavailableError, match=str(status)):
        list(llm.stream_chat(QUESTION, SamplingOptions(max_tokens=5)))


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_refused_requests_are_not_transient(status_server: ThreadingHTTPServer, status: int) -> None:
    llm = client_for(status_server, status)

    with pytest.raises(LLMResponseError, match=str(status)) as raised:
        llm.complete_chat(QUESTION, max_tokens=5)
    assert raised.value.transient is False

    with pytest.raises(LLMResponseError, match=str(status)):
        list(llm.stream_chat(QUESTION, SamplingOptions(max_tokens=5)))


# Against the real model server


@pytest.fixture(scope="module")
def llm(llm_base_url: str) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(LLMSettings(base_url=llm_base_url, model=TEST_LLM_MODEL, timeout_seconds=300))


def test_stream_chat_yields_several_deltas_that_join_into_a_reply(llm: OpenAICompatibleLLM) -> None:
    deltas = list(llm.stream_chat(LONGER_QUESTION, SamplingOptions(max_tokens=20)))

    assert len(deltas) >= 3
    assert all(isinstance(delta, str) for delta in deltas)
    assert all(deltas)  # empty deltas (role-only or final chunks) are never yielded
    reply = "".join(deltas)
    assert reply.strip()
    assert "red" in reply.lower()


def test_stream_chat_is_deterministic_at_temperature_zero(llm: OpenAICompatibleLLM) -> None:
    first = "".join(llm.stream_chat(LONGER_QUESTION, SamplingOptions(max_tokens=10)))
    second = "".join(llm.stream_chat(LONGER_QUESTION, SamplingOptions(max_tokens=10)))

    assert first == second


def test_complete_chat_returns_text(llm: OpenAICompatibleLLM) -> None:
    reply = llm.complete_chat(QUESTION, max_tokens=20)

    assert isinstance(reply, str)
    assert "paris" in reply.lower()


def test_a_timeout_against_the_real_server_is_transient(llm_base_url: str) -> None:
    llm = OpenAICompatibleLLM(
        LLMSettings(base_url=llm_base_url, model=TEST_LLM_MODEL, timeout_seconds=0.001, max_retries=0)
    )

    with pytest.raises(LLMUnavailableError) as raised:
        llm.complete_chat(QUESTION, max_tokens=200)

    assert raised.value.transient is True


def test_stream_completion_streams_a_plain_prompt(llm: OpenAICompatibleLLM) -> None:
    deltas = list(llm.stream_completion("The three primary colours are red,", SamplingOptions(max_tokens=12)))

    assert len(deltas) >= 3
    assert "".join(deltas).strip()


def test_repetition_penalty_is_accepted_by_the_server(llm: OpenAICompatibleLLM) -> None:
    reply = "".join(llm.stream_chat(LONGER_QUESTION, SamplingOptions(max_tokens=10, repetition_penalty=1.1)))

    assert reply.strip()


def test_the_penalty_takes_each_servers_own_name() -> None:
    llama = OpenAICompatibleLLM(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", server_kind="llama.cpp"))
    vllm = OpenAICompatibleLLM(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", server_kind="vllm"))
    options = SamplingOptions(max_tokens=5, repetition_penalty=1.1)

    assert llama._extra_body(options) == {"repeat_penalty": 1.1}
    assert vllm._extra_body(options) == {"repetition_penalty": 1.1}
    assert llama._extra_body(SamplingOptions(max_tokens=5)) is None


def test_server_token_counter_counts_with_the_models_tokenizer(llm_base_url: str) -> None:
    counter = ServerTokenCounter(LLMSettings(base_url=llm_base_url, model=TEST_LLM_MODEL))

    short = counter.count("Metformin lowers HbA1c.")
    longer = counter.count("Metformin lowers HbA1c. " * 10)

    assert 3 <= short <= 12
    assert 9 * short <= longer <= 11 * short + 2


def test_server_token_counter_to_a_closed_port_is_transient() -> None:
    counter = ServerTokenCounter(LLMSettings(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m"))

    with pytest.raises(LLMUnavailableError):
        counter.count("text")


def test_closing_a_stream_stops_the_servers_generation(llm: OpenAICompatibleLLM) -> None:
    """The server handles one request at a time: if closing did not stop it, the next request would wait for the
    whole abandoned answer, 4,000 tokens (over 150 s at the 5 to 15 tokens a second our machines write). The bound
    leaves room for requests from the tests on the other worker, which share the server and may go first."""
    long_answer: list[Message] = [{"role": "user", "content": "Count from 1 to 5000, one number per line."}]
    stream = llm.stream_chat(long_answer, SamplingOptions(max_tokens=4000))
    received = [next(stream) for _ in range(5)]
    stream.close()  # type: ignore[attr-defined]
    started = time.perf_counter()

    reply = "".join(llm.stream_chat(QUESTION, SamplingOptions(max_tokens=3)))
    waited = time.perf_counter() - started

    assert len(received) == 5
    assert reply.strip()
    assert waited < 150, f"the next answer waited {waited:.1f} s: the abandoned generation kept running"


def test_a_request_arriving_mid_stream_waits_its_turn_rather_than_cutting_the_stream_short(
    llm: OpenAICompatibleLLM,
) -> None:
    """llama-cpp-python's default ends a running stream with a normal "[DONE]" once another request waits, which the
    client cannot tell from a finished answer (generator.serve turns that off)."""
    counting: list[Message] = [{"role": "user", "content": "Count from 1 to 400, one number per line."}]
    options = SamplingOptions(max_tokens=24)
    alone = "".join(llm.stream_chat(counting, options))

    stream = llm.stream_chat(counting, options)
    received = [next(stream) for _ in range(3)]
    replies: list[str] = []
    other = threading.Thread(target=lambda: replies.append(llm.complete_chat(QUESTION, max_tokens=3)))
    other.start()
    time.sleep(0.5)  # the other request is at the server, waiting for the model, while this stream goes on
    received += list(stream)
    other.join(timeout=300)  # the server may have requests from the other worker to finish first

    assert "".join(received) == alone
    assert replies
    assert "paris" in replies[0].lower()
