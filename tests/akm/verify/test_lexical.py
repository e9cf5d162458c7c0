"""LexicalClaimVerifier: expected labels, the deciding check, and exact spans."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from akm.claims import TextSpan
from akm.verify import SUPPORT_LABELS, LexicalClaimVerifier, SupportLabel
from akm.verify.lexical import check_joined
from akm.verify.structure import WindowIndex, replaced_word_finding
from akm.verify.wording import is_content_in, words

PASSAGE = (
    "The cache is enabled by default. "
    "Median latency fell to 3.5 ms after the upgrade in March 2024. "
    "IL-6 levels increased in treated mice. "
    "Each patient received 500 mg of metformin daily. "
    "Mortality was reduced by 12% in the treated group. "
    "Retention is set to 30 days for audit logs."
)

CASES: list[tuple[str, str, SupportLabel, str]] = [
    # (id, claim, expected label, deciding check)
    ("exact-copy", "The cache is enabled by default.", "supported", "all-checks"),
    ("citation-marker-ignored", "The cache is enabled by default [E1].", "supported", "all-checks"),
    ("inflection-plural", "Caches are enabled by default.", "supported", "all-checks"),
    ("inflection-verb", "IL-6 level increases in treated mice.", "supported", "all-checks"),
    ("partial-sentence", "Median latency fell to 3.5 ms.", "supported", "all-checks"),
    ("unit-converted", "Each patient received 0.5 g of metformin daily.", "supported", "all-checks"),
    ("changed-number", "Median latency fell to 4.5 ms after the upgrade.", "contradicted", "quantity"),
    ("changed-percent", "Mortality was reduced by 15% in the treated group.", "contradicted", "quantity"),
    (
        "changed-year",
        "Median latency fell to 3.5 ms after the upgrade in March 2023.",
        "contradicted",
        "quantity",
    ),
    (
        "changed-month",
        "Median latency fell to 3.5 ms after the upgrade in April 2024.",
        "contradicted",
        "quantity",
    ),
    ("number-missing", "The cache is enabled by default for 7 days.", "insufficient", "quantity"),
    ("unit-same-dimension", "Each patient received 500 g of metformin daily.", "contradicted", "quantity"),
    (
        "unit-other-dimension",
        "Mortality was reduced by 12 percentage points in the treated group.",
        "insufficient",
        "quantity",
    ),
    ("negated-claim", "The cache is not enabled by default.", "contradicted", "polarity"),
    ("direction-flip", "IL-6 levels decreased in treated mice.", "contradicted", "polarity"),
    (
        "direction-flip-reduced",
        "Mortality was increased by 12% in the treated group.",
        "contradicted",
        "polarity",
    ),
    ("antonym", "The cache is disabled by default.", "contradicted", "polarity"),
    ("missing-entity", "IL-8 levels increased in treated mice.", "insufficient", "entity"),
    (
        "missing-name",
        "Metformin from Acme was given daily at 500 mg to each patient.",
        "insufficient",
        "entity",
    ),
    ("partial-coverage", "IL-6 levels increased in treated rats and dogs.", "insufficient", "coverage"),
    ("unrelated", "The moon orbits the earth.", "insufficient", "coverage"),
    ("no-content", "It is.", "insufficient", "claim"),
]


@pytest.mark.parametrize(
    ("claim", "label", "decided_by"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_verify_labels(claim: str, label: SupportLabel, decided_by: str) -> None:
    judgement = LexicalClaimVerifier().verify(claim, PASSAGE)
    assert (judgement.label, judgement.decided_by) == (label, decided_by), judgement.note


@pytest.mark.parametrize(
    ("claim", "expected_span_text"),
    [
        ("The cache is enabled by default.", "The cache is enabled by default."),
        ("IL-6 levels increased in treated mice.", "IL-6 levels increased in treated mice."),
        ("Retention is set to 30 days for audit logs.", "Retention is set to 30 days for audit logs."),
    ],
    ids=["first-sentence", "middle-sentence", "last-sentence"],
)
def test_span_is_the_aligned_sentence(claim: str, expected_span_text: str) -> None:
    judgement = LexicalClaimVerifier().verify(claim, PASSAGE)
    assert judgement.span is not None
    start, end = judgement.span
    assert PASSAGE[start:end] == expected_span_text
    assert (start, end) == (
        PASSAGE.index(expected_span_text),
        PASSAGE.index(expected_span_text) + len(expected_span_text),
    )


def test_span_covers_two_sentences_when_the_claim_spans_them() -> None:
    passage = "The index is rebuilt nightly. It covers every ticket in the archive. Nothing else."
    judgement = LexicalClaimVerifier().verify(
        "The index is rebuilt nightly and covers every ticket.", passage
    )
    assert judgement.label == "supported"
    assert judgement.span == (0, 68)
    assert judgement.scores == {"coverage": 1.0, "window_sentences": 2.0}


def test_one_sentence_windows_only_do_not_join_sentences() -> None:
    passage = "The index is rebuilt nightly. It covers every ticket in the archive."
    verifier = LexicalClaimVerifier(max_window_sentences=1)
    assert (
        verifier.verify("The index is rebuilt nightly and covers every ticket.", passage).label
        == "insufficient"
    )


@pytest.mark.parametrize(
    ("claim", "passage", "label"),
    [
        ("Aspirin reduces the risk of stroke.", "Aspirin may reduce the risk of stroke.", "insufficient"),
        ("Aspirin may reduce the risk of stroke.", "Aspirin reduces the risk of stroke.", "supported"),
        ("Aspirin may reduce the risk of stroke.", "Aspirin may reduce the risk of stroke.", "supported"),
    ],
    ids=["hedged-passage-flat-claim", "flat-passage-hedged-claim", "both-hedged"],
)
def test_hedges(claim: str, passage: str, label: SupportLabel) -> None:
    assert LexicalClaimVerifier().verify(claim, passage).label == label


@pytest.mark.parametrize(
    ("claim", "passage", "label"),
    [
        (
            "Pioglitazone is not associated with an increased risk of prostate cancer.",
            "There was no association with 8 of the 10 cancers; pioglitazone was associated with increased "
            "risk of prostate cancer.",
            "insufficient",
        ),
        (
            "Drug X does not increase mortality.",
            "Drug X does not increase mortality in adults.",
            "supported",
        ),
        (
            "Drug X increases mortality.",
            "Drug X did not increase mortality in the trial.",
            "contradicted",
        ),
        (
            "Lack of FGF21 in mice leads to plaque formation.",
            "FGF21 deficiency causes plaque formation in mice.",
            "insufficient",
        ),
        (
            "UCP1-dependent thermogenesis involves Ca2+ cycling.",
            "A UCP1-independent thermogenesis involves ATP-dependent Ca2+ cycling.",
            "insufficient",
        ),
        (
            "Surgery is not only safe but effective.",
            "Surgery is safe and effective.",
            "supported",
        ),
        (
            # "possible" says nothing of what is negated: the charge is.
            "A charge of £15 is not possible.",
            "If the annual fee is paid after 15 August 2025, a £15 late registration charge applies.",
            "contradicted",
        ),
        (
            "Late entry is not possible.",
            "Doors close at 7pm. Late entry is not possible.",
            "supported",
        ),
    ],
    ids=[
        "negation-about-something-else",
        "both-negated",
        "passage-negates",
        "privative-noun-is-not-negation",
        "hyphenated-compound-must-match-whole",
        "not-only-is-not-negation",
        "negated-hedge-negates-the-words-before",
        "negated-hedge-both-negated",
    ],
)
def test_negation_scope(claim: str, passage: str, label: SupportLabel) -> None:
    judgement = LexicalClaimVerifier().verify(claim, passage)
    assert judgement.label == label, judgement.note


SETTINGS_TABLE = (
    "orbit reads its settings from its configuration file.\n\n"
    "| setting | environment variable | default | meaning |\n"
    "|---|---|---|---|\n"
    "| `bucket` | `ORBIT_BUCKET` | none | the remote bucket to sync with |\n"
    "| `parallel` | `ORBIT_PARALLEL` | 4 | how many files are uploaded at the same time |\n"
    "| `ignore` | `ORBIT_IGNORE` | `.git` | patterns that are never synced |\n"
    "| `log_level` | `ORBIT_LOG` | `info` | how much orbit writes to its log |\n"
)


@pytest.mark.parametrize(
    ("claim", "label"),
    [
        ("| parallel | ORBIT_PARALLEL | 4 | how many files are uploaded at the same time |", "supported"),
        ("ORBIT_PARALLEL sets how many files are uploaded at the same time.", "supported"),
        ("ORBIT_LOG sets how much orbit writes to its log.", "supported"),
        ("ORBIT_PARALLEL sets how many files are uploaded, 8 by default.", "insufficient"),
    ],
    ids=["quoted-row", "paraphrased-row", "row-after-a-negated-one", "changed-cell"],
)
def test_a_table_row_is_a_window_of_its_own(claim: str, label: SupportLabel) -> None:
    # Another row's "none" or "never" is no negation of this row: each row is one window, and a
    # negation's scope ends at a cell boundary.
    judgement = LexicalClaimVerifier().verify(claim, SETTINGS_TABLE)
    assert judgement.label == label, judgement.note
    row = judgement.span and SETTINGS_TABLE[judgement.span[0] : judgement.span[1]]
    assert row and row.startswith("| `") and row.endswith("|") and "\n" not in row


def test_empty_passage_is_insufficient_without_span() -> None:
    judgement = LexicalClaimVerifier().verify("The cache is enabled.", "")
    assert (judgement.label, judgement.span, judgement.decided_by) == ("insufficient", None, "alignment")


def test_contradiction_needs_the_rest_of_the_claim_to_align() -> None:
    # Same quantity and unit but little else in common: a gap, not a contradiction.
    judgement = LexicalClaimVerifier().verify("Shipping to Norway takes 4 days by boat.", PASSAGE)
    assert judgement.label == "insufficient"


@pytest.mark.parametrize(
    ("passage", "label"),
    [
        (
            "Turn a hot tap on fully: the boiler needs a hot water flow of at least 2 litres/min to start"
            " heating water.",
            "insufficient",
        ),
        (
            "The hot water flow rate falls to 2 litres/min when the boiler starts heating water.",
            "contradicted",
        ),
    ],
    ids=["at-least-bounds-a-number", "falls-says-a-direction"],
)
def test_at_least_bounds_a_number_and_says_no_direction(passage: str, label: SupportLabel) -> None:
    # A table row's "35°C rise" next to a unit is not contradicted by another passage's "at
    # least 2 litres/min", which bounds a number; "falls to" does say the opposite direction.
    claim = "| Hot water flow rate (at 35°C rise) | 11.5 litres/min | 14.3 litres/min |"
    judgement = LexicalClaimVerifier().verify(claim, passage)
    assert judgement.label == label, judgement.note


@pytest.mark.parametrize(
    ("claim", "passage", "label", "decided_by"),
    [
        (
            "Drug A is more effective than placebo for pain.",
            "Drug A and placebo are effective for pain.",
            "insufficient",
            "comparison",
        ),
        (
            "Drug A is more effective than placebo for pain.",
            "Drug A was more effective than placebo for pain.",
            "supported",
            "all-checks",
        ),
        (
            "Home monitoring is accurate for diagnosing hypertension.",
            "We aimed to determine whether home monitoring is accurate for diagnosing hypertension.",
            "insufficient",
            "assertion",
        ),
        (
            "Home blood pressure monitoring is inaccurate for hypertension.",
            "Studies compared home blood pressure monitoring for hypertension.",
            "insufficient",
            "polarity",
        ),
        (
            "DUSP4 downregulation deactivates the Ras-ERK pathway.",
            "DUSP4 downregulation activates the Ras-ERK pathway.",
            "contradicted",
            "polarity",
        ),
        (
            "Risedronate increases the risk of vertebral fractures.",
            "OBJECTIVE To test whether risedronate reduces the risk of vertebral fractures.",
            "insufficient",
            "polarity",
        ),
    ],
    ids=[
        "comparison-absent",
        "comparison-present",
        "aim-not-finding",
        "negated-adjective-absent",
        "de-prefix",
        "aim-cannot-contradict",
    ],
)
def test_assertion_and_comparison_checks(
    claim: str, passage: str, label: SupportLabel, decided_by: str
) -> None:
    judgement = LexicalClaimVerifier().verify(claim, passage)
    assert (judgement.label, judgement.decided_by) == (label, decided_by), judgement.note


@pytest.mark.parametrize(
    "claim",
    [
        "Allogeneic mechanical circulatory support is not as effective as autologous mechanical circulatory support.",
        "Human embryonic stem cells give rise to cell types from the outer germ layer, but not the other two layers.",
        "The appearance of beige cells primarily occurs in visceral fat, not subcutaneous fat.",
        "There is no known interaction between Pioneer factor OCT3/4 and major chromatin remodeling factors.",
        "1 in 5 million in UK have abnormal PrP positivity.",
        "Ca2+ cycling is a UCP1-dependent thermogenic mechanism.",
        "The cache is enabled by default [E1].",
    ],
    ids=["not-as-as", "but-not", "comma-not", "no-known", "numbers", "identifiers", "citation-marker"],
)
def test_a_claim_supports_itself(claim: str) -> None:
    judgement = LexicalClaimVerifier().verify(claim, claim)
    assert (judgement.label, judgement.span) == ("supported", (0, len(claim))), judgement.note


TEXT = st.lists(
    st.sampled_from([*"abcXYZ019 .,;:%-[]()?!\n", "not ", "no ", "increased ", "mg ", "E1", "IL-6 "]),
    max_size=60,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT)
def test_any_text_gets_a_label_and_a_span_inside_the_passage(claim: str, passage: str) -> None:
    judgement = LexicalClaimVerifier().verify(claim, passage)
    assert judgement.label in SUPPORT_LABELS
    assert judgement.note
    if judgement.span is not None:
        start, end = judgement.span
        assert 0 <= start <= end <= len(passage)


RELEASE = "Tessel 4.2 was released on 14 March 2026. It needs Python 3.11 or newer; Python 3.10 is no longer supported."
SHIP = "The Marigold was sold to a Norwegian owner in 1923 and renamed Solveig. She sank in a storm in the North Sea in 1931."
PRICES = (
    "TICKET PRICES (per ticket)\n--------------------------\n"
    "                          Main House    Studio\n"
    "  Adult                   £16.00        £12.00\n"
    "  Under 18                £9.00         £7.00\n"
    "  Preview night (all)     £10.00        £8.00\n"
)
RACING = (
    "## Racing\n\n- Wednesday evening series: first start at **18:30**, May to August\n"
    "- Sunday series: first start at **10:30**, April to October\n"
    "- Handicaps use the RYA Portsmouth Yardstick list\n"
)


@pytest.mark.parametrize(
    ("claim", "passage", "label"),
    [
        # The number is in the sentence, but the clause that says "no longer supported" names 3.10.
        ("Python 3.11 is no longer supported.", RELEASE, "insufficient"),
        ("Python 3.10 is no longer supported.", RELEASE, "supported"),
        # Words across two sentences, one number from each: the subject and what it needs.
        ("Tessel 4.2 needs Python 3.11 or newer.", RELEASE, "supported"),
        # A year from each sentence dates the sale by the sinking.
        ("The Marigold in 1931 was sold to a Norwegian owner in 1923.", SHIP, "contradicted"),
        ("The Marigold was sold to a Norwegian owner in 1923.", SHIP, "supported"),
        ("She sank in a storm in the North Sea in 1931.", SHIP, "supported"),
        # A row of a table laid out with spaces, quoted as a Markdown row of its cells: its figures
        # in their order, under its own label.
        ("| Under 18 | £9.00 | £7.00 |", PRICES, "supported"),
        ("| Adult | £16.00 | £12.00 |", PRICES, "supported"),
        ("| Under 18 | £7.00 | £9.00 |", PRICES, "insufficient"),
        ("| Under 18 | £9.00 | £8.00 |", PRICES, "insufficient"),
        ("| Under 16 | £9.00 | £7.00 |", PRICES, "insufficient"),
        # A list entry quoted through its emphasis, each entry with its own time.
        ("Wednesday evening series: first start at 18:30, May to August", RACING, "supported"),
        ("Sunday series: first start at 10:30, April to October", RACING, "supported"),
        ("Wednesday evening series: first start at 10:30, May to August", RACING, "insufficient"),
        ("Sunday series: first start at 18:30", RACING, "insufficient"),
        ("Wednesday evening series: first start at 10:30", RACING, "insufficient"),
    ],
    ids=[
        "number-from-another-clause",
        "number-of-its-clause",
        "numbers-of-two-sentences",
        "years-of-two-sentences",
        "sale-year",
        "sinking-year",
        "spaced-row",
        "another-spaced-row",
        "row-figures-swapped",
        "row-another-figure",
        "row-another-label",
        "wednesday-entry",
        "sunday-entry",
        "wednesday-at-sunday-s-time",
        "sunday-at-wednesday-s-time",
        "entry-time-without-months",
    ],
)
def test_a_claim_s_numbers_come_from_what_it_states(claim: str, passage: str, label: SupportLabel) -> None:
    judgement = LexicalClaimVerifier().verify(claim, passage)
    assert judgement.label == label, judgement.note


BELAY = (
    "The Learn to Belay course costs £35 per person and is two 90-minute sessions, run on Tuesday and "
    "Thursday evenings at 7pm."
)


@pytest.mark.parametrize(
    ("claim", "label"),
    [
        ("The Learn to Belay course costs £35 per person.", "supported"),
        ("The Learn to Belay course costs 35 pounds per person.", "supported"),
        ("The Learn to Belay course is run on Tuesday and Thursday evenings at 7pm.", "supported"),
        # A time of day is no price, and a price no time of day.
        (
            "The Learn to Belay course is run on Tuesday and Thursday evenings at £7 per person.",
            "contradicted",
        ),
        ("The Learn to Belay course is run on Tuesday and Thursday evenings at 7am.", "insufficient"),
    ],
    ids=["price", "price-in-words", "time", "time-as-price", "am-for-pm"],
)
def test_money_and_times_of_day_are_amounts_of_their_own(claim: str, label: SupportLabel) -> None:
    judgement = LexicalClaimVerifier().verify(claim, BELAY)
    assert judgement.label == label, judgement.note


def test_years_from_two_sentences_are_not_one_window_s_support() -> None:
    from akm.verify.lexical import check_quantities_together

    claim = "The Marigold in 1931 was sold to a Norwegian owner in 1923."
    assert check_quantities_together(claim, SHIP).outcome == "missing"
    assert check_quantities_together("The Marigold was sold in 1923.", SHIP).outcome == "agree"


DECISIONS = (
    "Marek will move the staging database to the managed service by 4 December. "
    "The next retrospective is on 4 December at 15:00."
)
MUSEUM = (
    "Since 1992 the old machine hall has housed the Sörmark industrial museum, which is open from May "
    "to September. Entry costs 80 kronor for adults; children under 12 enter free."
)
SCREEN = (
    "Treatment with the compound pyridostatin (PDS) increases telomere fragility. "
    "Remarkably, PDS reduces proliferation of HR-defective cells by inducing checkpoint activation."
)
CONTACTS = (
    "Payroll questions go to Priya Nair in Finance. Questions about the office building go to the "
    "facilities manager, Tomás Rivera."
)
WALKS = (
    "The highest point we reach will be 1,465 m. Friday is shorter, roughly 6 km around the Puy de "
    "Lassolas and the Puy de la Vache."
)


@pytest.mark.parametrize(
    ("claim", "passage", "label"),
    [
        # Each sentence gives words the other lacks, and the second speaks of something else: the
        # retrospective is not what will be moved (the dates they share link nothing).
        (
            "The retrospective will be moved to the managed service by 4 December at 15:00.",
            DECISIONS,
            "insufficient",
        ),
        (
            "Marek will move the staging database to the managed service by 4 December.",
            DECISIONS,
            "supported",
        ),
        # The second sentence names what the first did by its pronoun or by its abbreviation.
        ("Tessel 4.2 needs Python 3.11 or newer.", RELEASE, "supported"),
        ("Pyridostatin induces checkpoint activation.", SCREEN, "supported"),
        # The claim keeps the subject of the sentence that gives most of it ("Entry costs ...")
        # and adds what it is the entry to from the sentence before.
        ("The entry to the Sörmark industrial museum costs 80 kronor for adults.", MUSEUM, "supported"),
        # A subject both sentences give ("questions") is no subject kept: the claim puts the
        # building's manager on the payroll questions.
        (
            "Priya Nair, the office building manager, Tomás Rivera, handles payroll questions.",
            CONTACTS,
            "insufficient",
        ),
        # The first sentence's subject is kept, but the claim is about the place only the second
        # names: what the first says of the highest point is put on the Puy de Lassolas.
        ("The Puy de Lassolas is the highest point we reach.", WALKS, "insufficient"),
        ("Friday's walk is roughly 6 km around the Puy de Lassolas.", WALKS, "supported"),
    ],
    ids=[
        "two-statements",
        "one-statement",
        "pronoun",
        "abbreviation",
        "subject-kept",
        "subject-shared",
        "subject-of-the-other",
        "one-sentence-of-two",
    ],
)
def test_a_claim_joins_two_sentences_only_when_the_second_speaks_of_the_first(
    claim: str, passage: str, label: SupportLabel
) -> None:
    judgement = LexicalClaimVerifier().verify(claim, passage)
    assert judgement.label == label, judgement.note
    joined = next(check for check in judgement.checks if check.name == "joined")
    assert joined.passed == (label == "supported"), joined.detail


def test_a_name_with_digits_links_two_sentences_and_a_date_does_not() -> None:
    def joined(claim: str, passage: str) -> str | None:
        content = [word for word in words(claim) if is_content_in(word, claim)]
        return check_joined(content, passage, TextSpan(0, len(passage)))

    named = "The regions bound by p53 (p53BERs) were mapped. Furthermore, p53BERs produce enhancer RNAs."
    assert joined("The regions bound by p53 produce enhancer RNAs.", named) is None
    dated = "Marek will move the database by 4 December. The next retrospective is on 4 December."
    finding = joined("The retrospective will move the database by 4 December.", dated)
    assert finding is not None and "retrospective" in finding


PIPE = (
    "The condensate pipe can freeze in very cold weather. Pour warm water, not boiling water, over the "
    "pipe to thaw it."
)


def test_a_word_of_the_next_sentence_put_in_place_of_the_verb_is_not_supported() -> None:
    verifier = LexicalClaimVerifier()
    # Four of the five content words stand in the first sentence (coverage 0.8, the threshold), but
    # "thaw" is taken from the next sentence in place of "freeze".
    swapped = verifier.verify("The condensate pipe can thaw in very cold weather.", PIPE)
    assert swapped.label == "insufficient", swapped.note
    assert verifier.verify("The condensate pipe can freeze in very cold weather.", PIPE).label == "supported"
    # The first sentence alone, the window tried after the joined one, fails the claim on the word
    # it says after the same auxiliary ("can freeze"): one supporting window would be enough.
    # A word the passage never uses is a paraphrase, left to the coverage score.
    paraphrase = verifier.verify("The condensate pipe can solidify in very cold weather.", PIPE)
    assert not any(check.name == "predicate" and not check.passed for check in paraphrase.checks)
    # Over both sentences, the join itself is told: one sentence repeated but for the swapped word.
    claim = "The condensate pipe can thaw in very cold weather."
    content = [word for word in words(claim) if is_content_in(word, claim)]
    finding = check_joined(content, PIPE, TextSpan(0, len(PIPE)))
    assert finding is not None and "'thaw'" in finding and "'freeze'" in finding


PETS = (
    "We insure dogs and cats kept as domestic pets. A dog must be at least 8 weeks old and under 8 years "
    "old when a new policy starts. A cat must be at least 8 weeks old and under 10 years old when a new "
    "policy starts."
)


def test_a_sentence_repeated_with_the_subject_of_another_is_not_supported() -> None:
    verifier = LexicalClaimVerifier()
    # The cat's sentence holds every word but "dog" (coverage 0.9), and the dog's sentence says 8 years.
    mixed = verifier.verify(
        "A dog must be at least 8 weeks old and under 10 years old when a new policy starts.", PETS
    )
    assert mixed.label != "supported", mixed.note
    cat = "A cat must be at least 8 weeks old and under 10 years old when a new policy starts."
    index = WindowIndex(PETS, TextSpan(PETS.index(cat), PETS.index(cat) + len(cat)))
    claim = "A dog must be at least 8 weeks old and under 10 years old when a new policy starts."
    finding = replaced_word_finding(words(claim), index, PETS)
    assert finding is not None and finding.check == "substitution"
    assert "'cat'" in finding.detail and "'dog'" in finding.detail
    for said in (
        "A dog must be at least 8 weeks old and under 8 years old when a new policy starts.",
        "A dog must be under 8 years old when a new policy starts.",
        "A cat must be under 10 years old when a new policy starts.",
    ):
        assert verifier.verify(said, PETS).label == "supported", said
    # A word the passage never uses is a paraphrase, left to the coverage score.
    assert replaced_word_finding(words(claim.replace("dog", "kitten")), index, PETS) is None
    # A table row is no running text: a claim's own verb between the cells it quotes replaces nothing.
    row = "| `log_level` | `ORBIT_LOG` | `info` | how much orbit writes to its log |"
    table = (
        f"orbit sets its log level.\n\n| setting | variable | default | meaning |\n|---|---|---|---|\n{row}\n"
    )
    start = table.index(row)
    rows = WindowIndex(table, TextSpan(start, start + len(row)))
    assert (
        replaced_word_finding(words("ORBIT_LOG sets how much orbit writes to its log."), rows, table) is None
    )


def test_a_word_put_before_a_noun_the_passage_states_bare_narrows_it_into_another_thing() -> None:
    staff = "- **Oona Breckenridge** — Hostel Manager. She handles bookings, refunds and complaints."
    verifier = LexicalClaimVerifier()
    # Four of five content words are there (coverage 0.8, the threshold), but "deputy" makes the
    # manager another person.
    deputy = verifier.verify("Oona Breckenridge is the deputy manager of the hostel.", staff)
    assert deputy.label == "insufficient", deputy.note
    assert "'deputy' 'manager'" in deputy.note
    assert verifier.verify("Oona Breckenridge is the manager of the hostel.", staff).label == "supported"
    assert verifier.verify("Oona Breckenridge is the hostel manager.", staff).label == "supported"
    # A word the passage uses outside the window is its topic, no narrowing of the noun.
    engines = (
        "A steam engine needs a source of heat. In some cases the heat source is a nuclear reactor or "
        "waste heat from an internal combustion engine."
    )
    sourced = verifier.verify("The heat source of a steam engine can be a nuclear reactor.", engines)
    assert not any(check.name == "modifier" and not check.passed for check in sourced.checks), sourced.note


def test_a_day_of_the_week_must_be_the_passage_s_and_fall_on_its_date() -> None:
    refit = (
        "MV Island Rose will be in dry dock for her annual refit from Monday 13 January to Friday 24 "
        "January 2025. During this period the route will be covered by MV Corran Lass."
    )
    verifier = LexicalClaimVerifier()
    moved = verifier.verify(
        "The Island Rose will be in dry dock for her annual refit on Monday 13 January to Monday 24 January 2025.",
        refit,
    )
    assert (moved.label, moved.decided_by) == ("contradicted", "quantity"), moved.note
    assert "Monday on the 24th" in moved.note
    other = verifier.verify("MV Island Rose will be in dry dock from Tuesday 13 January.", refit)
    assert (other.label, other.decided_by) == ("contradicted", "quantity"), other.note
    same = verifier.verify(
        "MV Island Rose will be in dry dock from Monday 13 January to Friday 24 January 2025.", refit
    )
    assert same.label == "supported", same.note


def test_a_unit_is_no_subject_a_quantity_can_contradict() -> None:
    # A quoted table row shares only the unit "minutes" with the practice advice: another thing.
    passage = "Students are expected to practise regularly: at least 15 minutes a day for beginners."
    row = LexicalClaimVerifier().verify("| 45 minutes | £32 | £352 |", passage)
    assert row.label == "insufficient", row.note
    # A claim about the practice itself, with another figure, is contradicted.
    practice = LexicalClaimVerifier().verify(
        "Beginners are expected to practise at least 45 minutes a day.", passage
    )
    assert practice.label == "contradicted", practice.note


def test_a_table_row_of_a_letter_and_figures_is_checked_as_a_quote() -> None:
    verifier = LexicalClaimVerifier()
    passage = (
        "| Band | Property value (1 April 1991) | Annual charge 2025/26 |\n| --- | --- | --- |\n"
        "| C | £52,001 to £68,000 | £1,998.08 |\n| D | £68,001 to £88,000 | £2,247.84 |\n"
        "| E | £88,001 to £120,000 | £2,747.36 |"
    )
    # A row with no word of content but its band's letter is supported where the passage has it.
    assert verifier.verify("| D | £68,001 to £88,000 | £2,247.84 |", passage).label == "supported"
    # The same letter with another row's figure is no quote: nothing to check it by.
    changed = verifier.verify("| D | £68,001 to £88,000 | £2,747.36 |", passage)
    assert changed.label == "insufficient"
    assert changed.note == "the claim has no content words to check"
    # Figures alone are no row.
    assert verifier.verify("£2,247.84", passage).label == "insufficient"


def test_a_spaced_table_row_and_an_emphasised_entry_are_quotes() -> None:
    """Markdown emphasis is no text of a quote, and a spaced table's line is the row of its cells
    (the other cases of these passages are in the table of `test_a_claim_s_numbers_come_from_what_it_states`)."""
    verifier = LexicalClaimVerifier()
    for claim, passage in [
        ("| Under 18 | £9.00 | £7.00 |", PRICES),
        ("Wednesday evening series: first start at 18:30, May to August", RACING),
    ]:
        judgement = verifier.verify(claim, passage)
        assert judgement.label == "supported", judgement.note
        assert judgement.note.startswith("the claim quotes the passage"), judgement.note


def test_days_paired_in_a_claim_must_be_paired_so_in_the_passage() -> None:
    verifier = LexicalClaimVerifier()
    passage = (
        "You can change an order up to 9am two days before delivery. For example, the deadline for a "
        "Tuesday delivery is 9am on Sunday, and for a Friday delivery it is 9am on Wednesday."
    )
    swapped = verifier.verify(
        "The deadline is 9am on Sunday, and for a Tuesday delivery, it is 9am on Wednesday.", passage
    )
    assert (swapped.label, swapped.decided_by) == ("insufficient", "quantity"), swapped.note
    assert "claim pairs Tuesday with Wednesday, passage with Sunday" in swapped.note
    assert (
        verifier.verify("For a Friday delivery the deadline is 9am on Wednesday.", passage).label
        == "supported"
    )
    # Days the passage gives apart, each alone, may be joined by the claim.
    apart = "The office is open on Monday. It is closed on Tuesday."
    assert verifier.verify("The office is open on Monday and closed on Tuesday.", apart).label == "supported"
