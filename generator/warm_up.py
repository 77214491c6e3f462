"""Reading the answer prompt's constant part once, before the first question needs it.

Everything before the question's own turn (system prompt and worked example, about 580 tokens with the `chat`
style) is the same for every answer, and llama.cpp's server skips the part of a prompt it shares with the previous
one. Only the first answer after the server starts reads it: about 4 s at 140 tokens/s, 35 s at 17. A one-token
request with that prefix, sent when the worker starts, moves that wait out of the first question.
"""

from __future__ import annotations

from generator.answer import PromptStyle, answer_prompt
from generator.base import LLM, SamplingOptions


def warm_prompt_prefix(llm: LLM, style: PromptStyle, *, abstract_chars: int) -> bool:
    """Send the prompt with no abstracts and no question, for one token; False where the style has no constant
    prefix to keep (VerifAI's prompt starts with the question). `abstract_chars` must be the answers' own: the worked
    example's abstracts are clipped with it."""
    if style == "verifai":
        return False
    prompt = answer_prompt(style, "", [], abstract_chars=abstract_chars)
    for _ in llm.stream_chat(list(prompt.messages), SamplingOptions(max_tokens=1)):
        pass
    return True
