"""Yes/no questions rewritten into the claims a "yes" would make, on real BioASQ and PubMedQA questions."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from verifier.claim_rewriting import (
    is_yes_no_question,
    question_to_claim,
    third_person,
    title_question_claim,
    yes_no_claim,
)
from verifier.extra_training import bioasq_yes_no_questions


@pytest.mark.parametrize(
    ("question", "claim"),
    [
        # BioASQ golden sets 7B-11B, as written there
        ("Is Selinexor effective for multiple myeloma?", "Selinexor is effective for multiple myeloma."),
        ("Is ADP-ribosylation a PTM?", "ADP-ribosylation is a PTM."),
        (
            "Is adenosine signaling prognostic for cancer outcome?",
            "Adenosine signaling is prognostic for cancer outcome.",
        ),
        ("Do nematodes contain a CTCF gene?", "Nematodes contain a CTCF gene."),
        ("Does BNN27 promote memory loss?", "BNN27 promotes memory loss."),
        ("Does aCGRP have amyloidogenic properties?", "aCGRP has amyloidogenic properties."),
        ("Can mitochondria pass through membrane nanotubes?", "Mitochondria can pass through membrane nanotubes."),
        ("Has the drug Afrezza been approved by the FDA?", "The drug Afrezza has been approved by the FDA."),
        ("Is there a role for TFII-I in megakaryopoiesis?", "There is a role for TFII-I in megakaryopoiesis."),
        (
            "Are whole-genome duplications more divergent than small-scale duplications in yeast?",
            "Whole-genome duplications are more divergent than small-scale duplications in yeast.",
        ),
        (
            "Is covid-19 induced anosmia caused by disruption of nuclear architecture?",
            "covid-19 induced anosmia is caused by disruption of nuclear architecture.",
        ),
        (
            "Should perampanel be used for amyotrophic lateral sclerosis?",
            "Perampanel should be used for amyotrophic lateral sclerosis.",
        ),
        (
            "Based on clinical trial data, can pioglitazone delay cognitive impairment for people at risk for "
            "Alzheimer's disease?",
            "Based on clinical trial data, pioglitazone can delay cognitive impairment for people at risk for "
            "Alzheimer's disease.",
        ),
        (
            "Is the PINES framework being used for the prediction of coding variants?",
            "The PINES framework is being used for the prediction of coding variants.",
        ),
        (
            "AhR ligands are attractive drug targets for pharmaceutical development due to their induction of "
            "Cyp1a1, yes or no?",
            "AhR ligands are attractive drug targets for pharmaceutical development due to their induction of Cyp1a1.",
        ),
        # PubMedQA PQA-L
        ("Double reading of barium enemas: is it necessary?", "Double reading of barium enemas is necessary."),
        (
            "Appendectomy timing: Will delayed surgery increase the complications?",
            "Delayed surgery will increase the complications.",
        ),
        (
            "Does ibuprofen increase perioperative blood loss during hip arthroplasty?",
            "Ibuprofen increases perioperative blood loss during hip arthroplasty.",
        ),
        (
            "Do socioeconomic differences in mortality persist after retirement?",
            "Socioeconomic differences in mortality persist after retirement.",
        ),
    ],
)
def test_a_real_yes_no_question_becomes_its_claim(question: str, claim: str) -> None:
    assert question_to_claim(question) == claim


@pytest.mark.parametrize(
    "question",
    [
        "What is the mode of action of everolimus?",
        "Cerebromediastinal tuberculosis in a child with a probable Say-Barber-Miller syndrome: a causative link?",
        "Is it?",
        "",
    ],
)
def test_a_question_the_rules_cannot_read_gives_no_claim(question: str) -> None:
    assert question_to_claim(question) is None


def test_yes_no_questions_are_detected_by_their_form() -> None:
    assert is_yes_no_question("Is Selinexor effective for multiple myeloma?")
    assert is_yes_no_question("Do nematodes contain a CTCF gene?")
    assert not is_yes_no_question("What is the mode of action of everolimus?")
    # A typed question often lacks its question mark; an auxiliary first still asks yes or no.
    assert is_yes_no_question("Is Selinexor effective")
    assert not is_yes_no_question("")


@pytest.mark.parametrize(
    "question",
    [  # BioASQ golden sets 7B-11B, yes/no questions as written there
        "Is Selinexor effective for multiple myeloma?",
        "Has the drug Afrezza been approved by the FDA?",
        "Should perampanel be used for amyotrophic lateral sclerosis?",
        "Based on clinical trial data, can pioglitazone delay cognitive impairment for people at risk for "
        "Alzheimer's disease?",
        "In twin-twin transfusion syndrome, are the twins identical?",
        "Tocilizumab is an anti-TNF antibody, yes or no?",
        "Anaplasma phagocytophilum is an obligate gram-negative, intracellular bacterium, yes  or no",
        "Is periampullary carcinoma (PAC) a relatively rare genitourinary malignancy",
        # PubMedQA PQA-L
        "Double reading of barium enemas: is it necessary?",
    ],
)
def test_a_real_yes_no_question_is_detected(question: str) -> None:
    assert is_yes_no_question(question)


@pytest.mark.parametrize(
    "question",
    [  # BioASQ golden sets 7B-11B: factoid, list and summary questions as written there
        "What does PROTACs stand for?",
        "How many nucleotides long is the HOTAIR CNE?",
        "Which gene is mutated in the classic Bartter's syndrome?",
        "List the proteins defining the triple negative breast cancer.",
        "Which methods have been developed for extracting sequence variants from the literature?",
        "Describe the syndrome that is caused by biallelic variants in HPDL",
        "What is the mechanism of action of vosoritide?",
        "Can you summarize Myasthenia Gravis?",
    ],
)
def test_a_real_factoid_list_or_summary_question_is_not_yes_no(question: str) -> None:
    assert not is_yes_no_question(question)


def test_nearly_every_bioasq_question_is_told_yes_no_or_not_by_its_form() -> None:
    seen: dict[str, dict[str, str]] = {}
    for path in sorted((settings.VERIMED.paths.data_dir / "bioasq" / "golden").glob("*_golden.json")):
        for question in json.loads(path.read_text(encoding="utf-8"))["questions"]:
            seen.setdefault(question["id"], question)
    yes_no = [question["body"] for question in seen.values() if question["type"] == "yesno"]
    others = [question["body"] for question in seen.values() if question["type"] != "yesno"]

    assert (len(yes_no), len(others)) == (611, 1674)
    assert sum(map(is_yes_no_question, yes_no)) == 608  # missed: two plain statements and one with a Greek Alpha
    # Taken for yes/no: "Is X A or B?" choices (8), and summary or list questions asked in yes/no form (8).
    assert sum(map(is_yes_no_question, others)) == 16


def test_the_claim_of_a_question_is_made_only_for_yes_no_questions() -> None:
    assert yes_no_claim("Does BNN27 promote memory loss?") == "BNN27 promotes memory loss."
    assert yes_no_claim("Is Erythropoietin effective for neuroprotection of Preterm Infants.") == (
        "Erythropoietin is effective for neuroprotection of Preterm Infants."
    )
    assert yes_no_claim("What is the mechanism of action of vosoritide?") is None
    assert yes_no_claim("In twin-twin transfusion syndrome, are the twins identical?") is None  # rules cannot read it


@pytest.mark.parametrize(
    ("verb", "form"),
    [("reduce", "reduces"), ("cross", "crosses"), ("modify", "modifies"), ("have", "has"), ("play", "plays")],
)
def test_the_third_person_form(verb: str, form: str) -> None:
    assert third_person(verb) == form


def test_nearly_every_bioasq_yes_no_question_gets_a_claim_that_reads_as_a_statement() -> None:
    questions = bioasq_yes_no_questions(settings.VERIMED.paths.data_dir)
    claims = [question_to_claim(question["body"]) for question in questions]
    made = [claim for claim in claims if claim is not None]

    assert len(questions) == 611
    assert len(made) / len(questions) >= 0.95
    assert all(claim.endswith(".") and "?" not in claim for claim in made)
    # The auxiliary moved: a claim never starts with the question's auxiliary (except "There is/are").
    assert sum(claim.split()[0].lower() in {"is", "are", "does", "do", "can"} for claim in made) == 0


def test_pubmedqa_questions_mostly_rewrite_too() -> None:
    items = json.loads((settings.VERIMED.paths.data_dir / "pubmedqa" / "ori_pqal.json").read_text())
    questions = [item["QUESTION"] for item in items.values() if item["final_decision"] != "maybe"]

    assert sum(question_to_claim(question) is not None for question in questions) / len(questions) >= 0.85


@pytest.mark.parametrize(
    ("question", "claim"),
    [
        (
            "Inhibin: a new circulating marker of hydatidiform mole?",
            "Inhibin is a new circulating marker of hydatidiform mole.",
        ),
        ("Rotator cuff tear--an occupational disease?", "Rotator cuff tear is an occupational disease."),
        ("Stage I lung carcinoma: really an early stage?", "Stage I lung carcinoma is really an early stage."),
        (
            "Devascularization in portal hypertension: safe and effective?",
            "Devascularization in portal hypertension is safe and effective.",
        ),
    ],
)
def test_a_title_asked_as_a_question_is_a_yes_no_claim(question, claim):
    assert is_yes_no_question(question)
    assert yes_no_claim(question) == claim


@pytest.mark.parametrize(
    "question",
    [
        "Starting insulin in type 2 diabetes: continue oral hypoglycemic agents?",  # a verb phrase, not a predicate
        "Statins: which patients benefit?",  # an open question after the colon
        "Inhibin: a new circulating marker of hydatidiform mole",  # a title, not asked
    ],
)
def test_other_titles_are_not_read_as_claims(question):
    assert title_question_claim(question) is None
    assert yes_no_claim(question) is None


@pytest.mark.parametrize(
    "question",
    [  # PQA-L titles asked as questions, outside its test split, as written there
        "Storage of vaccines in the community: weak link in the cold chain?",
        "Malnutrition, a new inducer for arterial calcification in hemodialysis patients?",
        "Immunohistochemical assessment of steroid hormone receptors in tissues of the anal canal. Implications for "
        "anal incontinence?",
        "Autoerotic asphyxiation: secret pleasure--lethal outcome?",
    ],
)
def test_a_title_asked_as_a_question_is_yes_no_though_no_claim_can_be_read(question: str) -> None:
    assert is_yes_no_question(question)
    assert yes_no_claim(question) is None


@pytest.mark.parametrize(
    "question",
    ["Migraine in children: which treatment works best?", "Treatment options for migraine?", "Migraine: a review."],
)
def test_a_title_with_a_question_word_or_without_its_form_is_not(question: str) -> None:
    assert not is_yes_no_question(question)
