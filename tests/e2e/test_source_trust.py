"""What a reader weighs a source by, in the browser on the running stack: a retracted paper brought back by the search
setting carries the red Retracted badge with its notice, every source its study-design badge, and a yes/no question's
answer opens with its bottom line (the retracted paper kept out of the vote) and ends with the consensus meter of its
first retrieved abstracts, each count opening its abstracts with their badges.

The papers are written here in PubMed's XML format about a made-up drug, and stored into the running stack the way
`make run` stores its corpus (words indexed at once, vectors left to the background embedder). The question asks for
five abstracts by keyword search, so the five papers, and only they, are what the consensus reads (no dense leg: no
closest candidate read beside them), and each is worded so that the shipped verifier reads it one way with a wide
margin: the page's counts, groups and bottom line are known before the question is asked. One LLM answer in all:
the consensus is made when the answer is verified."""

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
TEEN_PMID, KINETICS_PMID = "99100004", "99100005"
TITLES = {
    RETRACTED_PMID: "Velnoraxin for chronic migraine: an open-label trial.",
    RCT_PMID: "Velnoraxin versus placebo for migraine prevention: a randomised controlled trial.",
    META_PMID: "Velnoraxin and migraine frequency: a meta-analysis of trials.",
    TEEN_PMID: "Velnoraxin in adolescents with migraine: a randomised controlled trial.",
    KINETICS_PMID: "Velnoraxin pharmacokinetics in adults with migraine.",
}
ABSTRACTS = {
    RETRACTED_PMID: "Velnoraxin reduced migraine frequency in 120 adults with chronic migraine. Monthly migraine days "
    "fell by 4.2 with velnoraxin.",
    # "did not lower monthly migraine days": worded as "did not reduce migraine frequency", the suite's answer model
    # wrote an answer that the verifier reads as saying yes under the bottom line's No (a disagreement shown).
    RCT_PMID: "In 480 adults with episodic migraine, velnoraxin did not lower monthly migraine days compared with "
    "placebo. Monthly migraine days fell by 1.9 with velnoraxin and by 1.8 with placebo.",
    META_PMID: "Pooling six randomised trials in 2,310 adults, velnoraxin reduced migraine frequency by 1.5 days per "
    "month compared with placebo.",
    TEEN_PMID: "In 210 adolescents with episodic migraine, velnoraxin reduced migraine frequency compared with "
    "placebo. Monthly migraine days fell by 2.4 with velnoraxin and by 0.9 with placebo.",
    KINETICS_PMID: "We measured plasma concentrations of velnoraxin in 24 adults with migraine after single oral doses "
    "between attacks. Its half-life was 11 hours and food did not change its absorption.",
}
# The shipped verifier's reading of "Velnoraxin reduces migraine frequency." against each (calibrated confidence, its
# Unclear thresholds 0.54 for SUPPORT, 0.72 for CONTRADICT): 0.84, 0.86, 0.87, 0.88 and 0.44 (leaning SUPPORT), the
# last shown Unclear. The retracted paper is read and
# counted on the meter, and kept out of the bottom line's vote.
GROUPS = {
    RETRACTED_PMID: "support",
    RCT_PMID: "contradict",
    META_PMID: "support",
    TEEN_PMID: "support",
    KINETICS_PMID: "unclear",
}
PUBLICATION_TYPES = {
    RETRACTED_PMID: ("Journal Article", "Clinical Trial", "Retracted Publication"),
    RCT_PMID: ("Journal Article", "Randomized Controlled Trial"),
    META_PMID: ("Journal Article", "Meta-Analysis", "Systematic Review"),
    TEEN_PMID: ("Journal Article", "Randomized Controlled Trial"),
    KINETICS_PMID: ("Journal Article", "Clinical Trial"),
}
DESIGNS = {
    RETRACTED_PMID: "Clinical trial",
    RCT_PMID: "Randomised controlled trial",
    META_PMID: "Meta-analysis",
    TEEN_PMID: "Randomised controlled trial",
    KINETICS_PMID: "Clinical trial",
}
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
    """The five papers in PubMed's format, stored into the running stack: keyword search finds them at once."""
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
    # Keyword search alone, five abstracts: the five papers, whatever the background embedder has reached.
    page.get_by_label("Lexical only (BM25)").check()
    page.get_by_label("Abstracts to retrieve").select_option("5")
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
    assert set(data["verdicts"]) == set(TITLES), "the retrieved abstracts are read, cited or not"
    assert {key: set(data["pmids"][key]) for key in data["pmids"] if data["pmids"][key]} == {
        "support": {RETRACTED_PMID, META_PMID, TEEN_PMID},
        "contradict": {RCT_PMID},
        "unclear": {KINETICS_PMID},
    }
    counts = {"support": 3, "contradict": 1, "no_evidence": 0, "unclear": 1}
    assert {key: data[key] for key in counts} == counts
    assert (data["read"], data["closest_read"]) == (5, None)
    expect(page.locator("#consensus-claim")).to_contain_text("the first 5 abstracts retrieved.")
    expect(page.locator("#consensus-claim")).not_to_contain_text("closest to the question")
    _assert_bottom_line_first(page, data)
    expect(page.locator("#consensus-claim")).to_contain_text("Velnoraxin reduces migraine frequency.")
    names = {"support": "Support", "contradict": "Contradict", "no_evidence": "No evidence", "unclear": "Unclear"}
    for key, name in names.items():
        expect(consensus.locator(f'details[data-label="{key}"] summary')).to_contain_text(f"{name}: {counts[key]}")
    expect(consensus.locator(".consensus-segment")).to_have_count(3)  # no segment for a count of none
    # Four speak to it (three support, one contradicts): fewer than five.
    few = page.locator("#consensus-few")
    expect(few).to_be_visible()
    expect(few).to_contain_text(re.compile(r"^Fewer than 5 abstracts speak to this: .*too few to call a consensus"))

    # Each count opens its abstracts, with their badges; the retracted paper is marked there too.
    for pmid, title in TITLES.items():
        group = consensus.locator(f'details[data-label="{GROUPS[pmid]}"]')
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
    # The retracted paper kept out; the Unclear one abstains.
    assert (set(line["yes_pmids"]), line["no_pmids"]) == ({META_PMID, TEEN_PMID}, [RCT_PMID])
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
    # The answer is asked to open with the bottom line's words, and does: no disagreement to show.
    assert line["answer_disagrees"] is False
    expect(page.locator("#bottom-line-disagrees")).to_have_count(0)
    # The answer model's reading of the closest abstract (the shipped rule weighs it, and the session's model server
    # answers), said in the server's words with that abstract's button. All five are equally relevant to a keyword
    # search, so the closest is the first ranked that votes: never the retracted paper.
    assert not line["model_reading_failed"]
    reading = line["model_reading"]
    assert reading is not None
    assert reading["pmid"] in set(TITLES) - {RETRACTED_PMID}
    expect(page.locator("#bottom-line-model")).to_have_text(f"{shown.model_sentence} PMID {reading['pmid']}")
    expect(page.locator("#bottom-line-limits")).to_have_text(LIMITS)
    above, answer = section.bounding_box(), page.locator("#answer").bounding_box()
    assert above is not None
    assert answer is not None
    assert above["y"] + above["height"] <= answer["y"], "the bottom line is read first"
    section.scroll_into_view_if_needed()
    shot(page, "source-trust-bottom-line")
