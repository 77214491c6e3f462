"""The deterministic fake model's claim extraction (generator.fake_llm), for fast tests only.

Asked to split answer sentences into claims (generator/prompts.py's CLAIMS_USER), it splits each sentence it is asked
about at ", and " and "; ", and writes each part as a sentence: the first letter capitalised, a full stop at the end.
So a compound "A, and b." gives back exactly "A." and "B.", which is what the deep check's measurement builds.
"""

from __future__ import annotations

import json
import re

# The request's last line names the sentences to split: "Split sentences 1, 2 and 4 into claims."
_REQUEST = re.compile(r"^Split sentences (?P<numbers>[\d, and]+) into claims\.", re.M)
_SENTENCE = re.compile(r"^\[(?P<number>\d+)\] (?P<text>.*)$", re.M)
_PARTS = re.compile(r",\s+and\s+|;\s+")


def is_claims_request(prompt: str) -> bool:
    return _REQUEST.search(prompt) is not None


def split_claims(sentence: str) -> list[str]:
    parts = [part.strip().rstrip(".").strip() for part in _PARTS.split(sentence)]
    return [part[0].upper() + part[1:] + "." for part in parts if part]


def claims_reply(prompt: str) -> str:
    """The JSON a constrained model would write for the claims request in `prompt`."""
    request = _REQUEST.search(prompt)
    wanted = [int(number) for number in re.findall(r"\d+", request.group("numbers"))] if request else []
    texts = {int(match.group("number")): match.group("text") for match in _SENTENCE.finditer(prompt)}
    entries = [{"sentence": number, "claims": split_claims(texts.get(number, ""))} for number in wanted]
    return json.dumps({"sentences": entries})
