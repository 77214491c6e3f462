"""What a reader weighs a source by, in the browser on the running stack: a retracted paper brought back by the search
setting carries the red Retracted badge with its notice, every source its study-design badge, and a yes/no question's
answer opens with its bottom line (the retracted paper kept out of the vote) and ends with the consensus meter of its
first retrieved abstracts, each count opening its abstracts with their badges.

The papers are written here in PubMed's XML format about a made-up drug, so that they are the top hits for the
question, and stored into the running stack the way `make run` stores its corpus (words indexed at once, vectors
left to the background embedder). One LLM answer in all: the consensus is made when the answer is verified."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import RunningStack, question_json, shot, sign_in
from webapp.qa.bottom_line_display import LIMITS, shown_bottom_line

pytestmark = pytest.mark.profiles("embedded")

QUESTION = "Does velnoraxin reduce migraine frequency?"
RETRACTED_PMID, RCT_PMID, META_PMID = "99100001", "99100002", "99100003"
TITLES = {
    RETRACTED_PMID: "Velnoraxin for chronic migraine: an open-label trial.",
    RCT_PMID: "Velnoraxin versus placebo for migraine prevention: a randomised controlled trial.",
    META_PMID: "Velnoraxin and migraine frequency: a meta-analysis of trials.",
}
ABSTRACTS = {
    RETRACTED_PMID: "Velnoraxin reduced migraine frequency in 120 adults with chronic migraine. Monthly migraine days "
    "fell by 4.2 with velnoraxin.",
    RCT_PMID: "In 480 adults with episodic migraine, velnoraxin did not reduce migraine frequency compared with "
    "placebo. Monthly migraine days fell by 1.9 with velnoraxin and by 1.8 with placebo.",
    META_PMID: "Pooling six randomised trials in 2,310 adults, velnoraxin reduced migraine frequency by 1.5 days per "
    "month compared with placebo.",
}
PUBLICATION_TYPES = {
    RETRACTED_PMID: ("Journal Article", "Clinical Trial", "Retracted Publication"),
    RCT_PMID: ("Journal Article", "Randomized Controlled Trial"),
    META_PMID: ("Journal Article", "Meta-Analysis", "Systematic Review"),
}
DESIGNS = {RETRACTED_PMID: "Clinical trial", RCT_PMID: "Randomised controlled trial", META_PMID: "Meta-analysis"}
RETRACTION_NOTICE = "Cephalalgia Test. 2024 Mar;3(1):9"


def _article_xml(pmid: str) -> str:
    types = "".join(f"<PublicationType>{kind}</PublicationType>" for kind in PUBLICATION_TYPES[pmid])
    retraction = (
        '<CommentsCorrectionsList><CommentsCorrections RefType="RetractionIn">'
        f'<RefSource>{RETRACTION_NOTICE}</RefSource><PMID Version="1">99100009</PMID>'
        "</CommentsCorrections></CommentsCorrectionsList>"
        if pmid == RETRACTED_PMID
        else ""
    )
    return f"""<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <PMID Version="1">{pmid}</PMID>
    <Article PubModel="Print">
      <Journal>
        <JournalIssue CitedMedium="Internet"><Volume>3</Volume><PubDate><Year>2023</Year></PubDate></JournalIssue>
        <Title>Cephalalgia Test</Title>
      </Journal>
      <ArticleTitle>{TITLES[pmid]}</ArticleTitle>
      <Abstract><AbstractText>{ABSTRACTS[pmid]}</AbstractText></Abstract>
      <Language>eng</Language>
      <PublicationTypeList>{types}</PublicationTypeList>
    </Article>
    {retraction}
  </MedlineCitation>
  <PubmedData><PublicationStatus>ppublish</PublicationStatus></PubmedData>
</PubmedArticle>"""


def _store_papers(stack: RunningStack) -> None:
    """The three papers in PubMed's format, stored into the running stack: keyword search finds them at once."""
    path = stack.var_dir / "velnoraxin.xml"
    articles = "\n".join(_article_xml(pmid) for pmid in TITLES)
    path.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n{articles}\n</PubmedArticleSet>\n',
        encoding="utf-8",
    )
    stored = stack.manage("ingest", "--no-progress", "--defer-embedding", str(path))
    assert stored.returncode == 0, stored.stderr[-3000:]


def _ask_including_retracted(page: Page) -> None:
    page.get_by_label("Your biomedical question").fill(QUESTION)
    page.locator(".search-settings summary").click()
    page.get_by_label("Include retracted papers").check()
    page.get_by_role("button", name="Ask").click()


def _assert_badges(source: Locator, pmid: str) -> None:
    expect(source.locator(".design-badge")).to_have_text(DESIGNS[pmid])
    retracted = source.locator(".retraction-retracted")
    if pmid == RETRACTED_PMID:
        expect(retracted).to_have_text("Retracted")
        # Red: the colour the stylesheet gives it (its contrast is checked in tests/webapp/qa/test_source_badges.py).
        # to_have_css retries: the page re-renders its sources while it polls, and a detached badge has no style.
        expect(retracted).to_have_css("background-color", "rgb(161, 18, 26)")
    else:
        expect(retracted).to_have_count(0)


def test_a_retracted_source_its_badges_and_the_consensus_meter(stack: RunningStack, page: Page) -> None:
    _store_papers(stack)
    sign_in(page, stack, "researcher")
    _ask_including_retracted(page)

    sources = page.locator("#sources li.source")
    for pmid, title in TITLES.items():
        expect(sources.filter(has_text=title)).to_have_count(1, timeout=240_000)
        _assert_badges(sources.filter(has_text=title), pmid)
    expect(sources.filter(has_text=TITLES[RETRACTED_PMID])).to_contain_text(
        f"Retraction in PMID 99100009: {RETRACTION_NOTICE}"
    )
    page.locator(".badge-legend summary").click()
    expect(page.locator(".badge-legend")).to_contain_text("Randomised controlled trial")
    shot(page, "source-trust-badges")

    # The consensus comes with the verdicts, once the answer is written and verified.
    expect(page.locator("#question-view")).to_have_attribute("data-status", "done", timeout=600_000)
    consensus = page.locator("#consensus")
    expect(consensus).to_be_visible()
    data = question_json(page, stack)["consensus"]
    assert data["claim"] == "Velnoraxin reduces migraine frequency."
    assert set(TITLES) <= set(data["verdicts"]), "the first retrieved abstracts are read, cited or not"
    # At most ten retrieved, and the dense search's closest candidate when fusion ranked it below them.
    assert data["support"] + data["contradict"] + data["no_evidence"] + data["unclear"] == data["read"]
    assert data["read"] <= 10 + (data["closest_read"] is not None)
    expect(page.locator("#consensus-claim")).to_contain_text(
        "and the one the search found closest to the question" if data["closest_read"] else " abstracts retrieved."
    )
    _assert_bottom_line_first(page, data)
    expect(page.locator("#consensus-claim")).to_contain_text("Velnoraxin reduces migraine frequency.")
    names = {"support": "Support", "contradict": "Contradict", "no_evidence": "No evidence", "unclear": "Unclear"}
    for key, name in names.items():
        expect(consensus.locator(f'details[data-label="{key}"] summary')).to_contain_text(f"{name}: {data[key]}")
    expect(consensus.locator(".consensus-segment")).to_have_count(sum(1 for key in names if data[key]))
    speaking = data["support"] + data["contradict"]
    few = page.locator("#consensus-few")
    if speaking < 5:
        expect(few).to_be_visible()
        expect(few).to_contain_text(re.compile(r"^Fewer than 5 abstracts speak to this: .*too few to call a consensus"))
    else:
        expect(few).to_be_hidden()

    # Each count opens its abstracts, with their badges; the retracted paper is marked there too.
    for pmid, title in TITLES.items():
        key = next(key for key, pmids in data["pmids"].items() if pmid in pmids)
        group = consensus.locator(f'details[data-label="{key}"]')
        if group.get_attribute("open") is None:
            group.locator("summary").click()
        listed = group.locator("li.consensus-source").filter(has_text=title)
        expect(listed).to_be_visible()
        _assert_badges(listed, pmid)
    consensus.scroll_into_view_if_needed()
    shot(page, "source-trust-consensus")

    # A listed abstract opens in the abstract dialog.
    consensus.locator("li.consensus-source").filter(has_text=TITLES[META_PMID]).locator("button").click()
    dialog = page.locator("#abstract-dialog")
    expect(dialog.locator("#abstract-body")).to_have_text(ABSTRACTS[META_PMID])
    expect(dialog.locator("#abstract-meta .design-badge")).to_have_text("Meta-analysis")

    # The retracted paper the bottom line kept out of the vote opens from there too, with its badge.
    dialog.locator(".close").click()
    page.locator("#bottom-line-retracted").get_by_role("button", name=f"PMID {RETRACTED_PMID}").click()
    expect(dialog.locator("#abstract-body")).to_have_text(ABSTRACTS[RETRACTED_PMID])
    expect(dialog.locator("#abstract-meta .retraction-retracted")).to_have_text("Retracted")


def _assert_bottom_line_first(page: Page, consensus: dict[str, Any]) -> None:
    """The bottom line sits above the answer: its title, how many abstracts vote each way (each opening its abstract),
    the retracted paper kept out of the vote, the disagreement only when there is one, and the limits."""
    line = consensus["bottom_line"]
    shown = shown_bottom_line(consensus)
    assert shown is not None, "a consensus made now has a bottom line"
    assert line["retracted_pmids"] == [RETRACTED_PMID], "retrieved among the first ten, read, and kept out"
    assert RETRACTED_PMID not in line["yes_pmids"] + line["no_pmids"]
    section = page.locator("#bottom-line")
    expect(section).to_be_visible()
    expect(page.locator("#bottom-line-title")).to_have_text(line["title"])
    # The script's words are the server's (webapp/qa/bottom_line_display.py), counts and all.
    expect(page.locator("#bottom-line-votes")).to_have_text(
        " ".join(part for part in (shown.votes_sentence, shown.abstaining_sentence) if part)
    )
    for side in ("yes", "no"):
        voters = section.locator(f'li[data-side="{side}"] button')
        expect(voters).to_have_text([f"PMID {pmid}" for pmid in line[f"{side}_pmids"]])
    expect(page.locator("#bottom-line-retracted")).to_have_text(
        f"1 retracted paper did not vote: PMID {RETRACTED_PMID}"
    )
    disagrees = page.locator("#bottom-line-disagrees")
    if line["answer_disagrees"]:
        expect(disagrees).to_have_text(shown.disagreement_sentence("below"))
    else:
        expect(disagrees).to_have_count(0)
    # The answer model's reading of the closest abstract, said in the server's words with that abstract's button,
    # when the shipped rule weighs it; nothing about it otherwise.
    model = page.locator("#bottom-line-model")
    if line["model_reading"]:
        expect(model).to_have_text(f"{shown.model_sentence} PMID {line['model_reading']['pmid']}")
    elif line["model_reading_failed"]:
        expect(model).to_have_text(shown.model_sentence)
    else:
        expect(model).to_have_count(0)
    expect(page.locator("#bottom-line-limits")).to_have_text(LIMITS)
    above, answer = section.bounding_box(), page.locator("#answer").bounding_box()
    assert above is not None
    assert answer is not None
    assert above["y"] + above["height"] <= answer["y"], "the bottom line is read first"
    section.scroll_into_view_if_needed()
    shot(page, "source-trust-bottom-line")
