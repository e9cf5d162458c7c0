"""Chunking: a heading is never a chunk of its own; locators keep the heading path and line range."""

from __future__ import annotations

import pytest

from akm.ingest.chunking import chunk_text, plain_text_title

LONG_PARAGRAPH = " ".join(["The stadium hosts football and lacrosse games in the autumn."] * 30)


def test_title_before_a_long_paragraph_joins_it() -> None:
    text = f"# Harvard Stadium\n\n{LONG_PARAGRAPH}\n\nA short second paragraph.\n"
    chunks = chunk_text(text, markdown=True, max_chars=1200)
    first = chunks[0]
    assert first.text.startswith("# Harvard Stadium\n\nThe stadium hosts")
    assert (first.start_line, first.locator_type) == (1, "line-range")
    assert first.locator_value == f"1-{first.end_line}"
    assert all(chunk.heading_path == ("Harvard Stadium",) for chunk in chunks)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"# University of Chicago\n\n{LONG_PARAGRAPH}\n", id="title-then-long-paragraph"),
        pytest.param("# Guide\n\n## Install\n\nRun make install to set it up.\n", id="title-then-subheading"),
        pytest.param("# Only a title\n", id="title-alone"),
        pytest.param("# A\n\n## B\n\n### C\n\nText under C at last.\n", id="nested-empty-sections"),
    ],
)
def test_no_chunk_is_only_headings(text: str) -> None:
    for chunk in chunk_text(text, markdown=True, max_chars=1200):
        body = [
            line for line in chunk.text.splitlines() if line.strip() and not line.lstrip().startswith("#")
        ]
        assert body, f"heading-only chunk: {chunk.text!r}"


def test_empty_section_title_stays_in_the_heading_path_below_it() -> None:
    chunks = chunk_text("# Guide\n\n## Install\n\nRun make install to set it up.\n", markdown=True)
    assert len(chunks) == 1
    (chunk,) = chunks
    assert chunk.heading_path == ("Guide", "Install")
    assert (chunk.locator_type, chunk.locator_value) == ("heading", "## Install")
    assert (chunk.start_line, chunk.end_line) == (3, 5)


def test_plain_text_lines_starting_with_a_hash_are_text() -> None:
    chunks = chunk_text("# not a heading in a .txt file\n", markdown=False)
    assert [chunk.text for chunk in chunks] == ["# not a heading in a .txt file"]


REPORT = """Incident report: checkout outage

Summary
Checkout failed for an hour. About 3,200 customers saw an error.

Timeline
09:12 The first errors were logged.
09:58 The cause was found.

Thanks to everyone who helped,
Dana
"""


def test_a_plain_text_s_title_and_section_lines_are_its_heading_path() -> None:
    chunks = chunk_text(REPORT, markdown=False)
    # The title alone makes no chunk; each section is a chunk under the title and its own line.
    assert [chunk.heading_path for chunk in chunks] == [
        ("Incident report: checkout outage", "Summary"),
        ("Incident report: checkout outage", "Timeline"),
    ]
    assert [chunk.text.splitlines()[0] for chunk in chunks] == ["Summary", "Timeline"]
    # Line ranges, so a direct read cuts the same lines; the closing lines stay with the timeline
    # ("Thanks to everyone who helped," goes on with its sentence on the next line).
    assert [(chunk.locator_type, chunk.locator_value) for chunk in chunks] == [
        ("line-range", "3-4"),
        ("line-range", "6-11"),
    ]
    lines = REPORT.splitlines()
    for chunk in chunks:
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("The report is short.\n\nIt says little.\n", id="first-line-a-sentence"),
        pytest.param("Dear team\nthe outage is over.\n", id="line-going-on"),
        pytest.param("A note\n\nsee the wiki for more\n", id="lowercase-after"),
        pytest.param("Plain words with no break at all\n", id="one-line"),
    ],
)
def test_a_plain_text_without_title_lines_has_no_heading_path(text: str) -> None:
    chunks = chunk_text(text, markdown=False)
    assert [chunk.heading_path for chunk in chunks] == [()]
    assert chunks[0].text == text.rstrip("\n")


EMAIL = """From: Idris Fennimore <i.fennimore@example.org>
To: Year 10 Parents & Carers
Date: Mon, 10 Feb 2025 16:42
Subject: Year 10 volcano field trip - key details

Dear Parents and Carers,

DATES AND TRAVEL

The coach leaves from Rowan Street at 05:40.
"""


def test_an_email_s_subject_titles_every_section_of_it() -> None:
    chunks = chunk_text(EMAIL, markdown=False)
    assert [chunk.heading_path for chunk in chunks] == [
        ("Year 10 volcano field trip - key details",),
        ("Year 10 volcano field trip - key details", "DATES AND TRAVEL"),
    ]
    # One header line alone makes no email: the line is the text's own title, as before.
    assert chunk_text("Subject: one line only\n\nThe text.\n", markdown=False)[0].heading_path == (
        "Subject: one line only",
    )


LEAFLET = """==============================================
   ASHCOMBE COUNCIL - YOUR BIN COLLECTIONS
==============================================

Thank you for recycling. This leaflet explains when we collect.

----------------------------------------------
COLLECTION DAYS BY AREA
----------------------------------------------

  Area                         Collection day
  ---------------------------  --------------
  Ashcombe town centre         Monday
  Kingsmoor and Pelling        Wednesday

Bins must be out by 6.30am on your collection day.

Bank holidays
-------------

There are no collections on bank holidays.
"""


def test_a_plain_text_s_titles_framed_or_underlined_by_rules_are_its_heading_path() -> None:
    chunks = chunk_text(LEAFLET, markdown=False)
    title = "ASHCOMBE COUNCIL - YOUR BIN COLLECTIONS"
    # A line framed by "=" rules titles the whole text, one framed or underlined by "-" a section;
    # a line over a rule of columns heads a table, not a section.
    assert [chunk.heading_path for chunk in chunks] == [
        (title,),
        (title, "COLLECTION DAYS BY AREA"),
        (title, "Bank holidays"),
    ]
    assert "Kingsmoor and Pelling        Wednesday" in chunks[1].text
    assert plain_text_title(LEAFLET) == title
    # A one-line paragraph with a full stop over a rule is text, not a title.
    assert [
        chunk.heading_path
        for chunk in chunk_text("Intro text.\n\nKeep it handy.\n-----\n\nMore.\n", markdown=False)
    ] == [()]


def test_a_plain_text_s_own_title_is_its_first_line_or_email_subject() -> None:
    assert plain_text_title("Spring newsletter\n\nThe garden opens in May.\n") == "Spring newsletter"
    assert plain_text_title(EMAIL) == "Year 10 volcano field trip - key details"
    assert plain_text_title("The garden opens in May. It closes in\nOctober.\n") is None


NOTICE = """VALLEY LINK BUSES
TIMETABLE AND FARES NOTICE
Valid from Sunday 1 September 2024
====================================

Customer line: 01632 770055.

------------------------------------
5. ON BOARD
------------------------------------

Please have your ticket ready.

DOGS
  Well-behaved dogs travel free on local routes.

------------------------------------
6. CHRISTMAS SERVICES
------------------------------------

Thu 26 December (Boxing Day)
    Sunday timetable on route 12 only.
"""


def test_a_plain_text_s_title_block_over_a_rule_and_its_sections_under_ruled_ones() -> None:
    chunks = chunk_text(NOTICE, markdown=False)
    title = "VALLEY LINK BUSES"
    # The title's first line titles the text though a subtitle and a date stand under it above the
    # "=" rule; "DOGS" (no rules) is a part of the ruled section above it, which the next ruled
    # title ends.
    assert plain_text_title(NOTICE) == title
    assert [chunk.heading_path for chunk in chunks] == [
        (title,),
        (title, "5. ON BOARD"),
        (title, "5. ON BOARD", "DOGS"),
        (title, "6. CHRISTMAS SERVICES"),
    ]
    assert "Boxing Day" in chunks[3].text
    # Five lines or more over the rule are text, not a title's block.
    long_block = "A\nB\nC\nD\nE\n=====\n\nText here.\n"
    assert plain_text_title(long_block) is None


RULES = """FERNCLIFFE ROAD ALLOTMENT SOCIETY
Rules, Rents and Charges for Plot Holders - 2025/26 Season

Secretary: Margaret Doyle.

------------------------------------
1. PLOT SIZES AND ANNUAL RENTS
------------------------------------

A full plot is 250 square metres.

WATER
  Hosepipes must have a trigger nozzle.
"""


def test_a_plain_title_opening_the_text_titles_it_above_ruled_sections() -> None:
    # The opening line titles the text though its subtitle follows it; a title without rules further
    # on ("WATER") is a part of the ruled section above it.
    title = "FERNCLIFFE ROAD ALLOTMENT SOCIETY"
    assert plain_text_title(RULES) == title
    assert [chunk.heading_path for chunk in chunk_text(RULES, markdown=False)] == [
        (title,),
        (title, "1. PLOT SIZES AND ANNUAL RENTS"),
        (title, "1. PLOT SIZES AND ANNUAL RENTS", "WATER"),
    ]
