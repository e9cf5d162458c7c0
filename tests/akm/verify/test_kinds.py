"""The verifier against each kind of false support, with controls that must stay supported.

Every pair here was written for these tests. For each kind, the "caught" pairs share most of
their words with the passage but state another relation, so word coverage alone would support
them; the controls state the same relation (reworded only within what the rules allow, or
quoted) and must stay supported, so the rules cannot pass by refusing everything.
"""

from __future__ import annotations

import pytest

from akm.verify import LexicalClaimVerifier

VERIFIER = LexicalClaimVerifier()
Pair = tuple[str, str]


def _assert_caught(claim: str, passage: str, checks: set[str]) -> None:
    judgement = VERIFIER.verify(claim, passage)
    assert judgement.label != "supported", judgement.note
    assert judgement.decided_by in checks, (judgement.decided_by, judgement.note)
    assert judgement.support_score is not None and judgement.support_score < VERIFIER.support_threshold
    assert set(judgement.failed_checks) & checks, judgement.failed_checks


def _assert_supported(claim: str, passage: str) -> None:
    judgement = VERIFIER.verify(claim, passage)
    assert judgement.label == "supported", (judgement.decided_by, judgement.note)
    assert judgement.failed_checks == ()
    assert judgement.support_score is not None and judgement.support_score >= VERIFIER.support_threshold


DIRECTION_CAUGHT: list[Pair] = [
    (
        "Statin therapy decreases the risk of new-onset diabetes.",
        "Statin therapy decreased LDL cholesterol levels but increased the risk of new-onset diabetes.",
    ),
    (
        "Exercise training increases resting heart rate in older adults.",
        "Exercise training increased aerobic capacity and decreased resting heart rate in older adults.",
    ),
    (
        "Patients on the low-salt diet had a faster decline in kidney function.",
        "Patients on the low-salt diet had a slower decline in kidney function and a faster rise in potassium.",
    ),
    (
        "The new valve design promotes thrombus formation.",
        "The new valve design inhibited thrombus formation and promoted laminar flow in bench tests.",
    ),
    (
        "Sleep deprivation weakens appetite control in teenagers.",
        "Sleep deprivation weakened concentration and strengthened appetite control in teenagers.",
    ),
]
DIRECTION_CONTROLS: list[Pair] = [
    (
        "Statin therapy increases the risk of new-onset diabetes.",
        "Statin therapy decreased LDL cholesterol levels but increased the risk of new-onset diabetes.",
    ),
    (
        "Exercise training decreases resting heart rate in older adults.",
        "Exercise training increased aerobic capacity and decreased resting heart rate in older adults.",
    ),
    (
        "Patients on the low-salt diet had a slower decline in kidney function.",
        "Patients on the low-salt diet had a slower decline in kidney function and a faster rise in potassium.",
    ),
    (
        "Inhibiting the kinase increases survival of treated mice.",
        "Inhibition of the kinase increased the survival of treated mice.",
    ),
]


@pytest.mark.parametrize(("claim", "passage"), DIRECTION_CAUGHT)
def test_direction_of_the_same_argument_must_agree(claim: str, passage: str) -> None:
    _assert_caught(claim, passage, {"direction", "polarity"})


@pytest.mark.parametrize(("claim", "passage"), DIRECTION_CONTROLS)
def test_direction_controls_stay_supported(claim: str, passage: str) -> None:
    _assert_supported(claim, passage)


ROLES_CAUGHT: list[Pair] = [
    (
        "Mortality was higher in smokers than in non-smokers.",
        "In this unusual cohort, mortality was higher in non-smokers than in smokers.",
    ),
    (
        "Girls scored higher than boys on the reading test.",
        "On the reading test, boys scored higher than girls.",
    ),
    (
        "The nasal vaccine was more effective in adults than in children.",
        "The nasal vaccine was more effective in children than in adults.",
    ),
    (
        "The rate of falls among nursing home residents is three times that of community dwellers.",
        "Falls were more than three times as frequent among community dwellers than among nursing home residents.",
    ),
    (
        "Interleukin-10 suppresses interferon-gamma production.",
        "Interferon-gamma suppresses interleukin-10 production in activated macrophages.",
    ),
    (
        "The rebels defeated the government army at Kessel.",
        "The government army defeated the rebels at Kessel.",
    ),
    (
        "Men are more likely than women to develop gout.",
        "Women are more likely than men to develop gout.",
    ),
]
ROLES_CONTROLS: list[Pair] = [
    (
        "Mortality was higher in non-smokers than in smokers.",
        "In this unusual cohort, mortality was higher in non-smokers than in smokers.",
    ),
    (
        "The nasal vaccine was more effective in children than in adults.",
        "The nasal vaccine was more effective in children than in adults.",
    ),
    (
        "Interferon-gamma suppresses the production of interleukin-10.",
        "Interferon-gamma suppresses interleukin-10 production in activated macrophages.",
    ),
    (
        "The government army defeated the rebels.",
        "The government army defeated the rebels at Kessel.",
    ),
    (
        "Women are more likely than men to develop gout.",
        "In the survey, women were more likely than men to develop gout.",
    ),
]


@pytest.mark.parametrize(("claim", "passage"), ROLES_CAUGHT)
def test_swapped_roles_are_not_support(claim: str, passage: str) -> None:
    _assert_caught(claim, passage, {"roles"})


@pytest.mark.parametrize(("claim", "passage"), ROLES_CONTROLS)
def test_roles_controls_stay_supported(claim: str, passage: str) -> None:
    _assert_supported(claim, passage)


ATTRIBUTION_CAUGHT: list[Pair] = [
    (
        "Tap water in the region contains dangerous levels of lead.",
        "Critics say that tap water in the region contains dangerous levels of lead, but the utility disputes this.",
    ),
    (
        "The bridge collapse was caused by corroded cables.",
        "It was claimed at the inquiry that the bridge collapse was caused by corroded cables.",
    ),
    (
        "Green tea extract prevents liver damage.",
        "Green tea extract is thought to prevent liver damage.",
    ),
    (
        "The merger will cut prices for consumers.",
        "Some argue the merger will cut prices for consumers.",
    ),
    (
        "Low-dose lithium slows cognitive decline.",
        "Low-dose lithium was proposed to slow cognitive decline in a review of older trials.",
    ),
    (
        "Coastal wetlands store more carbon than forests.",
        "Another analysis claimed that coastal wetlands store more carbon than forests.",
    ),
]
ATTRIBUTION_CONTROLS: list[Pair] = [
    (
        "It was claimed at the inquiry that the bridge collapse was caused by corroded cables.",
        "It was claimed at the inquiry that the bridge collapse was caused by corroded cables.",
    ),
    (
        "Green tea extract may prevent liver damage.",
        "Green tea extract may prevent liver damage in rats.",
    ),
    (
        "Aspirin lowers the risk of a second heart attack.",
        "Aspirin lowers the risk of a second heart attack, but it may cause stomach bleeding.",
    ),
    (
        "Tap water in the region contains dangerous levels of lead.",
        "The survey found that tap water in the region contains dangerous levels of lead.",
    ),
]


@pytest.mark.parametrize(("claim", "passage"), ATTRIBUTION_CAUGHT)
def test_reported_or_hedged_statements_do_not_support_a_flat_claim(claim: str, passage: str) -> None:
    _assert_caught(claim, passage, {"attribution", "hedge"})


@pytest.mark.parametrize(("claim", "passage"), ATTRIBUTION_CONTROLS)
def test_attribution_controls_stay_supported(claim: str, passage: str) -> None:
    _assert_supported(claim, passage)


SAME_WORDS_CAUGHT: list[Pair] = [
    (
        "Ocean acidification is widespread.",
        "Coral bleaching is one consequence of widespread ocean acidification.",
    ),
    (
        "Rural poverty is persistent.",
        "Persistent rural poverty drives migration to the cities.",
    ),
    (
        "The drug has a negligible effect on blood pressure.",
        "The effect of the drug on blood pressure was measured at every visit.",
    ),
    (
        "Antibiotics are only effective against bacterial infections.",
        "Antibiotics are effective against bacterial infections and some parasites.",
    ),
    (
        "Forecast models predict too much rainfall in the tropics.",
        "Forecast models predict rainfall in the tropics from sea surface temperatures.",
    ),
    (
        "The company was founded by John Smith in 1990.",
        "The company was founded in 1990; John Smith joined it in 1995.",
    ),
]
SAME_WORDS_CONTROLS: list[Pair] = [
    (
        "Ocean acidification is widespread.",
        "Ocean acidification is widespread in tropical waters.",
    ),
    (
        "Rural poverty is persistent.",
        "Rural poverty remains persistent across the region.",
    ),
    (
        "Antibiotics are effective against bacterial infections.",
        "Antibiotics are effective against bacterial infections and some parasites.",
    ),
    (
        "Forecast models predict rainfall in the tropics.",
        "Forecast models predict rainfall in the tropics from sea surface temperatures.",
    ),
    (
        "The company was founded by John Smith in 1990.",
        "John Smith founded the company in 1990.",
    ),
]


@pytest.mark.parametrize(("claim", "passage"), SAME_WORDS_CAUGHT)
def test_same_words_in_another_relation_are_not_support(claim: str, passage: str) -> None:
    _assert_caught(claim, passage, {"modifier", "degree", "predicate"})


@pytest.mark.parametrize(("claim", "passage"), SAME_WORDS_CONTROLS)
def test_same_words_controls_stay_supported(claim: str, passage: str) -> None:
    _assert_supported(claim, passage)


LIST_PASSAGE = "The committee members are: Anna Berg, chair; Tom Keller, treasurer; Lisa Moreau, secretary."
HEADS_PASSAGE = "Department heads: Ravi Shah, oncology; Elena Petrov, cardiology; Marc Dubois, neurology."
SPEAKERS_PASSAGE = "Speakers: Ines Alvarez, keynote; Karl Weber, panel; Yuki Tanaka, workshop."
LIST_CAUGHT: list[Pair] = [
    ("Tom Keller is the chair of the committee.", LIST_PASSAGE),
    ("Elena Petrov heads the oncology department.", HEADS_PASSAGE),
    ("Karl Weber is the keynote speaker.", SPEAKERS_PASSAGE),
    ("Lisa Moreau is the treasurer.", LIST_PASSAGE),
]
LIST_CONTROLS: list[Pair] = [
    ("Tom Keller is the treasurer of the committee.", LIST_PASSAGE),
    ("Elena Petrov heads cardiology.", HEADS_PASSAGE),
    ("Ines Alvarez is the keynote speaker.", SPEAKERS_PASSAGE),
    (LIST_PASSAGE, LIST_PASSAGE),
]


@pytest.mark.parametrize(("claim", "passage"), LIST_CAUGHT)
def test_another_list_entry_is_not_support(claim: str, passage: str) -> None:
    _assert_caught(claim, passage, {"list"})


@pytest.mark.parametrize(("claim", "passage"), LIST_CONTROLS)
def test_list_controls_stay_supported(claim: str, passage: str) -> None:
    _assert_supported(claim, passage)


QUOTED_PASSAGE = (
    "However, statin therapy increased the risk of new-onset diabetes in women. "
    "It also lowered LDL cholesterol by a third, whereas blood pressure did not change. "
    "Critics say the trial was too short. "
    "Mortality was higher in non-smokers than in smokers, which surprised the authors."
)


@pytest.mark.parametrize(
    "claim",
    [
        "However, statin therapy increased the risk of new-onset diabetes in women.",
        "Statin therapy increased the risk of new-onset diabetes in women.",
        "Statin therapy also lowered LDL cholesterol by a third.",
        "It also lowered LDL cholesterol by a third, whereas blood pressure did not change.",
        "Blood pressure did not change.",
        "Critics say the trial was too short.",
        "Mortality was higher in non-smokers than in smokers.",
        "Mortality was higher in non-smokers than in smokers, which surprised the authors.",
    ],
    ids=[
        "whole-sentence",
        "leading-however-dropped",
        "it-named",
        "sentence-with-clause",
        "one-clause",
        "attributed-sentence-with-its-frame",
        "comparison-clause",
        "comparison-sentence",
    ],
)
def test_verbatim_and_near_verbatim_quotes_stay_supported(claim: str) -> None:
    _assert_supported(claim, QUOTED_PASSAGE)
