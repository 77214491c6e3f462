"""Building the answer prompt from retrieved abstracts, in one of three styles.

`chat`: system and user messages with one worked example turn, for general instruct models such as the embedded
Qwen (small models copy a demonstrated format far more reliably than a described one). `chat-complete` (the
default): the same asking for, and showing, a complete answer of three to six sentences.
`verifai`: the plain-text prompt the fine-tuned VerifAI model was trained on, sent as a completion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from generator.base import Message
from generator.citations import DOC_CITATION_ID, citation_label
from generator.prompts import (
    ABSTRACT_BLOCK,
    ANSWER_SYSTEM,
    ANSWER_USER,
    BOTTOM_LINE_NOTES,
    COMPLETE_ANSWER_SYSTEM,
    COMPLETE_ANSWER_USER,
    COMPLETE_EXAMPLE_ABSTRACTS,
    COMPLETE_EXAMPLE_ANSWER,
    EXAMPLE_ABSTRACTS,
    EXAMPLE_ANSWER,
    EXAMPLE_QUESTION,
    LIBRARY_EXAMPLE_CITATION,
    LIBRARY_EXAMPLE_PAGES,
    PUBMED_EXAMPLE_CITATION,
    VERIFAI_ABSTRACT_BLOCK,
    VERIFAI_PROMPT,
)

PromptStyle = Literal["chat", "chat-complete", "verifai"]
PROMPT_STYLES: tuple[PromptStyle, ...] = ("chat", "chat-complete", "verifai")
# Tokens a chat template adds around each message (role header and end marker): chatml uses 5, Mistral's 4-6.
CHAT_TOKENS_PER_MESSAGE = 8


@dataclass(frozen=True)
class ContextAbstract:
    pmid: str
    title: str
    abstract: str


@dataclass(frozen=True)
class ChatPrompt:
    """The texts of one chat style: instructions, the user turn's template and its worked example."""

    system: str
    user: str
    example_abstracts: tuple[tuple[str, str, str], ...]
    example_question: str
    example_answer: str


CHAT_PROMPTS: dict[PromptStyle, ChatPrompt] = {
    "chat": ChatPrompt(ANSWER_SYSTEM, ANSWER_USER, EXAMPLE_ABSTRACTS, EXAMPLE_QUESTION, EXAMPLE_ANSWER),
    "chat-complete": ChatPrompt(
        COMPLETE_ANSWER_SYSTEM,
        COMPLETE_ANSWER_USER,
        COMPLETE_EXAMPLE_ABSTRACTS,
        EXAMPLE_QUESTION,
        COMPLETE_EXAMPLE_ANSWER,
    ),
}


@dataclass(frozen=True)
class AnswerPrompt:
    style: PromptStyle
    messages: tuple[Message, ...] = ()  # the chat style
    text: str = ""  # the verifai style: one completion prompt

    def countable_text(self) -> str:
        """Everything the model reads, for counting tokens (chat template tokens are added by the caller)."""
        if self.style == "verifai":
            return self.text
        return "\n".join(message["content"] for message in self.messages)

    @property
    def template_overhead_tokens(self) -> int:
        return CHAT_TOKENS_PER_MESSAGE * len(self.messages)


def clip_text(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return f"{cut} ..."


def answer_prompt(
    style: PromptStyle,
    question: str,
    abstracts: Sequence[ContextAbstract],
    *,
    abstract_chars: int,
    bottom_line: str | None = None,
) -> AnswerPrompt:
    """`bottom_line`: a yes/no question's bottom line, decided before the answer (a key of `BOTTOM_LINE_NOTES`),
    which the answer is asked to open with; the `verifai` style's prompt is the one its model was trained on, so it
    takes none."""
    if bottom_line is not None and bottom_line not in BOTTOM_LINE_NOTES:
        raise ValueError(f"unknown bottom line {bottom_line!r} (one of {', '.join(BOTTOM_LINE_NOTES)})")
    if style == "verifai":
        blocks = "".join(
            VERIFAI_ABSTRACT_BLOCK.format(
                label=citation_label(item.pmid), title=item.title, abstract=clip_text(item.abstract, abstract_chars)
            )
            for item in abstracts
        )
        return AnswerPrompt(style=style, text=VERIFAI_PROMPT.format(question=question, abstracts=blocks))
    return AnswerPrompt(
        style=style,
        messages=tuple(
            answer_messages(
                question, abstracts, abstract_chars=abstract_chars, chat=CHAT_PROMPTS[style], bottom_line=bottom_line
            )
        ),
    )


def answer_messages(
    question: str,
    abstracts: Sequence[ContextAbstract],
    *,
    abstract_chars: int,
    chat: ChatPrompt = CHAT_PROMPTS["chat"],
    bottom_line: str | None = None,
) -> list[Message]:
    """System, worked example, then the question: everything before the last user turn is the same for every
    question (of each kind of source), so a server that keeps the previous prompt's state reads it once. The
    bottom line's note, when there is one, ends the last turn, after the question it answers."""
    if abstracts and all(DOC_CITATION_ID.fullmatch(item.pmid) for item in abstracts):
        chat = library_chat(chat)
    example = [ContextAbstract(pmid, title, abstract) for pmid, title, abstract in chat.example_abstracts]
    return [
        {"role": "system", "content": chat.system},
        {"role": "user", "content": _user_turn(chat.user, chat.example_question, example, abstract_chars)},
        {"role": "assistant", "content": chat.example_answer},
        {
            "role": "user",
            "content": _user_turn(chat.user, question, abstracts, abstract_chars)
            + (f"\n{BOTTOM_LINE_NOTES[bottom_line]}" if bottom_line else ""),
        },
    ]


def library_chat(chat: ChatPrompt) -> ChatPrompt:
    """The same texts for a context of library pages only: the instructions and the worked example cite pages."""
    pages = {pmid: LIBRARY_EXAMPLE_PAGES[pmid] for pmid, _, _ in chat.example_abstracts}
    answer = chat.example_answer
    for pmid, page in pages.items():
        answer = answer.replace(f"PUBMED:{pmid}", page)
    return ChatPrompt(
        system=chat.system.replace(PUBMED_EXAMPLE_CITATION, LIBRARY_EXAMPLE_CITATION),
        user=chat.user.replace(PUBMED_EXAMPLE_CITATION, LIBRARY_EXAMPLE_CITATION),
        example_abstracts=tuple((pages[pmid], title, abstract) for pmid, title, abstract in chat.example_abstracts),
        example_question=chat.example_question,
        example_answer=answer,
    )


def _user_turn(template: str, question: str, abstracts: Sequence[ContextAbstract], abstract_chars: int) -> str:
    blocks = "\n\n".join(
        ABSTRACT_BLOCK.format(
            label=citation_label(item.pmid), title=item.title, abstract=clip_text(item.abstract, abstract_chars)
        )
        for item in abstracts
    )
    return template.format(abstracts=blocks, question=question)
