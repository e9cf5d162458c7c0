"""extract_claims: atomic claims, spans, classes, importance, citations and stable ids."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from akm.claims import (
    CLAIM_CLASSES,
    ClaimClass,
    claim_text,
    detect_claim_class,
    extract_claims,
    is_claimable,
    is_statement,
    months,
    quantities,
    sentence_spans,
)
from akm.claims.segmentation import TextSpan

ANSWER = (
    "The cache is enabled by default [E1]. Latency dropped to 3.5 ms in v1.2.3. [E2]\n"
    "You should use PostgreSQL for large corpora; SQLite is fine for one machine [E3].\n"
    "- Deleting rows is not allowed without review.\n"
    "- The release shipped in March 2024 [E1, E2].\n"
    "This suggests the index is stale."
)


def test_claims_of_an_answer() -> None:
    claims = extract_claims(ANSWER, important_classes={"number", "date", "policy"})
    assert [(claim.text, claim.claim_class, claim.importance, claim.cited_evidence) for claim in claims] == [
        ("The cache is enabled by default.", "system-state", "supporting", (1,)),
        ("Latency dropped to 3.5 ms in v1.2.3.", "number", "important", (2,)),
        ("You should use PostgreSQL for large corpora", "recommendation", "supporting", (3,)),
        ("SQLite is fine for one machine.", "other", "supporting", (3,)),
        ("Deleting rows is not allowed without review.", "policy", "important", ()),
        ("The release shipped in March 2024.", "date", "important", (1, 2)),
        ("This suggests the index is stale.", "interpretation", "supporting", ()),
    ]


def test_spans_slice_back_to_the_claim_text() -> None:
    claims = extract_claims(ANSWER, important_classes=())
    for claim in claims:
        assert claim_text(ANSWER[claim.start : claim.end]) == claim.text
    assert ANSWER[claims[0].start : claims[0].end] == "The cache is enabled by default [E1]."
    assert ANSWER[claims[1].start : claims[1].end] == "Latency dropped to 3.5 ms in v1.2.3. [E2]"
    assert (claims[4].start, claims[4].end) == (
        ANSWER.index("Deleting"),
        ANSWER.index("review.") + len("review."),
    )


def test_ids_are_stable_and_distinct() -> None:
    first = extract_claims(ANSWER, important_classes=())
    second = extract_claims(ANSWER, important_classes={"number"})
    assert [claim.claim_id for claim in first] == [claim.claim_id for claim in second]
    assert len({claim.claim_id for claim in first}) == len(first)
    assert all(claim.claim_id.startswith("claim-") for claim in first)
    repeated = extract_claims("It is on. It is on.", important_classes=())
    assert repeated[0].claim_id != repeated[1].claim_id
    assert repeated[0].claim_id.rsplit("-", 1)[0] == repeated[1].claim_id.rsplit("-", 1)[0]


def test_a_statement_before_a_short_lead_in_to_a_list_is_a_claim() -> None:
    # The sentence states both prices, then leads in to the list of what the plan includes.
    answer = (
        "It costs £14.50 a month for cats and £17.00 a month for dogs, and includes:\n\n- two checks a year"
    )
    claims = extract_claims(answer, important_classes=())
    assert [claim.text for claim in claims] == [
        "It costs £14.50 a month for cats and £17.00 a month for dogs",
        "two checks a year",
    ]
    assert answer[claims[0].start : claims[0].end] == claims[0].text
    # A lead-in alone, or one without a statement before its comma, is still no claim.
    assert extract_claims("Key points:", important_classes=()) == []
    assert extract_claims("The kit, which includes:", important_classes=()) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Reads are fast, and writes are slow.", ["Reads are fast", "writes are slow."]),
        ("Reads are fast; writes are slow.", ["Reads are fast", "writes are slow."]),
        ("Salt and pepper are served.", ["Salt and pepper are served."]),
        ("It supports reads, and writes.", ["It supports reads, and writes."]),
        (
            "The old index is fast, but the new one is faster.",
            ["The old index is fast", "the new one is faster."],
        ),
    ],
    ids=["comma-and-clauses", "semicolon", "noun-conjunction", "short-right-side", "but-clause"],
)
def test_clause_splitting_is_conservative(text: str, expected: list[str]) -> None:
    assert [claim.text for claim in extract_claims(text, important_classes=())] == expected


@pytest.mark.parametrize(
    ("text", "claim_class"),
    [
        ("Deleting audit rows must not happen.", "policy"),
        ("Access from outside the VPN is forbidden.", "policy"),
        ("Two reviewers are required for every release.", "policy"),
        ("The retention policy keeps rows for 30 days.", "policy"),
        ("You should rotate keys every 90 days.", "recommendation"),
        ("Use the SQLite backend for one machine.", "recommendation"),
        ("We recommend PostgreSQL.", "recommendation"),
        ("The migration ran on 2024-03-01.", "date"),
        ("It was released in 2019.", "date"),
        ("The outage began last week.", "date"),
        ("Latency is 40 ms at p95.", "number"),
        ("Throughput rose by 12%.", "number"),
        ("The cache is enabled.", "system-state"),
        ("The service is running in the primary region.", "system-state"),
        ("The timeout defaults to the global value.", "system-state"),
        ("SQLite is the default backend.", "system-state"),
        ("The spike likely means the cache is cold.", "interpretation"),
        ("Elevated IL-6 indicates inflammation.", "interpretation"),
        ("The index covers Markdown files.", "other"),
        ("IL-6 and COVID-19 are studied.", "other"),
    ],
    ids=[
        "must-not",
        "forbidden",
        "required",
        "policy-word-beats-number",
        "should",
        "imperative-use",
        "recommend",
        "iso-date",
        "year",
        "relative-date",
        "number-with-unit",
        "percent",
        "enabled",
        "running",
        "defaults-to",
        "is-the-default",
        "likely",
        "indicates",
        "plain-fact",
        "identifiers-are-not-numbers",
    ],
)
def test_detect_claim_class(text: str, claim_class: ClaimClass) -> None:
    assert detect_claim_class(text) == claim_class


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3.5 ms", [(3.5, "ms")]),
        ("40% and 40 percent", [(40.0, "%"), (40.0, "%")]),
        ("a 3-fold rise, twice", [(3.0, "fold"), (2.0, "")]),
        ("32,441 samples in 2015", [(32441.0, ""), (2015.0, "year-date")]),
        ("IL-6, p53, E1, COVID-19, v1.2.3", []),
        ("500 mg and 0.5 g", [(500.0, "mg"), (0.5, "g")]),
        ("11·9 million", [(11.9, "million")]),
        ("on 2024-03-01", [(2024.0, "year-date")]),
    ],
    ids=[
        "decimal-unit",
        "percent-spellings",
        "fold-and-word",
        "thousands-and-year",
        "identifiers",
        "mass",
        "middle-dot",
        "iso-date",
    ],
)
def test_quantities(text: str, expected: list[tuple[float, str]]) -> None:
    assert [(quantity.value, quantity.unit) for quantity in quantities(text)] == expected


PIECES = st.sampled_from(
    ["The cache", " is", " enabled", ".", " ", "\n", "- ", "1. ", ",", " and", " it", " was", ";", " [E1]", "[E2, E3]",
     " 3.5", " ms", " e.g.", " Dr.", " U.S.", "?", "!", " v1.2", " In", " 2024", "\n\n", "*", "  ", "## ", "**", "`", ":", "---"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_claims_are_ordered_disjoint_spans_of_the_answer(answer: str) -> None:
    claims = extract_claims(answer, important_classes={"number"})
    previous_end = 0
    for claim in claims:
        assert previous_end <= claim.start < claim.end <= len(answer)
        assert claim_text(answer[claim.start : claim.end]) == claim.text
        assert claim.text == claim.text.strip() and claim.text
        assert claim.claim_class in CLAIM_CLASSES
        assert claim.importance == ("important" if claim.claim_class == "number" else "supporting")
        previous_end = claim.end


def test_markdown_headings_lead_ins_and_emphasis() -> None:
    answer = (
        "## Answer\n\nKey points:\n- **SQLite** is the default backend [E1].\n"
        "- The `cache_ttl` setting defaults to 300 s [E2].\n\n---\n*Note*: PostgreSQL suits large corpora."
    )
    claims = extract_claims(answer, important_classes={"number"})
    assert [(claim.text, claim.claim_class, claim.cited_evidence) for claim in claims] == [
        ("SQLite is the default backend.", "system-state", (1,)),
        ("The cache_ttl setting defaults to 300 s.", "number", (2,)),
        ("Note: PostgreSQL suits large corpora.", "other", ()),
    ]
    assert answer[claims[0].start : claims[0].end] == "**SQLite** is the default backend [E1]."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Shipped in March 2024.", [3]),
        ("Shipped in March.", [3]),
        ("They march on.", []),
        ("It may rain.", []),
        ("Due 3 May.", [5]),
        ("In Jan 2020 and on 2021-07-04.", [1, 7]),
        ("First start at 18:30, May to August", [5, 8]),
        ("First start at **18:30**, May to August", [5, 8]),
        ("You **may** book online.", []),
    ],
    ids=[
        "month-year",
        "month-alone",
        "verb-march",
        "modal-may",
        "day-may",
        "abbreviation-and-iso",
        "may-beside-a-time",
        "may-beside-an-emphasised-time",
        "emphasised-modal-may",
    ],
)
def test_months(text: str, expected: list[int]) -> None:
    assert months(text) == expected


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("[E1] #5. EvidencePacket contract", id="cited-numbered-heading"),
        pytest.param("5. EvidencePacket contract", id="section-title"),
        pytest.param("§3.2 Verdicts", id="section-sign"),
        pytest.param("University of Chicago", id="bare-title"),
        pytest.param("## Storage [E2]", id="markdown-heading"),
        pytest.param("[E1]", id="citation-marker"),
    ],
)
def test_headings_titles_and_markers_are_not_claims(answer: str) -> None:
    assert extract_claims(answer, ()) == []


def test_a_statement_beside_a_title_is_still_a_claim() -> None:
    claims = extract_claims(
        "EvidencePacket contract\n\nThe packet holds every row it was built from [E1].", ()
    )
    assert [claim.text for claim in claims] == ["The packet holds every row it was built from."]


@pytest.mark.parametrize(
    "sentence",
    [
        "She sank in a storm in the North Sea in 1931.",
        "The crew fled to the boats.",
        "Ellery built it in 1889.",
    ],
)
def test_a_sentence_with_an_irregular_past_is_a_claim(sentence: str) -> None:
    assert [claim.text for claim in extract_claims(sentence, important_classes=())] == [sentence]


@pytest.mark.parametrize(
    ("sentence", "claim"),
    [
        # A plain verb after a plural subject or a pronoun, with no other word that reads as a verb.
        ("Rehearsals take place every Wednesday during term time from 7:30 pm to 9:30 pm.", True),
        ("We meet at the hall at 7 pm.", True),
        # Title Case stays a title.
        ("Opening Hours Take Effect", False),
    ],
)
def test_a_plain_verb_after_a_plural_subject_or_a_pronoun_makes_a_claim(sentence: str, claim: bool) -> None:
    assert is_statement(sentence) is claim


def test_a_list_entry_or_table_row_with_a_figure_is_a_claim() -> None:
    answer = (
        "- 400 g rye flour\n"
        "- a pinch of salt\n"
        "- Ingredients\n"
        "| abroad | 60 euros | 160 euros |\n"
        "Incident report: checkout outage on 14 September 2026\n"
    )
    # The entries with a figure state it; a bare entry, and a title line outside any list, do not.
    assert [claim.text for claim in extract_claims(answer, ())] == [
        "400 g rye flour",
        "| abroad | 60 euros | 160 euros |",
    ]


@pytest.mark.parametrize(
    ("sentence", "claimable"),
    [
        pytest.param("Clean the filter once a week.", True, id="instruction"),
        pytest.param("Heat the oven to 220 °C.", True, id="instruction-with-a-figure"),
        pytest.param("Twist the filter anticlockwise", False, id="no-full-stop"),
        pytest.param("Owner: Sam Okoro.", True, id="labelled-value"),
        pytest.param("Incident report: checkout outage", False, id="title-with-a-colon"),
        # A manual's verb opens an instruction whatever follows it.
        pytest.param(
            "Pour warm water, not boiling water, over the pipe to thaw it.",
            True,
            id="manual-verb-then-adjective",
        ),
        pytest.param("Never use boiling water.", True, id="never-and-a-verb"),
        pytest.param("Press and hold reset.", True, id="manual-verb-then-and"),
    ],
)
def test_an_instruction_or_a_labelled_value_is_a_claim(sentence: str, claimable: bool) -> None:
    # A manual or a recipe states what to do, the sentence opening with its verb; minutes and
    # action items state who with a label ("Owner: ...", "Absent: ..."), closed by a full stop.
    assert is_claimable(sentence, TextSpan(0, len(sentence))) is claimable
    assert bool(extract_claims(sentence, ())) is claimable


def test_a_table_row_of_a_label_and_its_value_is_a_claim_and_a_header_row_is_not() -> None:
    minutes = "| Chair | Hannah Ruiz |\n| Minutes taken by | Dev Patel |"
    spans = sentence_spans(minutes)
    assert [is_claimable(minutes, span) for span in spans] == [True, True]
    assert [claim.text for claim in extract_claims("| Chair | Hannah Ruiz |", ())] == [
        "| Chair | Hannah Ruiz |"
    ]
    # A header row over its rule names the columns; it states nothing.
    prices = "| Ticket | Price |\n| --- | --- |\n| Season pass | £145 |"
    assert [is_claimable(prices, span) for span in sentence_spans(prices)] == [False, True]
    # A row of three words without a figure is no label and value.
    assert not is_claimable("| Day | Early swim | General swim |", TextSpan(0, 34))


def test_a_list_entry_or_a_line_of_fields_that_labels_a_value_is_a_claim() -> None:
    # Officers in a list, staff by name and role, an email's header: each gives a label and a value
    # without a verb or a figure, as "| Chair | Hannah Ruiz |" does in a table.
    text = (
        "- **Vice-Chair:** Hettie Marsh\n"
        "- **Oona Breckenridge** — Hostel Manager.\n"
        "- Ingredients\n"
        "\n"
        "From: Idris Fennimore\n"
        "To: Year 10 Parents & Carers\n"
        "\n"
        "Incident report: checkout outage\n"
    )
    spans = sentence_spans(text)
    assert [span.slice(text) for span in spans if is_claimable(text, span)] == [
        "**Vice-Chair:** Hettie Marsh",
        "**Oona Breckenridge** — Hostel Manager.",
        "From: Idris Fennimore",
        "To: Year 10 Parents & Carers",
    ]


def test_a_table_row_of_values_in_words_states_them_and_its_header_does_not() -> None:
    table = (
        "| Flag | Meaning | Default |\n|------|---------|---------|\n"
        "| `--compression LEVEL` | `off`, `fast`, `auto` or `max` | `auto` |\n"
        "| `--parallel N` | Files read at once | 4 |"
    )
    spans = sentence_spans(table)
    header, compression = spans[0], spans[1]
    assert compression.slice(table).startswith("| `--compression")
    # The row gives its flag's values and default without a figure or a verb: a claim all the same.
    assert is_claimable(table, compression)
    assert not is_claimable(table, header)
    assert [claim.text for claim in extract_claims(compression.slice(table), ())] == [
        "| --compression LEVEL | off, fast, auto or max | auto |"
    ]
    # A row with an empty cell gives no value there.
    assert extract_claims("| `--compression LEVEL` | | auto |", ()) == []


def test_an_answer_quoting_a_row_under_its_header_makes_no_claim_of_the_header() -> None:
    # A quoted row comes under its table's header and rule; the header names the columns and
    # states nothing, so it must not stand as a claim that could answer for the row.
    answer = (
        "| Zone | Price per day | Notes |\n| --- | --- | --- |\n| Riverside | £12.00 | Pay at the machine |"
    )
    assert [claim.text for claim in extract_claims(answer, ())] == [
        "| Riverside | £12.00 | Pay at the machine |"
    ]
    # Without its rule the same row of words is a row like any other.
    assert [claim.text for claim in extract_claims("| Zone | Price per day | Notes |", ())] == [
        "| Zone | Price per day | Notes |"
    ]
