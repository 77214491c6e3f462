"""The production profile's flow through a real vLLM server (its CPU build serving the packaged Qwen model): the
answer streams, a stop ends it, citations are kept and verified, and the deep check's schema-held JSON replies come
back. Run by `make vllm-check` (CI runs it after `make test`); the same flow on llama.cpp is in the rest of tests/e2e.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.answers import LABELS
from tests.e2e.conftest import PASSWORD, QUESTIONS, USERS, RunningStack, started_stack
from tests.e2e.profiles import profile_env
from tests.support import TEST_LLM_MODEL

pytestmark = [pytest.mark.vllm, pytest.mark.stack, pytest.mark.model]

ENDED = {"done", "failed", "cancelled"}
# Five abstracts: vLLM reads prompts on two CPU cores too, and every assertion holds on five.
FEW_ABSTRACTS = {"top_k": 5}


@pytest.fixture(scope="module")
def vllm_stack(vllm_base_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    var_dir = tmp_path_factory.mktemp("stack-production-vllm")
    with profile_env("production", var_dir) as env:
        on_vllm = {**env, "VERIMED_LLM_BASE_URL": vllm_base_url, "VERIMED_LLM_SERVER_KIND": "vllm"}
        yield from started_stack("production", var_dir, on_vllm)


@pytest.fixture(scope="module")
def api(vllm_stack: RunningStack) -> Iterator[httpx.Client]:
    token = httpx.post(
        f"{vllm_stack.url}/api/v1/auth/token", data={"username": USERS["researcher"], "password": PASSWORD}
    ).json()["token"]
    with httpx.Client(
        base_url=f"{vllm_stack.url}/api/v1", headers={"Authorization": f"Token {token}"}, timeout=60
    ) as client:
        yield client


def _ask(api: httpx.Client, question: str) -> int:
    created = api.post("/questions", json={"question": question, **FEW_ABSTRACTS})
    assert created.status_code == 201, created.text
    return int(created.json()["id"])


def _follow(api: httpx.Client, question_id: int, *, until: Any, timeout: float = 900) -> list[dict[str, Any]]:
    """Every state the API showed, polled every 0.3 s, until `until(state)` holds."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = api.get(f"/questions/{question_id}")
        assert response.status_code == 200, response.text
        seen.append(response.json())
        if until(seen[-1]):
            return seen
        time.sleep(0.3)
    raise AssertionError(f"question {question_id} did not get there in {timeout:.0f} s: {seen[-1]}")


@pytest.fixture(scope="module")
def answered(api: httpx.Client, vllm_stack: RunningStack) -> tuple[int, list[dict[str, Any]]]:
    question_id = _ask(api, QUESTIONS[1])
    return question_id, _follow(api, question_id, until=lambda state: state["status"] in ENDED)


def test_the_answer_streams_in_and_is_stored_whole(answered: tuple[int, list[dict[str, Any]]]) -> None:
    _, seen = answered
    final = seen[-1]
    assert final["status"] == "done", final.get("error")
    partial = [state["answer"] for state in seen if state["status"] == "generating" and state["answer"].strip()]
    # Streamed: the page saw the answer grow while vLLM wrote it, each view a beginning of the stored answer.
    assert len(set(partial)) >= 2, "the answer arrived in one piece"
    final_text = " ".join(final["answer"].split())
    assert all(final_text.startswith(" ".join(text.split())[:40]) for text in partial)


def test_the_answer_cites_what_was_retrieved_and_every_citation_is_verified(
    answered: tuple[int, list[dict[str, Any]]], vllm_stack: RunningStack
) -> None:
    _, seen = answered
    final = seen[-1]
    assert final["status"] == "done", final.get("error")
    retrieved = {doc["pmid"] for doc in final["retrieved"]}
    assert retrieved & set(vllm_stack.gold_pmids[QUESTIONS[1]])
    cited = [sentence for sentence in final["sentences"] if sentence["citations"]]
    assert cited, f"the model cited nothing: {final['answer']!r}"
    for sentence in cited:
        assert set(sentence["verdicts"]) == set(sentence["citations"])
        for pmid, verdict in sentence["verdicts"].items():
            assert verdict["label"] in LABELS
            assert (verdict["label"] == "NO_REFERENCE") == (pmid not in retrieved)


def test_stop_ends_an_answer_vllm_is_writing(api: httpx.Client) -> None:
    question_id = _ask(api, QUESTIONS[0])
    _follow(
        api,
        question_id,
        until=lambda state: (state["status"] == "generating" and state["answer"].strip()) or state["status"] in ENDED,
    )
    stopped = api.post(f"/questions/{question_id}/cancel")
    assert stopped.status_code in (200, 202), stopped.text

    final = _follow(api, question_id, until=lambda state: state["status"] in ENDED, timeout=120)[-1]

    assert final["status"] == "cancelled"
    assert final["answer"].strip(), "what was written before the stop is kept"


def test_the_deep_check_gets_schema_held_json_from_vllm(
    api: httpx.Client, answered: tuple[int, list[dict[str, Any]]], tmp_path: Path
) -> None:
    question_id, _ = answered
    started = api.post(f"/questions/{question_id}/deep-check", json={})
    assert started.status_code in (200, 201, 202), started.text
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        check = api.get(f"/questions/{question_id}/deep-check").json()
        if check["status"] in ("done", "failed", "stopped"):
            break
        time.sleep(1)
    assert check["status"] == "done", check["error"]
    tree = check["tree"]
    assert tree["extractor"] == TEST_LLM_MODEL
    reply = json.loads(tree["extraction_raw"])  # vLLM held its reply to the JSON schema
    assert reply["sentences"]
    assert any(sentence["from_model"] and sentence["claims"] for sentence in tree["sentences"]), tree
