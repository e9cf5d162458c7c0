"""Sentence spans, citation stripping and citation parsing."""

from __future__ import annotations

import pytest

from akm.claims import (
    asked_before,
    cited_evidence,
    definition_term,
    is_cell_line,
    is_claimable,
    is_faq_question,
    is_field_entry,
    is_lead_in,
    is_line_entry,
    is_list_item,
    is_question,
    is_table_row,
    lead_in_before,
    referred_before,
    row_header,
    said_before,
    sentence_spans,
    strip_citations,
    table_header,
)


def sentences(text: str) -> list[str]:
    return [span.slice(text) for span in sentence_spans(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One fact. Another fact.", ["One fact.", "Another fact."]),
        ("It costs 3.5 dollars. It ships today.", ["It costs 3.5 dollars.", "It ships today."]),
        ("Upgrade to v1.2.3 first. Then restart.", ["Upgrade to v1.2.3 first.", "Then restart."]),
        ("Use a cache, e.g. Redis. It helps.", ["Use a cache, e.g. Redis.", "It helps."]),
        ("Smith et al. showed it. Others agree.", ["Smith et al. showed it.", "Others agree."]),
        ("J. Smith wrote it. Done.", ["J. Smith wrote it.", "Done."]),
        ("The U.S. team won. The U.K. team lost.", ["The U.S. team won.", "The U.K. team lost."]),
        ("Is it on? Yes! It is.", ["Is it on?", "Yes!", "It is."]),
        ("It is enabled [E1]. It is fast [E2].", ["It is enabled [E1].", "It is fast [E2]."]),
        ("It is enabled. [E1] It is fast. [E2][E3]", ["It is enabled. [E1]", "It is fast. [E2][E3]"]),
        ("- first item\n- second item\n* third", ["first item", "second item", "third"]),
        ("1. Install it.\n2) Run it.", ["Install it.", "Run it."]),
        ("A line that\nwraps here.\n\nNew paragraph", ["A line that\nwraps here.", "New paragraph"]),
        ("see fig. 3 for details. Next.", ["see fig. 3 for details.", "Next."]),
        ("The top is 1,465 m. Friday is shorter.", ["The top is 1,465 m.", "Friday is shorter."]),
        ("Built c. 1850 by Cllr. Ann Dee. Done.", ["Built c. 1850 by Cllr. Ann Dee.", "Done."]),
        ("", []),
        ("   \n  ", []),
    ],
    ids=[
        "two-sentences",
        "decimal",
        "version",
        "eg-abbreviation",
        "et-al",
        "initial",
        "dotted-acronyms",
        "question-exclamation",
        "citation-before-period",
        "citation-after-period",
        "bullets",
        "numbered-list",
        "wrapped-line-and-paragraph",
        "figure-reference",
        "unit-after-a-number",
        "circa-and-councillor",
        "empty",
        "blank",
    ],
)
def test_sentence_spans(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_spans_index_the_original_text() -> None:
    text = "  Alpha is on [E1].\n\n- Beta is off.\n"
    assert [(span.start, span.end) for span in sentence_spans(text)] == [(2, 19), (23, 35)]


HUTS = (
    "There are three huts on the loop:\n"
    "| hut | beds | water |\n"
    "|---|---|---|\n"
    "| Orre Hut | 24 | spring water, safe to drink. Ask the warden. |\n"
    "| Moraine Hut | 12 | none |\n"
    "The Orre Hut is the oldest.\n"
)


def test_a_table_row_is_one_unit_and_its_rule_none() -> None:
    # The prose line before the table is no part of its first row, and a row is never cut at a
    # period inside a cell.
    assert sentences(HUTS) == [
        "There are three huts on the loop:",
        "| hut | beds | water |",
        "| Orre Hut | 24 | spring water, safe to drink. Ask the warden. |",
        "| Moraine Hut | 12 | none |",
        "The Orre Hut is the oldest.",
    ]


def test_the_header_of_a_table_row() -> None:
    spans = sentence_spans(HUTS)
    headers = [table_header(HUTS, span) for span in spans]
    assert [header.slice(HUTS) if header else None for header in headers] == [
        None,
        None,  # the header has no header
        "| hut | beds | water |",
        "| hut | beds | water |",
        None,
    ]
    # Rows without a rule under the first have no header; nor does an indented table lose its own.
    assert table_header("| a | b |\n| c | d |", sentence_spans("| a | b |\n| c | d |")[1]) is None
    indented = "  | a | b |\n  |---|---|\n  | c | d |"
    header = table_header(indented, sentence_spans(indented)[1])
    assert header is not None and header.slice(indented) == "| a | b |"


def test_the_header_of_the_row_a_claim_quotes() -> None:
    text = "| setting | variable |\n|---|---|\n| `parallel` | `ORBIT_PARALLEL` |"
    assert row_header(text, "| parallel | ORBIT_PARALLEL |") == "| setting | variable |"
    assert row_header(text, "| bucket | ORBIT_BUCKET |") == ""
    assert row_header(text, "parallel is ORBIT_PARALLEL.") == ""


@pytest.mark.parametrize(
    ("text", "stripped", "cited"),
    [
        ("It is on [E1].", "It is on.", (1,)),
        ("It is on [E1, E3].", "It is on.", (1, 3)),
        ("It is on [E2][E1] and off [E2].", "It is on and off.", (2, 1)),
        ("It is on [E2-E4].", "It is on.", (2, 3, 4)),
        ("It is on [e1] and [1].", "It is on [e1] and [1].", ()),
        ("No markers here.", "No markers here.", ()),
    ],
    ids=["single", "list", "repeat-and-order", "range", "not-markers", "none"],
)
def test_citations(text: str, stripped: str, cited: tuple[int, ...]) -> None:
    assert (strip_citations(text), cited_evidence(text)) == (stripped, cited)


def test_a_question_in_bold_ends_before_its_answer() -> None:
    text = "**How much does a plot cost?**\nA full plot costs 60 pounds a year.\n\n_Is it organic?_ Yes."
    assert sentences(text) == [
        "**How much does a plot cost?**",
        "A full plot costs 60 pounds a year.",
        "_Is it organic?_",
        "Yes.",
    ]


def test_list_items_and_table_rows_are_told_apart_from_prose() -> None:
    text = "Mix it well.\n- 400 g rye flour\n2. Bake it.\n| abroad | 60 euros |\n"
    spans = sentence_spans(text)
    assert [(is_list_item(text, span), is_table_row(text, span)) for span in spans] == [
        (False, False),
        (True, False),
        (True, False),
        (False, True),
    ]


def test_the_question_an_faq_answer_answers() -> None:
    faq = (
        "**Can I bring my dog?**\nDogs are not allowed, with the exception of assistance dogs.\n\n"
        "**Who do I call about a broken tap?**\nReport repairs to the site warden, Colin Baptiste. He is on site daily.\n"
    )
    assert [is_question(sentence) for sentence in sentences(faq)] == [True, False, True, False, False]
    assert (
        asked_before(faq, "Report repairs to the site warden, Colin Baptiste.")
        == "**Who do I call about a broken tap?**"
    )
    assert asked_before(faq, "He is on site daily.") == "**Who do I call about a broken tap?**"
    assert (
        asked_before(faq, "Dogs are not allowed, with the exception of assistance dogs.")
        == "**Can I bring my dog?**"
    )
    assert asked_before(faq, "Cats are welcome.") == ""
    assert asked_before("Dogs are not allowed.", "Dogs are not allowed.") == ""


def test_a_plain_text_section_title_is_a_unit_of_its_own() -> None:
    text = (
        "Incident report: checkout outage\n\n"
        "Timeline\n09:12 The first checkout errors were logged.\n\n"
        "Root cause\nA debug setting filled the disk.\n\n"
        "The Orre Hut\nis the oldest.\n"
    )
    # A short opening line before a new sentence titles it; one that the next line goes on with
    # ("The Orre Hut / is the oldest.") is a wrapped sentence.
    assert sentences(text) == [
        "Incident report: checkout outage",
        "Timeline",
        "09:12 The first checkout errors were logged.",
        "Root cause",
        "A debug setting filled the disk.",
        "The Orre Hut\nis the oldest.",
    ]


def test_a_run_of_field_lines_is_one_entry_a_line_and_a_lone_label_wraps_on() -> None:
    email = (
        "From: Idris Fennimore <i.fennimore@example.org>\n"
        "To: Year 10 Parents & Carers\n"
        "Subject: Volcano field trip - key details\n"
        "\n"
        "Please note: the coach leaves\nfrom Rowan Street."
    )
    assert sentences(email) == [
        "From: Idris Fennimore <i.fennimore@example.org>",
        "To: Year 10 Parents & Carers",
        "Subject: Volcano field trip - key details",
        "Please note: the coach leaves\nfrom Rowan Street.",
    ]
    minutes = "**Date:** Wednesday 23rd October 2024\n**Venue:** St Brannock's Church Hall\n"
    assert sentences(minutes) == [
        "**Date:** Wednesday 23rd October 2024",
        "**Venue:** St Brannock's Church Hall",
    ]
    spans = sentence_spans(email)
    assert [is_field_entry(email, span) for span in spans] == [True, True, True, False]
    # A label of several words with commas between them, as a plain text's terms set out times.
    times = (
        "  Tents, caravans and motorhomes: arrive from 1:00pm, depart by 11:00am\n"
        "  Bell tents: arrive from 4:00pm, depart by 10:00am\n"
    )
    assert sentences(times) == [
        "Tents, caravans and motorhomes: arrive from 1:00pm, depart by 11:00am",
        "Bell tents: arrive from 4:00pm, depart by 10:00am",
    ]


def test_a_line_broken_short_of_the_wrap_width_ends_its_unit() -> None:
    # A PDF's opening hours, one day a line, above a paragraph wrapped at about 100 characters: the
    # next day would have fitted on each day's line, so each line was broken, not wrapped.
    leaflet = (
        "Monday 8.30am - 5.30pm\n"
        "Friday 8.30am - 4.00pm\n"
        "Sunday and Bank Holidays Closed\n"
        "The surgery closes for lunch from 1.00pm to 2.00pm Monday to Friday, but the phone line reopens at\n"
        "1.30pm. Late evening appointments on Tuesdays and Thursdays are popular with working patients, so\n"
        "Please Book early."
    )
    assert sentences(leaflet) == [
        "Monday 8.30am - 5.30pm",
        "Friday 8.30am - 4.00pm",
        "Sunday and Bank Holidays Closed",
        "The surgery closes for lunch from 1.00pm to 2.00pm Monday to Friday, but the phone line reopens at"
        "\n1.30pm.",
        "Late evening appointments on Tuesdays and Thursdays are popular with working patients, so"
        "\nPlease Book early.",
    ]
    # A line that goes on in lowercase, or with code, wraps on however short it is; so does every line
    # of a text too short to show a wrap width.
    notes = (
        "- Shell completion for bash, zsh and fish, e.g.\n"
        "  `logsift completion zsh > ~/.zfunc/_logsift`.\n"
        "- Config is read from `$XDG_CONFIG_HOME/logsift/config.toml` first, falling\n"
        "  back to `~/.config/logsift/config.toml`."
    )
    assert sentences(notes) == [
        "Shell completion for bash, zsh and fish, e.g.\n  `logsift completion zsh > ~/.zfunc/_logsift`.",
        "Config is read from `$XDG_CONFIG_HOME/logsift/config.toml` first, falling\n"
        "  back to `~/.config/logsift/config.toml`.",
    ]
    short = "The annual general meeting is on\nMonday 4 March."
    assert sentences(short) == [short]


def test_a_line_its_breaks_set_apart_is_an_entry() -> None:
    hours = (
        "Thursday 8.30am - 7.30pm\n"
        "Friday 8.30am - 4.00pm\n"
        "The surgery closes for lunch from 1.00pm to 2.00pm Monday to Friday, but the phone line reopens at\n"
        "1.30pm, and late evening appointments on Tuesdays and Thursdays are popular with working patients."
    )
    spans = sentence_spans(hours)
    assert [is_line_entry(hours, span) for span in spans] == [True, True, False]


def test_what_a_sentence_goes_on_from_in_its_paragraph_or_list_item() -> None:
    notes = (
        "- On Fridays the 18:05 from Ardmore departs at 18:35 instead. The return sailing from "
        "Inchkerran leaves at 19:20.\n"
        "- There are no sailings on Christmas Day."
    )
    assert said_before(notes, "The return sailing from Inchkerran leaves at 19:20.") == (
        "On Fridays the 18:05 from Ardmore departs at 18:35 instead."
    )
    assert said_before(notes, "There are no sailings on Christmas Day.") == ""
    assert said_before(notes, "The ferry is late.") == ""


def test_a_markdown_link_definition_states_nothing() -> None:
    text = (
        "- Colour output is off when stdout is not a terminal (#425).\n\n"
        "[Unreleased]: https://github.com/logsift/logsift/compare/v3.0.0...HEAD\n"
        '[2.2.0]: <https://github.com/logsift/logsift/releases/tag/v2.2.0> "The 2.2.0 release"\n'
    )
    assert sentences(text) == ["Colour output is off when stdout is not a terminal (#425)."]


def test_what_a_claim_that_opens_with_a_pronoun_refers_back_to() -> None:
    text = "Hamid Jaafari is the Housekeeping Lead. Lost property goes to him; it is kept for 30 days, then donated."
    assert referred_before(text, "it is kept for 30 days, then donated.") == "Lost property goes to him; "
    assert referred_before(text, "Lost property goes to him") == ""
    guide = "We will be led by Mathilde Corbière. She has taken school groups onto the puys since 2011."
    assert referred_before(guide, "She has taken school groups onto the puys since 2011.") == (
        "We will be led by Mathilde Corbière."
    )
    assert referred_before(guide, "It is quoted nowhere.") == ""


TABLE = """  Area                         Collection day
  ---------------------------  --------------
  Ashcombe town centre         Monday
  Kingsmoor and Pelling        Wednesday

  Up to 3 items ........................... £32.00
  Each additional item (maximum 6 in total)  £8.00

Bins must be out by 6.30am.  Please bring them back in by the end of the day."""


def test_a_plain_text_table_set_out_in_columns_is_a_row_a_line_with_its_header() -> None:
    spans = sentence_spans(TABLE)
    assert [span.slice(TABLE) for span in spans] == [
        "Area                         Collection day",
        "Ashcombe town centre         Monday",
        "Kingsmoor and Pelling        Wednesday",
        "Up to 3 items ........................... £32.00",
        "Each additional item (maximum 6 in total)  £8.00",
        # A typist's two spaces after a full stop part sentences, not cells.
        "Bins must be out by 6.30am.",
        "Please bring them back in by the end of the day.",
    ]
    header, town, kingsmoor, leader, extra, prose, _ = spans
    assert [is_cell_line(span.slice(TABLE)) for span in spans] == [True] * 5 + [False] * 2
    # The line above the rule of columns heads the rows below it; it states nothing itself.
    assert table_header(TABLE, kingsmoor) == header
    assert table_header(TABLE, header) is None
    assert table_header(TABLE, leader) is None
    assert (
        row_header(TABLE, "Kingsmoor and Pelling Wednesday") == "Area                         Collection day"
    )
    assert not is_claimable(TABLE, header)
    assert all(is_claimable(TABLE, span) for span in (town, kingsmoor, leader, extra, prose))
    assert is_line_entry(TABLE, kingsmoor) and not is_line_entry(TABLE, prose)


FAQ = """Q. My bin was missed. What should I do?
A. Report it online or by phone by 5pm the day after your
   collection day. We will return within two working days."""


def test_an_faq_s_q_line_asks_and_its_a_line_answers() -> None:
    spans = sentence_spans(FAQ)
    assert [span.slice(FAQ) for span in spans] == [
        "My bin was missed.",
        "What should I do?",
        "Report it online or by phone by 5pm the day after your\n   collection day.",
        "We will return within two working days.",
    ]
    assert [is_faq_question(FAQ, span) for span in spans] == [True, True, False, False]
    # The statement inside the question asks too; the answer's instruction is a claim.
    assert [is_claimable(FAQ, span) for span in spans] == [False, False, True, True]
    assert asked_before(FAQ, "Report it online or by phone by 5pm the day after your collection day.") == (
        "My bin was missed. What should I do?"
    )


MAINTENANCE = """Regular care keeps the unit running.

**Every 3 months (owner):**

- Clean the magnetic filter on the return pipe.
- Check the pressure gauge.

**Every 12 months (qualified engineer):**
- Full service.

The standard warranty is 2 years. Ask us: we can help."""


def test_a_line_that_leads_in_to_a_list_names_what_its_items_are() -> None:
    spans = {span.slice(MAINTENANCE): span for span in sentence_spans(MAINTENANCE)}
    assert is_lead_in(MAINTENANCE, spans["**Every 3 months (owner):**"])
    assert not is_claimable(MAINTENANCE, spans["**Every 3 months (owner):**"])
    assert not is_lead_in(MAINTENANCE, spans["Ask us: we can help."])
    assert lead_in_before(MAINTENANCE, "Check the pressure gauge.") == "**Every 3 months (owner):**"
    assert lead_in_before(MAINTENANCE, "Full service.") == "**Every 12 months (qualified engineer):**"
    assert lead_in_before(MAINTENANCE, "The standard warranty is 2 years.") == ""
    assert (
        asked_before(MAINTENANCE, "Clean the magnetic filter on the return pipe.")
        == "**Every 3 months (owner):**"
    )


INSET_DAYS = """The autumn term starts on Wednesday 3 September 2025 and ends on Friday 19 December 2025, with a half term from 27 to 31 October 2025. Pupils should arrive by 8:45am.

INSET (staff training) days - school closed to pupils:
Monday 1 September 2025
Tuesday 2 September 2025
Friday 28 November 2025

Friday 12 December 2025
Please book family holidays outside term time: the school cannot authorise absence for holidays during term."""


def test_entries_set_out_one_a_line_have_the_line_that_leads_in_to_them() -> None:
    lead = "INSET (staff training) days - school closed to pupils:"
    assert lead_in_before(INSET_DAYS, "Friday 28 November 2025") == lead
    assert lead_in_before(INSET_DAYS, "Tuesday 2 September 2025") == lead
    # A blank line parts an entry from a lead-in above it.
    assert lead_in_before(INSET_DAYS, "Friday 12 December 2025") == ""


HOLIDAY_SERVICES = """CHRISTMAS SERVICES

Wed 25 December (Christmas Day)
    NO SERVICE on any route.
Thu 26 December (Boxing Day)
    Sunday timetable on route 12 only. No service on routes 27, 41 or X5.
Tue 31 December (New Year's Eve)
    Normal timetable. Extra late buses on route 12 at 00:30
    and 01:30.

DOGS
  Well-behaved dogs travel free.
Fares rise on 1 April
and stay fixed until March."""


def test_a_term_over_its_indented_description_is_what_the_description_is_of() -> None:
    spans = {span.slice(HOLIDAY_SERVICES): span for span in sentence_spans(HOLIDAY_SERVICES)}
    boxing = "Thu 26 December (Boxing Day)"
    # The term states nothing itself; each sentence of the description below it, on however many
    # lines, is of the term, and states something of it even without a verb or a figure.
    assert is_lead_in(HOLIDAY_SERVICES, spans[boxing])
    assert not is_claimable(HOLIDAY_SERVICES, spans[boxing])
    for sentence in ("Sunday timetable on route 12 only.", "No service on routes 27, 41 or X5."):
        term = definition_term(HOLIDAY_SERVICES, spans[sentence])
        assert term is not None and term.slice(HOLIDAY_SERVICES) == boxing
        assert lead_in_before(HOLIDAY_SERVICES, sentence) == boxing
    assert is_claimable(HOLIDAY_SERVICES, spans["NO SERVICE on any route."])
    assert lead_in_before(HOLIDAY_SERVICES, "NO SERVICE on any route.") == "Wed 25 December (Christmas Day)"
    late = next(text for text in spans if text.startswith("Extra late buses"))
    assert lead_in_before(HOLIDAY_SERVICES, late) == "Tue 31 December (New Year's Eve)"
    # A section title over indented text heads it as a heading, not as a term; a line going on with
    # its sentence on the next line is no term; a line at the margin has no term.
    assert definition_term(HOLIDAY_SERVICES, spans["Well-behaved dogs travel free."]) is None
    assert definition_term(HOLIDAY_SERVICES, spans[boxing]) is None
    assert not any(is_lead_in(HOLIDAY_SERVICES, span) for text, span in spans.items() if "Fares" in text)


def test_a_plain_text_row_quoted_as_a_markdown_row_has_its_columns_header() -> None:
    chart = (
        "Programme          Temperature   Max load\n"
        "-----------------  ------------  ---------\n"
        "Cotton             20-90°C       7.0 kg\n"
        "Synthetics         20-60°C       3.5 kg\n"
    )
    header = "Programme          Temperature   Max load"
    assert row_header(chart, "Synthetics 20-60°C 3.5 kg") == header
    assert row_header(chart, "| Synthetics | 20-60°C | 3.5 kg |") == header
    assert row_header(chart, "| Synthetics | 20-60°C | 2.0 kg |") == ""
