"""Selection of the answer-bearing sentences, the responsiveness check and non-answer detection."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any, cast

import pytest

from akm.answer.responsiveness import NO_ANSWER_REASON, ClaimInContext, check_responsiveness, filled_columns
from akm.answer.selection import (
    absent_role,
    answer_type_of,
    answered_kind_terms,
    asked_alternative,
    bounds_amount,
    columns_of,
    content_terms,
    counted_noun,
    cut_event,
    deed_objects,
    fills_answer_type,
    generalised_terms,
    heading_words,
    is_polar_question,
    limited_days,
    limited_kinds,
    measured_terms,
    measured_thing,
    mentions_event,
    not_itself,
    one_as_article,
    only_asks,
    opposite_event,
    other_column,
    other_day,
    other_duration,
    other_kind,
    other_length,
    other_noun,
    other_numbered,
    other_unit_numbers,
    other_variant,
    other_variant_row,
    permission_terms,
    priced_object,
    question_codes,
    question_focus,
    rated_amounts,
    read_as_typed,
    same_sense_terms,
    select_evidence,
    spanned_count,
    spanned_days,
    spanned_duration,
    states_instead,
    stem,
    told_then_polar,
    trailing_aside,
    unheaded,
    unnamed_day,
    unnamed_kind,
    unnoticed_deed,
    unrated,
    which_kind,
    within_a_bound,
    within_a_range,
    without_question,
)
from akm.answer.tidy import drop_non_answers, is_non_answer, refers_back
from akm.claims import sentence_spans
from akm.support import ReadEvidence

BRIDGE = (
    "The Kestrel Harbour Bridge is a steel arch bridge across the harbour of Marlow Bay. "
    "Construction began in 1921 and the bridge was opened to traffic on 19 March 1932 by the mayor, Edith Carrow. "
    "The main arch spans 503 metres."
)
BEES = (
    "A honey bee colony has one queen, a few hundred drones and tens of thousands of workers. "
    "Worker bees collect nectar and pollen from flowers within about three kilometres of the hive."
)


def _read(number: int, passage: str, heading: tuple[str, ...] = (), title: str | None = None) -> ReadEvidence:
    locator = SimpleNamespace(heading_path=heading, value=f"{number}-{number}")
    row: Any = SimpleNamespace(
        evidence_id=f"row-{number}",
        scope=SimpleNamespace(locator=locator),
        source=SimpleNamespace(
            title=title,
            canonical_path=f"docs/page-{number}.html",
            canonical_uri=f"file:docs/page-{number}.html",
        ),
        verification=SimpleNamespace(state="direct-read"),
    )
    return ReadEvidence(number=number, row=row, passage=passage)


def test_off_topic_passage_is_kept_out_of_the_prompt_with_its_reason() -> None:
    selection = select_evidence(
        "When was the Kestrel Harbour Bridge opened to traffic?",
        [_read(1, BEES, ("Honey bees",)), _read(2, BRIDGE, ("Kestrel Harbour Bridge",))],
        None,
    )
    assert [item.row.evidence_id for item in selection.kept] == ["row-2"]
    assert [item.number for item in selection.kept] == [1]
    ((excluded, reason),) = [(item.evidence.row.evidence_id, item.reason) for item in selection.excluded]
    assert (excluded, reason) == ("row-1", "not-relevant")
    assert "below 75% of the best passage" in selection.excluded[0].note
    assert any("19 March 1932" in sentence.text for sentence in selection.sentences)
    for sentence in selection.sentences:
        assert BRIDGE[sentence.start : sentence.end] == sentence.text


def test_title_only_passage_is_not_evidence() -> None:
    selection = select_evidence(
        "Where is the University of Chicago?",
        [_read(1, "# University of Chicago", ("University of Chicago",)), _read(2, BRIDGE)],
        None,
    )
    reasons = {item.evidence.row.evidence_id: item.reason for item in selection.excluded}
    assert reasons["row-1"] == "near-empty"
    assert all(sentence.evidence.row.evidence_id != "row-1" for sentence in selection.ranked)


def test_the_heading_path_counts_toward_the_focus() -> None:
    passage = "It was opened in 1903 and seats about thirty thousand people at football games."
    selection = select_evidence(
        "When was Harvard Stadium opened?", [_read(1, passage, ("Harvard Stadium",))], None
    )
    assert selection.best is not None
    assert selection.best.context == pytest.approx(1.0)
    assert selection.best.lexical == pytest.approx(1.0)


def test_a_passage_quoting_the_question_loses_to_the_passage_that_answers_it() -> None:
    question = "When was the Kestrel Harbour Bridge opened to traffic?"
    faq = (
        "Visitors often ask: when was the Kestrel Harbour Bridge opened to traffic? "
        "The harbour office keeps a leaflet about the history of the bridge at the front desk."
    )
    selection = select_evidence(question, [_read(1, faq), _read(2, BRIDGE)], None)
    assert selection.best is not None
    assert selection.best.evidence.row.evidence_id == "row-2"
    assert "19 March 1932" in selection.best.text
    assert all(sentence.evidence.row.evidence_id == "row-2" for sentence in selection.sentences)
    # What the generator is shown stays the passage's own text, quotes included.
    for sentence in selection.ranked:
        assert sentence.evidence.passage[sentence.start : sentence.end] == sentence.text


@pytest.mark.parametrize(
    ("text", "question", "expected"),
    [
        pytest.param(
            "Notes: `Where does the SQLite store live?` is the demo question.",
            "Where does the SQLite store live?",
            "Notes: ` ` is the demo question.",
            id="quoted-with-marks",
        ),
        pytest.param(
            "WHERE DOES THE\nSQLite   store live and why?",
            "Where does the SQLite store live?",
            "  and why?",
            id="case-and-spacing",
        ),
        pytest.param(
            "Where does the SQLite store its pages?",
            "Where does the SQLite store live?",
            "Where does the SQLite store its pages?",
            id="different-question-kept",
        ),
        pytest.param(
            "Who is Ada? Ada is a poet.", "Who is Ada?", "Who is Ada? Ada is a poet.", id="short-question"
        ),
        pytest.param(
            "Observations show that the Moon is tidally locked to the Earth.",
            "The Moon is tidally locked to the Earth.",
            "Observations show that the Moon is tidally locked to the Earth.",
            id="a-claim-stated-word-for-word-is-kept",
        ),
    ],
)
def test_without_question(text: str, question: str, expected: str) -> None:
    assert without_question(text, question) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        pytest.param("When was the bridge opened?", "date", id="when"),
        pytest.param("In what year did the railway close?", "date", id="what-year"),
        pytest.param("How many eggs does the queen lay?", "number", id="how-many"),
        pytest.param("What is the population of Marlow Bay?", "number", id="what-is-the-population"),
        pytest.param("Who opened the bridge?", "person", id="who"),
        pytest.param("Where does the SQLite store live?", "place", id="where"),
        pytest.param("Which city hosts the festival?", "place", id="which-city"),
        pytest.param("Why do bees dance?", "reason", id="why"),
        pytest.param("What is the track gauge?", "any", id="what"),
        pytest.param(
            "Which environment variable sets how many files are uploaded at the same time?",
            "any",
            id="which-kind-with-a-how-many-clause",
        ),
        pytest.param("Who decides how much money is spent?", "person", id="who-with-a-how-much-clause"),
        pytest.param("What does it cost, and how much is the fee?", "number", id="a-second-question"),
    ],
)
def test_answer_type_of(question: str, expected: str) -> None:
    assert answer_type_of(question) == expected


def _claim(text: str, context: str = BRIDGE) -> ClaimInContext:
    return ClaimInContext(claim_id="claim-1", text=text, context=context)


def test_a_supported_claim_about_something_else_is_not_responsive() -> None:
    focus = question_focus("What is the population of Marlow Bay?")
    verdict = check_responsiveness(focus, [_claim("The main arch spans 503 metres.")], None)
    assert not verdict.responsive
    assert verdict.reason.startswith(NO_ANSWER_REASON)


def test_a_sentence_naming_the_place_is_not_its_population() -> None:
    focus = question_focus("What is the population of Marlow Bay?")
    intro = "The Kestrel Harbour Bridge is a steel arch bridge across the harbour of Marlow Bay."
    verdict = check_responsiveness(focus, [_claim(intro)], None)
    assert not verdict.responsive, verdict.reason
    assert "answer type not found" in verdict.reason


@pytest.mark.parametrize(
    ("question", "text", "expected"),
    [
        # "how many X": a count, not a year nor a measure in another unit.
        (
            "How many keepers lived at Skerryvore?",
            "The light was automated in 1994, and the keepers left.",
            False,
        ),
        (
            "How many keepers lived at Skerryvore?",
            "It stands about 19 kilometres south-west of Tiree.",
            False,
        ),
        ("How many keepers lived at Skerryvore?", "Three keepers lived on the rock at a time.", True),
        ("How many keepers lived at Skerryvore?", "In 1850, 4 keepers lived there.", True),
        ("How many people does it employ?", "It employs fourteen people and opens at six.", True),
        ("How many workers riveted the steel?", "About 1,400 workers riveted it together.", True),
        ("How many workers riveted the steel?", "The steel was riveted in 1930.", False),
        ("How many times has Polonia won the cup?", "They won the cup twice as well.", True),
        ("How many treaties mention rights?", "None of the original treaties mention them.", True),
        ("How many kilometres long is the line?", "The line runs 42 kilometres to the quarries.", True),
        ("How many trains a day run on the line?", "The line uses a track gauge of 597 millimetres.", False),
        # "which day": a day, not a year.
        ("Which day is the bakery closed?", "The bakery opened in 1972 in Hebden Bridge.", False),
        ("Which day is the bakery closed?", "It opens at six every day except Monday.", True),
        ("On what day did the bridge open?", "It was opened to traffic on 19 March 1932.", True),
        ("Which day is the museum closed?", "The museum is closed on Mondays.", True),
        ("Which day is the sale?", "Option 1 may end the sale early.", False),
        ("When did the bakery open?", "The bakery opened in 1972 in Hebden Bridge.", True),
        # a price: an amount of money, not any number.
        ("What is the price of the rye loaf?", "Its rye loaf uses a starter kept alive since 1972.", False),
        ("What is the price of the rye loaf?", "A rye loaf costs £3.50.", True),
        ("How much does a ticket cost?", "A return ticket is 12 dollars.", True),
        ("How long is the nucleus?", "The nucleus is roughly 7.6 kilometres long.", True),
        # "who": a name, not a place after "of", "in", "off the coast of".
        (
            "Who designed Skerryvore Lighthouse?",
            "Skerryvore Lighthouse stands on a reef off the west coast of Scotland, south-west of Tiree.",
            False,
        ),
        (
            "Who designed Skerryvore Lighthouse?",
            "It was built under the direction of the engineer Alan Stevenson.",
            True,
        ),
        ("Who opened the bridge?", "The bridge was opened in March 1932 by the mayor, Edith Carrow.", True),
        # "how deep", "how high": that dimension, not any number near the topic.
        (
            "How deep is the water at Harlow Reservoir?",
            "The reservoir holds about 12 million cubic metres of water when full.",
            False,
        ),
        ("How deep is the water at Harlow Reservoir?", "The lake is 40 metres deep in the middle.", True),
        ("How high is the dam?", "The dam is 38 metres high and 410 metres long.", True),
        ("What is the height of the tower?", "The tower rises 120 metres above the harbour.", True),
        # "where": a name or a word for a place after the preposition, not any word.
        (
            "Where does the water from Harlow Reservoir go?",
            "In the drought of 1976 the level fell to a fifth of capacity.",
            False,
        ),
        (
            "Where does the water from Harlow Reservoir go?",
            "The reservoir is closed to swimming; sailing is allowed from April to October.",
            False,
        ),
        (
            "Where does the water from Harlow Reservoir go?",
            "Water leaves through two tunnels to the Fenwick treatment works.",
            True,
        ),
        (
            "Where was the Marigold launched?",
            "The Marigold was a schooner launched at Brixham in 1889.",
            True,
        ),
        ("Where did the Normans settle?", "They settled in the west of France.", True),
        ("Where is the bakery?", "The bakery opened in 1972, at first with two ovens.", False),
        ("Where are failures reported?", "Failures are sent to the on-call channel and by e-mail.", True),
        # a present-tense "when": a time of day or how often; a past one still needs a date.
        ("When does the backup job run?", "The backup job runs every night at 02:30 UTC.", True),
        ("When did the bakery open?", "It opens at six every day.", False),
        # a count of members, not of what each member may hold, nor an amount of money.
        (
            "How many members does the garden have?",
            "A member may hold at most one plot; families with children under twelve may ask for a second bed.",
            False,
        ),
        ("How many members does the garden have?", "The fee of 35 euros is paid by members.", False),
        ("How many members does the garden have?", "The fee is €35 a year.", False),
        ("How many members does the garden have?", "The garden has 120 members.", True),
        ("How many plots may a member hold?", "A member may hold at most one plot.", True),
        # "how fast" takes a rate, not any number on the topic.
        ("How fast does tarn check archives?", "On a laptop SSD it checks about 400 MB per second.", True),
        (
            "How fast does tarn check archives?",
            "Memory use stays under 50 MB even for large archives.",
            False,
        ),
        ("What is the speed of the train?", "The train runs at 300 km/h.", True),
        # a duty or a permission: a role answers "who"; a past deed still needs a name.
        ("Who is paged after the third failure?", "It pages the data team's on-call engineer.", True),
        ("Who led the team in 2015?", "The team was led by its oldest player.", False),
        ("Why is the warehouse never half full?", "Partial loads are rolled back, so it never is.", True),
        ("Why is the warehouse never half full?", "The warehouse is never half full.", False),
        # a street after "on" or "at" is a place, every word of it; so is the subject the question names.
        ("Who founded the Riverside Clinic?", "The Riverside Clinic opened in 1987 on Mill Street.", False),
        ("Who founded the Riverside Clinic?", "The clinic moved to 4 Harbour Road in 1990.", False),
        ("Who founded the Riverside Clinic?", "Amara Okafor founded the clinic on Mill Street.", True),
        # "who founded / wrote": the deed must be named, or the maker after "by".
        ("Who founded the Riverside Clinic?", "Dr. Amara Okafor has led the clinic since 2011.", False),
        ("Who founded the Riverside Clinic?", "Its founder, Amara Okafor, was a nurse.", True),
        ("Who wrote Hamlet?", "Hamlet is a tragedy by William Shakespeare.", True),
        ("Who wrote Hamlet?", "Richard Burbage first played Hamlet.", False),
        ("Who designed the lighthouse?", "The architect Alan Stevenson drew its plans in 1838.", True),
        # a year the question names is not its answer.
        (
            "When did Polonia Warsaw win the championship prior to 2000?",
            "Polonia Warsaw won the championship in 2000.",
            False,
        ),
        (
            "When did Polonia Warsaw win the championship prior to 2000?",
            "They won it in 1946 and 2000.",
            True,
        ),
        ("In which year after 1990 did the bridge close?", "The bridge was busiest in the 1990s.", False),
        # "what time": a time of day, never a year.
        ("What time does the pipeline start?", "It starts at 02:00 UTC.", True),
        ("What time does the pipeline start?", "The pipeline started in 2019.", False),
        ("What time of year is the ferry busiest?", "The ferry is busiest in 2019.", True),
        ("What oven temperature should I bake the loaf at?", "Heat the oven to 220 °C.", True),
        ("At what temperature is the bread baked first?", "Bake it at 230 degrees for 50 minutes.", True),
        ("How cold can it get on the summits?", "It can be as low as 3 °C first thing.", True),
        ("What temperature should the butter be?", "Use butter at room temperature.", True),
        # A figure near the topic is no temperature.
        (
            "What oven temperature should I bake my sourdough at?",
            "A starter from the fridge needs two room-temperature feeds, 12 hours apart, before you bake.",
            False,
        ),
        # "£12 per household" is an amount for each household, and "220 °C" a measure: no count.
        (
            "How many households are members?",
            "The subscription rises from £10 to £12 per household from 1 January 2025.",
            False,
        ),
        ("How many households are members?", "Heat the oven to 220 °C.", False),
        ("How many households are members?", "The association has 120 member households.", True),
        # "By what time": a clock time answers it, as "what time" does.
        ("By what time must I check out?", "Check-out is by 10:15.", True),
        ("By what time must I check out?", "Check-out is on the day you leave.", False),
    ],
    ids=[
        "count-not-a-year",
        "count-not-a-distance",
        "count-word-before-the-noun",
        "count-after-a-year",
        "count-in-words",
        "count-with-a-thousands-comma",
        "count-only-a-year",
        "count-twice",
        "count-none",
        "count-of-the-unit-asked",
        "count-not-millimetres",
        "day-not-a-year",
        "day-weekday",
        "day-of-a-month",
        "day-weekday-plural",
        "day-not-may-the-verb",
        "when-takes-a-year",
        "price-not-a-year",
        "price-in-pounds",
        "price-in-dollars",
        "length-any-number",
        "who-not-places",
        "who-a-name",
        "who-a-name-after-by",
        "deep-not-a-volume",
        "deep-a-depth",
        "high-a-height",
        "height-rises",
        "where-not-in-the-drought",
        "where-not-a-month-nor-an-activity",
        "where-to-for-where-it-goes",
        "where-a-name",
        "where-a-word-for-a-place",
        "where-not-a-year",
        "where-reported-to",
        "when-does-a-time",
        "when-did-not-a-frequency",
        "count-not-per-member",
        "count-not-euros",
        "count-not-a-currency-sign",
        "count-of-members",
        "count-per-member-asked",
        "fast-a-rate",
        "fast-not-a-size",
        "speed-km-h",
        "who-is-paged-a-role",
        "who-led-not-a-role",
        "why-comma-so",
        "why-no-cause",
        "who-not-a-street",
        "who-not-a-numbered-road",
        "who-a-name-beside-a-street",
        "who-founded-not-who-led",
        "who-founded-its-founder",
        "who-wrote-by-a-name",
        "who-wrote-not-who-played",
        "who-designed-the-architect",
        "when-not-the-question-s-year",
        "when-another-year",
        "which-year-not-the-question-s-decade",
        "what-time-a-clock-time",
        "what-time-not-a-year",
        "what-time-of-year-a-date",
        "oven-temperature",
        "at-what-temperature-degrees",
        "how-cold",
        "room-temperature",
        "a-figure-is-no-temperature",
        "per-household-is-no-count",
        "degrees-are-no-count",
        "a-count",
        "by-what-time-a-clock-time",
        "by-what-time-no-time",
    ],
)
def test_narrow_kinds_of_answer(question: str, text: str, expected: bool) -> None:
    assert fills_answer_type(text, answer_type_of(question), question) is expected


@pytest.mark.parametrize(
    ("question", "claim", "context"),
    [
        (
            "How many keepers lived at Skerryvore?",
            "The light was automated in 1994, and the keepers left the rock that year.",
            "The light was automated in 1994, and the keepers left the rock that year. "
            "A fire in 1954 had damaged the tower.",
        ),
        (
            "What is the price of the rye loaf?",
            "The bakery is best known for its rye loaf, which uses a starter kept alive since 1972.",
            "The bakery is best known for its rye loaf, which uses a starter kept alive since 1972.",
        ),
    ],
    ids=["a-year-is-no-count-of-keepers", "a-year-is-no-price"],
)
def test_a_claim_on_the_topic_without_the_asked_kind_is_not_an_answer(
    question: str, claim: str, context: str
) -> None:
    verdict = check_responsiveness(question_focus(question), [_claim(claim, context)], None)
    assert not verdict.responsive, verdict.reason
    assert verdict.reason.startswith(NO_ANSWER_REASON) and "answer type not found" in verdict.reason


def test_a_claim_that_answers_the_question_is_responsive() -> None:
    focus = question_focus("When was the Kestrel Harbour Bridge opened to traffic?")
    claim = "Construction began in 1921 and the bridge was opened to traffic on 19 March 1932."
    verdict = check_responsiveness(focus, [_claim(claim)], None)
    assert verdict.responsive, verdict.reason
    assert verdict.claim_id == "claim-1" and verdict.reason.startswith("responsive")


def test_a_restatement_of_the_question_is_not_responsive() -> None:
    focus = question_focus("When was the Kestrel Harbour Bridge opened to traffic?")
    verdict = check_responsiveness(focus, [_claim("The Kestrel Harbour Bridge was opened to traffic.")], None)
    assert not verdict.responsive
    assert "adds nothing to the question" in verdict.reason


X25 = (
    "X.25 is a standard suite of protocols for packet-switched communication over a wide area network. "
    "The X.25 protocol suite uses this network type."
)


def test_a_claim_ending_on_this_for_the_asked_thing_is_not_responsive() -> None:
    focus = question_focus("X.25 uses what type network type")
    claim = "The X.25 protocol suite uses this network type."
    verdict = check_responsiveness(focus, [_claim(claim, X25)], None)
    assert not verdict.responsive, verdict.reason
    assert "answers with a reference back ('this network type')" in verdict.reason
    # Naming the type answers it, demonstrative or not.
    named = "The X.25 protocol suite uses this network type: a packet-switched wide area network."
    assert check_responsiveness(focus, [_claim(named, X25)], None).responsive


@pytest.mark.parametrize(
    ("sentence", "question", "expected"),
    [
        pytest.param(
            "X.25 uses this network type.", "X.25 uses what network type?", "this network type", id="asked"
        ),
        pytest.param(
            "This type of engine is called a turbine.", "What type of engine is it?", None, id="goes-on"
        ),
        pytest.param("Tesla designed these systems.", "Who designed the systems?", None, id="not-what"),
        pytest.param(
            "The court restored that patent.", "Which entity restored the patent?", None, id="other-thing"
        ),
    ],
)
def test_refers_back(sentence: str, question: str, expected: str | None) -> None:
    assert refers_back(sentence, question) == expected


def test_no_supported_claim_is_no_answer() -> None:
    verdict = check_responsiveness(question_focus("Who opened the bridge?"), [], None)
    assert not verdict.responsive and verdict.reason.startswith(NO_ANSWER_REASON)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        pytest.param("The answer to the question is: [E1]", True, id="echoed-instruction"),
        pytest.param("The evidence provided by the evidence is a perfect example.", True, id="meta-talk"),
        pytest.param("According to the text, bees dance.", True, id="according-to-the-text"),
        pytest.param("Bees dance.", True, id="restates-the-question"),
        pytest.param("Bees dance to show where food is.", False, id="answer"),
    ],
)
def test_is_non_answer(sentence: str, expected: bool) -> None:
    assert is_non_answer(sentence, "Why do bees dance?") is expected


def test_drop_non_answers_keeps_the_answer_sentences() -> None:
    text = "The text says bees dance. Bees dance to show where food is."
    assert drop_non_answers(text, "Why do bees dance?") == "Bees dance to show where food is."


def test_re_verification_carries_the_responsiveness_forward() -> None:
    from akm.answer.responsiveness import carried_forward

    responsive = "responsive: the answer addresses the question: claim claim-0a55d4d03a-0: score 0.79"
    assert carried_forward(
        ["all 1 claim(s) are supported", responsive], {"claim-0a55d4d03a-0": "supported"}
    ) == (
        True,
        responsive,
    )
    lost = carried_forward([responsive], {"claim-0a55d4d03a-0": "unsupported"})
    assert lost is not None and not lost[0] and lost[1].startswith(NO_ANSWER_REASON)
    held = f"{NO_ANSWER_REASON}: the best sentence shares 0.10 of the question's focus"
    assert carried_forward([held], {}) == (False, held)
    assert carried_forward(["all 1 claim(s) are supported"], {}) is None


@pytest.mark.parametrize(
    ("form", "word"),
    [
        # A plural meets its singular.
        ("stores", "store"),
        ("dates", "date"),
        ("cities", "city"),
        ("dynasties", "dynasty"),
        ("churches", "church"),
        ("classes", "class"),
        ("glasses", "glass"),
        # A verb in "-ate" meets its noun in "-ation".
        ("castrated", "castration"),
        ("vaccinate", "vaccination"),
        ("estimates", "estimate"),
        ("graduated", "graduation"),
        # A doubled "l" of British spelling meets the word; words in "-ll" keep theirs.
        ("cancelled", "cancel"),
        ("cancelling", "cancel"),
        ("cancellation", "cancel"),
        ("travelled", "travel"),
        ("labelled", "label"),
        ("enroll", "enrol"),
        ("filled", "fill"),
        ("installed", "install"),
    ],
)
def test_an_inflected_form_meets_its_word(form: str, word: str) -> None:
    assert stem(form) == stem(word)


def test_a_number_at_the_end_of_a_sentence_meets_the_question_s() -> None:
    terms = content_terms("She sank in a storm in 1931. In 1976, 12,000 people came; Tessel 4.2 was out.")
    assert {"1931", "1976", "12,000", "4.2"} <= set(terms)
    assert not [term for term in terms if term.endswith((".", ","))]
    assert question_focus("What happened in 1931?").coverage(set(terms)) > 0


def test_a_claim_without_a_number_the_question_names_is_not_responsive() -> None:
    question = "Which Python version does Tessel 4.3 need?"
    passage = "Tessel 4.2 was released in March. It needs Python 3.11 or newer."
    claim = ClaimInContext(claim_id="claim-1", text="Tessel 4.2 needs Python 3.11 or newer.", context=passage)
    verdict = check_responsiveness(question_focus(question), [claim], None)
    assert not verdict.responsive
    assert "the question's 4.3 not in its passage" in verdict.reason
    asked_right = check_responsiveness(
        question_focus("Which Python version does Tessel 4.2 need?"), [claim], None
    )
    assert asked_right.responsive, asked_right.reason


def test_a_compound_is_not_a_word_it_starts_with() -> None:
    assert "admin" in content_terms("the `restore-admin` role")
    assert not is_non_answer("Restores need the `restore-admin` role.", "Which role do restores need?")
    assert is_non_answer("Restores need a role.", "Which role do restores need?")


def test_how_long_is_the_question_s_phrase_not_its_topic() -> None:
    assert question_focus("How long does a rollback take?").weights == {"rollbac": 1.5}
    assert "war" in question_focus("How long did the war last?").weights
    assert "long" in question_focus("Which river is long and wide?").weights
    claim = _claim(
        "A rollback switches traffic back to the old colour within 90 seconds.",
        "A rollback switches traffic back to the old colour within 90 seconds.",
    )
    verdict = check_responsiveness(question_focus("How long does a rollback take?"), [claim], None)
    assert verdict.responsive, verdict.reason


@pytest.mark.parametrize(
    ("word", "expected"),
    [("owns", "own"), ("owned", "own"), ("runs", "run"), ("uses", "use"), ("added", "add"), ("less", "less")],
)
def test_three_letter_words_meet_their_inflections(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize(
    "forms", [("approve", "approves", "approved", "approving"), ("change", "changes", "changed")]
)
def test_a_verb_in_e_meets_its_past_and_its_participle(forms: tuple[str, ...]) -> None:
    assert len({stem(form) for form in forms}) == 1


def test_who_approves_is_answered_by_the_passive() -> None:
    sentence = "Schema changes must be approved by two reviewers from that team before they are merged."
    claim = _claim(sentence, sentence)
    verdict = check_responsiveness(question_focus("Who approves schema changes?"), [claim], None)
    assert verdict.responsive, verdict.reason


def test_a_no_answers_a_yes_or_no_question() -> None:
    assert not is_non_answer("No appointment is needed.", "Do I need an appointment?")
    assert is_non_answer("An appointment is needed.", "Do I need an appointment?")
    assert is_non_answer("No appointment is needed.", "Why is no appointment needed?")


def test_a_yes_or_no_question_needs_every_term() -> None:
    bridge = (
        "The Alder Bridge crosses the river Wend at Kelby. Since 1989 it has been open only to pedestrians "
        "and cyclists."
    )
    about_the_bridge = _claim("The Alder Bridge crosses the river Wend at Kelby.", bridge)
    verdict = check_responsiveness(
        question_focus("Can cars cross the Alder Bridge?"), [about_the_bridge], None
    )
    assert not verdict.responsive
    assert "a yes-or-no question" in verdict.reason
    clinic = "The clinic is open from Monday to Friday. It is closed on Sundays."
    sundays = ClaimInContext(claim_id="claim-1", text="It is closed on Sundays.", context=clinic)
    verdict = check_responsiveness(question_focus("Is the clinic open on Sundays?"), [sundays], None)
    assert verdict.responsive, verdict.reason


@pytest.mark.parametrize(
    ("question", "asked", "told"),
    [
        (
            "whats the first ferry from kelby on a sunday in may? need to get over for work",
            "whats the first ferry from kelby on a sunday in may?",
            "need to get over for work",
        ),
        (
            "what time does the tip close on a sunday, got a car full of hedge cuttings",
            "what time does the tip close on a sunday",
            "got a car full of hedge cuttings",
        ),
        (
            "do you fix digital pianos? my clavinova has a dead key",
            "do you fix digital pianos?",
            "my clavinova has a dead key",
        ),
        # What the asker tells first is what the question goes on to ask about.
        ("our piano has not been tuned since 2019, how much to get it done", "", ""),
        # "ok?" asks of the clause before it.
        ("me and my partner want to take our bikes on the 7.40 on a tuesday, ok?", "", ""),
        # A clause that does not open as telling does is part of the question.
        ("What did the council decide, according to the minutes?", "", ""),
        ("Can cars cross the Alder Bridge?", "", ""),
    ],
    ids=["after-a-question-mark", "after-a-comma", "polar", "told-first", "ok", "not-telling", "one-clause"],
)
def test_what_the_asker_tells_after_asking_is_set_aside(question: str, asked: str, told: str) -> None:
    assert trailing_aside(question) == ((asked, told) if told else (question, ""))


def test_what_the_asker_tells_after_asking_weighs_less_and_a_yes_or_no_claim_need_not_hold_it() -> None:
    focus = question_focus("is the clinic open on sundays? need to get my prescription, its for my son")
    # The question's own terms keep their weights; the told ones weigh half as much.
    assert focus.weights["clinic"] == 1.0
    assert focus.aside == {"need", "get", "prescri", "son"}
    assert focus.weights["prescri"] == 1.5 * 0.5
    clinic = "The clinic is open from Monday to Friday. It is closed on Sundays."
    sundays = ClaimInContext(claim_id="claim-1", text="It is closed on Sundays.", context=clinic)
    verdict = check_responsiveness(focus, [sundays], None)
    assert verdict.responsive, verdict.reason
    # Numbers the asker gives keep their weight: "for 3 nights" still asks of 3 nights.
    told = question_focus("how much is a double room, we need it for 3 nights")
    assert told.aside == {"need", "night"} and told.weights["3"] == 2.0


@pytest.mark.parametrize(
    ("question", "first"),
    [
        (
            "can i wash the hepa filter on the cv20 or do i need a new one",
            "can i wash the hepa filter on the cv20",
        ),
        ("is kit included in the membership, or do we pay extra", "is kit included in the membership"),
        # "or" between two things offers no second question.
        ("does the leisure centre have a sauna or steam room", ""),
        ("is turkey zone 1 or zone 2 for roaming", ""),
        # A first part of fewer than two terms is no question of its own.
        ("is it or isnt it free", ""),
    ],
    ids=["or-do", "comma-or-do", "two-things", "two-zones", "one-term"],
)
def test_a_second_alternative_is_told_apart(question: str, first: str) -> None:
    assert asked_alternative(question) == (
        (first, question[len(first) :].split(" or ", 1)[1]) if first else (question, "")
    )


def test_a_yes_or_no_claim_need_not_hold_the_words_of_the_second_alternative() -> None:
    focus = question_focus("is kit included in the membership or do we pay extra")
    assert focus.aside == {"pay", "extra"} and focus.weights["kit"] == 1.0
    kit = ClaimInContext(
        claim_id="claim-1",
        text="The membership fee includes the home kit: shirt, shorts and socks in club colours.",
        context="The membership fee includes the home kit: shirt, shorts and socks in club colours.",
    )
    verdict = check_responsiveness(focus, [kit], None)
    assert verdict.responsive, verdict.reason
    # The first alternative's terms are still needed: a passage on kit that says nothing of the
    # membership does not answer it.
    shop = "Spare kit can be bought from the club shop on Saturday mornings."
    other = ClaimInContext(claim_id="claim-2", text=shop, context=shop)
    assert not check_responsiveness(focus, [other], None).responsive


def test_how_many_counts_the_noun_its_first_word_describes() -> None:
    question = "How many missing-receipt declarations are allowed per year?"
    assert counted_noun(question) == stem("declarations")
    assert counted_noun("How many paid holidays do staff get?") == stem("holidays")
    assert counted_noun("How many people live in Kelby?") == stem("people")
    two = "No more than two such declarations are accepted per employee in a calendar year."
    assert fills_answer_type(two, "number", question)
    assert not fills_answer_type("Declarations are accepted in 2024.", "number", question)


def test_who_did_it_is_answered_by_the_doer_after_by() -> None:
    boat = "The Margaret Rose, a herring drifter launched in 1911, was restored by volunteers in 2004."
    assert fills_answer_type(boat, "person", "Who restored the Margaret Rose?")
    assert fills_answer_type("The hall was managed by the parish council.", "person", "Who managed the hall?")
    # Another deed done by someone answers nothing: the boat was launched, by nobody named.
    assert not fills_answer_type(boat, "person", "Who launched the Margaret Rose?")
    # The doer is not something the question already names.
    assert not fills_answer_type(
        "The bridge was damaged by the flood.", "person", "Who damaged the bridge in the flood?"
    )


def test_a_possessive_meets_its_noun() -> None:
    assert stem("museum's") == stem("museum") == stem("museums")
    assert stem("members’") == stem("members")


def test_the_kind_a_question_asks_for_is_met_by_an_instance_of_it() -> None:
    booking = "All flights and hotels must be booked through the company's travel portal, Waypoint."
    assert answered_kind_terms("Which tool must employees use to book hotels?", booking) == {stem("tool")}
    assert (
        answered_kind_terms("Which tool must employees use to book hotels?", "Hotels must be booked early.")
        == set()
    )
    hours = "The museum is open from Tuesday to Sunday, 10:00 to 17:00."
    assert answered_kind_terms("What are the museum's opening hours?", hours) == {stem("hours")}
    verdict = check_responsiveness(
        question_focus("What are the museum's opening hours?"), [_claim(hours, hours)], None
    )
    assert verdict.responsive, verdict.reason
    policy = f"The company reimburses the costs employees incur while travelling. {booking}"
    portal = _claim(booking, policy)
    verdict = check_responsiveness(
        question_focus("Which tool must employees use to book hotels?"), [portal], None
    )
    assert verdict.responsive, verdict.reason
    # Only with every other term of the question: without "employees" in the passage, no answer.
    verdict = check_responsiveness(
        question_focus("Which tool must employees use to book hotels?"), [_claim(booking, booking)], None
    )
    assert not verdict.responsive, verdict.reason
    # The kind alone answers nothing: a question about something else stays unanswered.
    verdict = check_responsiveness(question_focus("Which tool is used to run the payroll?"), [portal], None)
    assert not verdict.responsive, verdict.reason
    # Names in a claim that lacks some of the question's terms do not stand in for the kind.
    broadcasts = "Its Sky Movies channels carry Dolby Digital soundtracks."
    verdict = check_responsiveness(
        question_focus("What satellite was used when Sky digital was launched?"),
        [_claim(broadcasts, broadcasts)],
        None,
    )
    assert not verdict.responsive, verdict.reason


HARBOR_RELEASE = "Version 3.0 was released on 14 October 2026, eleven months after version 2.4."


def test_a_count_is_no_day_no_version_and_no_number_the_question_names() -> None:
    question = "How many people contributed to Harbor 3.0?"
    assert answer_type_of(question) == "number"
    assert not fills_answer_type(HARBOR_RELEASE, "number", question)
    assert not fills_answer_type("They met on October 14 at the office.", "number", question)
    assert fills_answer_type("Forty-two people contributed to this release.", "number", question)
    assert fills_answer_type("By 1910 the mill employed 340 people.", "number", question)


def test_a_which_question_is_answered_by_naming_one_of_its_kind() -> None:
    question = "Which database does Harbor use to store job states?"
    speaks_of_one = "The migration of a state database with a million finished jobs takes about four minutes."
    assert unnamed_kind(question, speaks_of_one) == "database"
    assert unnamed_kind(question, "Harbor keeps job states in a database.") == "database"
    assert unnamed_kind(question, "Job states are kept in a SQLite database.") is None
    assert unnamed_kind(question, "The state database lives in `/var/lib/harbor`.") is None
    assert (
        unnamed_kind("Which Python version does Harbor 3.0 require?", "Harbor 3.0 needs Python 3.11.") is None
    )
    # Other forms of question are not judged here.
    assert unnamed_kind("What does Harbor store in its database?", speaks_of_one) is None
    context = f"Stop the scheduler and back up the state database. {speaks_of_one}"
    verdict = check_responsiveness(question_focus(question), [_claim(speaks_of_one, context)], None)
    assert not verdict.responsive
    assert "names no database (asked which)" in verdict.reason
    named = "Harbor stores job states in a SQLite database."
    verdict = check_responsiveness(question_focus(question), [_claim(named, named)], None)
    assert verdict.responsive, verdict.reason


def test_a_time_stamp_counts_nothing_and_names_nothing() -> None:
    # A report's timeline: "09:20" is a time, not 20 engineers; "09:12 The first ..." opens its
    # sentence after the time stamp, so "The" is no name; "3,200 customers" counts the kind.
    count = "How many engineers worked on the outage?"
    paged = "09:20 The on-call engineer, Dana Whitlock, was paged by the error-rate alert."
    assert not fills_answer_type(paged, "number", count)
    assert fills_answer_type("Two engineers worked on it from 09:20.", "number", count)
    which = "Which customer reported the outage first?"
    assert unnamed_kind(which, "About 3,200 customers saw an error at checkout.") == "customer"
    assert unnamed_kind(which, "10:47: Checkout worked again for all customers.") == "customer"
    assert unnamed_kind(which, "09:12 The first checkout errors were logged.") == "customer"
    assert unnamed_kind(which, "At 09:05 Acme Ltd reported failed payments.") is None
    assert unnamed_kind("Which room is the meeting in?", "The meeting is in room 12.") is None


def test_prices_in_other_currencies_and_places_behind_or_in_cabinets() -> None:
    question = "How much does entry to the museum cost for adults?"
    assert fills_answer_type("Entry costs 80 kronor for adults.", "number", question)
    assert fills_answer_type("A ticket is 120 SEK.", "number", question)
    assert not fills_answer_type("The museum is open from May to September.", "number", question)
    assembly = "Where is the assembly point in case of fire?"
    assert fills_answer_type("The assembly point is the car park behind building D.", "place", assembly)
    assert not fills_answer_type("Pull the nearest alarm and leave quickly.", "place", assembly)
    solvents = "Where are flammable solvents stored?"
    assert fills_answer_type("Solvents are stored in the yellow cabinets.", "place", solvents)


def test_who_did_it_needs_the_deed_in_the_text() -> None:
    question = "Who fumbled the ball on 3rd-and-9?"
    drive = "With 4:51 left, Carolina got the ball on their own 24-yard line and soon faced 3rd-and-9."
    assert not fills_answer_type(drive, "person", question)
    assert fills_answer_type("On the next play the ball was fumbled by Cam Newton.", "person", question)
    assert fills_answer_type("In 1486 she married Henry Tudor.", "person", "Who married Elizabeth of York?")
    assert fills_answer_type("It was restored by volunteers.", "person", "Who restored the Margaret Rose?")


@pytest.mark.parametrize(
    ("question", "text", "answers"),
    [
        ("What year did Tesla die?", "Tesla's patents were upheld in 1903, Marconi's in 1904.", False),
        ("What year did Tesla die?", "Tesla died on 7 January 1943 in New York.", True),
        ("When did Tesla die?", "After his death in 1943 his papers went to Belgrade.", True),
        ("When did the Panthers win the Super Bowl?", "The Panthers won Super Bowl 50 in 2016.", True),
        ("When did the Panthers win the Super Bowl?", "The Panthers played Super Bowl 50 in 2016.", False),
        ("When is the next council meeting?", "The next meeting will be held on 10 December 2026.", True),
        ("When was the Treaty of Rome?", "The Treaty of Rome dates from 1957.", True),
    ],
    ids=[
        "a-year-beside-the-name",
        "died",
        "death",
        "won-for-win",
        "played-is-not-won",
        "meeting",
        "names-only",
    ],
)
def test_a_date_question_needs_the_text_to_speak_of_what_happened(
    question: str, text: str, answers: bool
) -> None:
    assert mentions_event(text, question) is answers


def test_a_year_beside_the_name_does_not_answer_when_it_happened() -> None:
    question = "What year did Tesla die?"
    patents = "Tesla's patents were upheld in 1903, Marconi's in 1904."
    verdict = check_responsiveness(question_focus(question), [_claim(patents, patents)], None)
    assert not verdict.responsive
    assert "says not what happened then" in verdict.reason
    # The passage may speak of it where the claim only gives the date.
    died = f"{patents} Tesla died in New York in 1943."
    verdict = check_responsiveness(question_focus(question), [_claim("Tesla: 1856-1943.", died)], None)
    assert verdict.responsive, verdict.reason


def test_places_where_one_boards_waits_or_stays() -> None:
    assert fills_answer_type(
        "The night ferry leaves from pier 3 at eleven.", "place", "Where does the night ferry leave from?"
    )
    assert fills_answer_type("Rangers check permits at the hut.", "place", "Where are permits checked?")
    assert fills_answer_type("Buses wait at the depot overnight.", "place", "Where do the buses wait?")
    assert not fills_answer_type(
        "The night ferry leaves at eleven.", "place", "Where does the night ferry leave from?"
    )


def test_a_role_answers_who_must_approve() -> None:
    question = "Who must approve a first-class train ticket?"
    assert fills_answer_type(
        "First-class tickets need the written approval of your department head.", "person", question
    )
    assert not fills_answer_type("First-class tickets are rarely approved.", "person", question)


def test_a_role_answers_whose_duty_it_is_and_a_frequency_how_often() -> None:
    # "Who presents ...?" asks whose recurring duty it is: a role holds it as a name does.
    presents = "Who presents the accounts at the annual general meeting?"
    assert fills_answer_type("The treasurer presents the accounts at the meeting.", "person", presents)
    assert not fills_answer_type("The accounts are presented at the meeting.", "person", presents)
    # "Who is ..." asks who someone is; a role does not name them.
    assert not fills_answer_type("The treasurer keeps the accounts.", "person", "Who is the treasurer?")
    often = "How often should the filter be cleaned?"
    assert answer_type_of(often) == "number"
    for said in (
        "Clean the filter once a week.",
        "Rinse it daily.",
        "Clean it twice a month.",
        "Clean it 3 times a year.",
    ):
        assert fills_answer_type(said, "number", often), said
    assert not fills_answer_type("Twist the filter anticlockwise and lift it out.", "number", often)
    elections = "How often do Parliament elections take place?"
    assert fills_answer_type("The elections take place every five years.", "number", elections)


def test_a_claim_about_another_kind_of_what_was_asked_does_not_answer() -> None:
    prices = "A full plot costs 60 pounds a year and a raised bed costs 25 pounds a year."
    half = "How much does a half plot cost?"
    assert other_kind(half, prices, prices) == "full plot (asked: half plot)"
    # "half" elsewhere in the passage does not make the full plot a half one.
    assert other_kind(half, prices, f"{prices} Members over 65 pay half.") == "full plot (asked: half plot)"
    # A table row's header says what its figures are: "meals per day" under "Daily allowances".
    row, table = "| abroad | 60 euros | 160 euros |", "## Daily allowances\n| abroad | 60 euros | 160 euros |"
    meals = "How much is the meal allowance per day abroad?"
    assert other_kind(meals, row, table) == "daily allowances (asked: meal allowance)"
    assert (
        other_kind(meals, row, table, "Daily allowances | trip | meals per day | hotel per night |") is None
    )
    assert other_kind("How much does a raised bed cost?", prices, prices) is None
    assert other_kind("How much does a plot cost?", prices, prices) is None
    # "per year" says how often, not which year; "the last three" narrows no noun.
    typical = "How many tons of carbon does the Amazon absorb in a typical year?"
    assert other_kind(typical, "It stored 0.6 tons of carbon per hectare per year.", "") is None
    assert (
        other_kind("How many points were scored in the last three minutes?", "in the final three minutes", "")
        is None
    )
    verdict = check_responsiveness(question_focus(half), [_claim(prices, prices)], None)
    assert not verdict.responsive
    assert "speaks of another kind: full plot (asked: half plot)" in verdict.reason
    # The passage says which permit the price is for, though the claim does not.
    permit = "Every hiker who stays overnight needs an overnight permit. The permit costs 25 euros."
    claim = "The permit costs 25 euros."
    assert other_kind("How much does a day permit cost?", claim, permit) is not None
    assert other_kind("How much does an overnight permit cost?", claim, permit) is None


def test_an_outage_report_answers_when_it_started_and_what_caused_it() -> None:
    report = (
        "Incident report: checkout outage on 14 September 2026\n\n"
        "Timeline\n"
        "09:12 The first checkout errors were logged.\n"
        "09:58 The cause was found: the disk of the orders database server was full.\n"
    )
    started = "When did the checkout outage start?"
    # A title states nothing, so it is no answer, however many of the question's words it holds.
    selection = select_evidence(started, [_read(1, report, ("outage",))], None)
    assert selection.best is not None and selection.best.text.startswith("09:12")
    assert fills_answer_type("09:12 The first checkout errors were logged.", "date", started)
    # A time of day answers when an event of one day began, not when a bakery opened.
    assert not fills_answer_type("The shop is open 6:30 to 13:00.", "date", "When did the bakery open?")
    caused = "What caused the checkout outage?"
    assert fills_answer_type("The cause was found: the disk was full.", "reason", caused)
    assert not fills_answer_type("The disk was full.", "reason", caused)


LIDO = (
    "Brennick Lido is an outdoor, unheated 50-metre pool on the south side of Alder Park. "
    "It opened in 1937 and was restored in 2019 after eight years of closure."
)
LIGHTHOUSE = (
    "The light was designed by the engineer Ingrid Falk, one of the first women to work for the national "
    "lighthouse board. Keepers lived on the skerry until 1987, when the light was automated. The last "
    "keeper, Olof Brandt, served for 22 years."
)


def test_a_who_question_for_a_role_is_answered_only_by_a_claim_that_names_the_role() -> None:
    first = "Who was the first keeper of Skarvholm Lighthouse?"
    designer = (
        "The light was designed by the engineer Ingrid Falk, one of the first women to work for the board."
    )
    assert absent_role(first, designer) == "keeper"
    assert absent_role(first, "The last keeper, Olof Brandt, served for 22 years.") is None
    assert absent_role(first, "Olof Brandt served for 22 years.", "Keepers") is None
    # No role asked: a deed, or a role a clause goes on with.
    assert absent_role("Who designed Skarvholm Lighthouse?", designer) is None
    assert (
        absent_role("Who is the person responsible for backups?", "Sam is responsible for backups.") is None
    )
    verdict = check_responsiveness(question_focus(first), [_claim(designer, LIGHTHOUSE)], None)
    assert not verdict.responsive
    assert "names no keeper (asked who)" in verdict.reason
    # A role named by its deed ("led" for the leader), and another one of the role: the last keeper.
    leader = "Who was the leader when the Franks entered the Euphrates valley?"
    assert absent_role(leader, "A Norman named Oursel led a force into the upper Euphrates valley.") is None
    last = "The last keeper, Olof Brandt, served for 22 years."
    assert other_kind(first, last, LIGHTHOUSE) == "last keeper (asked: first keeper)"
    assert other_kind("Who is the head coach?", "Ann Berg is the team's coach.", "") is None
    verdict = check_responsiveness(question_focus(first), [_claim(last, LIGHTHOUSE)], None)
    assert "speaks of another kind: last keeper (asked: first keeper)" in verdict.reason


def test_a_figure_after_number_names_and_what_model_asks_for_a_name() -> None:
    bus = "Which bus goes to the lido?"
    assert unnamed_kind(bus, "The number 14 bus stops at the park gates.") is None
    assert unnamed_kind(bus, "Route 7 buses stop at the gates.") is None
    assert unnamed_kind(bus, "Two buses stop at the gates.") == "bus"
    model = "What model is the laptop new staff receive?"
    received = "Every new employee receives a laptop, a headset and a security key on their first day."
    assert unnamed_kind(model, received) == "model"
    assert unnamed_kind(model, "Laptop | ThinkPad T16 | 4 years") is None
    # Most "what" questions are answered by common words.
    assert unnamed_kind("What fuel did the first light burn?", "The first light burned rapeseed oil.") is None
    verdict = check_responsiveness(question_focus(model), [_claim(received, received)], None)
    assert "names no model (asked what)" in verdict.reason


def test_when_it_opened_is_not_answered_by_its_season_nor_by_a_claim_cut_from_the_date() -> None:
    opened = "When did Brennick Lido open?"
    season = "The lido is open from 1 May to 30 September."
    assert states_instead(season, opened)
    assert not states_instead("It opened in 1937 and was restored in 2019.", opened)
    assert not states_instead(season, "When is the lido open?")
    restored = "It was restored in 2019 after eight years of closure."
    assert cut_event(restored, LIDO, opened)
    assert not cut_event("It opened in 1937.", LIDO, opened)
    assert not cut_event(restored, LIDO, "When was Brennick Lido restored?")
    for claim in (season, restored):
        verdict = check_responsiveness(question_focus(opened), [_claim(claim, f"{LIDO} {season}")], None)
        assert not verdict.responsive, claim
        assert "says not what happened then" in verdict.reason
    # The heading names what "it" is.
    it_opened = ClaimInContext(
        "claim-1", "It opened in 1937 and was restored in 2019.", LIDO, "Brennick Lido"
    )
    answered = check_responsiveness(question_focus(opened), [it_opened], None)
    assert answered.responsive, answered.reason


def test_the_one_questions_go_to_answers_who_handles_them() -> None:
    handles = "Who handles payroll questions?"
    assert fills_answer_type("Payroll questions go to Priya Nair in Finance.", "person", handles)
    assert fills_answer_type("Payroll questions are forwarded to the finance team.", "person", handles)
    assert not fills_answer_type(
        "Payroll questions go to Finance in Leeds.", "person", "Who was born in Leeds?"
    )


def test_a_short_table_row_is_an_answer_of_its_own() -> None:
    prices = (
        "## Prices\n\n| Ticket | Price |\n| --- | --- |\n| Adult swim | £6.50 |\n"
        "| Child swim (under 16) | £3.20 |\n| Season pass | £145 |\n\n"
        "Children under 8 must be accompanied in the water by an adult."
    )
    selection = select_evidence("How much is a season pass at the lido?", [_read(1, prices)], None)
    assert [sentence.text for sentence in selection.sentences][:1] == ["| Season pass | £145 |"]
    # A table's interval column says how often: "| Headset | Jabra Evolve2 55 | 3 years |".
    often = "How often is the headset replaced?"
    assert fills_answer_type("| Headset | Jabra Evolve2 55 | 3 years |", "number", often)
    assert not fills_answer_type("The crossing takes 40 minutes.", "number", "How often does the boat leave?")


def test_phone_numbers_weights_each_ones_and_conditions_are_narrower_kinds() -> None:
    bikes = (
        "Velo Norde is the scheme of Nordhavn, with 64 docking stations and 900 bikes, 300 of them electric."
    )
    phone = "What is the phone number of Velo Norde?"
    assert answer_type_of(phone) == "number"
    assert not fills_answer_type(bikes, "number", phone)
    assert fills_answer_type("Call the help desk on +45 33 12 34 56.", "number", phone)
    weigh = "How much does the water tank weigh?"
    assert not fills_answer_type("The committee will buy a water tank costing up to £350.", "number", weigh)
    assert fills_answer_type("The tank weighs 40 kg when empty.", "number", weigh)
    assert fills_answer_type("It is a 40 kg tank.", "number", weigh)
    each = "How many electric bikes are at each station?"
    assert not fills_answer_type(bikes, "number", each)
    assert fills_answer_type("Each station has four electric bikes.", "number", each)
    assert fills_answer_type("There are 4 electric bikes per station.", "number", each)
    # A table row's header may say what its figures are per.
    assert fills_answer_type("| abroad | 60 euros |", "number", "How much is the allowance per day abroad?")
    # "What salary" asks for money, not "27 days of annual leave".
    salary = "What salary do new staff get?"
    assert answer_type_of(salary) == "number"
    assert not fills_answer_type(
        "Full-time staff get 27 days of annual leave plus public holidays.", "number", salary
    )
    engineer = "When should I call an engineer?"
    assert fills_answer_type(
        "If an error comes back three times in a day, call an engineer.", "date", engineer
    )
    assert not fills_answer_type("Engineers service the boiler.", "date", engineer)


def test_an_faq_question_on_its_own_line_heads_its_answer_even_when_it_is_the_question_asked() -> None:
    faq = (
        "## Frequently asked questions\n\nHow old do I have to be to ride?\n\nRiders must be at least 16.\n\n"
        "What happens if a station is full?\n\n"
        "The app shows the nearest station with free docks, and you get 15 extra minutes for free."
    )
    selection = select_evidence("What happens if a station is full?", [_read(1, faq)], None)
    assert selection.sentences[0].text.startswith("The app shows the nearest station")
    assert selection.sentences[0].lexical == 1.0
    # And the passage around it holds the question's words too (the abstention gate reads that).
    assert selection.sentences[0].context == 1.0
    # Inside a line, a copy of the question lends nothing: a list of open questions answers none.
    notes = "Open questions: what happens if a station is full? The app shows the map."
    scored = select_evidence("What happens if a station is full?", [_read(1, notes)], None)
    assert all(sentence.lexical < 1.0 for sentence in scored.ranked)


def test_how_do_i_is_answered_by_a_sentence_that_names_the_deed() -> None:
    guide = (
        "The condensate pipe can freeze in very cold weather. Pour warm water, not boiling water, over the "
        "pipe to thaw\nit."
    )
    selection = select_evidence("How do I thaw a frozen condensate pipe?", [_read(1, guide)], None)
    assert selection.sentences[0].text.startswith("Pour warm water")
    freeze = "The condensate pipe can freeze in very cold weather."
    verdict = check_responsiveness(
        question_focus("How do I thaw a frozen condensate pipe?"), [_claim(freeze, guide)], None
    )
    assert not verdict.responsive
    assert "answer type not found" in verdict.reason
    # An irregular form meets its base: "took" the minutes, "Minutes taken by".
    assert set(content_terms("Who took the minutes?")) <= set(
        content_terms("| Minutes taken by | Dev Patel |")
    )


def test_a_claim_about_the_opposite_deed_does_not_answer_and_a_yes_or_no_question_is_answered_by_it() -> None:
    leave = "By what time do I have to vacate my bed on the day I leave the hostel?"
    arrive = "If you expect to arrive after 22:30, phone reception before 20:00 on your arrival day."
    assert opposite_event(leave, arrive) == ("vacate", "arrive")
    assert opposite_event(leave, "Check-out is by 10:15.") is None
    assert opposite_event("What time does the pool open?", "The pool closes at 18:00.") == ("open", "closes")
    assert (
        opposite_event(
            "When does the kitchen close on Sundays?", "It is open until 22:00 but closes at 20:30."
        )
        is None
    )
    verdict = check_responsiveness(question_focus(leave), [_claim(arrive, arrive)], None)
    assert not verdict.responsive
    assert "says 'arrive' where the question asks 'vacate'" in verdict.reason
    # "Is the clinic open on Sundays?" is answered by "It is closed on Sundays."
    assert opposite_event("Is the clinic open on Sundays?", "It is closed on Sundays.") is None


def test_a_claim_that_opens_with_a_pronoun_has_the_words_it_refers_back_to() -> None:
    passage = (
        "Hamid Jaafari is the hostel's Housekeeping Lead. Lost property goes to him; it is kept for 30 days, "
        "then donated."
    )
    question = question_focus("How long does the hostel hold on to lost property?")
    kept = ClaimInContext(claim_id="claim-1", text="it is kept for 30 days, then donated.", context=passage)
    assert not check_responsiveness(question, [kept], None).responsive
    referring = ClaimInContext(
        claim_id="claim-1",
        text="it is kept for 30 days, then donated.",
        context=passage,
        referent="Lost property goes to him; ",
    )
    verdict = check_responsiveness(question, [referring], None)
    assert verdict.responsive, verdict.reason


def test_a_number_inside_a_range_an_abbreviation_and_a_contraction() -> None:
    # "My kitchen is about 19 °C": the row for 18–20 °C holds it; 4 °C does not.
    assert within_a_range("19", "| 18–20 °C (cool) | 1:5:5 | Once a day |")
    assert not within_a_range("19", "| Fridge, about 4 °C | 1:3:3 |")
    question = question_focus("My kitchen is about 19 °C. What feeding ratio should I use?")
    cool = "| 18–20 °C (cool) | 1:5:5 | 10–12 hours | Once a day |"
    verdict = check_responsiveness(question, [_claim(cool, "| Kitchen temperature | Ratio |\n" + cool)], None)
    assert "not in its passage" not in verdict.reason
    # "AGM" stands for the capitalised words whose initials it spells.
    agm = question_focus("Who became chair at the 2024 AGM?")
    assert agm.spelled_out("Minutes of the Annual General Meeting") == {"agm"}
    assert agm.spelled_out("The Annual Report of the General Manager") == set()
    assert question_focus("Who became chair in 2024?").spelled_out("The Annual General Meeting") == set()
    # "doesn't" is no term of what the question is about.
    assert set(question_focus("Why doesn't the baker trust the float test?").weights) == {
        "baker",
        "trust",
        "float",
        "test",
    }
    # A reason given as grounds.
    assert fills_answer_type(
        "The scheme was not taken forward, mainly on cost and privacy grounds.",
        "reason",
        "Why did they decide against CCTV?",
    )


def test_how_do_i_is_answered_by_an_faq_answer_whose_question_names_the_deed() -> None:
    faq = (
        "**Can I extend my stay?** Usually, yes, but only if you ask at reception before 10:15 on the "
        "morning you were due to leave."
    )
    answer = (
        "Usually, yes, but only if you ask at reception before 10:15 on the morning you were due to leave."
    )
    question = question_focus("How do I extend my stay at the hostel?")
    bare = ClaimInContext(claim_id="claim-1", text=answer, context=faq)
    assert "answer type not found" in check_responsiveness(question, [bare], None).reason
    asked = ClaimInContext(claim_id="claim-1", text=answer, context=faq, asked="**Can I extend my stay?**")
    assert "answer type found" in check_responsiveness(question, [asked], None).reason


def test_the_outgoing_holder_is_not_who_became_the_role_and_a_quorum_counts_no_households() -> None:
    question = "Who became chair of the residents' association at the 2024 AGM?"
    assert absent_role(question, "Chair: Priya Venkataraman (outgoing Chair)") == "chair but a former one"
    assert (
        absent_role(question, "Chair: Desmond Achterberg (elected 26 votes to 15 over Hettie Marsh)") is None
    )
    assert absent_role("Who was the outgoing chair?", "Chair: Priya Venkataraman (outgoing Chair)") is None
    households = "How many households are members of the residents' association?"
    quorum = "41 members present (quorum is 25, so the meeting was quorate)."
    assert not fills_answer_type(quorum, answer_type_of(households), households)
    assert fills_answer_type("Its membership is 120.", answer_type_of(households), households)


def test_a_value_of_a_measure_says_the_word_that_names_it() -> None:
    question = "What is the distance of the longest hike on the field trip?"
    assert measured_terms(question, "Thursday is the big day: a 11.4 km circuit.") == {stem("distance")}
    assert measured_terms(question, "Thursday is the big day.") == set()
    assert measured_terms("What oven temperature should I use?", "Heat the oven to 220 °C.") == {
        stem("temperature")
    }
    # The crediting needs the question's word: a value alone adds nothing.
    assert measured_terms("How long is the hike?", "a 11.4 km circuit") == set()
    # An address says where to email, a number where to phone, a web address which website.
    contact = "Contact Dawn Ellis at membership@riversiderovers.org.uk or call 01632 960 123."
    assert stem("email") in measured_terms("who do i email about a taster session", contact)
    assert stem("phone") in measured_terms("whats the phone number for the club", contact)
    assert measured_terms("whats the phone number for the club", "Subs rose from 2024 to 2025.") == set()
    assert stem("website") in measured_terms("whats ur website", "book online at fixpointrepairs.co.uk")
    # Parking "on site" is no website.
    assert measured_terms("is there parking on site", "book online at fixpointrepairs.co.uk") == set()


def test_a_measure_s_value_is_credited_to_the_claim_not_taken_out_of_the_question() -> None:
    # "a fee of €600 is charged." says the fee in words and in money: the question keeps the term
    # "fee", and the claim holds it, rather than the question losing it and the claim its one term.
    question = "What is the fee if a bike is not returned?"
    assert stem("fee") not in answered_kind_terms(question, "a fee of €600 is charged.")
    passage = (
        "A bike that is not returned within 24 hours is reported as stolen, and a fee of €600 is charged."
    )
    fee = ClaimInContext(
        claim_id="claim-1", text="a fee of €600 is charged.", context=passage, heading="Bikes"
    )
    verdict = check_responsiveness(question_focus(question), [fee], None)
    assert verdict.responsive, verdict.reason


def test_a_day_the_question_asks_about_is_not_answered_by_another_day_or_a_date() -> None:
    question = "What's the last sailing back from Inchkerran on a Saturday this winter?"
    fridays = "On Fridays the 18:05 from Ardmore departs at 18:35 instead, to connect with the bus."
    assert other_day(question, "The return sailing from Inchkerran leaves at 19:20.", fridays) == (
        "Friday (asked: Saturday)"
    )
    christmas = "On Christmas Eve and Hogmanay (31 December) the last sailing is the 15:40 from Ardmore."
    assert other_day(question, christmas) == "31 December (asked: Saturday)"
    # A season's dates say when it runs, Saturdays included.
    market = "When does the market run on Saturdays?"
    assert other_day(market, "The market runs from 1 April to 30 September, 8am to 1pm.") is None
    assert other_day(market, "The market runs until 30 September.") is None
    assert other_day(question, "| Saturday | 08:30, 11:45, 15:40 | 09:15, 12:30, 16:25 |") is None
    # A range of days, weekends and weekdays hold the days they span; a claim of no day is left be.
    friday = "What time does the surgery close on a Friday?"
    assert other_day(friday, "The surgery closes for lunch from 1.00pm to 2.00pm Monday to Friday.") is None
    assert other_day(friday, "Late appointments run until 7.30pm on weekdays.") is None
    assert other_day(friday, "The surgery closes at 4.00pm.") is None
    assert other_day(friday, "On weekends the phone line is open from 9.00am.") == (
        "Saturday, Sunday (asked: Friday)"
    )
    assert other_day("When does the surgery close?", "It closes at 4.00pm on Fridays.") is None
    # Through the responsiveness check, with the sentence the claim goes on from.
    passage = f"{fridays} The return sailing from Inchkerran leaves at 19:20."
    claim = ClaimInContext(
        claim_id="claim-1",
        text="The return sailing from Inchkerran leaves at 19:20.",
        context=passage,
        heading="Winter timetable > Important notes",
        before=fridays,
    )
    verdict = check_responsiveness(question_focus(question), [claim], None)
    assert not verdict.responsive
    assert "Friday (asked: Saturday)" in verdict.reason


def test_words_of_the_same_sense_contractions_and_a_doubled_consonant() -> None:
    # "stopped" as "ended", "allowed" as "permitted", "yearly" as "annual"; the consonant that "-ed"
    # and "-ing" double is one ("permitted", "stopped"), while an "-er" noun keeps its own.
    assert measured_terms("When did the mill stop grinding?", "Commercial milling ended in 1961.") == {"stop"}
    assert measured_terms("Am I allowed to use a sprinkler?", "Sprinklers are not permitted.") == {"allow"}
    assert measured_terms("Am I allowed to use a sprinkler?", "Sprinklers are allowed.") == set()
    assert measured_terms("Who do I ring on a Sunday?", "Members can call our on-call dentist.") == {"ring"}
    assert [stem(word) for word in ("permitted", "stopped", "running", "letter", "called")] == [
        "permit",
        "stop",
        "run",
        "lett",
        "call",
    ]
    rent = "How much is the yearly rent on a half plot?"
    row = "| Half plot | 125 m² | £52.00 | £8.00 |"
    table = (
        "Rents are as follows:\n| Plot size | Area | Annual rent | Water charge |\n| --- | --- | --- | --- |\n"
        + row
    )
    assert other_kind(rent, row, table, "| Plot size | Area | Annual rent | Water charge |") is None
    # "what's", "I'm": no terms of what the question is about; "what days" asks for days.
    assert set(question_focus("what's the minimum python version for logsift 3.0").weights) == {
        "minimum",
        "python",
        "version",
        "logsift",
        "3.0",
    }
    assert "i'm" not in question_focus("I'm on the care plan: who do I ring?").weights
    assert answer_type_of("What days does the hygienist work?") == "date"


def test_opening_hours_close_a_price_without_a_noun_and_a_name_the_passage_lacks() -> None:
    # A range of clock times says when it opens and closes.
    question = "What time does Brookfield Dental close on a Friday?"
    assert measured_terms(question, "Friday 8.30am - 4.00pm") == {stem("close")}
    assert measured_terms(question, "Friday appointments start at 8.30am") == set()
    # "How much is it to get in?" asks for a price; "how much flour" or "how much is needed" do not.
    museum = "How much is it to get into the Dunford Valley Museum?"
    assert not fills_answer_type(
        "Dunford Valley Museum - Gallery 2 - 5 April to 28 September", "number", museum
    )
    assert fills_answer_type("Entry is £6.50 for adults.", "number", museum)
    assert fills_answer_type("Use 400 g.", "number", "How much is needed for one loaf?")
    # A name the question gives that neither the claim nor its passage holds: another thing's price.
    plan = (
        "For £16.50 a month by Direct Debit, the Brookfield Care Plan covers two routine examinations "
        "and two 30-minute hygienist visits each year."
    )
    claim = ClaimInContext(claim_id="claim-1", text=plan, context=plan, heading="Brookfield Care Plan")
    verdict = check_responsiveness(
        question_focus("How much does Invisalign cost at Brookfield?"), [claim], None
    )
    assert not verdict.responsive
    assert "the question's invisal not in its passage" in verdict.reason
    care = check_responsiveness(
        question_focus("How much does the Care Plan cost at Brookfield?"), [claim], None
    )
    assert care.responsive, care.reason


CONSTITUTION = (
    "The club shall be called Fenbrook Harriers Running Club. The Club is affiliated to England Athletics."
)
CLUB_TITLE = "Fenbrook Harriers Running Club - Constitution"


@pytest.mark.parametrize(
    ("question", "claim", "context", "responsive"),
    [
        # Only the document's name ties the claim to the question: every passage of it would.
        (
            "Who looks after the money for Fenbrook Harriers?",
            "The club shall be called Fenbrook Harriers Running Club.",
            CONSTITUTION,
            False,
        ),
        (
            "Who looks after the money for Fenbrook Harriers?",
            "Treasurer: Ravi Chandra looks after the money.",
            "Treasurer: Ravi Chandra looks after the money.",
            True,
        ),
        # A question that names nothing but the title is not held for it.
        (
            "Where is Fenbrook Harriers?",
            "Fenbrook Harriers is based at the Fenbrook Leisure Centre, Station Road.",
            CONSTITUTION,
            True,
        ),
    ],
)
def test_a_claim_that_shares_only_its_document_s_title_with_the_question_does_not_answer_it(
    question: str, claim: str, context: str, responsive: bool
) -> None:
    claim_in_context = ClaimInContext(
        claim_id="claim-1", text=claim, context=context, heading=f"{CLUB_TITLE} 1. Name", title=CLUB_TITLE
    )
    verdict = check_responsiveness(question_focus(question), [claim_in_context], None)
    assert verdict.responsive is responsive, verdict.reason
    if not responsive:
        assert "shares only its document's title with the question" in verdict.reason


def test_a_compound_the_question_names_must_be_in_the_passage() -> None:
    question = "Who is vice-chair of Fenbrook Harriers?"
    officers = "Chair: Helen Marsh"
    verdict = check_responsiveness(question_focus(question), [_claim(officers, officers)], None)
    assert not verdict.responsive
    assert "vice-ch" in verdict.reason
    answer = ClaimInContext(
        claim_id="claim-1",
        text="Vice-chair: Tom Aldridge",
        context="Vice-chair: Tom Aldridge",
        heading=CLUB_TITLE,
    )
    assert check_responsiveness(question_focus(question), [answer], None).responsive


def test_a_web_page_s_title_counts_as_its_heading_but_a_file_name_does_not() -> None:
    page = _read(
        1,
        "Membership is free.",
        ("Borrowing and membership",),
        "Borrowing and membership | Hartwell Green Library",
    )
    assert (
        heading_words(page.row)
        == "Borrowing and membership | Hartwell Green Library Borrowing and membership"
    )
    # A title the path already gives, or one made up from the file's name, adds nothing.
    assert heading_words(_read(1, "Text.", ("Fees", "Junior"), "Fees").row) == "Fees Junior"
    assert heading_words(_read(1, "Text.", ("Fees",), "page-1").row) == "Fees"
    selection = select_evidence(
        "What time does Hartwell Green Library shut on a Thursday?",
        [
            page,
            _read(
                2,
                "- Thursday: 9:30am – 7:30pm\n- Friday: 9:30am – 5:00pm",
                ("Opening hours",),
                "Opening hours | Hartwell Green Library",
            ),
        ],
        None,
    )
    assert selection.best is not None and selection.best.text == "Thursday: 9:30am – 7:30pm"
    assert selection.best.lexical == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Adult members may have up to 15 items on loan at once, no more than 3 of them DVDs.", False),
        ("| DVDs and Blu-ray | 1 week | 50p per day |", True),
        ("Brown bins are delivered within 15 working days of payment.", True),
        ("Report it by 5pm the day after your collection day.", True),
        ("The trail is 11.4 km.", True),
        ("The war lasted from 1939 to 1945.", True),
        ("Bins are collected every Monday.", False),
        ("I am a member and so am I.", False),
        ("It lasts a fortnight, or 45km on foot.", True),
    ],
)
def test_how_long_is_answered_by_a_length_of_time_or_distance_not_any_figure(text: str, found: bool) -> None:
    assert fills_answer_type(text, "number", "How long can I keep a DVD?") is found


@pytest.mark.parametrize(
    ("question", "text", "found"),
    [
        (
            "how long does the lead check take",
            "You must bring your own rope of at least 40 metres and pass a Lead Check (£10, one-off).",
            False,
        ),
        ("how long does the lead check take", "The lead check takes about 20 minutes.", True),
        ("How long will the power cut last?", "The cable runs 300 m under the road.", False),
        ("How long will the power cut last?", "Supply is off for 30 to 45 minutes.", True),
        ("how long is the trail", "The trail is 5 miles long.", True),
    ],
    ids=["rope", "minutes", "cable", "supply-off", "trail"],
)
def test_how_long_a_thing_takes_or_lasts_is_answered_by_a_length_of_time(
    question: str, text: str, found: bool
) -> None:
    assert fills_answer_type(text, "number", question) is found


def test_a_count_of_members_counts_people() -> None:
    question = "How many people have to turn up for the AGM to go ahead?"
    assert fills_answer_type("The quorum is 20 members or 10% of the voting membership.", "number", question)
    assert not fills_answer_type("The quorum is 20 motions or 10% of the votes.", "number", question)


def test_opening_hours_say_when_it_shuts_and_a_condition_how_to_qualify() -> None:
    assert mentions_event("Thursday: 9:30am – 7:30pm", "What time does the library shut on a Thursday?")
    assert not mentions_event("Thursday: open for study", "What time does the library shut on a Thursday?")
    question = "How do I qualify for the 7-year warranty?"
    condition = "It is extended to 7 years if the unit is registered within 30 days of installation."
    selection = select_evidence(
        question, [_read(1, f"The standard warranty is 2 years. {condition}", ("Warranty",))], None
    )
    assert selection.best is not None and selection.best.text == condition and selection.best.type_match


def test_a_list_item_is_read_with_the_line_that_leads_in_to_it() -> None:
    passage = (
        "**Every 3 months (owner):**\n\n- Clean the magnetic filter on the return pipe.\n- Check the gauge."
    )
    selection = select_evidence(
        "How often should I clean the magnetic filter?", [_read(1, passage, ("Maintenance",))], None
    )
    assert selection.best is not None
    assert selection.best.text == "Clean the magnetic filter on the return pipe."
    assert selection.best.type_match


def test_a_contracted_question_word_asks_as_the_whole_one_does() -> None:
    assert answer_type_of("What's the price of a Gold service?") == "number"
    assert answer_type_of("What's the yearly fee for a student?") == "number"
    assert answer_type_of("Who's the treasurer?") == "person"
    assert not fills_answer_type(
        "Every Gold service includes a free re-check.", "number", "What's the price of it?"
    )


def test_a_claim_that_meets_the_question_only_in_its_neighbours_and_the_title_does_not_answer() -> None:
    title = "Spokesmith Cycles - Workshop Price List & Terms"
    passage = (
        "If an adjustment we made goes out of true, we will re-adjust it free of charge. "
        "Every Silver and Gold service includes one free re-check within six weeks."
    )
    claim = ClaimInContext(
        claim_id="claim-1",
        text="If an adjustment we made goes out of true, we will re-adjust it free of charge.",
        context=passage,
        heading=f"{title} Terms and conditions",
        title=title,
    )
    verdict = check_responsiveness(
        question_focus("What's the price of a Gold service at Spokesmith Cycles?"), [claim], None
    )
    assert not verdict.responsive
    assert "shares only its document's title with the question" in verdict.reason


def test_a_short_form_meets_the_word_a_document_spells_out() -> None:
    assert (
        content_terms("max nozzle temp, photos, wifi")
        == content_terms("Maximum nozzle temperature, photographs, Wi-Fi")[:5]
    )
    # As typed on a phone: "a bday cake for 20 ppl", "after feb half term".
    assert content_terms("bday cake 20 ppl feb") == content_terms("Birthday cake 20 people February")
    specs = (
        "## Specifications\n\n| Item | Value |\n|---|---|\n| Maximum bed temperature | 110 °C |\n"
        "| Maximum nozzle temperature | 285 °C |\n| Filament diameter | 1.75 mm |"
    )
    selection = select_evidence("What's the max nozzle temp?", [_read(1, specs, ("Specifications",))], None)
    assert selection.best is not None and selection.best.text == "| Maximum nozzle temperature | 285 °C |"


def test_a_cause_column_answers_why_and_a_reasonless_row_does_not() -> None:
    row = "| Printer will not connect to Wi-Fi | 5 GHz network selected | Select a 2.4 GHz network. |"
    question = "Why won't my printer connect to my wifi?"
    assert fills_answer_type(row, "reason", question, "| Symptom | Likely cause | Fix |")
    assert not fills_answer_type(row, "reason", question, "| Symptom | Setting | Fix |")
    assert not fills_answer_type(row, "reason", question)


def test_every_so_many_hours_of_use_says_how_often() -> None:
    question = "How often do I need to grease the rods?"
    assert fills_answer_type("**Every 50 printing hours:** Grease the rods.", "number", question)
    assert fills_answer_type(
        "Change the oil every 6,000 miles.", "number", "How often should I change the oil?"
    )
    assert not fills_answer_type("Grease the rods with the supplied PTFE grease.", "number", question)


def test_words_people_use_for_the_same_deed_or_thing() -> None:
    # "practise" as "rehearse", "shut" as "close", "start" as "begin", and a
    # "second" driver is an additional one, no other kind of driver.
    assert measured_terms("When does the choir practise?", "Rehearsals are on Wednesdays.") == {"practis"}
    assert measured_terms("When does the café shut?", "The café closes at 4pm.") == {"shut"}
    assert measured_terms("When does term start?", "Term begins on 4 September.") == {"start"}
    assert measured_terms("Who do I tell if my son is off?", "If your child is absent, call us.") == {"son"}
    question = "How much extra to add a second driver?"
    row = "Additional driver £9 per day (max £90 per rental)"
    assert other_kind(question, row, f"Extras\n{row}\nYoung driver £15 per day") is None
    assert other_kind("How much is a learner driver?", row, f"Extras\n{row}\nYoung driver £15 per day") == (
        "additional driver (asked: learner driver)"
    )


def test_which_night_of_the_week_asks_for_a_day() -> None:
    question = "Which night of the week does the choir practise?"
    assert answer_type_of(question) == "date"
    assert set(question_focus(question).weights) == {"choir", "practis"}
    assert fills_answer_type("Rehearsals take place every Wednesday from 7:30 pm.", "date", question)
    assert not fills_answer_type("The choir year has three terms of 12 rehearsals.", "date", question)
    passage = (
        "Rehearsals take place every Wednesday during term time from 7:30 pm to 9:30 pm.\n"
        "The choir year is divided into three terms of 12 rehearsals each. In the week before each "
        "concert there is an additional rehearsal."
    )
    selection = select_evidence(
        question, [_read(1, passage, ("Community Choir handbook", "Rehearsals"))], None
    )
    assert selection.best is not None and selection.best.text.startswith(
        "Rehearsals take place every Wednesday"
    )


def test_a_row_below_a_cut_takes_its_columns_from_the_text_before_the_passage() -> None:
    before = "| Symptom | Likely cause | Fix |\n|---|---|---|\n| Bed lifts | Bed too cool | Raise it. |"
    passage = "| Printer will not connect to Wi-Fi | 5 GHz network selected | Pick 2.4 GHz. |"
    item = _read(1, passage, ("Problems",))
    item.row.content = SimpleNamespace(before=before)
    (span,) = sentence_spans(passage)
    assert columns_of(item, span) == "| Symptom | Likely cause | Fix |"
    # Prose between them: the row is no part of that table.
    item.row.content = SimpleNamespace(before=before + "\n\nSome prose follows the table.")
    assert columns_of(item, span) == ""


def _table_row(row: str, header: str, after: str = "") -> ClaimInContext:
    """A quoted table row of the printer guide, its header row as its columns."""
    rule = "|" + "---|" * (header.count("|") - 1)
    return ClaimInContext(
        claim_id="claim-1",
        text=row,
        context=f"{header}\n{rule}\n{row}\n\n{after}".strip(),
        heading=f"Forge S3 Guide {header}",
        title="Forge S3 Guide",
        columns=header,
    )


@pytest.mark.parametrize(
    ("claim", "responsive"),
    [
        # The specification row gives the maximum bed temperature; the question asks what to set
        # for PETG, which the passage names only in another sentence. A row says all it is about.
        (
            _table_row(
                "| Maximum bed temperature | 110 °C |",
                "| Item | Value |",
                "Supported filaments include PLA, PETG and ABS.",
            ),
            False,
        ),
        # A row that names it answers.
        (_table_row("| PETG | 80 °C |", "| Filament | Bed temperature |"), True),
    ],
)
def test_an_entry_that_does_not_name_what_the_question_names_does_not_answer(
    claim: ClaimInContext, responsive: bool
) -> None:
    focus = question_focus("What bed temperature should I set for printing PETG on the Forge S3?")
    verdict = check_responsiveness(focus, [claim], None)
    assert verdict.responsive is responsive, verdict.reason
    if not responsive:
        assert "an entry that does not name the question's petg" in verdict.reason


MUSEUM_TITLE = "Harwick Valley Museum - Plan your visit"


@pytest.mark.parametrize(
    ("question", "claim", "responsive"),
    [
        # The café is what the question asks the opening time of; the museum's own hours state a time
        # and "open", and share nothing else with it beyond the title.
        (
            "What time does the café at Harwick Valley Museum open?",
            "We are open on bank holiday Mondays from 11:00 to 16:00.",
            False,
        ),
        # Asked only what the title's subject costs, a price of it answers.
        ("How much does it cost to visit Harwick Valley Museum?", "Adult admission is £8.50.", True),
        # The day the question names is in the claim: the hours answer.
        (
            "What time does Harwick Valley Museum shut on a Saturday?",
            "Saturday hours are 10:00 to 17:00.",
            True,
        ),
    ],
)
def test_a_measure_met_only_by_a_value_does_not_tie_a_claim_to_what_the_question_names(
    question: str, claim: str, responsive: bool
) -> None:
    claim_in_context = ClaimInContext(
        claim_id="claim-1",
        text=claim,
        context=f"{claim} The Exchange Café closes 30 minutes before the museum.",
        heading=f"{MUSEUM_TITLE} Opening hours",
        title=MUSEUM_TITLE,
    )
    verdict = check_responsiveness(question_focus(question), [claim_in_context], None)
    assert verdict.responsive is responsive, verdict.reason
    if not responsive:
        assert "shares only its document's title with the question" in verdict.reason


def _responds(
    question: str, claim: str, context: str = "", heading: str = "", columns: str = ""
) -> tuple[bool, str]:
    """Whether ``claim`` (in ``context``, under ``heading``, which is also its document's title, and
    under a table's ``columns``) answers ``question``, and why."""
    in_context = ClaimInContext(
        claim_id="claim-1",
        text=claim,
        context=context or claim,
        heading=heading,
        title=heading,
        columns=columns,
    )
    verdict = check_responsiveness(question_focus(question), [in_context], None)
    return verdict.responsive, verdict.reason


def test_a_scale_word_after_an_amount_of_money_counts_nothing() -> None:
    # "£5 million" is money; its "million" is no count of the people a hall holds.
    question = "how many people can the village hall hold"
    assert not fills_answer_type(
        "Hirers must hold insurance with cover of at least £5 million.", "number", question
    )
    assert fills_answer_type("The main hall seats 120 people.", "number", question)
    assert fills_answer_type("About two million people visit each year.", "number", "How many people visit?")


def test_every_kind_in_a_list_of_kinds_covers_the_kind_asked() -> None:
    # "all services and repairs" speaks of every repair, a bike repair among them.
    claim = "1. Labour on all services and repairs is guaranteed for 90 days from the date of collection."
    context = f"{claim} This free re-adjustment is not available after a Bronze Service or a single repair."
    assert other_kind("how long is the labour guaranteed after a bike repair", claim, context) is None
    # Without "all", the passage's "single repair" is another kind than the bike repair asked.
    narrow = "Labour on services is guaranteed for 90 days."
    assert other_kind("how long is the labour guaranteed after a bike repair", narrow, f"{narrow} {context}")


@pytest.mark.parametrize(
    ("question", "text", "found"),
    [
        (
            "whats the ip address for the router settings page",
            "Type the address exactly as 192.168.1.254.",
            True,
        ),
        ("whats the ip address for the router settings page", "Log in to the router's settings page.", False),
        # An IP address is not a street.
        ("What is the IP address of the router?", "The office is at 4 Church Lane.", False),
        ("What is the address of the museum?", "We are at 12 High Street, Ashbourne DE6 1AB.", True),
        ("What is the address of the museum?", "The museum is in the town centre.", False),
        ("What's the website for bookings?", "Book online at www.example.org/book.", True),
    ],
)
def test_an_address_question_asks_for_an_address(question: str, text: str, found: bool) -> None:
    assert answer_type_of(question) == "place"
    assert fills_answer_type(text, "place", question) is found


def test_a_question_that_only_mentions_an_address_is_not_typed() -> None:
    assert answer_type_of("What happens if I change my address?") == "any"
    assert answer_type_of("How do I change the IP address?") == "any"


@pytest.mark.parametrize(
    ("question", "claim", "heading", "other"),
    [
        # Another colour of the same light.
        (
            "router light is solid green what does that mean",
            "| Solid blue | WPS pairing successful |",
            "",
            True,
        ),
        ("router light is solid green what does that mean", "| Solid green | Connected |", "", False),
        # Another tier of service.
        ("how long does the gold service take", "Silver Service: 2 working days.", "", True),
        ("how long does the gold service take", "Turnaround: 3 to 5 working days.", "Gold Service", False),
    ],
)
def test_a_claim_about_another_colour_or_tier_does_not_answer(
    question: str, claim: str, heading: str, other: bool
) -> None:
    responsive, reason = _responds(question, claim, heading=heading)
    assert ("speaks of another kind" in reason) is other, reason
    if other:
        assert not responsive


def test_a_holiday_is_answered_only_by_a_claim_about_holidays() -> None:
    question = "what time does the pool open on bank holiday monday"
    ordinary = "| Monday | Lane swimming | 06:30 - 08:30 |"
    responsive, reason = _responds(question, ordinary, context=f"| Day | Session | Times |\n{ordinary}")
    assert not responsive
    assert "not holidays (asked: bank holiday)" in reason
    assert other_day(question, "On bank holidays the pool opens 08:00 - 16:00.") is None
    assert other_day("Is it open on Christmas Eve?", "We close at 14:00 on Christmas Eve.") is None


def test_min_and_pw_are_the_minimum_and_the_password() -> None:
    focus = question_focus("min length for a new wifi pw?")
    assert stem("minimum") in focus.weights and stem("password") in focus.weights
    assert answer_type_of("min length for a new wifi pw?") == "number"
    # "10 min" is ten minutes.
    assert stem("minutes") in question_focus("Is the bus 10 min late?").weights
    # A limit's range says the minimum and the length.
    said = measured_terms(
        "min length for a new wifi pw?", "The password must be between 8 and 63 characters."
    )
    assert {stem("minimum"), stem("length")} <= said
    # A list item's number is not the figure asked for.
    assert not fills_answer_type(
        "5. Type your new Wi-Fi name and new password.", "number", "min length for a pw?"
    )


def test_a_question_typed_without_apostrophes_asks_as_the_whole_one_does() -> None:
    focus = question_focus("whats the ip address for the router")
    assert "what" not in focus.weights and "whats" not in focus.weights
    assert "im" not in question_focus("im an nhs patient, who do i call").weights


def test_a_joined_compound_meets_its_hyphenated_spelling() -> None:
    assert stem("ebike") in content_terms("We service e-bike batteries.")
    responsive, reason = _responds(
        "is there disabled parking at the dentist?",
        "One of these is a marked disabled bay close to the rear entrance.",
        context="We have four parking spaces behind the building. One of these is a marked disabled bay "
        "close to the rear entrance.",
        heading="Harbour Street Dental Practice Parking and access",
    )
    assert responsive, reason


@pytest.mark.parametrize(
    ("question", "text", "credited"),
    [
        (
            "if I cancel the hall 3 weeks before do i get my money back",
            "14 to 27 days before: 50% refund",
            True,
        ),
        (
            "if I cancel the hall 3 weeks before do i get my money back",
            "Fewer than 14 days before: no refund",
            False,
        ),
        (
            "if I cancel the hall 3 weeks before do i get my money back",
            "28 days or more before: full refund",
            False,
        ),
        ("What if I cancel 30 hours ahead?", "Between 24 and 48 hours before pick-up: 50% back", True),
        ("What if I cancel 5 weeks ahead?", "28 days or more before the booking: full refund", True),
        # A weight or an age in a band of the same dimension; days never hold kilograms.
        ("my dog weighs 32kg, how much to get him castrated", "| Castration, dog 25-40kg | £395.00 |", True),
        ("my 10 yr old lost his card", "| Child (5 - 15 years) | £1.00 |", True),
        ("my dog weighs 32kg", "Collect within 30 to 40 days", False),
    ],
)
def test_a_span_of_time_speaks_of_a_length_of_time_it_holds(question: str, text: str, credited: bool) -> None:
    said = measured_terms(question, text)
    assert bool(said & {stem("week"), stem("hours"), stem("kg"), stem("years")}) is credited


def test_money_back_is_a_refund() -> None:
    question = "if I cancel the hall 3 weeks before do i get my money back"
    assert {stem("money"), stem("back")} <= measured_terms(question, "14 to 27 days before: 50% refund")


def test_a_span_that_does_not_hold_the_asked_length_of_time_speaks_of_another_period() -> None:
    question = "I need to cancel our tent pitch 10 days before we arrive, do I get my deposit back"
    # "15 days or more" is another band than 10 days, though it shares "days" and a "£10", where the
    # passage has the band that holds 10 days.
    refunded = "15 days or more before arrival: deposit refunded, less a £10 fee."
    bands = f"{refunded}\n7 to 14 days before arrival: deposit not refunded."
    responsive, reason = _responds(question, refunded, context=bands)
    assert not responsive
    assert "speaks of another kind: 15 days or more (asked: 10 days)" in reason
    assert other_duration(question, "7 to 14 days before arrival: deposit not refunded.", bands) is None
    # A limit with no band beside it answers for a length it does not hold: "for 5 months?" is "no".
    limit = "You may freeze your membership for a maximum of 3 months."
    assert other_duration("can I freeze my gym membership for 5 months", limit, limit) is None
    # A text without a span of time says nothing of the period either way.
    assert other_duration(question, "Please tell us as soon as possible.", bands) is None


def test_a_heading_spells_out_an_abbreviation_and_a_friend_is_a_guest() -> None:
    focus = question_focus("how much for a block of 10 PT sessions")
    # A heading's capitalised word and the words after it spell "PT"; the same words in prose do not.
    assert stem("PT") in focus.spelled_out(
        "A block of 10 sessions costs £340.", "Pulse Fitness 4. Personal training"
    )
    assert not focus.spelled_out("Please take a towel to every session.", "Pulse Fitness Gym rules")
    responsive, reason = _responds(
        "can I bring a friend to the gym if im on a student membership",
        "Off-peak and Student members cannot bring guests.",
        heading="Pulse Fitness gym Membership terms",
    )
    assert responsive, reason


def test_leaving_is_departing() -> None:
    question = "what time do we have to leave our tent pitch on the last day"
    assert stem("leave") in measured_terms(question, "Tents: arrive from 1:00pm, depart by 11:00am")


def test_a_band_in_a_column_header_holds_the_weight_the_question_gives() -> None:
    question = "my dog weighs 32kg, how much to get him castrated"
    row = "| Dog castration | £285.00 | £340.00 | £395.00 | £460.00 |"
    columns = "| Procedure | Under 10kg | 10–25kg | 25–40kg | Over 40kg |"
    _, reason = _responds(question, row, context=f"{columns}\n{row}", columns=columns)
    assert "the question's 32 not in its passage" not in reason


def test_a_short_stem_keeps_its_ate() -> None:
    # "dated" is no "d", "rates" no "r": too short a stem is not cut.
    assert stem("dated") != stem("dent") and stem("rates") == "rate" and stem("updated").startswith("updat")


def test_a_cancellation_answers_whether_one_who_cancels_is_charged() -> None:
    question = "if i cancel after the rider has set off but b4 they pick up do i get charged"
    fee = "Cancelled after a rider is dispatched but before collection: £3.50 cancellation fee."
    assert "cancel" in content_terms(fee)
    assert "cancel" not in question_focus(question).missing(set(content_terms(fee)))


def test_an_amount_in_the_claim_s_own_words_is_of_the_column_the_question_names() -> None:
    prices = (
        "| Lesson type | Manual | Automatic |\n| --- | --- | --- |\n"
        "| Single lesson (1 hour) | £38 | £42 |\n| Block of 10 hours | £350 | £390 |"
    )
    question = "how much is a block of 10 hrs in an automatic"
    assert other_column(question, "A block of 10 hours is £350.", prices) == "manual (asked: automatic)"
    responsive, reason = _responds(question, "A block of 10 hours is £350.", context=prices)
    assert not responsive and "manual (asked: automatic)" in reason
    assert other_column(question, "A block of 10 hours is £390.", prices) is None
    # A question that names no column, and a claim that quotes the row, take any.
    assert other_column("how much is a block of 10 hrs", "A block of 10 hours is £350.", prices) is None
    assert other_column(question, "| Block of 10 hours | £350 | £390 |", prices) is None
    # "peak" names the Peak column, not the Off-peak one that also holds the word.
    tickets = "| Ticket | Peak | Off-peak |\n| --- | --- | --- |\n| Adult (18+) | £14.00 | £11.00 |"
    assert other_column("whats the peak price for an adult", "An adult is £11.00.", tickets) == (
        "off-peak (asked: peak)"
    )
    assert other_column("whats the off peak price for an adult", "An adult is £11.00.", tickets) is None
    assert other_column("whats the off peak price for an adult", "An adult is £14.00.", tickets) == (
        "peak (asked: off-peak)"
    )


def test_a_list_set_out_as_a_table_keys_its_rows_by_their_words() -> None:
    # A PDF's bullet list comes out as a table whose first cells are the bullets.
    rows = "| • | Wear and tear, rust or rot. |\n| --- | --- |\n| • | Storm or flood damage to fences, gates and hedges. |"
    _, reason = _responds(
        "fence blown down in the storm am i covered",
        "| • | Storm or flood damage to fences, gates and hedges. |",
        context=rows,
        heading="What is not covered",
        columns="| • | Wear and tear, rust or rot. |",
    )
    assert "speaks of another kind" not in reason, reason


@pytest.mark.parametrize(
    ("question", "row", "other"),
    [
        # The row is about dogs; the ferret asked about stands nowhere in the passage.
        ("how much to vaccinate my ferret at meadowbank", "| Dog | Primary course | £89.00 |", True),
        # The first cell names what was asked.
        ("how much to vaccinate my dog at meadowbank", "| Dog | Primary course | £89.00 |", False),
        # Every term of the question stands in the row, though its first cell is a day.
        ("what time is aqua aerobics", "| Wednesday | Aqua aerobics | 19:00 - 20:00 |", False),
    ],
)
def test_a_row_about_another_thing_does_not_answer(question: str, row: str, other: bool) -> None:
    header = "| Species | Vaccination | Price |" if "Dog" in row else "| Day | Session | Times |"
    _, reason = _responds(
        question,
        row,
        context=f"{header}\n| --- | --- | --- |\n{row}",
        heading="Meadowbank Vets",
        columns=header,
    )
    assert ("speaks of another kind: dog" in reason) is other, reason


DRIVING_COLUMNS = "| Package | Manual | Automatic | Conditions |"


@pytest.mark.parametrize(
    ("question", "row", "other"),
    [
        # The row's lesson is 2 hours long; its "90" is a price, not the 90 minutes asked.
        (
            "how much is a 90 min driving lesson",
            "| Motorway lesson (2 hours) | £90 | £95 | Only for full licence holders |",
            "2 hours (asked: 90 min)",
        ),
        # "(20 hours)" states the length asked, whatever "2 to 3 weeks" beside it says.
        (
            "intensive 20hr course manual price",
            "| Intensive course (20 hours) | £720 | £760 | Taken over 2 to 3 weeks |",
            None,
        ),
        ("how much for a 1hr solo walk", "| Solo walk | 60 minutes | £20 | £23 |", None),
        ("how much for a 1hr solo walk", "| Solo walk | 30 minutes | £14 | £16 |", "30 minutes (asked: 1hr)"),
        # A yes-or-no question is answered by another length: "3 months" says no to 5.
        ("can I freeze my membership for 5 months", "Freezes last 3 months.", None),
    ],
)
def test_a_thing_of_another_length_than_asked_is_another_thing(
    question: str, row: str, other: str | None
) -> None:
    assert other_length(question, row) == other
    context = f"{DRIVING_COLUMNS}\n| --- | --- | --- | --- |\n{row}\n| Block of 10 hours | £350 | £370 | Paid in advance |"
    responsive, reason = _responds(
        question, row, context=context, heading="Clearway Driving School", columns=DRIVING_COLUMNS
    )
    if other is not None:
        assert not responsive and f"speaks of another kind: {other}" in reason, reason
    assert other_duration(question, row, context + " Cancel within 24 hours.") is None


@pytest.mark.parametrize(
    ("question", "text", "spoken"),
    [
        # A limit to a run of months answers for a month outside it.
        (
            "can i have a bonfire on my allotment in july",
            "Bonfires are allowed ONLY between 1 November and the last day of February.",
            True,
        ),
        (
            "tent pitch for 2 adults in mid august",
            "| Tent pitch, high season (24 May – 8 Sept) | £28 |",
            True,
        ),
        (
            "tent pitch for 2 adults in mid august",
            "| Tent pitch, low season (9 Sept – 23 May) | £20 |",
            False,
        ),
        ("is the tip open in december", "Winter (1 October to 31 March): open every day 8am to 4pm.", True),
        # "may" without "in" before it is the verb.
        ("may i light a bonfire", "Bonfires are allowed only between November and February.", False),
    ],
)
def test_a_run_of_months_speaks_of_a_month_it_holds_or_limits(question: str, text: str, spoken: bool) -> None:
    month = {"july", "august", "december"} & set(question.split())
    said = measured_terms(question, text)
    assert (bool(said & {stem(word) for word in month}) if month else bool(said)) is spoken


def test_a_band_of_bare_numbers_under_a_column_with_a_unit_holds_the_measure_asked() -> None:
    question = "our water hardness is 25 dH what setting"
    columns = "| Water hardness (°dH) | mmol/l | Setting | Salt needed? |"
    rows = [
        "| 0–5 | 0–0.9 | H1 | No |",
        "| 23–34 | 4.0–6.1 | H5 | Yes |",
        "| over 34 | over 6.1 | H6 | Yes |",
    ]
    context = "\n".join([columns, "| --- | --- | --- | --- |", *rows])
    # The column headers are part of a quoted row's heading, as on the answer path.
    heading = f"Dishwasher manual {columns}"
    held = {row: _responds(question, row, context=context, heading=heading, columns=columns) for row in rows}
    assert held[rows[1]][0], held[rows[1]][1]
    for row in (rows[0], rows[2]):
        assert "the question's 25 not in its passage" in held[row][1]


@pytest.mark.parametrize(
    ("question", "claim", "responsive"),
    [
        # "need to be out" asks what bins must be.
        (
            "what time do bins need to be out",
            "Your bins must be at the edge of your property, with the lid closed, by 6:30am on your collection day.",
            True,
        ),
        (
            "can i keep chickens on my allotment",
            "Hens may be kept on full plots only, with written approval.",
            True,
        ),
    ],
)
def test_words_of_one_sense_need_and_must_chickens_and_hens(
    question: str, claim: str, responsive: bool
) -> None:
    assert _responds(question, claim, heading="Allotment rules and bins")[0] is responsive


def test_a_word_the_claim_adds_to_its_passage_meets_no_term_of_the_question() -> None:
    # The model put "The details of" before the passage's "New tenants": the claim's "details" is not
    # the passage's, and the bank details asked for are in no passage.
    passage = "New tenants who take on a plot part way through the year pay a proportion of the rent."
    claim = "The details of a new tenant who take on a plot part way through the year pay a proportion of the rent."
    question = "what are the bank details to pay the rent"
    responsive, reason = _responds(question, claim, context=passage, heading="Allotment society")
    assert not responsive, reason
    # Where the passage gives them, a claim quoting it answers.
    details = "Bank details to pay the rent: Ferncliffe Road Allotment Society, account 87654321."
    assert _responds(question, details, heading="Allotment society")[0]


@pytest.mark.parametrize(
    ("question", "read"),
    [
        ("can i keep chickens on my allotmnt", "can i keep chickens on my allotment"),
        ("how do i bleed a radaitor", "how do i bleed a radiator"),
        # A word the passages hold in any inflection, a short word and a name stay as typed.
        ("how many allotments are there", "how many allotments are there"),
        ("can i keep sheep", "can i keep sheep"),
        ("who is Allotmnt", "who is Allotmnt"),
    ],
)
def test_a_misspelt_word_is_read_as_the_passages_word_it_nearly_is(question: str, read: str) -> None:
    texts = [
        "Ferncliffe Road Allotment Society",
        "Hens may be kept on full plots. Bleed each radiator. Sheet",
    ]
    assert read_as_typed(question, texts) == read


def test_selection_reads_a_misspelt_word_as_the_passage_s_word() -> None:
    passage = "Hens may be kept on full plots only, with written committee approval."
    selection = select_evidence(
        "can i keep hens on my allotmnt", [_read(1, passage, ("Allotment rules",))], None
    )
    assert selection.focus.question == "can i keep hens on my allotment"
    assert selection.sentences and selection.sentences[0].lexical == 1.0


@pytest.mark.parametrize(
    ("question", "claim", "heading"),
    [
        # "xmas" is Christmas, and closing answers whether it is open.
        (
            "is the nursery open between xmas and new year",
            "We close from Christmas Eve to New Year's Day inclusive.",
            "Little Acorns Day Nursery Holidays and closures",
        ),
        (
            "is the hair salon open mondays",
            "| Monday | Closed |",
            "Hair salon Hours | Day | Hours |",
        ),
    ],
)
def test_a_yes_or_no_question_is_answered_by_the_opposite_of_its_deed(
    question: str, claim: str, heading: str
) -> None:
    responsive, reason = _responds(question, claim, heading=heading)
    assert responsive, reason
    # A question for a time is not answered by the opposite deed.
    assert not measured_terms("when does the nursery open", "We close at 6pm")


@pytest.mark.parametrize(
    ("question", "text", "unnamed"),
    [
        # The manager is spoken of, never named.
        (
            "whats the name of the nursery manager",
            "If you are late three times in one term, the nursery manager will ask to meet you.",
            "name",
        ),
        ("whats the name of the nursery manager", "The nursery manager is Sarah Bell.", None),
        ("What is the name of the river?", "The river is called the Thames.", None),
        ("What name does the ship carry?", "The ship carries a flag.", "name"),
        ("What name does the ship carry?", "The ship carries the name Endeavour.", None),
    ],
)
def test_a_question_for_a_name_is_not_answered_by_a_text_that_names_nothing(
    question: str, text: str, unnamed: str | None
) -> None:
    assert unnamed_kind(question, text) == unnamed


@pytest.mark.parametrize(
    ("question", "text", "held"),
    [
        # An age given without its unit is in years, in the question and in the text.
        ("im 67 how much is a drop in class", "Concessions are available to adults aged 65 and over.", True),
        ("im 60 how much is a drop in class", "Concessions are available to adults aged 65 and over.", False),
        ("my son is 2 and a half, how much is a full day", "| 2-3 years (Saplings) | £72.00 |", True),
        ("my kids are 3 and 7, how much extra per night", "| Child (5 - 15 years) | £4 per night |", True),
        ("i am 12 how much is a swim", "Under-16s swim for £2.", True),
        # A yes-or-no question is answered by a limit that does not hold its age or length.
        ("can my 14 year old come to boxfit", "The minimum age for classes is 16.", True),
        ("can I freeze my gym membership for 5 months", "You may freeze for a maximum of 3 months.", True),
        # A question for a price is not answered by a limit it falls outside.
        ("how much for my 14 year old", "The minimum age for classes is 16.", False),
        # Minutes late are no age.
        ("i am 5 minutes late, will they wait", "Children aged 5 to 11 go free.", False),
        # An age is not held by a length of time, nor a length by an age.
        (
            "im 23, can i have a courtesy car",
            "you must have held a full UK driving licence for at least 2 years;",
            False,
        ),
        ("ive had my licence for 3 years, can i hire a van", "Drivers must be aged 25 to 75.", False),
        (
            "ive had my licence for 3 years, can i hire a van",
            "You must have held it for at least 2 years.",
            True,
        ),
        # Asked yes or no after what the asker tells, an age is answered by the ages a thing is for.
        ("im 23, can i have a courtesy car", "you must be aged 25 to 75;", True),
        ("im 23, how much is a courtesy car", "you must be aged 25 to 75;", False),
    ],
)
def test_an_age_without_its_unit_and_a_limit_that_answers_yes_or_no(
    question: str, text: str, held: bool
) -> None:
    assert bool(spanned_duration(question, text)) is held


def test_a_band_whose_ends_are_in_two_units_holds_what_lies_between() -> None:
    question = "if i cancel my cat sitting 3 days before the first visit do i get a refund"
    full = "| 7 days or more before the first visit | Full refund |"
    half = "| Between 48 hours and 7 days before the first visit | 50% of the total price |"
    bands = f"| When you cancel | What you get back |\n| --- | --- |\n{full}\n{half}"
    # 3 days are 72 hours: inside "between 48 hours and 7 days", so the full refund is another band.
    assert spanned_duration(question, half) == {"3", stem("days")}
    assert other_duration(question, full, bands) == "7 days or more (asked: 3 days)"
    assert spanned_duration("if i cancel 30 hours before", half) == set()


def test_a_most_allowed_answers_for_longer_whatever_exception_the_passage_gives() -> None:
    question = "can I freeze my gym membership for 5 months"
    limit = "You may freeze your membership for a maximum of 3 months in any 12-month period."
    context = f"{limit} Medical freezes supported by a doctor's note may last up to 6 months."
    assert other_duration(question, limit, context) is None
    responsive, reason = _responds(question, limit, context=context, heading="Pulse gym membership terms")
    assert responsive, reason


def test_a_yes_or_no_question_s_name_for_the_place_is_met_by_what_its_document_speaks_of() -> None:
    from dataclasses import replace

    from akm.answer.orchestrate import _document_terms

    def read(number: int, source: str, passage: str) -> ReadEvidence:
        path = {"salon": "docs/willow_and_ash.html", "gym": "docs/pulse.md"}[source]
        row: Any = SimpleNamespace(
            evidence_id=f"row-{number}",
            source=SimpleNamespace(source_id=source, title=None, canonical_path=path, canonical_uri=path),
        )
        return ReadEvidence(number=number, row=row, passage=passage)

    kept = [
        read(1, "salon", "| Day | Open | Close |\n| --- | --- | --- |\n| Monday | Closed |"),
        read(2, "salon", "There is free parking behind the salon."),
        read(3, "salon", "Gift vouchers are available in salon or online."),
        read(4, "gym", "The salon next door sells towels."),
    ]
    throughout = _document_terms(cast(Any, SimpleNamespace(kept=kept)))
    assert stem("salon") in throughout["salon"] and throughout["gym"] == {"puls"}
    assert stem("parking") not in throughout["salon"]
    # The file's name is what the document is about: "willow_and_ash.html".
    assert {"willow", "ash"} <= throughout["salon"]
    question = "is the hair salon open mondays"
    claim = ClaimInContext(
        claim_id="claim-1",
        text="| Monday | Closed |",
        context=kept[0].passage,
        heading="Willow & Ash Hair Studio Opening Hours",
        title="Willow & Ash Hair Studio",
    )
    assert not check_responsiveness(question_focus(question), [claim], None).responsive
    with_document = replace(claim, document_terms=throughout["salon"])
    verdict = check_responsiveness(question_focus(question), [with_document], None)
    assert verdict.responsive, verdict.reason
    # A question that is no yes or no still needs its terms in the claim's own passage and headings.
    other = check_responsiveness(question_focus("what is the salon's phone number"), [with_document], None)
    assert not other.responsive


def test_a_query_that_names_a_price_asks_for_one_and_its_number_narrows_like_an_article() -> None:
    assert answer_type_of("grade 8 theory exam fee") == "number"
    assert answer_type_of("tennis coaching lessons price") == "number"
    assert answer_type_of("do they charge for parking") == "any"
    context = "ABRSM practical exam fees (UK, 2025) are: - Grade 5: £73 - Grade 8: £98"
    assert (
        other_kind("grade 8 theory exam fee", "- Grade 8: £98", context)
        == "practical exam (asked: theory exam)"
    )
    # After a number a unit ("45 min") narrows nothing.
    fees = "I teach on a grand piano. | 45 minutes | £32 | £352 |"
    assert other_kind("45 min piano lesson cost per term", "| 45 minutes | £32 | £352 |", fees) is None
    assert stem("jabs") in measured_terms(
        "what jabs does my cat need", "Cats must be vaccinated against cat flu."
    )


def test_a_sentence_that_points_to_what_follows_does_not_answer() -> None:
    question = "can i collect my cat on a sunday"
    pointer = "Cats can only be dropped off or collected during the times below."
    table = f"{pointer}\n| Day | Drop-off and collection |\n| --- | --- |\n| Sunday | 10:00 - 11:00, collection only |"
    responsive, reason = _responds(
        question, pointer, context=table, heading="Willowbrook Cattery Opening hours"
    )
    assert not responsive and "below" in reason, reason
    row = "| Sunday | 10:00 - 11:00, collection only |"
    assert _responds(question, row, context=table, heading="Willowbrook Cattery Opening hours")[0]


def test_how_often_is_not_how_long() -> None:
    question = "can i pay for my parking permit monthly"
    months = (
        "If the new vehicle is in a more expensive band you must pay the difference for the remaining months."
    )
    responsive, reason = _responds(question, months, heading="Residents' parking permits")
    assert not responsive, reason
    monthly = "You can pay for a residents' parking permit at £8 a month by direct debit."
    assert _responds(question, monthly, heading="Residents' parking permits")[0]
    assert stem("monthly") in content_terms("Permits cost £8 per month.")
    assert stem("weekly") in content_terms("Classes run twice a week.")
    # A month's notice says how long, not how often.
    assert stem("monthly") not in content_terms("Give a month's notice.")


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # The four weeks are the storing's, not the charging's.
        (
            "**Storing the bike for more than 4 weeks** (e.g. over winter): charge or discharge the battery "
            "to 30–60% (ideally about 50%).",
            False,
        ),
        ("A full charge takes about 4.5 hours.", True),
        # The two years are the cover's; the charging comes after them.
        ("The battery is covered for 2 years or 500 full charge cycles, whichever comes first.", False),
        ("It takes 4 hours to charge.", True),
        ("Charging from empty to full: about 4.5 hours (3 hours to 80%).", True),
        ("The battery charges fully in 4 hours.", True),
        ("| Charging time | 4.5 hours |", True),
    ],
)
def test_the_time_a_deed_takes_is_given_where_the_deed_is(text: str, found: bool) -> None:
    assert fills_answer_type(text, "number", "how long does the bike battery take to charge fully") is found
    # Without "take to" any length of time will do.
    assert fills_answer_type(text, "number", "how long can the bike be stored")


def test_a_yes_or_no_question_about_a_day_is_answered_by_a_claim_that_names_it() -> None:
    question = "can i collect my cat on a sunday"
    table = (
        "Cats can only be dropped off or collected during the times below.\n"
        "| Day | Drop-off and collection |\n| --- | --- |\n| Sunday | 10:00 - 11:00, collection only |"
    )
    late = "If you are delayed on the way to collect your cat, please phone before 17:30."
    responsive, reason = _responds(
        question, late, context=f"{late}\n{table}", heading="Cattery opening hours"
    )
    assert not responsive and "no day (asked: Sunday)" in reason, reason
    row = "| Sunday | 10:00 - 11:00, collection only |"
    assert _responds(question, row, context=table, heading="Cattery opening hours")[0]
    # What holds at all times holds on a Sunday; a date asked is met by the date.
    assert unnamed_day(question, "Cats can be collected at any time by arrangement.") is None
    assert (
        unnamed_day("is there school on friday 28th november", "28 November: INSET day, school closed")
        is None
    )
    assert (
        unnamed_day("is there school on friday 28th november", "School is closed for INSET days.") is not None
    )
    # A question that is not yes-or-no may be answered without the day ("what time ... on sundays").
    assert _responds("what time can i collect my cat on a sunday", row, context=table, heading="Cattery")[0]


def test_a_numbered_kind_is_answered_by_that_number_or_a_run_that_holds_it() -> None:
    question = "how much r swimming lessons for stage 6"
    columns = "| Stage | Max. pupils per teacher | Monthly fee (direct debit) |"
    # The row's "6" counts pupils; its stages are 1 and 2.
    responsive, reason = _responds(
        question, "| Stages 1–2 | 6 | £29.50 |", heading="Swimming lessons", columns=columns
    )
    assert not responsive and "Stages 1–2 (asked: stage 6)" in reason, reason
    assert _responds(question, "| Stages 5–7 | 8 | £32.00 |", heading="Swimming lessons", columns=columns)[0]
    assert other_numbered(question, "| Stage 6 | 8 | £32.00 |") is None
    assert (
        other_numbered("how much is school dinner for my yr 4 son", "Pupils in Year 3 to 6 pay £2.65.")
        is None
    )
    assert other_numbered("grade 8 theory exam fee", "- Grade 5: £73") == "Grade 5 (asked: grade 8)"
    # An age or a bound is no numbered kind.
    assert other_numbered("im 67 how much is a swim", "Seniors aged 65 and over pay £3.90.") is None
    assert other_numbered("is it over 18s only", "Under 16s must be with an adult.") is None


def test_a_claim_that_numbers_no_kind_speaks_of_the_one_its_heading_or_title_numbers() -> None:
    question = "whats the battery life on the old pulseband 3"
    claim = "At 3% the band saves your data and turns off."
    title = "PulseBand 4 and PulseBand 4 Pro - Frequently Asked Questions"
    assert other_numbered(question, claim, "Battery", title) == "PulseBand 4 (asked: pulseband 3)"
    responsive, reason = _responds(question, claim, heading=title)
    assert not responsive and "PulseBand 4 (asked: pulseband 3)" in reason, reason
    # The asked one in the title, or a claim that numbers the kind itself, decides.
    assert other_numbered("battery life of the pulseband 4 pro", claim, "Battery", title) is None
    assert other_numbered(question, "The PulseBand 3 lasts 5 days.", "Battery", title) is None
    assert other_numbered("how much r lessons for stage 6", "Lessons are £8.", "Stages 5 to 7", "") is None


def test_a_count_inside_a_range_of_the_same_things_is_there() -> None:
    question = "how much to get 5 items collected by the council"
    assert spanned_count(question, "| 4 to 6 items | £45.00 | £22.50 |") == {"5"}
    assert spanned_count(question, "| 1 to 3 items | £30.00 | £15.00 |") == set()
    assert spanned_count(question, "| 4 to 6 weeks | £45.00 |") == set()
    assert spanned_count("how much for a 3 bedroom house", "2-4 bedrooms: £300") == {"3"}
    columns = "| Number of items | Standard price | Concession price |"
    row = "| 4 to 6 items | £45.00 | £22.50 |"
    context = f"The council collects bulky waste from your home.\n{columns}\n| --- | --- | --- |\n{row}"
    heading = "Council bulky waste collection"
    responsive, reason = _responds(question, row, context=context, heading=heading, columns=columns)
    assert responsive and "lacks get)" in reason, reason


def test_a_kind_picked_by_its_letter_is_not_answered_by_another_letter() -> None:
    question = "i live by myself in a band c house, how much council tax will i pay this yr"
    assert (
        other_numbered(question, "A parish charge (between £38 and £71 at Band D) is added.")
        == "Band D (asked: band c)"
    )
    assert other_numbered(question, "Bands C and D pay more this year.") is None
    assert other_numbered(question, "| C | £52,001 to £68,000 | £2,016.80 |") is None
    assert other_numbered("is a class a licence needed", "Class B vehicles need no test.") is None
    assert other_numbered("what does a Class A licence cover?", "Class B vehicles need no test.") == (
        "Class B (asked: Class A)"
    )


@pytest.mark.parametrize(
    ("question", "text", "other"),
    [
        # "5 or more rooms" and "£5" give no "5" of the "5 days" asked.
        (
            "if i cancel the hotel 5 days before we go do i get my money back",
            "Group bookings of 5 or more rooms must be cancelled at least 28 days before arrival.",
            {"5"},
        ),
        ("if i cancel 5 days before do i get my money back", "A £5 fee applies.", {"5"}),
        ("if i cancel 5 days before do i get my money back", "Refunds take 5 working days.", set()),
        ("if i cancel 5 days before do i get my money back", "Cancel up to 5 before arrival.", set()),
        # A number asked of no measure ("2 dogs") is not narrowed.
        ("can i bring 2 dogs", "A maximum of 2 pets per room.", set()),
        ("is it £5 to park", "Parking for 5 hours.", {"5"}),
    ],
)
def test_a_number_of_a_measure_is_not_met_by_the_same_figure_of_another_thing(
    question: str, text: str, other: set[str]
) -> None:
    assert other_unit_numbers(question, text) == other


def test_a_figure_of_another_thing_answers_no_question_of_a_measure() -> None:
    question = "if i cancel the hotel 5 days before we go do i get my money back"
    claim = "Group bookings of 5 or more rooms have different terms: they must be cancelled at least 28 days before arrival for a full deposit refund."
    responsive, reason = _responds(question, claim, heading="Hotel deposits, payment and cancellation")
    assert not responsive, reason


def test_irregular_past_forms_meet_their_verb() -> None:
    assert "lose" in content_terms("lost the key for my padlock")
    assert set(content_terms("If you lose your key")) & set(content_terms("lost the key"))
    assert stem("pay") in content_terms("Rent is paid monthly.")
    assert "find" in content_terms("the engineer found a coin")


def test_what_happens_is_how_a_question_asks() -> None:
    assert "happen" not in question_focus("what happens if i fall behind on the payments").weights
    assert "happen" not in question_focus("whats happening with my claim").weights
    assert "happen" in question_focus("did the storm damage happen before the policy started").weights


def test_falling_behind_is_paying_late() -> None:
    question = "what happens if i fall behind on the storage payments"
    said = same_sense_terms(question, "If rent is still unpaid 14 days after the due date, we lock the unit.")
    assert {"fall", "behind"} <= said
    assert same_sense_terms(question, "We sell boxes and tape.") == set()


def test_a_query_typed_without_its_article_still_narrows_its_noun() -> None:
    question = "how much is gym membership at ashcombe leisure centre"
    row = "| Senior swim membership (65+) | £27.00 per month | Unlimited swimming |"
    assert other_kind(question, row, row) == "swim membership (asked: gym membership)"
    # A word of how the thing looks to the one asking is no kind of it.
    filters = "| Clean the pump filter | Every 3 months |"
    assert other_kind("how often should i clean the little filter at the bottom", filters, filters) is None


def test_a_row_under_a_column_of_lengths_of_time_says_how_long() -> None:
    row = "| Cottons | Cold – 90 °C | 40 °C | 8 kg (5 kg at 90 °C) | 3:15 | 1400 |"
    columns = (
        "| Programme | Temperature range | Default temp | Max load | Duration (default) | Max spin (rpm) |"
    )
    question = "how long does a cottons wash at 40 take"
    assert fills_answer_type(row, "number", question, columns)
    assert not fills_answer_type(row, "number", question, "| Programme | Range | Temp | Load | Code | Spin |")


def test_words_typed_on_a_phone_are_no_terms() -> None:
    focus = question_focus("how much r swimming lessons for stage 6")
    assert "r" not in focus.weights and focus.answer_type == "number"
    assert "wd" not in question_focus("how much extra wd it cost to add cover").weights
    # "28th" is the 28.
    assert "th" not in question_focus("is there school on friday 28th november").weights
    assert content_terms("Friday 28th November") == ["friday", "28", stem("November")]
    # Degrees are what a temperature gives.
    assert stem("degrees") in measured_terms("can i wash it at 90 degrees", "| Cottons | Cold – 90 °C |")


def test_the_thing_a_price_or_measure_is_asked_of_must_be_named_where_the_answer_is() -> None:
    question = "how much is school dinner for my yr 4 son"
    assert measured_thing(question) == (stem("dinner"), "how much is school dinner")
    breakfast = "Breakfast club runs from 7:45am in the school hall and costs £4.50 per child per day."
    responsive, reason = _responds(question, breakfast, heading="Before and after school")
    assert not responsive and "no dinner (asked: how much is school dinner)" in reason, reason
    pool = "The learner pool is kept warmer at 31°C."
    responsive, reason = _responds("hows warm is the jacuzzi at the leisure centre", pool, heading="Pools")
    assert not responsive and "no jacuzzi (asked: hows warm is the jacuzzi)" in reason, reason
    dinners = "School dinners for children in Year 4 cost £2.65 a day."
    assert _responds(question, dinners, heading="School meals")[0]
    # What prices, not what charges or weighs: none is asked of these.
    assert measured_thing("how much does it cost") is None
    assert measured_thing("how much does the tank weigh") is None
    assert measured_thing("how much does the nursery charge for late pickup") is None
    assert measured_thing("how much does a day permit cost") == (
        stem("permit"),
        "how much does a day permit",
    )
    # An amount of a thing named right after "how much".
    notice = "how much notice do u need to book a kids party at kingpin"
    assert measured_thing(notice) == (stem("notice"), "how much notice")
    responsive, reason = _responds(
        notice, "Our kids' parties are for children aged 4 and over.", heading="Parties"
    )
    assert not responsive and "no notice (asked: how much notice)" in reason, reason
    booking = "Please book kids' parties at least 48 hours in advance; we need this notice to arrange a host."
    assert _responds(notice, booking, heading="Parties")[0]
    assert measured_thing("how much deposit do i pay") == (stem("deposit"), "how much deposit")
    # Time and money name no thing a passage must say; "do" is no thing.
    assert measured_thing("how much time do i have to cancel") is None
    assert measured_thing("how much do u charge for a dog spay") is None


def test_what_a_priced_deed_is_done_to_must_be_named_where_the_answer_is() -> None:
    question = "how much to fit a child seat on my bike at spokes n sprockets"
    assert priced_object(question) == ("seat", "how much to fit a child seat")
    chain = "| Fit a new chain | £10 plus parts |"
    responsive, reason = _responds(
        question, chain, heading="Spokes and Sprockets", columns="| Repair | Price |"
    )
    assert not responsive and "no seat (asked: how much to fit a child seat)" in reason, reason
    seat = "| Fit a child seat | £15 |"
    assert _responds(question, seat, heading="Spokes and Sprockets", columns="| Repair | Price |")[0]
    assert priced_object("how much does the vet charge to spay a rabbit")[0] == stem("rabbit")
    assert priced_object("how much to get rid of 4 old car tyres")[0] == stem("tyres")
    assert priced_object("how much to get 5 items colected by the council")[0] == stem("items")
    # A span of time, a pronoun or nothing after the deed names no object.
    assert priced_object("how much to park all day in the car park") is None
    assert priced_object("if u deliver a shed how much to put it up") is None
    assert priced_object("how much is a day pass") is None


def test_words_a_question_is_typed_with_name_no_kind() -> None:
    # "u guys" says whom the question asks.
    assert stem("guys") not in question_focus("do u guys clean windows when its raining").weights
    # Function words as they are typed: "n" for "and", "thru" for "through", "as well" for "too";
    # "us" is whom the question asks for, as "we" is.
    assert set(question_focus("is the car wash open on sundays n what times").weights) == {
        "car", "wash", "open", stem("sundays"), "time",
    }  # fmt: skip
    assert set(question_focus("max watts i can run thru the smart plug").weights) == {
        stem("maximum"), stem("watts"), "run", "smart", "plug",
    }  # fmt: skip
    assert set(question_focus("can u do inside windows as well, how much").weights) == {
        stem("inside"),
        stem("windows"),
    }
    assert content_terms("Pens as well as paper; the well is deep.") == ["pen", "paper", "well", "deep"]
    # A placeholder noun stands for what is named beside it: "the keep warm thing" is keep warm.
    assert set(question_focus("how long does the keep warm thing keep the water warm for").weights) == {
        "keep", "warm", "water",
    }  # fmt: skip
    dogs = "Dogs are not allowed in the bell tents or anywhere in the Orchard field."
    passage = f"Minimum stays: 2 nights for bell tents. {dogs}"
    assert _responds("can our dog stay in the bell tent with us", dogs, passage, heading="Dogs")[0]
    # A claim that names the asked kind speaks of it, whatever its heading names beside.
    claim = "A written prescription, if you prefer to buy medicines online, costs £18.50 for the first item."
    question = "i want to buy my cats meds online how much is a written prescription"
    assert other_kind(question, claim, claim, "Hollybank price guide Prescriptions") is None
    # A short form is its full word.
    cake = "You are welcome to bring your own birthday cake, and we will store it in the diner fridge."
    assert other_kind("can we bring our own bday cake to the party", cake, cake) is None
    assert other_kind("can we bring our own bday cake to the party", "Wedding cakes are £90.", "") is not None


def test_a_count_spelt_out_is_its_figure_and_b4_is_before() -> None:
    assert "2" in content_terms("| Two-piece suit | £14.50 | £19.50 |")
    assert {"3", "12"} <= set(content_terms("three nights, twelve months"))
    question = "how much is it for a 2 piece suit on express at brightwell"
    row = "| Two-piece suit | £14.50 | £19.50 |"
    assert _responds(
        question, row, heading="Brightwell Dry Cleaners", columns="| Item | Standard | Express |"
    )[0]
    # Another count is still another thing.
    assert not _responds(
        question, "| Three-piece suit | £18.00 | £24.00 |", heading="Brightwell Dry Cleaners"
    )[0]
    assert set(question_focus("how long have i got to pay b4 theres a late fee").weights) == {
        "pay",
        "late",
        "fee",
    }


def test_a_distance_inside_a_band_of_distances_is_stated() -> None:
    question = "do u deliver to somewhere 6 miles away, how much"
    # "somewhere", "away" and "u" stand for nothing a document names.
    assert set(question_focus(question).weights) == {stem("deliver"), "6", stem("miles")}
    assert spanned_duration(question, "3 to 8 miles    4.00") == {"6", stem("miles")}
    assert spanned_duration("how much for 20 km", "3 to 8 miles    4.00") == set()
    assert spanned_duration("how much for 10 km", "5 to 8 miles    4.00") == {"10", "km"}


def test_how_soon_asks_how_long_and_when_it_happened_is_no_topic() -> None:
    focus = question_focus("got burgled last night how soon do i have to tell the police for the insurance")
    assert set(focus.weights) == {stem("burgled"), stem("tell"), stem("police"), stem("insurance")}
    assert focus.answer_type == "number"
    assert fills_answer_type("Police: within 24 hours of discovery.", "number", focus.question)
    assert not fills_answer_type(
        "Report it to the police and obtain a crime reference number.", "number", focus.question
    )
    # "The last bus" is a topic; "last night" is when.
    assert stem("last") in question_focus("what time is the last bus tonight").weights


def test_an_age_band_that_labels_a_rule_holds_the_asked_age() -> None:
    question = "my kid is 9 can he go in the pool without me"
    # The band ends at a colon that opens its rule.
    # "without me" asks whether he may be alone.
    assert set(question_focus(question).weights) == {"kid", "9", "go", "pool", "without", "alon"}
    rule = "Aged 8 to 10: may swim without an adult in the water."
    assert spanned_duration(question, rule) == {"9", "year"}
    assert "alon" in same_sense_terms(question, rule)
    # A colon before digits still makes a clock time, no age.
    assert spanned_duration(question, "Lessons for those aged 8 start at 10:30.") == set()


def test_going_up_is_an_increase() -> None:
    question = "i signed up with brightwave in feb, will my bill go up this april?"
    increase = (
        "If your plan started in February, your first increase applies from April of the following year."
    )
    assert same_sense_terms(question, increase) >= {"go"}
    assert "go" not in same_sense_terms(question, "Your bill is sent on the 1st of each month.")
    assert same_sense_terms("will the price go down", "Prices fall in January.") >= {"go"}


def test_siblings_attending_and_bringing_in_the_asker_s_words() -> None:
    siblings = "When two or more brothers or sisters attend at the same time, we take 10% off the fees."
    question = "is there a discount if both my kids go to little wrens"
    assert same_sense_terms(question, siblings) >= {"kid", "go"}
    assert "kid" not in same_sense_terms(question, "The nursery is open 7:30am to 6pm.")
    dogs = "Dogs are not allowed in the bell tents, the shower block or the farm shop."
    assert "bring" in same_sense_terms("can we bring our dog in the bell tent", dogs)
    assert "bring" not in same_sense_terms("can we bring our dog in the bell tent", "Dogs cost £3 a night.")
    payable = "Fees are payable in full for days your child is absent because of family holidays."
    assert "pay" in same_sense_terms("do we still pay nursery fees when were away on holiday", payable)
    # "bank hol" is a bank holiday.
    focus = question_focus("can we do 2 nights over the may bank hol weekend")
    assert "holiday" in focus.weights or stem("holiday") in focus.weights


def test_how_the_asker_knows_and_everyday_words_are_no_topic() -> None:
    # "found out", "says": how the one asking knows it, not what it is about.
    assert set(question_focus("dentist says i need a crown how much is it on the nhs").weights) == {
        stem("dentist"),
        stem("need"),
        stem("crown"),
        stem("nhs"),
    }
    pregnant = question_focus("just found out im pregnant can i freeze my membership")
    assert stem("found") not in pregnant.weights and stem("pregnant") in pregnant.weights
    assert stem("normal") not in question_focus("can i put normal plastic bags in the food caddy").weights
    # Words as typed on a phone: "wat do i do", "whats gonna happen".
    assert set(question_focus("router light flashing orange wat do i do").weights) == {
        stem("router"),
        stem("light"),
        stem("flashing"),
        stem("orange"),
    }
    assert stem("gonna") not in question_focus("didnt turn up to 3 classes whats gonna happen").weights
    # "how long do I get": the question's phrase; "theyll" as typed for "they'll".
    assert set(question_focus("how long do i get to appeal to the tribunal").weights) == {
        stem("appeal"),
        stem("tribunal"),
    }
    assert stem("theyll") not in question_focus("whats the most theyll pay for one ring").weights
    # "can my daughter wear goggles": the daughter does the wearing, no kind of wear.
    goggles = "Goggles are allowed from Stage 3 upwards; they are not worn in Stages 1 and 2."
    assert (
        other_kind("can my daughter wear goggles in stage 2", goggles, f"You must wear a swim hat. {goggles}")
        is None
    )
    # "totally", "still": stress, no topic.
    assert set(question_focus("broadband totally down and still not fixed").weights) == {
        stem("broadband"),
        stem("fixed"),
    }
    # "the last bus tonight": the bus is a topic, tonight is when.
    assert set(question_focus("what time is the last bus tonight").weights) == {stem("last"), "bus"}


def test_everyday_phrases_say_what_the_document_words_differently() -> None:
    pairs = [
        ("can i freeze it without paying", "If you are pregnant you can freeze free of charge.", "without"),
        (
            "on the care plan do i get money off whitening",
            "The 10% discount does not apply to whitening.",
            "money",
        ),
        ("if i pay the whole yr up front", "Annual memberships cost the same as 10 months.", "front"),
        ("didnt turn up to 3 classes whats gonna happen", "A no-show counts as a strike.", "turn"),
        ("bin men didnt empty my blue bin", "Report a missed bin within 2 working days.", "empty"),
        ("can i put plastic bags in the food caddy", "Plastic bags are NOT accepted.", "put"),
        ("can i bring a mate to the gym", "Anytime Plus members get 2 guest passes a month.", "mate"),
        (
            "got an uber home, can i claim it back",
            "Taxis booked without asking staff are not refunded.",
            "uber",
        ),
        ("still not fixed, do i get any money back", "You are automatically credited £9.50 a day.", "money"),
        ("my boy is 15 can he come to the gym", "Juniors: children aged 14-15 may use the gym.", "boy"),
        ("got a taxi home, can i claim it back", "Taxis are refunded if staff booked them.", "claim"),
        ("got a bus lane fine in the post", "The penalty charge is £70.", "fine"),
        ("how long to pay the cheaper amount", "Pay within 14 days for a 50% discount.", "cheaper"),
        ("dog chewed the sofa does home insurance pay", "We do not cover damage by pets chewing.", "dog"),
    ]
    for question, text, term in pairs:
        assert stem(term) in same_sense_terms(question, text), (question, text)
        assert stem(term) not in same_sense_terms(question, "Opening hours are 6am to 10pm."), question
    # A PCN names the notice, which a page spells out itself: no fine.
    assert "pcn" not in same_sense_terms(
        "got a pcn in a residents bay", "Lower level, £50: a fine for a visitor."
    )
    # Emptying a bin is no missed one; taking a plastic bag home is no question of what is accepted.
    assert stem("empty") not in same_sense_terms("when do they empty my blue bin", "Report a missed bin.")
    # A missed bin is the one they didn't empty, no other kind of bin than the blue one asked about.
    missed = "Report a missed bin within 2 working days of your collection day."
    assert (
        other_kind("they didnt empty my blue bin, how long have i got to report it", missed, missed) is None
    )
    assert (
        other_kind("how long have i got to report my blue bin", missed, missed)
        == "missed bin (asked: blue bin)"
    )
    assert stem("put") not in same_sense_terms("where do i put my bin", "Plastic bags are not accepted.")


def test_an_amber_light_is_the_orange_one_asked_about() -> None:
    question = "router light flashing orange wat do i do"
    assert other_variant(question, "Flashing amber: a software update is in progress.") is None
    assert other_variant(question, "Solid green: connected.") == "green (asked: orange)"
    assert stem("orange") in same_sense_terms(question, "Flashing amber: a software update is in progress.")


def test_a_limit_on_amounts_of_the_asked_unit_answers_a_yes_or_no_question() -> None:
    question = "non stick peeling off after 18 months, i did register it, is that covered under warranty"
    covered = "The baskets are covered for 12 months only against peeling, whether or not you register."
    assert bounds_amount("18", question, covered)
    # Another unit, no limit, or a question that asks for the amount itself is no such comparison.
    assert not bounds_amount("18", question, "The baskets are covered for 12 weeks only.")
    assert not bounds_amount("18", question, "The baskets cost £24.99 for 12 months.")
    assert not bounds_amount("18", "how much is cover for 18 months", "Cover lasts up to 12 months.")
    focus = question_focus(question)
    claim = (
        "The baskets are covered for 12 months only against peeling or wear of the non-stick coating, "
        "whether or not you register."
    )
    verdict = check_responsiveness(focus, [_claim(claim, f"Warranty\n\n{claim}")], None)
    assert "not in its passage" not in verdict.reason, verdict.reason
    assert verdict.responsive, verdict.reason
    unbounded = claim.replace(" only", "")
    verdict = check_responsiveness(focus, [_claim(unbounded, f"Warranty\n\n{unbounded}")], None)
    assert "the question's 18 not in its passage" in verdict.reason, verdict.reason


def test_a_price_after_its_currency_code_counts_nothing() -> None:
    question = "how many books can i reserve at once at the library"
    assert not fills_answer_type("| Inter-library loan (item not in stock) | GBP 4.50 |", "number", question)
    assert fills_answer_type("You can reserve up to 10 books at a time.", "number", question)
    assert fills_answer_type("| Printing, A4 colour | GBP 0.60 |", "number", "how much is colour printing")


class _SimilarityByWord:
    """Embeds the question as (1, 0) and a text holding one of ``similar``'s words at its cosine."""

    def __init__(self, question: str, similar: dict[str, float]) -> None:
        self.question, self.similar = question, similar

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            cosine = (
                1.0
                if text == self.question
                else next((value for word, value in self.similar.items() if word in text), 0.2)
            )
            vectors.append([cosine, (1 - cosine * cosine) ** 0.5])
        return vectors


def test_a_row_of_another_table_that_names_less_of_the_question_is_not_quoted_beside_the_best() -> None:
    fees = (
        "| Age band | Full day (7:30am - 6:00pm) | Morning session (7:30am - 1:00pm) |\n| --- | --- | --- |\n"
        "| Under 2 years (Robins) | £72.00 | £42.00 |\n| 2 to 3 years (Finches) | £66.00 | £38.00 |"
    )
    funded = (
        "| Entitlement | Who can get it | Hours |\n| --- | --- | --- |\n| Working parents - 30 hours | Children "
        "aged 3 to 4 years whose parents each earn at least the equivalent of 16 hours a week and less "
        "than £100,000 a year. | 30 hours a week |\n\nA full day uses 10.5 funded hours. Codes are reconfirmed "
        "every 3 months."
    )
    question = "my kid is 18 months how much is a full day at little wrens"
    nursery = "Little Wrens Day Nursery"
    selection = select_evidence(
        question,
        [_read(1, fees, (nursery, "3. Fees")), _read(2, funded, (nursery, "4. Government-funded hours"))],
        cast(Any, _SimilarityByWord(question, {"Working": 0.5, "Robins": 0.26})),
    )
    # The funded hours' row scores near the fees row (a money figure, and "children" for "kid"),
    # but lacks the full day, the 18 and the months that the fees row's columns and band name. (A
    # band of "9 months to 4 years" would hold the 18 months as the fees row's does, and that row,
    # scored closer by similarity here, would rank first: the ages alone do not part them.)
    runner_up = selection.ranked[1]
    assert "Working parents" in runner_up.text
    assert runner_up.score >= selection.ranked[0].score - 0.1
    assert [sentence.text for sentence in selection.sentences] == [
        "| Under 2 years (Robins) | £72.00 | £42.00 |"
    ]


def test_a_band_of_another_period_is_no_candidate_beside_the_band_that_holds_the_asked_one() -> None:
    refunds = (
        "| When you cancel | What you get back |\n| --- | --- |\n"
        "| 7 days or more before the first visit | Full refund |\n"
        "| Between 48 hours and 7 days before the first visit | 50% of the total price |\n"
        "| Less than 48 hours before the first visit | No refund |"
    )
    question = "if i cancel my cat sitting 3 days before the first visit do i get a refund"
    # The full refund's row is the closest by similarity and names the refund; 3 days (72 hours) lie
    # in the middle band, which answers.
    selection = select_evidence(
        question,
        [_read(1, refunds, ("Whiskers cat sitting", "Cancellations"))],
        cast(Any, _SimilarityByWord(question, {"Full refund": 0.7, "No refund": 0.6, "50%": 0.5})),
    )
    assert [sentence.text for sentence in selection.sentences] == [
        "| Between 48 hours and 7 days before the first visit | 50% of the total price |"
    ]
    # Sentences are no alternatives of one table: the span that holds 2 days is of another deed
    # (moving the booking), and the refund's sentence still answers.
    terms = (
        "You can move your booking free of charge up to 48 hours before your start time. Cancellations "
        "made more than 72 hours before your start time are refunded in full; cancellations with less "
        "notice are not refunded."
    )
    question = "if we cancel our escape room booking 2 days before do we get our money back"
    selection = select_evidence(
        question,
        [_read(1, terms, ("Lockstep Escape Rooms", "Booking terms"))],
        cast(Any, _SimilarityByWord(question, {"Cancellations": 0.6, "move": 0.5})),
    )
    assert any(sentence.text.startswith("Cancellations made") for sentence in selection.sentences)


def test_a_runner_up_passed_over_as_another_entry_leaves_room_for_the_next() -> None:
    joining = (
        "Library membership is FREE for anyone who lives, works or studies in Ravensford Borough.\n\n"
        "- Your card works at all Ravensford libraries and the mobile library.\n"
        "- Your first library card is free."
    )
    question = "i dont live in ravensford can i still get a library card"
    similar = {"works at": 0.66, "first": 0.64, "FREE": 0.62}
    selection = select_evidence(
        question,
        [_read(1, joining, ("Ravensford Libraries", "1. Who can join"))],
        cast(Any, _SimilarityByWord(question, similar)),
    )
    # The first card's item is another entry beside the best one (it names no term the best
    # lacks); the sentence after it in the ranking, on who may join, names where one lives.
    assert [sentence.text for sentence in selection.ranked[:3]] == [
        "Your card works at all Ravensford libraries and the mobile library.",
        "Your first library card is free.",
        "Library membership is FREE for anyone who lives, works or studies in Ravensford Borough.",
    ]
    assert {sentence.text for sentence in selection.sentences} == {
        "Your card works at all Ravensford libraries and the mobile library.",
        "Library membership is FREE for anyone who lives, works or studies in Ravensford Borough.",
    }


def test_another_thing_of_the_asked_word_or_another_kind_answers_no_yes_or_no_question() -> None:
    question = "can i take my electric bike on the x5 coach"
    scooters = "Electric scooters (e-scooters) are not allowed on any of our vehicles, even when folded."
    assert other_noun(question, scooters) == "electric scooters (asked: electric bike)"
    assert other_noun(question, "Electric bikes are carried free.") is None
    # A verb or a particle after the noun asked is no kind of it; "members" names a membership.
    assert other_noun("How long does a rollback take?", "A rollback switches traffic back.") is None
    assert other_noun("can i get my deposit back", "Your deposit is refunded in 10 days.") is None
    assert other_noun("if im on a student membership", "Student members cannot bring guests.") is None
    # Only the word right after it counts, with nothing but spaces between.
    medical = "| Driver medical (HGV, bus or taxi - D4 form) | £120 |"
    assert other_noun("can i get a medical for my taxi licence", medical) is None
    assert other_noun("does a cottons wash take long", "| Cottons | Cold – 90 °C | 3:15 |") is None
    # Only for a yes-or-no question.
    missed = "Private patients: appointments missed will be charged at £30 for every 15 minutes."
    assert other_noun("how much do they charge if i miss a private dentist appt", missed) is None
    # Folding bikes are another kind than the electric bike a yes-or-no question asks about.
    passage = "Local routes: folding bikes only. X5 coach: up to 2 bikes in the rear rack, free of charge."
    assert other_kind(question, "X5 coach: up to 2 bikes in the rear rack, free of charge.", passage) == (
        "folding bikes (asked: electric bike)"
    )
    # "the bakery open" is no kind of opening.
    hours = "| Bank holidays | 9:00am - 1:00pm | (including bank holiday Mondays) |"
    assert other_kind("is the bakery open on bank holiday monday", hours, "Mondays OPENING closed") is None
    # "per hour" asks a rate: no hour's kind of tennis.
    assert (
        other_kind("floodlights price per hour tennis", "Floodlights cost £4 per court.", "LAWN TENNIS CLUB")
        is None
    )


def test_a_phrase_of_the_question_is_said_by_the_claim_not_another_sentence_of_its_passage() -> None:
    question = "can i take my electric bike on the x5 coach"
    passage = "X5 coach: up to 2 bikes in the rear rack, free of charge. Electric scooters are not allowed."
    assert "take" in same_sense_terms(question, passage)
    assert "take" not in same_sense_terms(question, passage, phrases=False)
    verdict = check_responsiveness(
        question_focus(question),
        [_claim("X5 coach: up to 2 bikes in the rear rack, free of charge.", passage)],
        None,
    )
    assert not verdict.responsive, verdict.reason


def test_a_time_of_day_says_which_part_of_the_day_it_is_in() -> None:
    question = "can i drop the car off for a service saturday morning"
    row = "| Saturday | 8.00am - 12.30pm (MOT tests and collections only, no servicing) |"
    assert stem("morning") in measured_terms(question, row)
    assert stem("morning") not in measured_terms(question, "| Saturday | 1pm - 5pm |")
    assert stem("evening") in measured_terms("is the pool open in the evening", "Open 7am to 9pm daily.")
    assert stem("evening") not in measured_terms("is the pool open in the evening", "Open 9am to 4pm.")
    assert stem("afternoon") in measured_terms("any afternoon classes", "Classes at 14:00 and 18:30.")


def test_a_yes_or_no_question_s_hour_is_answered_by_the_hours_a_text_gives() -> None:
    question = "can my 13yr old use the pool at 6 in the evening"
    rule = "Children under 16 may use the pool only between 9am and 11am and between 3pm and 5pm."
    assert "6" in measured_terms(question, rule)
    assert "11" in measured_terms(
        "can i get to my storage unit at 11 at night", "Site access is 6am to 10pm."
    )
    # Asked for a price, or with no hours in the text, the hour is not met.
    assert "6" not in measured_terms("how much is a swim at 6pm", rule)
    assert "6" not in measured_terms(question, "The pool is heated to 29 degrees.")
    # "at 6 people" gives no hour.
    assert "6" not in measured_terms("can we come at 6 people", rule)
    # The age: "children under 16" are under 16 years old, and "old" is no topic of "13yr old".
    assert {"13", "year"} <= spanned_duration(question, rule)
    assert "old" not in question_focus(question).weights
    assert "old" not in question_focus("can my 9 year old swim on his own").weights
    assert not spanned_duration(question, "Children under 16 kg ride free.")


def test_on_her_own_asks_whether_she_may_be_alone() -> None:
    question = "can my 7 year old swim on her own at riverside"
    assert "alon" in question_focus(question).weights
    rule = "Children under 8 must be accompanied in the water by a responsible person aged 16 or over."
    assert "alon" in same_sense_terms(question, rule)
    assert "alon" in same_sense_terms(question, "Children aged 8 and 9 may swim without an adult.")
    assert "alon" not in same_sense_terms(
        question, "The learner pool is open to parents with children under 8."
    )
    assert "alon" not in question_focus("can my 7 year old swim at riverside").weights
    # "on my own driveway" is whose the driveway is, and a permit for it asks nothing of being alone.
    permit = "do i need a permit if the skip is going on my own driveway"
    assert "alon" not in question_focus(permit).weights
    driveway = "If the skip can go on your driveway or other private land, you do not need a permit."
    assert _responds(permit, driveway, context=driveway)[0]
    assert "alon" in question_focus("can he go on his own pls").weights


def test_a_rate_per_unit_answers_how_much_for_a_number_of_those_units() -> None:
    question = "my library book is 30 days late, how much will the fine be"
    row = "| Late return - books (adult card) | 25p per item per day, maximum £6.00 per item |"
    assert rated_amounts(question, row) == {"30", "day"}
    assert rated_amounts("how much for 3 nights", "Rooms are £50 a night.") == {"3", "night"}
    # A ticket named by its days, a question for no amount, a rate of another unit: no.
    assert rated_amounts("how much is a 30 day pass", "£5 per day") == set()
    assert rated_amounts("is it free for 3 nights", "Rooms are £50 a night.") == set()
    assert rated_amounts("how much for 3 nights", "£20 per week") == set()
    # A rate per a number of minutes: "£5 per 30 minutes (or part)".
    assert rated_amounts(
        "if we get the bikes back 50 mins late whats the charge per bike",
        "we charge £5 per 30 minutes (or part)",
    ) == {"50", stem("minutes")}


def test_a_length_without_a_bound_speaks_of_the_same_length_asked() -> None:
    question = "what happens if i fall behind on the storage payments by a couple weeks"
    overlock = "If rent is still unpaid 14 days after the due date, we will place our own lock on your unit."
    assert spanned_duration(question, overlock) == {"coupl", "week"}
    assert (
        spanned_duration(question, "If rent is not paid 7 days after the due date, a fee is added.") == set()
    )
    # An age and a length of the same size are not the same.
    assert spanned_duration("im 25 can i hire a car", "You must have held a licence for 25 years.") == set()


def test_the_latest_or_earliest_asks_for_a_time_or_a_date() -> None:
    question = "whats the latest we can stay in the room on the saturday we leave"
    assert answer_type_of(question) == "date"
    assert not fills_answer_type(
        "Stays on Friday and Saturday nights have a minimum stay of 2 nights.", "date", question
    )
    assert fills_answer_type("Check-out is by 11am.", "date", question)
    assert fills_answer_type("Late check-out until 14:00 costs £30.", "date", question)
    assert answer_type_of("whats the latest version of the app") == "any"


@pytest.mark.parametrize(
    ("question", "claim", "context"),
    [
        (
            "were on free school meals, is there any help with buying the uniform",
            "Families who are eligible for free school meals can apply for a uniform grant of £80 per child "
            "per school year.",
            "Help with uniform costs. Families who are eligible for free school meals can apply for a "
            "uniform grant of £80 per child per school year.",
        ),
        (
            "can i bring my bike on the 27",
            "Local routes 12, 27 and 41: folding bikes only, and they must be folded.",
            "Bikes. Local routes 12, 27 and 41: folding bikes only, and they must be folded.",
        ),
        (
            "can my daughter keep her earrings in for pe",
            "A child's earrings must be removed for PE and swimming.",
            "Jewellery. A child's earrings must be removed for PE and swimming.",
        ),
    ],
    ids=["buying-the-uniform", "bring-a-bike", "keep-earrings-in"],
)
def test_a_yes_or_no_questions_deed_of_having_a_thing_is_asked_of_the_thing(
    question: str, claim: str, context: str
) -> None:
    verdict = check_responsiveness(question_focus(question), [_claim(claim, context)], None)
    assert verdict.responsive, verdict.reason


def test_the_thing_of_a_deed_in_any_form_of_its_verb() -> None:
    assert deed_objects("my son brought his phone to school, can he keep it in his bag") == {"phon", "bag"}
    assert deed_objects("she took her new bike on the train") == {"new", "bike"}
    assert deed_objects("can i hire a bike") == set()


def test_a_yes_or_no_question_still_needs_the_thing_it_asks_of() -> None:
    # The deed is let go, the thing is not: no word of a spaniel, no answer; and a deed that is no
    # holding or moving of a thing ("start") stays a term the claim must hold.
    room = "Sea view rooms sleep up to 4 and have a balcony."
    verdict = check_responsiveness(
        question_focus("can we bring our spaniel if we book a sea view room"), [_claim(room, room)], None
    )
    assert not verdict.responsive
    assert "spaniel" in verdict.reason.split("lacks ")[1].split(")")[0]
    washer = "Delay Start: choose a programme, then press Delay to set the hours. Use powder, not liquid."
    verdict = check_responsiveness(
        question_focus("can i start the veltra washer from my phone"), [_claim(washer, washer)], None
    )
    assert not verdict.responsive


def test_the_missing_terms_are_named_in_the_reason() -> None:
    verdict = check_responsiveness(
        question_focus("do kestrel removals do moves to spain"),
        [_claim("Every Kestrel move includes 20 free boxes delivered before moving day.")],
        None,
    )
    assert not verdict.responsive
    assert "lacks removal, move, spain)" in verdict.reason


def test_a_rule_for_every_thing_of_a_kind_speaks_of_the_one_asked() -> None:
    question = "can we just do 2 nights over the may bank hol weekend at hollowmere"
    rule = "Minimum stays: 2 nights on Friday and Saturday nights; 3 nights over any bank holiday weekend."
    assert generalised_terms(question, rule) == {"may"}
    verdict = check_responsiveness(
        question_focus(question), [_claim(rule, f"Hollowmere campsite. {rule}")], None
    )
    assert verdict.responsive, verdict.reason
    # A number narrows to a row or a plan that a rule for all of them does not name, nor does its unit.
    assert generalised_terms("does data carry over on the everyday 40gb plan", "on all plans") == set()
    assert generalised_terms("im on heatsure 1 cover", "any cover") == set()
    # Whether there is one at all is not said by a rule for every one; nor is a verb of the noun's stem.
    assert generalised_terms("is there a family membership", "available on any membership") == set()
    assert generalised_terms("do you have a family membership", "available on any membership") == set()
    assert generalised_terms("how much to get a piano collected", "all collections are a day later") == set()
    # Only a time narrows a kind every one of which has one: a family membership may not be had.
    assert generalised_terms("how much is the family membership", "on any membership") == set()
    assert generalised_terms("is the saturday session full", "All sessions are full.") == {"saturda"}
    # Without "any", "every" or "all", nothing.
    assert generalised_terms(question, "3 nights over a bank holiday weekend") == set()


@pytest.mark.parametrize(
    ("question", "text", "term"),
    [
        (
            "my son is 15 and threw up at 10pm last night, can he go in to school tomorrow",
            "Diarrhoea or vomiting: stay at home until 48 hours after the last episode.",
            "throw",
        ),
        (
            "can i take a pint from the bar in with me",
            "Drinks bought at the bar can be taken into the screens.",
            "pint",
        ),
        (
            "booked the cheap tuesday tix by mistake, can i swap them",
            "Saver Tuesday tickets cannot be exchanged.",
            "swap",
        ),
        ("booked the cheap tuesday tix by mistake", "Saver Tuesday tickets cannot be exchanged.", "tix"),
        ("can his meds be dropped round", "We deliver medicines free to housebound patients.", "med"),
    ],
    ids=["threw-up-is-vomiting", "a-pint-is-a-drink", "swap-is-exchange", "tix-are-tickets", "meds"],
)
def test_casual_words_meet_the_words_a_document_uses(question: str, text: str, term: str) -> None:
    assert term in same_sense_terms(question, text)


def test_sick_before_note_is_no_vomiting() -> None:
    assert "sick" not in same_sense_terms(
        "do i need a sick note", "Diarrhoea or vomiting: stay at home until 48 hours after."
    )
    assert "sick" in same_sense_terms(
        "she was sick twice, can she go in", "Diarrhoea or vomiting: stay at home until 48 hours after."
    )


def test_a_price_asked_per_month_needs_an_amount_per_month() -> None:
    question = "how much is silver a month for my 3 year old cat"
    excess = "| Under 6 years | £150 fixed | £99 fixed | £75 fixed |"
    header = "| Pet's age at treatment | Bronze | Silver | Gold |"
    assert unrated(question, excess, "Excess", header) == "no amount per month"
    verdict = check_responsiveness(
        question_focus(question),
        [
            ClaimInContext(
                claim_id="claim-1", text=excess, context=f"Silver cover for cats. {excess}", columns=header
            )
        ],
        None,
    )
    assert not verdict.responsive and "no amount per month" in verdict.reason
    # A rate in the claim, its heading or its table's header answers; "a day ticket" is a kind of ticket.
    assert unrated("how much a month is the dental plan", "Adult plan £15.50 per month") is None
    assert (
        unrated("how much a month is the dental plan", "| Adult | £15.50 |", "", "| Plan | Monthly fee |")
        is None
    )
    assert unrated("how much is it monthly", "£9.99 a month") is None
    assert (
        unrated(
            "How much is the yearly rent on a half plot?", "| Half plot | £52.00 |", "", "| Annual rent |"
        )
        is None
    )
    assert unrated("how much a year is it", "£40 per annum") is None
    assert unrated("how much a year is it", "£40") == "no amount per year"
    assert unrated("how much is a day ticket on the bus", "Day ticket £5") is None
    assert unrated("when does it open a day", "£5") is None


def test_the_notice_before_a_deed_is_not_the_notice_before_another() -> None:
    question = "how much notice does clearview give before they put their prices up"
    cancel = "Bookings cancelled with less than 48 hours' notice are charged a £25 fee."
    assert unnoticed_deed(question, cancel) == "says nothing of the notice before 'put'"
    assert unnoticed_deed(question, "We give 30 days' notice of any price increase.") is None
    assert unnoticed_deed("how much notice do i need to give before cancelling", cancel) is None
    verdict = check_responsiveness(
        question_focus(question), [_claim(cancel, f"Clearview prices. {cancel}")], None
    )
    assert not verdict.responsive


def test_a_thing_asked_of_itself_is_named_by_the_claim() -> None:
    question = "how much does the theory test itself cost"
    app = "Other pupils can buy access for £12."
    assert not_itself(question, app) == "names not the theory test itself"
    assert not_itself(question, "The theory test costs £23.") is None
    # "turned itself off" is what the fryer did.
    assert not_itself("air fryer says e3 and turned itself off", "E3: overheating cut-out.") is None
    verdict = check_responsiveness(
        question_focus(question),
        [ClaimInContext(claim_id="claim-1", text=app, context=app, heading="Theory test help")],
        None,
    )
    assert not verdict.responsive and "itself" in verdict.reason


def test_what_happens_is_not_answered_by_a_request_to_the_reader() -> None:
    question = "what happens with the window cleaner if my side gate is locked on the day"
    request = "If side gates are locked, please leave them unlocked on your cleaning day or give us the code."
    assert only_asks(question, request)
    assert not only_asks(question, "If we cannot get in to the back, we clean the front only and charge 50%.")
    assert not only_asks(question, "Please note: if the gate is locked we clean the front only.")
    assert not only_asks("how do i let them in if my gate is locked", request)


def test_a_place_named_by_what_it_does_is_that_business() -> None:
    assert "plac" not in question_focus("is the bike hire place open on a monday in november").weights
    assert "plac" not in question_focus("can i bring my dog to the coworking place on fridays").weights
    # A place of one's own at a nursery is a topic.
    assert "plac" in question_focus("is there a place for my son at the nursery").weights


def test_a_measure_asked_by_its_column_is_named_by_one_column() -> None:
    columns = (
        "| Package | Average download | Average upload | Minimum guaranteed download | "
        "Monthly price (24-month contract) | Monthly price (12-month contract) |"
    )
    row = "| Lynx 500 | 500 Mbps | 75 Mbps | 250 Mbps | £33.00 | £38.00 |"
    question = "whats the minimum guaranteed upload speed on lynx 500"
    assert unheaded(question, row, columns) == "no column of guarant minimum upload"
    verdict = check_responsiveness(
        question_focus(question),
        [ClaimInContext(claim_id="claim-1", text=row, context=f"{columns}\n| --- |\n{row}", columns=columns)],
        None,
    )
    assert not verdict.responsive and "no column of" in verdict.reason
    # One column holds what is asked; two things asked may be named by two; the first column names
    # the rows.
    assert unheaded("whats the minimum guaranteed download speed on lynx 500", row, columns) is None
    assert unheaded("how much is lynx 500 a month on a 12 month contract", row, columns) is None
    assert unheaded("the average upload and download on lynx 500", row, columns) is None
    assert unheaded("whats the price of the package lynx 500", row, columns) is None


def test_days_a_thing_is_limited_to_answer_a_yes_or_no_question_about_another_day() -> None:
    question = "can i book a kids party at the hall for a friday afternoon"
    rule = "Kids parties at the hall are held on Saturdays and Sundays only, starting at 10am, 1pm or 4pm."
    assert limited_days(question, rule) == {"friday"}
    assert other_day(question, rule) is None
    verdict = check_responsiveness(
        question_focus(question), [_claim(rule, f"Booking the hall. {rule}")], None
    )
    assert verdict.responsive, verdict.reason
    # Days that hold the asked one, days without "only", or a question that asks no yes or no: no.
    slots = "| Two-hour timed slot | 8am to 6pm | Monday to Friday | Priority customers only |"
    assert limited_days("can i get an evening appointment on a wednesday", slots) == set()
    assert limited_days(question, "Kids parties are held on Saturdays and Sundays.") == set()
    assert limited_days("how much is a kids party on a friday", rule) == set()
    assert other_day("how much is a kids party on a friday", rule) == "Saturday, Sunday (asked: Friday)"


def test_an_age_question_needs_an_age() -> None:
    question = "what age can my son start stage 1 swimming"
    assert answer_type_of(question) == "number"
    # "Stage 1" is a figure, not an age; a row under a "Minimum age" column gives one.
    assert not fills_answer_type(
        "All children from Stage 1 upwards must wear a swim hat.", "number", question
    )
    columns = "| Level | Minimum age | Lesson length | Price per term |"
    assert fills_answer_type("| Stage 1 | 4 years | 30 minutes | £96 |", "number", question, columns)
    story = "what age is the library story time for"
    assert fills_answer_type("Rhyme and Story Time for under-5s takes place every Tuesday.", "number", story)
    assert fills_answer_type(
        "Plotholders aged 65 or over pay half.", "number", "what age do concessions start"
    )
    assert not fills_answer_type("The course runs for 3 years.", "number", story)
    # A young animal's age in weeks is one; a length in weeks is not.
    kitten = "what age can my kitten have her first jab"
    assert fills_answer_type(
        "Kittens can have their first vaccination from 9 weeks of age.", "number", kitten
    )
    assert not fills_answer_type("Boosters are given every 52 weeks.", "number", kitten)


def test_a_price_may_be_written_without_its_currency() -> None:
    question = "intercity bike ticket price"
    assert fills_answer_type(
        "A bike ticket costs 5.00 on Regional trains and 9.50 on Intercity trains.", "number", question
    )
    assert not fills_answer_type("Each Intercity train has 8 bike spaces.", "number", question)
    family = "how much is a family ticket at ashcombe museum, 2 adults 2 kids"
    row = "| Family (2 adults + up to 3 children) | 34.00 |"
    assert fills_answer_type(row, "number", family, "| Ticket | Price |")
    assert not fills_answer_type(row, "number", family, "| Ticket | Visitors |")


def test_how_much_to_do_a_thing_asks_a_price_of_that_deed() -> None:
    question = "how much to collect my bike from home for a service"
    # A distance is no price.
    assert not fills_answer_type("We can collect your bike within 5 miles of the shop.", "number", question)
    assert fills_answer_type("This costs £15 each way.", "number", question)
    assert measured_thing("how much does harbourside charge to spay a rabbit") == (
        "spay",
        "how much does harbourside charge to spay",
    )
    rabbit = "| Rabbit vaccination (Myxo-RHD) | £52 |"
    context = f"| Service | Price |\n| --- | --- |\n{rabbit}\n| Microchipping | £22 |"
    responsive, reason = _responds("how much does harbourside charge to spay a rabbit", rabbit, context)
    assert not responsive and "no spay" in reason


def test_times_of_day_and_ages_count_nothing() -> None:
    question = "how many books can i take out at once from the library"
    story = "Our free Rhyme and Story Time for under-5s takes place every Tuesday at 10:30am; there is no need to book."
    assert not fills_answer_type(story, "number", question)
    assert fills_answer_type("You can have up to 12 books on loan at any one time.", "number", question)
    assert fills_answer_type("Each member may borrow 6 books.", "number", question)


def test_a_claim_that_names_another_kind_is_not_saved_by_its_passage_naming_the_one_asked() -> None:
    question = "how many bikes fit on a regional train"
    claim = "Each Intercity train has 8 bike spaces, in coach 1."
    context = f"Regional trains take bikes without a reservation, subject to space. {claim}"
    assert other_kind(question, claim, context) == "intercity train (asked: regional train)"
    # A claim that names the asked kind itself speaks of it.
    assert other_kind(question, "Regional trains take up to 4 bikes.", context) is None


def test_a_row_keyed_by_less_of_the_question_than_another_row_is_another_row() -> None:
    question = "how much is an extra large unit per week"
    rows = ["| Large | 150 sq ft | £41.00 |", "| Extra large | 250 sq ft | Call for a quote |"]
    context = "\n".join(["| Unit | Size | Price per week |", "| --- | --- | --- |", *rows])
    responsive, reason = _responds(question, rows[0], context, columns="| Unit | Size | Price per week |")
    assert not responsive and "large (asked: extra large)" in reason
    # A row is compared whole: the molar's row says "Back teeth" in its notes, the front tooth's
    # key names "tooth" but not "back".
    columns = "| Treatment | Price | Notes |"
    rows = [
        "| Root canal treatment, front tooth | £395 | |",
        "| Root canal treatment, molar | £650 | Back teeth |",
    ]
    context = "\n".join([columns, "| --- | --- | --- |", *rows])
    back = "how much for a private root canal on a back tooth"
    assert _responds(back, rows[1], context, heading=f"Private prices {columns}", columns=columns)[0]
    assert not _responds(back, rows[0], context, heading=f"Private prices {columns}", columns=columns)[0]


def test_a_which_question_is_answered_by_the_key_of_a_row_of_that_kind() -> None:
    question = "which flag stops burrow from crossing mount points"
    assert which_kind(question) == "flag"
    columns = "| Flag | Meaning | Default |"
    row = "| `--one-file-system` | Do not cross mount points | off |"
    context = f"{columns}\n| --- | --- | --- |\n| `--parallel N` | Files read at once | 4 |\n{row}"
    responsive, reason = _responds(question, row, context, heading=f"burrow {columns}", columns=columns)
    assert responsive, reason


def test_a_bound_on_amounts_holds_an_amount_asked_in_its_unit() -> None:
    question = "who has to approve an expense claim of 3000 eur"
    assert within_a_bound("3000", question, "| Over EUR 2,500 | Department head and CFO |")
    assert not within_a_bound("3000", question, "| EUR 500.01 to EUR 2,500 | Line manager |")
    assert not within_a_bound("3000", question, "| Up to EUR 500 | Line manager |")
    # A bound on another unit holds nothing.
    assert not within_a_bound("25", "our water hardness is 25 dH", "| over 6.1 | H6 |")
    assert within_a_bound("3", "can i stay 3 nights", "Stays of up to 5 nights are allowed.")


def test_a_range_of_days_speaks_of_a_day_it_holds() -> None:
    question = "can i take my bike on a regional train at 8am on a tuesday"
    rule = "Non-folding bikes are not allowed on Regional trains between 07:00 and 09:30, Monday to Friday."
    assert spanned_days(question, rule) == {stem("tuesday")}
    assert spanned_days("is it open on saturday", rule) == set()
    assert spanned_days("is it open on saturday", "Open every day 9-5.") == {stem("saturday")}


def test_what_another_document_is_named_for_is_not_answered_from_this_one() -> None:
    question = "vet open saturday? what time"
    row = "| Saturday and Sunday | 09:30 - 18:00 | 17:15 |"
    museum = ClaimInContext(
        claim_id="claim-1",
        text=row,
        context=f"Opening times\n\n| Day | Opening hours | Last admission |\n| --- | --- | --- |\n{row}",
        heading="Ashcombe Museum visitor information",
        title="Ashcombe Museum visitor information",
        columns="| Day | Opening hours | Last admission |",
        document_terms=frozenset({"ashcomb", "museum", "ticket"}),
    )
    alone = check_responsiveness(question_focus(question), [museum], None)
    beside = check_responsiveness(
        question_focus(question), [replace(museum, other_titles=frozenset({"harboursid", "vet"}))], None
    )
    # With no other document in view the museum's hours pass on "open" and "saturday"; beside a
    # document named for vets they are another document's subject.
    assert alone.responsive, alone.reason
    assert not beside.responsive and "the question's vet not in its passage" in beside.reason


def test_a_fine_is_an_amount_of_money_and_pence_are_money() -> None:
    question = "overdue fine for adult books??"
    assert answer_type_of(question) == "number"
    assert not fills_answer_type("We do not charge overdue fines on children's books.", "number", question)
    assert fills_answer_type("Overdue adult items are charged at 25p per item per day.", "number", question)


def test_what_are_the_hours_asks_for_times_of_day() -> None:
    question = "what are the off peak hours at the gym"
    assert answer_type_of(question) == "number"
    # A sentence on what off-peak members may do gives no hours.
    assert not fills_answer_type(
        "Off-peak members can join classes that run during off-peak hours at no extra cost.",
        "number",
        question,
    )
    assert fills_answer_type("| Off-peak | £22.00 | Monday to Friday 9:30am to 4:00pm |", "number", question)
    assert fills_answer_type("| Sunday | Closed |", "number", "what are the opening times on sunday")
    assert answer_type_of("what are the times of the buses") == "any"


def test_how_much_a_day_asks_a_price() -> None:
    question = "year 4 school dinner how much a day"
    assert not fills_answer_type("The school is also closed on Monday 4 May 2026.", "number", question)
    assert fills_answer_type("For Years 3 to 6 a hot lunch costs £2.60 per day.", "number", question)


def test_the_excess_is_an_amount_of_money() -> None:
    question = "whats the excess on a minibus from brightway"
    assert answer_type_of(question) == "number"
    # What the excess is, in words, is not how much it is.
    assert not fills_answer_type(
        "The excess is the most you pay towards damage or theft.", "number", question
    )
    assert fills_answer_type("| Premium | £1,800 | £500 |", "number", "excess on a premium car")


def test_whether_a_thing_is_ok_is_answered_by_what_allows_or_forbids_it() -> None:
    question = "are trainers ok as school shoes"
    rule = "Trainers are not allowed, except for PE."
    assert permission_terms(question, rule) == {stem("ok")}
    assert permission_terms(question, "Trainers come in many colours.") == set()
    assert _responds(question, rule, f"- Black school shoes.\n\n{rule}")[0]


def test_a_noun_limited_to_other_kinds_answers_whether_of_the_kind_asked() -> None:
    question = "can i pay with debit card for a family car"
    rule = "Debit cards are accepted for Economy and Compact cars only."
    assert limited_kinds(question, rule) == {stem("family")}
    # Without "only" the list is not a limit.
    assert limited_kinds(question, "Debit cards are accepted for Economy and Compact cars.") == set()
    responsive, reason = _responds(question, rule)
    assert responsive, reason
    assert not _responds(question, "Debit cards are accepted for Economy and Compact cars.")[0]


def test_a_query_typed_as_a_kind_and_its_price_names_that_kind() -> None:
    columns = "| Service | Stylist | Senior Stylist | Creative Director |"
    row = "| Fringe trim | £8 | £8 | £8 |"
    assert other_kind("beard trim price", row, row, columns) == "fringe trim (asked: beard trim)"
    assert other_kind("fringe trim price", row, row, columns) is None
    responsive, reason = _responds(
        "beard trim price", row, f"{columns}\n| --- | --- | --- | --- |\n{row}", columns=columns
    )
    assert not responsive, reason


def test_hours_from_one_time_to_another_say_when_a_place_closes() -> None:
    question = "wat time does the pharmacy close on thursdays"
    row = "| Thursday | 08:30 - 20:00 | Late-night opening |"
    assert opposite_event(question, row) is None
    # An opening time alone is still no closing time.
    assert opposite_event(question, "On Thursdays the pharmacy opens at 08:30.") == ("close", "opens")
    # Nor is a time of arrival one of leaving, whatever span it gives.
    assert opposite_event("when do i have to leave", "Arrive between 15:00 and 22:00 - 23:00.") == (
        "leave",
        "arrive",
    )


def test_words_parted_by_a_cell_or_a_line_name_no_kind_together() -> None:
    question = "how much to get rid of 4 old car tyres"
    row = "| Car and motorcycle tyres | £5 per tyre | 4 tyres |"
    table = f"| Plasterboard sheets | £4 per bag | 10 bags |\n{row}"
    assert other_kind(question, row, table) is None
    assert (
        other_kind(
            "how much is a volta day pass", "- Day Pass: GBP 12.00.", "Passes:\n- Day Pass: GBP 12.00."
        )
        is None
    )
    # Side by side in one cell they still do.
    assert other_kind(
        "how much is a day permit", "An overnight permit costs £8.", "An overnight permit costs £8."
    ) == ("overnight permit (asked: day permit)")


def test_a_name_typed_in_lower_case_names_no_kind() -> None:
    context = (
        "Volta Ride is a dockless electric bike share scheme. Bikes are unlocked through the Volta Ride app."
    )
    claim = "The maximum rider weight is 120 kg."
    assert other_kind("max rider weight for volta bikes", claim, context) is None
    # A word written with a capital only where it starts a sentence is no name.
    regional = "Each Intercity train has 8 bike spaces. Regional trains take bikes subject to space."
    assert (
        other_kind("how many bikes on a regional train", "Each Intercity train has 8 bike spaces.", regional)
        == "intercity train (asked: regional train)"
    )


def test_a_one_before_a_noun_is_no_figure_the_claim_must_give() -> None:
    question = "how many schedules can i set on 1 plug"
    assert one_as_article(question)
    assert _responds(question, "You can set up to 30 schedules per plug.")[0]
    # One of a unit is a measure.
    assert not one_as_article("what can i do in 1 hour")
    assert not one_as_article("is level 1 harder than 1 plug")


def test_a_long_word_with_one_letter_changed_is_read_as_the_passages_word() -> None:
    texts = ["All traders must hold public liability insurance of at least £5 million."]
    assert read_as_typed("do i need insurence to trade", texts) == "do i need insurance to trade"
    # A shorter word with a letter changed may be another word: left as typed.
    assert read_as_typed("is the market held in summer", ["The market is held on Saturdays."]) == (
        "is the market held in summer"
    )


@pytest.mark.parametrize(
    ("question", "text", "said"),
    [
        ("plug light flashing red what does that mean", "Blinking red: lost connection", {"flash"}),
        ("can i pick up my bib on race day", "Bibs must be collected from the Race Expo.", {"pick", "up"}),
        (
            "does the smart plug work on 5ghz wifi",
            "The plug does not support 5 GHz networks.",
            {"work", "on"},
        ),
    ],
)
def test_words_of_the_same_sense_meet_the_question(question: str, text: str, said: set[str]) -> None:
    assert {stem(word) for word in said} <= same_sense_terms(question, text)


def test_a_row_says_what_the_headers_of_the_columns_it_fills_name() -> None:
    columns = "| Programme | Temperature | Max load | Max spin |"
    row = "| Synthetics | 20-60°C | 3.5 kg | 1200 rpm |"
    assert set(content_terms("Max load Max spin")) <= filled_columns(row, columns)
    assert filled_columns("| Synthetics | 20-60°C |", columns) == set()
    responsive, reason = _responds(
        "max load for synthetics", row, f"{columns}\n| --- | --- | --- | --- |\n{row}", columns=columns
    )
    assert responsive, reason
    # The same for a plain text's table set out in columns.
    plain = "Synthetics         20-60°C       3.5 kg     1200 rpm"
    assert stem("load") in filled_columns(plain, "Programme          Temperature   Max load   Max spin")


def test_a_noun_that_narrows_the_next_is_not_the_kind_asked_of() -> None:
    # "the volta day pass" asks the price of a day pass; "day" is no noun that a claim's "5 working
    # days" names another kind of.
    context = "- Day Pass: GBP 12.00. Unlimited rides.\n- Refunds take 5 working days."
    assert other_kind("how much is the volta day pass", "Day Pass: GBP 12.00.", context) is None
    # "old car tyres" are car tyres, not another kind of car than the "whole cars" the tip refuses.
    row = "| Car and motorcycle tyres | £5 per tyre | 4 tyres |"
    assert (
        other_kind("how much to get rid of 4 old car tyres", row, f"{row}\n- Whole cars, caravans or boats")
        is None
    )


def test_a_size_the_passage_gives_of_other_numbers_is_not_met_by_a_bare_figure() -> None:
    table = "| 6 inch round cake | 8-10 | £38 |\n| Cupcakes, per dozen | 12 | £30 |"
    assert other_unit_numbers("how much is a 12 inch cake", table) == {"12"}
    assert other_unit_numbers("how much is a 6 inch cake", table) == set()
    # A bare figure where the passage gives the size of no number may be of it.
    assert other_unit_numbers("how much is a 12 inch cake", "| Large | 12 | £60 |") == set()


def test_a_date_of_another_kind_does_not_answer_when() -> None:
    concerts = (
        "- **Winter Concert:** Saturday 13 December 2025, 7:00pm, Millbrook Methodist Church.\n"
        "- **Spring Concert:** Saturday 28 March 2026, 7:30pm, Millbrook Town Hall."
    )
    winter = "**Winter Concert:** Saturday 13 December 2025, 7:00pm, Millbrook Methodist Church."
    # "the choir summer concert": "choir" narrows the concert, and "summer" says which one.
    assert other_kind("when is the choir summer concert", winter, concerts) == (
        "winter Concert (asked: summer concert)"
    )
    assert other_kind("when is the choir winter concert", winter, concerts) is None
    assert not _responds("when is the choir summer concert", winter, concerts)[0]


def test_r_typed_for_are_asks_yes_or_no() -> None:
    assert is_polar_question("r u open on sundays")
    assert is_polar_question("r the bakery cakes halal")
    assert not is_polar_question("rates for a hot desk")


def test_words_as_people_say_them_meet_the_documents_words() -> None:
    # "brekky" is breakfast; "the tip" is the household recycling centre.
    assert set(question_focus("what time is brekky on sunday").weights) == {stem("breakfast"), stem("sunday")}
    assert stem("tip") in same_sense_terms(
        "can i take a mattress to the tip",
        "The Millbrook Household Waste Recycling Centre accepts mattresses.",
    )


def test_taking_new_patients_is_accepting_them() -> None:
    question = "r u taking new nhs patients"
    claim = "We are currently accepting new NHS patients aged under 18 only."
    assert "taking" in same_sense_terms(question, claim)
    responsive, reason = _responds(question, claim)
    assert responsive, reason


def test_what_colour_is_answered_by_a_colour() -> None:
    question = "wat colour is the school jumper"
    lost = "Last year, more than 200 unnamed jumpers ended up in lost property!"
    assert unnamed_kind(question, lost) == "colour"
    responsive, reason = _responds(question, lost)
    assert not responsive
    assert "names no colour" in reason
    uniform = "Jumpers are bottle green, with the school logo."
    assert unnamed_kind(question, uniform) is None
    assert _responds(question, uniform)[0]
    # A colour the question names is no answer to which colour.
    assert (
        unnamed_kind("what colour is the green bin for", "The green bin is collected on Mondays.") == "colour"
    )


def test_a_row_keyed_by_a_kind_not_asked_is_not_the_row_asked_for() -> None:
    columns = "| Lesson length | In the studio | Online (Zoom) | Suitable for |"
    trial = "| Trial lesson (30 minutes, one only) | £15.00 | £15.00 | New pupils |"
    plain = "| 30 minutes | £21.00 | £19.00 | Beginners and children under 9 |"
    table = f"{columns}\n| --- | --- | --- | --- |\n{trial}\n{plain}\n| 45 minutes | £30.00 | £27.00 | Grade 3 up |"
    question = "how much is a 30 min lesson"
    responsive, reason = _responds(question, trial, table, columns=columns)
    assert not responsive
    assert "another kind: trial lesson (30 minutes, one only) (asked: 30 minutes)" in reason
    # The row keyed by what was asked answers, though the trial row names the lesson too.
    assert _responds(question, plain, table, columns=columns)[0]
    assert _responds("how much is a trial lesson", trial, table, columns=columns)[0]


def test_a_general_row_or_the_header_is_no_better_answer_than_a_row_naming_more() -> None:
    columns = "| Section | Limit | Excess |"
    article = "| Any single article (contents) | £2,000 | As contents |"
    table = f"{columns}\n| --- | --- | --- |\n| Contents | £50,000 | £250 |\n{article}"
    # "| Contents |" names less of the question than the single article's row: that row answers.
    assert _responds("whats the single item limit on contents", article, table, columns=columns)[0]
    cake = "| 8 inch round cake | 14-18 | £55 |"
    cakes = f"| Cake | Serves | Price |\n| --- | --- | --- |\n| 6 inch round cake | 8-10 | £38 |\n{cake}"
    # The header's "Cake" keys no row.
    assert _responds("how much is an 8 inch cake", cake, cakes, columns="| Cake | Serves | Price |")[0]


def test_whom_the_asker_asks_for_is_no_topic_the_passage_must_name() -> None:
    # "my mum", "my 15 yr old son": the passage speaks of its patients or young people.
    focus = question_focus("can my 15 yr old son use the gym")
    assert "son" in focus.aside
    assert focus.weights["son"] == 0.5
    teen = "Young people aged 14 and 15 can use the gym only during Teen Gym sessions on Saturdays."
    assert _responds("can my 15 yr old son use the gym", teen)[0]
    # "my mum is 78" is her age: "aged 75 and over" holds it.
    review = "Patients aged 75 and over need a medication review every six months."
    assert _responds("my mum is 78 how often does she need a medication review", review)[0]
    responsive, reason = _responds("my mum is 70 how often does she need a medication review", review)
    assert not responsive
    assert "the question's 70 not in its passage" in reason
    # A child or a kid is also a kind of ticket: it stays a term of the question.
    assert "kid" not in question_focus("how much is a ticket for my kid").aside
    # A relative named without "my", "our" ... is what the question is about.
    assert "brother" not in question_focus("is there a brother and sister discount").aside


def test_greetings_and_typed_short_forms_are_read_as_meant() -> None:
    assert (
        question_focus("hi whats the price for an adult swim").weights
        == question_focus("whats the price for an adult swim").weights
    )
    focus = question_focus("what time does hollins rd library close on wed")
    assert {"road", stem("wednesday")} <= set(focus.weights)
    assert stem("saturday") in question_focus("is the pool open on sat").weights
    # "sat" is a day only after a word that leads to one.
    assert "sat" in question_focus("where is the sat nav holder").weights
    assert stem("appointment") in question_focus("whats the charge if i miss my vet appt").weights
    assert "w" not in question_focus("do i need to book if im walking on w my bike").weights


def test_a_plural_typed_wrong_is_read_as_the_passages_word() -> None:
    texts = ["| Thursday | 09:30-10:30 | Main pool | Aqua fit |"]
    assert read_as_typed("when is aqua fit on thursdys", texts) == "when is aqua fit on thursday"


def test_a_code_the_question_gives_must_be_in_the_passage() -> None:
    question = "how much is a residents permit in zone f5"
    temporary = "you can buy a temporary 14-day permit for £5 while you update your logbook"
    responsive, reason = _responds(question, temporary, f"Zones F1, F2, F3 and F4. {temporary}")
    assert not responsive
    assert "the question's f5 not in its passage" in reason
    permit = "A residents permit in Zone F5 costs £65 a year."
    assert _responds(question, permit)[0]
    # A word typed with a digit, a plural or an age group is no code.
    assert question_codes("can i come b4 9am") == []
    assert question_codes("whats the training time for the u11s") == []
    assert question_codes("when do the u11 train") == []
    columns = "| Age group | Day | Time | Venue |"
    row = "| Under-11 & Under-12 | Wednesday | 18:00 - 19:15 | Kingsmead School 3G pitch |"
    table = f"{columns}\n| --- | --- | --- | --- |\n{row}"
    assert _responds("whats the training time for the u11s", row, table, "Training times", columns)[0]


@pytest.mark.parametrize(
    ("question", "held", "why", "answer"),
    [
        # "How much extra" asks for a price, not a date.
        (
            "how much extra is the sailors ink tattoo exhibition",
            "From 3 October 2025 to 22 February 2026, Sailors' Ink explores two centuries of tattoo art.",
            "answer type not found",
            "The Sailors' Ink tattoo exhibition costs £4 extra on top of entry.",
        ),
        # A price asked of a day needs a claim that names the day.
        (
            "hi whats the price for an adult swim on a saturday",
            "Swim Unlimited membership costs £34.99 per month for adults.",
            "no day (asked: Saturday)",
            "Adult swims cost £5.40 at weekends.",
        ),
    ],
)
def test_a_price_is_asked_of_what_and_when_the_question_says(
    question: str, held: str, why: str, answer: str
) -> None:
    responsive, reason = _responds(question, held)
    assert not responsive
    assert why in reason
    assert _responds(question, answer)[0]


def test_sending_a_thing_back_is_returning_it() -> None:
    said = same_sense_terms(
        "what happens if i dont send the router back after cancelling", "you must return your router"
    )
    assert {"send", "back"} <= said
    assert same_sense_terms("what happens if i dont send the router back", "we send you a bag") == set()


def test_how_many_ppl_counts_people() -> None:
    assert counted_noun("how many ppl can the great hall hold for the evening do") == stem("people")
    assert fills_answer_type(
        "The Great Hall holds up to 200 guests for an evening reception.",
        "number",
        "how many ppl can the great hall hold for the evening do",
    )


def test_getting_a_deposit_back_is_a_refund() -> None:
    question = "how much is the deposit to book our date and do we get it back if we cancel"
    # "non-refundable" speaks of refunds: it answers whether it comes back (no).
    assert {"get", "back"} <= same_sense_terms(question, "A non-refundable booking deposit of £2,500.")
    assert same_sense_terms(question, "A booking deposit of £2,500 secures your date.") == set()


def test_how_early_is_the_questions_phrase() -> None:
    assert "early" not in question_focus("how early do i need to be at the terminal with the car").weights
    assert "early" in question_focus("is there an early bird discount").weights


def test_one_before_a_unit_is_a_figure_not_an_article() -> None:
    assert not one_as_article("how much is clearwave 1 gig full fibre a month")
    assert not one_as_article("can i run a 1 kw heater on it")
    assert one_as_article("how many schedules can i set on 1 plug")


def test_a_late_fine_is_an_overdue_charge() -> None:
    question = "whats the fine for a late dvd at the library"
    assert {"fine", "late"} <= same_sense_terms(question, "Overdue charges: DVDs £1.00 per day.")


ANNUAL = "how much is an annual membership at the climbing wall"
OFF_PEAK = "how much is junior off peak at the climbing wall"


@pytest.mark.parametrize(
    ("question", "claim", "expected"),
    [
        # An annual membership is not a monthly one; "yearly" is "annual".
        (ANNUAL, "| Adult monthly membership (direct debit) | £52.00 | £52.00 |", "monthly (asked: annual)"),
        (ANNUAL, "Monthly £52, or £520 paid yearly.", None),
        ("how much is the monthly fee", "The fee is £30 per month.", None),
        # "off peak" is one word, not "peak".
        (
            OFF_PEAK,
            "| Peak session (roped wall and bouldering) | £11.50 | £8.00 | £9.00 |",
            "peak (asked: offpeak)",
        ),
        ("whats the offpeak price", "| Off-peak | £9.00 |", None),
    ],
    ids=["monthly-for-annual", "both-periods", "per-month-is-monthly", "peak-for-off-peak", "off-peak-row"],
)
def test_another_variant_than_the_one_asked(question: str, claim: str, expected: str | None) -> None:
    assert other_variant(question, claim) == expected


def test_off_peak_is_one_word_that_peak_does_not_hold() -> None:
    question = OFF_PEAK
    assert set(question_focus(question).weights) == {"junior", "off-pea", "climb", "wall"}
    assert "off-pea" in content_terms("| Off-peak session (weekdays) | £9.00 | £6.50 |")
    assert "off-pea" not in content_terms("| Peak session (roped wall) | £11.50 | £8.00 |")
    table = (
        "## Prices\n\n| Entry | Adult (18+) | Junior (8-17) |\n| --- | --- | --- |\n"
        "| Peak session (roped wall and bouldering) | £11.50 | £8.00 |\n"
        "| Off-peak session (weekdays before 4pm, bouldering only) | £9.00 | £6.50 |\n"
        "| Monthly unlimited climbing | £49.00 | £32.00 |\n"
    )
    # The peak row, which names more of the question ("wall"), is another variant: the off-peak row answers.
    selection = select_evidence(question, [_read(1, table)], None)
    assert selection.sentences[0].text.startswith("| Off-peak session")
    # A row that names no variant, where another row names the one asked, is another row.
    monthly = "| Monthly unlimited climbing | £49.00 | £32.00 |"
    columns = "| Entry | Adult (18+) | Junior (8-17) |"
    assert (
        other_variant_row(question, monthly, columns, table) == "monthly unlimited climbing (asked: offpeak)"
    )
    assert other_variant_row("how much is junior entry", monthly, columns, table) is None
    assert other_variant_row(question, "Monthly climbing is £49.", "", table) is None


def test_an_after_school_club_is_not_a_club_on_school_days() -> None:
    question = "how much is after school club at willowbrook"
    assert "after-s" in question_focus(question).weights
    breakfast = "Breakfast club runs from 7:45am every school day and costs £4.00 per session."
    assert "after-s" not in content_terms(breakfast)
    assert "after-s" in content_terms("The after-school club costs £9.50 a session.")
    assert "after-s" in content_terms("Children can stay after school until 6pm.")


def test_car_parking_is_not_cycle_parking() -> None:
    cycle = "Cycle parking: 60 covered spaces outside the Mill Lane entrance, free of charge."
    question = "how much is car parking at kingsmere station for the day"
    assert other_kind(question, cycle, cycle) == "cycle parking (asked: car parking)"
    assert other_kind(question, "Car parking costs £8 a day.", "Car parking costs £8 a day.") is None
    # An -ing word that is a deed stays none of the kinds: "for printing PETG" says what for.
    assert (
        other_kind("how much for printing posters", "Printing flyers costs £5.", "Printing flyers costs £5.")
        is None
    )


def test_what_the_asker_tells_before_a_yes_or_no_question_leaves_the_kind_asked_of() -> None:
    boiler = "my boiler is a 12 yr old oil boiler can i still get hearthsafe cover"
    assert told_then_polar(boiler) and not is_polar_question(boiler)
    assert told_then_polar("my son is turning 11 can he have the sports hall party")
    assert told_then_polar("im going as carer for my brother do i need a ticket")
    assert not told_then_polar("my mum is 78 how often does she need a medication review")
    assert not told_then_polar("lost my door fob at threadmill whats the replacement cost")
    # Its age is no kind of boiler: the kind asked is an oil boiler, which gas boilers are not.
    gas = "Gas boilers must be less than 15 years old when you first take out cover."
    assert other_kind(boiler, gas, gas) == "gas boilers (asked: oil boiler)"
    oil = "Oil boilers must be less than 10 years old when you first take out cover."
    assert other_kind(boiler, oil, f"{gas} {oil}") is None


def test_a_kind_coordinated_with_the_one_asked_is_the_one_asked() -> None:
    question = "lost my door fob at threadmill whats the replacement cost"
    either = "A lost or damaged fob is replaced for £15."
    assert other_kind(question, either, either) is None
    damaged = "A damaged fob is replaced for £15."
    assert other_kind(question, damaged, damaged) == "damaged fob (asked: door fob)"


def test_hiring_a_thing_asks_its_price_not_a_deed() -> None:
    assert measured_thing("how much to hire the weaver room if im not a member") is None
    assert measured_thing("how much to book a tennis court") is None
    assert measured_thing("how much to collect my bike") == ("collect", "how much to collect")


def test_a_permit_one_holds_is_not_a_thing_allowed() -> None:
    allowed = "Dogs are allowed in glamping pods 3 and 4 only, at a charge of £10 per stay."
    assert "permit" not in same_sense_terms("how much is a fishing permit for willowmere lake", allowed)
    assert "permit" in same_sense_terms("are dogs permitted in the pods", allowed)
    assert "permit" in same_sense_terms("do they permit dogs", allowed)


def test_going_somewhere_weighs_as_what_the_asker_tells() -> None:
    question = "can i go into the council tax office on a friday"
    focus = question_focus(question)
    assert "go" in focus.aside
    assert focus.weights["go"] == 0.5
    closed = "Our Customer Service Centre at the council tax offices is open Monday to Thursday; it is closed on Fridays."
    assert _responds(question, closed)[0]
    # The place must still be the one asked about.
    assert not _responds(question, "The library is closed on Fridays.")[0]


def test_an_ordinal_in_figures_is_the_passages_ordinal_in_words() -> None:
    said = same_sense_terms(
        "do i get a discount for my 2nd kid", "The second child gets 15% off monthly subs."
    )
    assert "2" in said
    assert same_sense_terms("how much is the second permit", "2nd permit: £110 a year") == {"second"}
    assert "2" not in same_sense_terms("do i get a discount for my 2nd kid", "The first child pays in full.")


def test_a_boyfriend_or_a_baby_of_one_is_whom_the_question_is_for() -> None:
    assert "bf" in question_focus("can my bf stay over at millbrook house").aside
    question = "does my baby get a free pushchair and car seat, shes 1 and sitting on my lap"
    infants = (
        "Infants under 2 travelling on a parent's lap have no bag allowance, but may check in one "
        "pushchair and one car seat free of charge."
    )
    # "shes 1" is her age, which "under 2" holds; the baby is the passage's infant.
    assert spanned_duration(question, infants) >= {"1"}
    assert "baby" in same_sense_terms(question, infants)
