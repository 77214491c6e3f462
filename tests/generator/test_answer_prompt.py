"""Tests for the answer prompt: system prompt, worked example turn, abstract blocks, question last, clipping."""

from __future__ import annotations

import re

import pytest

from generator.answer import CHAT_TOKENS_PER_MESSAGE, ContextAbstract, PromptStyle, answer_messages, answer_prompt
from generator.prompts import (
    ANSWER_SYSTEM,
    BOTTOM_LINE_NOTES,
    COMPLETE_ANSWER_SYSTEM,
    COMPLETE_EXAMPLE_ABSTRACTS,
    COMPLETE_EXAMPLE_ANSWER,
    COMPLETE_EXAMPLE_UNRELATED,
    EXAMPLE_ABSTRACTS,
    EXAMPLE_ANSWER,
    EXAMPLE_QUESTION,
)
from indexer.sentences import sentence_texts

QUESTION = "Does warfarin prevent stroke in atrial fibrillation?"
ABSTRACTS = (
    ContextAbstract("1003", "Warfarin for atrial fibrillation.", "Warfarin reduced ischaemic stroke by 60%."),
    ContextAbstract("S2:77", "Aspirin versus warfarin.", "Aspirin was less effective than warfarin."),
    ContextAbstract("1005", "Bleeding on anticoagulants.", "Major bleeding occurred in 2% per year."),
)


def messages(abstracts: tuple[ContextAbstract, ...] = ABSTRACTS, *, abstract_chars: int = 2000) -> list[dict[str, str]]:
    return answer_messages(QUESTION, abstracts, abstract_chars=abstract_chars)


def test_it_sends_system_example_user_example_answer_then_the_real_user_turn() -> None:
    assert [message["role"] for message in messages()] == ["system", "user", "assistant", "user"]


def test_the_first_message_is_the_system_prompt() -> None:
    assert messages()[0] == {"role": "system", "content": ANSWER_SYSTEM}


def test_the_worked_example_shows_its_abstracts_question_and_cited_answer() -> None:
    example_user, example_answer = messages()[1]["content"], messages()[2]["content"]

    for pmid, title, abstract in EXAMPLE_ABSTRACTS:
        assert f"abstract_id: PUBMED:{pmid}\ntitle: {title}\nabstract: {abstract}" in example_user
    assert _question_then_format_reminder(example_user, EXAMPLE_QUESTION)
    assert example_answer == EXAMPLE_ANSWER
    assert set(re.findall(r"PUBMED:(\d+)", example_answer)) == {pmid for pmid, _, _ in EXAMPLE_ABSTRACTS}


def test_the_chat_example_answers_in_two_sentences_each_cited() -> None:
    sentences = sentence_texts(messages()[2]["content"])

    assert len(sentences) == 2
    assert all(re.search(r"\(PUBMED:\d+\)\.$", sentence) for sentence in sentences)


def test_the_complete_style_asks_for_and_shows_three_to_six_cited_sentences() -> None:
    """The model writes about as many sentences as its example has: this example shows five, each cited, most from
    the one abstract that answers the question, and it leaves the unrelated abstract out."""
    complete = answer_prompt("chat-complete", QUESTION, ABSTRACTS, abstract_chars=2000).messages
    sentences = sentence_texts(complete[2]["content"])

    assert complete[0]["content"] == COMPLETE_ANSWER_SYSTEM
    assert complete[2]["content"] == COMPLETE_EXAMPLE_ANSWER
    assert 3 <= len(sentences) <= 6
    assert all(re.search(r"\(PUBMED:\d+\)\.$", sentence) for sentence in sentences)
    cited = re.findall(r"PUBMED:(\d+)", complete[2]["content"])
    assert set(cited) == {p for p, _, _ in COMPLETE_EXAMPLE_ABSTRACTS} - {COMPLETE_EXAMPLE_UNRELATED}
    assert max(cited.count(pmid) for pmid in cited) >= 3
    assert "three to six sentences" in complete[3]["content"]
    assert "two to five sentences" in messages()[3]["content"]


@pytest.mark.parametrize("style", ["chat", "chat-complete"])
def test_everything_before_the_question_turn_is_the_same_for_every_question(style: PromptStyle) -> None:
    """The constant prefix a server's prompt cache can keep: it must not depend on the question or abstracts."""
    first = answer_prompt(style, QUESTION, ABSTRACTS, abstract_chars=2000).messages
    second = answer_prompt(style, "What causes gout?", ABSTRACTS[:1], abstract_chars=2000).messages

    assert first[:3] == second[:3]
    assert first[3] != second[3]


def test_every_abstract_appears_as_an_abstract_id_block_in_the_given_order() -> None:
    user = messages()[-1]["content"]

    for item in ABSTRACTS:
        assert f"abstract_id: PUBMED:{item.pmid}\ntitle: {item.title}\nabstract: {item.abstract}" in user
    assert re.findall(r"abstract_id: PUBMED:(\S+)", user) == ["1003", "S2:77", "1005"]


@pytest.mark.parametrize("style", ["chat", "verifai"])
def test_a_library_page_is_shown_under_its_own_id_which_is_what_the_answer_cites(style: str) -> None:
    page = ContextAbstract(pmid="DOC:12:p3", title="My trial report (p. 3)", abstract="Dose was 2 mg daily.")

    prompt = answer_prompt(style, QUESTION, [ABSTRACTS[0], page], abstract_chars=2000)  # type: ignore[arg-type]

    text = prompt.text if style == "verifai" else prompt.messages[-1]["content"]
    assert "abstract_id: DOC:12:p3\n" in text
    assert f"abstract_id: PUBMED:{ABSTRACTS[0].pmid}\n" in text
    assert "PUBMED:DOC" not in text


@pytest.mark.parametrize("style", ["chat", "chat-complete"])
def test_a_context_of_library_pages_only_has_instructions_and_an_example_that_cite_pages(style: PromptStyle) -> None:
    pages = [
        ContextAbstract(pmid="DOC:12:p3", title="My trial report (p. 3)", abstract="Dose was 2 mg daily."),
        ContextAbstract(pmid="DOC:12:p4", title="My trial report (p. 4)", abstract="No bleeding was seen."),
    ]

    sent = answer_prompt(style, QUESTION, pages, abstract_chars=2000).messages

    assert not any("PUBMED" in message["content"] for message in sent)
    assert "(DOC:12:p3)" in sent[0]["content"]
    example_user, example_answer = sent[1]["content"], sent[2]["content"]
    shown = re.findall(r"abstract_id: (\S+)", example_user)
    assert shown
    assert all(re.fullmatch(r"DOC:[0-9]+:p[0-9]+", label) for label in shown)
    cited = set(re.findall(r"\((DOC:[0-9]+:p[0-9]+)\)", example_answer))
    assert cited
    assert cited <= set(shown)


def test_a_context_with_any_pubmed_abstract_keeps_the_pubmed_example() -> None:
    page = ContextAbstract(pmid="DOC:12:p3", title="My trial report (p. 3)", abstract="Dose was 2 mg daily.")

    sent = answer_messages(QUESTION, [ABSTRACTS[0], page], abstract_chars=2000)

    assert sent[:3] == messages()[:3]


def test_the_question_comes_last_after_the_abstracts() -> None:
    user = messages()[-1]["content"]

    assert user.startswith("Abstracts:\n")
    assert _question_then_format_reminder(user, QUESTION)
    assert user.index(f"Question: {QUESTION}") > user.index("abstract_id: PUBMED:1005")


def test_the_real_turn_holds_only_the_retrieved_abstracts_not_the_example_ones() -> None:
    user = messages()[-1]["content"]

    for pmid, _, _ in EXAMPLE_ABSTRACTS:
        assert pmid not in user


def test_no_abstracts_still_asks_the_question() -> None:
    user = messages(())[-1]["content"]

    assert "abstract_id:" not in user
    assert _question_then_format_reminder(user, QUESTION)


def test_an_abstract_longer_than_abstract_chars_is_clipped_at_a_word_boundary() -> None:
    long_text = " ".join(f"word{number}" for number in range(200))
    abstract = ContextAbstract("42", "Long.", long_text)

    user = messages((abstract,), abstract_chars=50)[-1]["content"]

    clipped = re.search(r"abstract: (.*)\n", user + "\n")
    assert clipped is not None
    text = clipped.group(1)
    assert text.endswith(" ...")
    body = text.removesuffix(" ...")
    assert len(body) <= 50
    assert long_text.startswith(body + " ")  # whole words only, none cut in half
    assert "word199" not in user


def test_an_abstract_within_abstract_chars_is_sent_whole() -> None:
    abstract = ContextAbstract("42", "Short.", "Exactly as written.")

    user = messages((abstract,), abstract_chars=len(abstract.abstract))[-1]["content"]

    assert "abstract: Exactly as written.\n" in user + "\n"
    assert " ..." not in user


@pytest.mark.parametrize("abstract_chars", [30, 60])
def test_clipping_applies_to_the_example_abstracts_too(abstract_chars: int) -> None:
    example_user = messages(abstract_chars=abstract_chars)[1]["content"]

    assert example_user.count(" ...") == len(EXAMPLE_ABSTRACTS)


def test_titles_are_never_clipped() -> None:
    abstract = ContextAbstract("42", "A rather long title that exceeds the clip length.", "x " * 100)

    user = messages((abstract,), abstract_chars=10)[-1]["content"]

    assert "title: A rather long title that exceeds the clip length.\n" in user


def _question_then_format_reminder(user_turn: str, question: str) -> bool:
    """The turn ends with the question, then one line restating the citation format."""
    head, _, reminder = user_turn.rpartition("\n")
    return head.endswith(f"Question: {question}") and "(PUBMED:" in reminder


# The verifai style: VerifAI's fine-tuned model's own plain-text prompt


def test_verifai_prompt_is_the_fine_tuned_models_exact_format() -> None:
    prompt = answer_prompt("verifai", QUESTION, ABSTRACTS, abstract_chars=2000)

    assert prompt.messages == ()
    assert prompt.text.startswith(
        "Respond to the Instruction using only the information provided in the relevant abstracts in "
        "```Abstracts``` below.\n\nInstruction: " + QUESTION + "\n\nAbstracts:\n```abstract_id: PUBMED:1003\n"
    )
    assert prompt.text.endswith("```\n\nAnswer:")
    assert prompt.countable_text() == prompt.text
    assert prompt.template_overhead_tokens == 0


def test_verifai_prompt_lists_every_abstract_in_rank_order_with_title_and_text() -> None:
    text = answer_prompt("verifai", QUESTION, ABSTRACTS, abstract_chars=2000).text

    positions = [text.index(f"abstract_id: PUBMED:{item.pmid}\n{item.title}\n{item.abstract}\n") for item in ABSTRACTS]
    assert positions == sorted(positions)


def test_chat_style_prompt_carries_the_messages() -> None:
    prompt = answer_prompt("chat", QUESTION, ABSTRACTS, abstract_chars=2000)

    assert list(prompt.messages) == messages()
    assert prompt.text == ""
    assert prompt.template_overhead_tokens == 4 * CHAT_TOKENS_PER_MESSAGE
    assert QUESTION in prompt.countable_text()
    assert ANSWER_SYSTEM in prompt.countable_text()


@pytest.mark.parametrize("style", ["chat", "chat-complete"])
@pytest.mark.parametrize("bottom_line", ["yes", "no", "mixed", "not_enough"])
def test_a_bottom_line_given_first_ends_the_question_turn_and_leaves_the_prefix_alone(
    style: PromptStyle, bottom_line: str
) -> None:
    plain = answer_prompt(style, QUESTION, ABSTRACTS, abstract_chars=2000).messages
    given = answer_prompt(style, QUESTION, ABSTRACTS, abstract_chars=2000, bottom_line=bottom_line).messages

    assert given[:3] == plain[:3], "the constant prefix a server caches does not change"
    assert given[3]["content"] == plain[3]["content"] + "\n" + BOTTOM_LINE_NOTES[bottom_line]


@pytest.mark.parametrize(
    ("bottom_line", "opening"),
    [
        ("yes", '"Yes,"'),
        ("no", '"No,"'),
        ("mixed", '"The evidence is mixed:"'),
        ("not_enough", '"The evidence is not enough to answer yes or no:"'),
    ],
)
def test_each_bottom_line_asks_the_answer_to_open_with_it(bottom_line: str, opening: str) -> None:
    assert f"Begin your answer with {opening}" in BOTTOM_LINE_NOTES[bottom_line]


def test_an_unknown_bottom_line_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown bottom line 'probably'"):
        answer_prompt("chat-complete", QUESTION, ABSTRACTS, abstract_chars=2000, bottom_line="probably")


def test_the_verifai_prompt_is_the_one_its_model_was_trained_on_with_or_without_a_bottom_line() -> None:
    plain = answer_prompt("verifai", QUESTION, ABSTRACTS, abstract_chars=2000)
    given = answer_prompt("verifai", QUESTION, ABSTRACTS, abstract_chars=2000, bottom_line="no")
    assert given == plain
