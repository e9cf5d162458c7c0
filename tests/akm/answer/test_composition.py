"""How an answer is composed over the fixed answer corpus: selection, quoting, abstention, the rejection log."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from akm.answer import NO_ANSWER_TEXT, AnswerOptions, answer
from akm.answer.responsiveness import NO_ANSWER_REASON
from akm.config import DEFAULT_MANIFEST_FILE
from akm.embedding import load_embedder
from akm.ingest import ingest
from akm.manifest import load_manifest
from akm.packet import packet_findings
from akm.store import open_store
from tests.plugins.corpus import FixedGenerator

FIXTURE_DOCS = Path(__file__).resolve().parents[2] / "fixtures" / "answers" / "docs"
QUESTION = "When was the Kestrel Harbour Bridge opened to traffic?"
DATE_SENTENCE = "Construction began in 1921 and the bridge was opened to traffic on 19 March 1932 by the mayor, Edith Carrow."


@pytest.fixture
def answers(tmp_path: Path) -> Iterator[Any]:
    yield from _answers(tmp_path)


def _answers(tmp_path: Path, extra_docs: dict[str, str] | None = None) -> Iterator[Any]:
    root = tmp_path / "project"
    shutil.copytree(FIXTURE_DOCS, root / "docs")
    for name, text in (extra_docs or {}).items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    (root / "config").mkdir()
    shutil.copy(DEFAULT_MANIFEST_FILE, root / "config" / "manifest.yaml")
    store = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    manifest = load_manifest(root / "config" / "manifest.yaml")
    embedder = load_embedder("hashing")
    ingest(store, manifest, embedder=embedder)

    def ask(question: str, generator: FixedGenerator) -> Any:
        return answer(
            question,
            AnswerOptions(max_rows=3),
            store=store,
            manifest=manifest,
            embedder=embedder,
            generator=generator,
        )

    try:
        yield ask, store
    finally:
        store.close()


def test_off_topic_passages_are_recorded_as_selection_rejections(answers: Any) -> None:
    ask, store = answers
    generator = FixedGenerator(DATE_SENTENCE)
    result = ask(QUESTION, generator)
    (prompt,) = generator.prompts
    assert all("Kestrel" in sentence or "bridge" in sentence for sentence in prompt.passages)
    selection = [item for item in store.list_rejections() if item.stage == "selection"]
    assert selection, "the other articles' passages should be left out of the prompt"
    assert {item.reason for item in selection} <= {"not-relevant", "near-empty"}
    assert all(item.packet_id == result.packet_id for item in selection)
    excluded_ids = {item.evidence_id for item in selection}
    assert excluded_ids == {entry["evidenceId"] for entry in result.selection["excluded"]}


def test_generated_text_that_answers_stands(answers: Any) -> None:
    ask, _ = answers
    result = ask(QUESTION, FixedGenerator(DATE_SENTENCE))
    assert result.selection["composition"] == "generated"
    assert result.answer == DATE_SENTENCE
    assert result.verdict == "PASS"
    assert any(reason.startswith("responsive:") for reason in result.packet.verification.verdict_reasons)


@pytest.mark.parametrize(
    "generated",
    [
        pytest.param("The bridge was opened to traffic.", id="restates-the-question"),
        pytest.param(
            "The evidence provided is a perfect example of a bridge.", id="talks-about-the-evidence"
        ),
        pytest.param("The bridge opened in 1999 after a vote of the Mars council.", id="invented"),
        pytest.param("", id="nothing"),
    ],
)
def test_the_answer_quotes_the_passage_when_the_generated_text_does_not_answer(
    answers: Any, generated: str
) -> None:
    ask, _ = answers
    result = ask(QUESTION, FixedGenerator(generated))
    assert result.selection["composition"] == "quoted"
    assert "19 March 1932" in result.answer
    assert result.verdict == "PASS", result.packet.verification.verdict_reasons
    assert [claim.status for claim in result.claims] and all(
        claim.status == "supported" for claim in result.claims
    )
    source = (FIXTURE_DOCS / "harbour_bridge.md").read_text(encoding="utf-8")
    for claim in result.claims:
        assert claim.text.rstrip(".") in " ".join(source.split())
    assert packet_findings(result.packet.to_json()) == []


def test_a_question_nothing_answers_is_held_without_generating(answers: Any) -> None:
    ask, store = answers
    generator = FixedGenerator("Lima lies on the Rímac river.")
    result = ask("Which river flows through the capital of Peru?", generator)
    assert generator.prompts == []
    assert result.answer == NO_ANSWER_TEXT
    assert result.claims == ()
    assert result.verdict == "HOLD"
    assert result.packet.verification.verdict_reasons[0].startswith(NO_ANSWER_REASON)
    assert result.selection["composition"] == "abstained"
    assert store.get_packet(result.packet_id) is not None


def test_fusion_and_direct_read_rejections_are_logged_under_the_packet(answers: Any, tmp_path: Path) -> None:
    ask, store = answers
    bridge = next((tmp_path / "project" / "docs").glob("*bridge*"))
    # The bridge article changes after ingest: its rows are read stale, never direct-read.
    bridge.write_text(bridge.read_text(encoding="utf-8") + "\nA later paragraph.\n", encoding="utf-8")

    result = ask(QUESTION, FixedGenerator(DATE_SENTENCE))

    logged = [item for item in store.list_rejections() if item.packet_id == result.packet_id]
    stale = [item for item in logged if item.stage == "direct-read"]
    assert stale and {item.reason for item in stale} == {"stale"}
    assert all(item.detail["state"] == "stale" and item.detail["locator"] for item in stale)
    assert all(bridge.name in (item.source_id or "") for item in stale)
    assert result.verdict != "PASS"
    fusion = [item for item in logged if item.stage == "fusion"]
    # The same chunk found by two lanes is one winner, never an exclusion of itself.
    winners = {row.evidence_id for row in result.packet.evidence_rows}
    assert not any(item.evidence_id in winners for item in fusion if item.reason == "duplicate")
    assert all(
        {"lane", "laneRank", "locator"} <= set(item.detail) for item in fusion if item.reason != "denied"
    )


# The railway's page holds its length, its gauge and years, but no count of trains; the bridge's page
# holds the count of its workers.
RAILWAY_LINE = (
    "The Tidewater Railway is a narrow-gauge line that runs 42 kilometres from Port Ellery to the "
    "slate quarries at Gwenfor."
)
BRIDGE_WORKERS = (
    "The steel was made in Middlesbrough and shipped to the site in pieces, where about 1,400 "
    "workers riveted it together."
)


@pytest.mark.parametrize(
    ("question", "generated", "verdict", "in_answer"),
    [
        ("How many trains a day run on the Tidewater Railway?", RAILWAY_LINE, "HOLD", None),
        (
            "How many workers riveted the Kestrel Harbour Bridge together?",
            BRIDGE_WORKERS,
            "PASS",
            "1,400 workers",
        ),
    ],
    ids=["a-count-the-page-does-not-state-is-held", "a-count-the-page-states-passes"],
)
def test_a_count_question_needs_a_count(
    answers: Any, question: str, generated: str, verdict: str, in_answer: str | None
) -> None:
    ask, _ = answers
    result = ask(question, FixedGenerator(generated))
    reasons = result.packet.verification.verdict_reasons
    assert result.verdict == verdict, reasons
    if in_answer is None:
        assert reasons[0].startswith(NO_ANSWER_REASON)
    else:
        assert in_answer in result.answer


# A settings table: the header row says what each cell is; another row's "none" and "never" are no
# negation of the row that answers.
ORBIT = """# orbit

orbit keeps a local folder and a remote bucket in sync.

## Configuration

orbit reads its settings from `~/.config/orbit/orbit.toml`.

| setting | environment variable | default | meaning |
|---|---|---|---|
| `bucket` | `ORBIT_BUCKET` | none | the remote bucket to sync with |
| `parallel` | `ORBIT_PARALLEL` | 4 | how many files are uploaded at the same time |
| `ignore` | `ORBIT_IGNORE` | `.git` | patterns that are never synced |
"""
ROW = "| `parallel` | `ORBIT_PARALLEL` | 4 | how many files are uploaded at the same time |"
HEADER = "| setting | environment variable | default | meaning |"


def _ask_once(tmp_path: Path, docs: dict[str, str], question: str, generator: FixedGenerator) -> Any:
    """The answer to one question over the fixed corpus and ``docs``, the store closed after it."""
    project = _answers(tmp_path, docs)
    ask, _ = next(project)
    try:
        return ask(question, generator)
    finally:
        project.close()


@pytest.mark.parametrize(
    ("generated", "composition"),
    [
        pytest.param(
            "ORBIT_PARALLEL sets how many files are uploaded at the same time.", "generated", id="generated"
        ),
        pytest.param("The answer to this question is: `parallel`", "quoted", id="quoted-row"),
    ],
)
def test_a_table_row_answers_and_its_header_says_what_it_holds(
    tmp_path: Path, generated: str, composition: str
) -> None:
    generator = FixedGenerator(generated)
    question = "Which environment variable sets how many files are uploaded at the same time?"
    result = _ask_once(tmp_path, {"orbit.md": ORBIT}, question, generator)
    (prompt,) = generator.prompts
    # The row reaches the generator alone (with its header, the model mixed the columns up); the
    # header says which cell is the variable when the row is scored and judged.
    assert ROW in prompt.passages and not any(HEADER in passage for passage in prompt.passages)
    reasons = result.packet.verification.verdict_reasons
    assert result.verdict == "PASS", reasons
    assert result.selection["composition"] == composition
    assert "ORBIT_PARALLEL" in result.answer
    assert result.claims and all(claim.status == "supported" for claim in result.claims)
    assert packet_findings(result.packet.to_json()) == []


RYE = """# Simple rye bread

A dense, dark loaf that keeps for a week. Makes one loaf of about 900 grams.

## Ingredients

- 400 g rye flour
- 100 g strong white flour
- 10 g salt
- 420 ml warm water
"""


def test_a_quoted_list_keeps_each_entry_a_claim(tmp_path: Path) -> None:
    # Quoted, the chosen entries stay entries ("- 400 g rye flour" on a line of its own), each one a
    # claim though it has no verb, rather than one run-on line with no claim at all.
    result = _ask_once(
        tmp_path, {"rye.md": RYE}, "How much rye flour does the bread need?", FixedGenerator("")
    )
    reasons = result.packet.verification.verdict_reasons
    assert result.verdict == "PASS", reasons
    assert result.selection["composition"] == "quoted"
    assert "- 400 g rye flour" in result.answer.splitlines()
    assert "400 g rye flour" in [claim.text for claim in result.claims]
    assert all(claim.status == "supported" for claim in result.claims)
    assert packet_findings(result.packet.to_json()) == []


FAQ = """# Northfield Community Garden: frequently asked questions

**Can I bring my dog?**
Dogs are not allowed in the garden, with the exception of assistance dogs.

**Who do I contact about a broken tap or a damaged fence?**
Report repairs to the site warden, Colin Baptiste, on the number posted at the gate.
"""


def test_an_faq_answer_answers_the_question_above_it(tmp_path: Path) -> None:
    # The answer says neither "contact" nor "tap": the FAQ's question above it does, and it is
    # the answer, not the question, that is quoted.
    result = _ask_once(
        tmp_path, {"faq.md": FAQ}, "Who should I contact about a broken tap?", FixedGenerator("")
    )
    reasons = result.packet.verification.verdict_reasons
    assert result.verdict == "PASS", reasons
    assert (
        result.answer
        == "Report repairs to the site warden, Colin Baptiste, on the number posted at the gate."
    )
    assert packet_findings(result.packet.to_json()) == []


OUTAGE = """Incident report: checkout outage on 14 September 2026

Summary
Between 09:12 and 10:47 UTC customers could not complete purchases on the web shop. About 3,200
customers saw an error at checkout. No payments were taken twice and no data was lost.

Timeline
09:12 The first checkout errors were logged.
09:20 The on-call engineer, Dana Whitlock, was paged by the error-rate alert.
09:58 The cause was found: the disk of the orders database server was full.
10:47 Checkout worked again for all customers.
"""


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        pytest.param(
            "What caused the checkout outage?",
            "09:58 The cause was found: the disk of the orders database server was full.",
            id="reason",
        ),
        pytest.param(
            "Who was paged when the outage began?",
            "09:20 The on-call engineer, Dana Whitlock, was paged by the error-rate alert.",
            id="person",
        ),
    ],
)
def test_a_plain_text_s_title_is_the_heading_of_its_sentences(
    tmp_path: Path, question: str, answer: str
) -> None:
    # Only the report's title says "checkout outage"; the timeline's lines are about it.
    result = _ask_once(tmp_path, {"outage.txt": OUTAGE}, question, FixedGenerator(""))
    reasons = result.packet.verification.verdict_reasons
    assert result.verdict == "PASS", reasons
    assert answer in result.answer.splitlines()
    assert packet_findings(result.packet.to_json()) == []


@pytest.mark.parametrize(
    "question",
    [
        pytest.param("Which customer reported the outage first?", id="which-customer"),
        pytest.param("How many engineers worked on the outage?", id="how-many-engineers"),
    ],
)
def test_a_count_of_the_kind_or_a_time_stamp_does_not_answer_which_or_how_many(
    tmp_path: Path, question: str
) -> None:
    # "About 3,200 customers" says how many, not which customer; "09:20 The on-call engineer"
    # is a time, not a count of engineers. The title lends "report" and "outage" all the same.
    result = _ask_once(tmp_path, {"outage.txt": OUTAGE}, question, FixedGenerator(""))
    assert result.verdict != "PASS", result.answer


RETRO = """Sprint 42 retrospective, 20 November 2026

Present: Ines, Marek, Tomoko, Yusuf. Absent: Bea (on leave).

Decisions
End-to-end tests may no longer be skipped before a release.
Marek will move the staging database to the managed service by 4 December.
The next retrospective is on 4 December at 15:00.
"""


def test_a_labelled_value_of_the_minutes_answers_who(tmp_path: Path) -> None:
    result = _ask_once(
        tmp_path, {"retro.txt": RETRO}, "Who was absent from the retrospective?", FixedGenerator("")
    )
    reasons = result.packet.verification.verdict_reasons
    assert result.verdict == "PASS", reasons
    assert "Absent: Bea (on leave)." in result.answer
    assert packet_findings(result.packet.to_json()) == []


def test_a_claim_joined_from_two_statements_is_not_supported(tmp_path: Path) -> None:
    # The model's sentence takes "moved to the managed service" from Marek's decision and "the
    # retrospective" from the next line: no sentence says the retrospective will be moved.
    made_up = "The retrospective will be moved to the managed service by 4 December at 15:00."
    generator = FixedGenerator(made_up)
    question = "When will the retrospective be moved to the managed service?"
    result = _ask_once(tmp_path, {"retro.txt": RETRO}, question, generator)
    assert generator.prompts, "the question reached the generator"
    assert made_up not in result.answer
    assert made_up not in [claim.text for claim in result.claims if claim.status == "supported"]


TRIP = """From: Idris Fennimore <i.fennimore@example.org>
To: Year 10 Geography Parents
Subject: Year 10 volcano field trip to the Auvergne

COSTS

The total cost is £412 per student. This covers the coach, the ferry and the guide's fees.

  - Deposit: £120, due by 28 February 2025
  - Balance: £292, due by 4 April 2025

Kind regards,
Idris Fennimore
"""


def test_an_email_s_subject_titles_it_and_a_quoted_field_stays_one_claim(tmp_path: Path) -> None:
    # "volcano trip" is said only by the subject line, which titles every section of the email; the
    # deposit's line is quoted on a line of its own and is one claim.
    result = _ask_once(
        tmp_path, {"trip.txt": TRIP}, "How much is the deposit for the volcano trip?", FixedGenerator("")
    )
    reasons = result.packet.verification.verdict_reasons
    assert result.verdict == "PASS", reasons
    assert "- Deposit: £120, due by 28 February 2025" in result.answer.splitlines()
    assert "Deposit: £120, due by 28 February 2025" in [claim.text for claim in result.claims]
    assert not any("Subject" in claim.text for claim in result.claims)


STARTER = """# Looking after your starter

## Common worries

**Grey liquid on top.** This is hooch, a sign your starter is hungry. Pour it off before feeding.

**The float test.** Many books tell you to drop a spoonful in water and see whether it floats. With a
rye-heavy starter it often sinks even when it is ready, so I do not rely on it.
"""


def test_a_bold_phrase_that_opens_a_paragraph_says_what_the_paragraph_is_about(tmp_path: Path) -> None:
    # Neither "float" nor "test" is in the answering sentence: the run-in heading says them.
    question = "Why does the baker not rely on the float test?"
    result = _ask_once(tmp_path, {"starter.md": STARTER}, question, FixedGenerator(""))
    reasons = result.packet.verification.verdict_reasons
    assert result.verdict == "PASS", reasons
    assert result.answer.endswith("so I do not rely on it.")


SURGERY = """Brookfield Dental Practice

Opening Hours
Monday 8.30am - 5.30pm
Thursday 8.30am - 7.30pm
Friday 8.30am - 4.00pm
Saturday 9.00am - 1.00pm (1st and 3rd Saturday of the month only)
The surgery closes for lunch from 1.00pm to 2.00pm Monday to Friday, but the phone line
reopens at 1.30pm. Late evening appointments on Tuesdays and Thursdays are popular with
working patients, so please book early.
"""

ALLOTMENTS = """# Ashcombe Road Allotment Association

## Rent

Rents for the 2024-25 year are as follows:

| Plot size | Approx. area | Annual rent | Water charge |
| --- | --- | --- | --- |
| Full plot | 250 m² | £96.00 | £12.00 |
| Half plot | 125 m² | £52.00 | £8.00 |

## The Committee

The Association is run by a volunteer Committee elected each year at the AGM in July.
Chair: Margaret Ellery
Secretary: David Osei
Treasurer: Sunita Kaur
"""


BINS = """==============================================
   ASHCOMBE DISTRICT COUNCIL - YOUR BIN COLLECTIONS
==============================================

----------------------------------------------
COLLECTION DAYS BY AREA
----------------------------------------------

  Area                         Collection day
  ---------------------------  --------------
  Ashcombe town centre         Monday
  Northfield and Lower Brook   Tuesday
  Kingsmoor and Pelling        Wednesday
  Riverside and Highcross      Friday

Bins must be out by 6.30am on your collection day, at the edge
of your property, with the lid closed.

----------------------------------------------
FREQUENTLY ASKED QUESTIONS
----------------------------------------------

Q. My bin was missed. What should I do?
A. Report it online or by phone by 5pm the day after your
   collection day. We will return within two working days.

Q. I need a new bin. Is there a charge?
A. Replacement grey or blue bins cost £28 including
   delivery.
"""

HEAT_PUMP = """# Thermavale AW-8 heat pump: user manual

## 7. Maintenance

Regular care keeps the unit running efficiently.

**Every 3 months (owner):**

- Clean the magnetic filter on the return pipe.
- Check that the pressure gauge reads between 1.0 and 1.5 bar.

**Every 12 months (qualified engineer):**

- Full service, including a refrigerant leak check.
"""


SCHOOL = """St Aldhelm's Primary School

Term dates 2025-26

The autumn term starts on Wednesday 3 September 2025 and ends on Friday 19 December 2025, with a half term from 27 to 31 October 2025. Pupils should arrive by 8:45am.

INSET (staff training) days - school closed to pupils:
Monday 1 September 2025
Tuesday 2 September 2025
Friday 28 November 2025
Monday 5 January 2026

Please book family holidays outside term time: the school cannot authorise absence for holidays during term.
"""


BUSES = """VALLEY LINK BUSES
TIMETABLE AND FARES NOTICE
==========================

Customer line: 01632 770055 (Mon-Fri 08:00-18:00).

--------------------------------------
6. CHRISTMAS AND NEW YEAR SERVICES
--------------------------------------

Wed 25 December (Christmas Day)
    NO SERVICE on any route.
Thu 26 December (Boxing Day)
    Sunday timetable on route 12 only. No service on routes 27, 41 or X5.
Tue 31 December (New Year's Eve)
    Normal timetable. Extra FREE late buses on route 12 from Castlebridge
    Bus Station to Northgate at 00:30 and 01:30 (into New Year's Day).
"""


@pytest.mark.parametrize(
    ("docs", "question", "quoted"),
    [
        pytest.param(
            {"buses.txt": BUSES},
            "are there buses on boxing day",
            "Thu 26 December (Boxing Day):\n- Sunday timetable on route 12 only.",
            id="a-description-under-its-term",
        ),
        pytest.param(
            {"surgery.txt": SURGERY},
            "What time does Brookfield Dental close on a Friday?",
            "- Friday 8.30am - 4.00pm",
            id="a-line-of-opening-hours",
        ),
        pytest.param(
            {"allotments.md": ALLOTMENTS},
            "How much is the yearly rent on a half plot?",
            "| Plot size | Approx. area | Annual rent | Water charge |\n| --- | --- | --- | --- |\n"
            "| Half plot | 125 m² | £52.00 | £8.00 |",
            id="a-row-under-its-header",
        ),
        pytest.param(
            {"allotments.md": ALLOTMENTS},
            "Who is the allotment association's treasurer?",
            "- Treasurer: Sunita Kaur",
            id="a-lone-field-line",
        ),
        pytest.param(
            {"bins.txt": BINS},
            "Which day are bins emptied in Kingsmoor?",
            "| Area | Collection day |\n| --- | --- |\n| Kingsmoor and Pelling | Wednesday |",
            id="a-plain-text-row-set-out-in-columns",
        ),
        pytest.param(
            {"bins.txt": BINS},
            "My bin wasn't collected - how long do I have to report it?",
            "A. Report it online or by phone by 5pm the day after your collection day.",
            id="an-faq-answer-marked-a",
        ),
        pytest.param(
            {"heat-pump.md": HEAT_PUMP},
            "How often should I clean the magnetic filter on the heat pump?",
            "**Every 3 months (owner):**\n- Clean the magnetic filter on the return pipe.",
            id="a-list-item-under-its-lead-in",
        ),
        pytest.param(
            {"school.txt": SCHOOL},
            "is there school on friday 28th november",
            "INSET (staff training) days - school closed to pupils:\n- Friday 28 November 2025",
            id="an-entry-on-its-line-under-its-lead-in",
        ),
    ],
)
def test_an_entry_without_a_verb_is_quoted_as_an_entry_and_answers(
    tmp_path: Path, docs: dict[str, str], question: str, quoted: str
) -> None:
    # A day's hours on a line of their own (set apart by where the line breaks, no bullet), a table
    # row (its header and rule above it in the quote, so its cells say what they are) and one line
    # of fields (a list item in the quote, where no other field line stands beside it) each answer
    # as the entry they are.
    result = _ask_once(tmp_path, docs, question, FixedGenerator(""))
    reasons = result.packet.verification.verdict_reasons
    assert result.verdict == "PASS", reasons
    assert quoted in result.answer, result.answer
    assert result.claims and all(claim.status == "supported" for claim in result.claims)
    assert packet_findings(result.packet.to_json()) == []


def test_a_description_under_another_term_is_not_quoted(tmp_path: Path) -> None:
    # The New Year's Eve buses name "buses", but the day asked is the term above the Sunday
    # timetable; the text's title ("VALLEY LINK BUSES") says buses for every line of it.
    result = _ask_once(tmp_path, {"buses.txt": BUSES}, "are there buses on boxing day", FixedGenerator(""))
    assert result.verdict == "PASS", result.packet.verification.verdict_reasons
    assert "Boxing Day" in result.answer
    assert "Extra FREE" not in result.answer, result.answer


def test_the_row_the_question_names_is_quoted_without_the_row_beside_it(tmp_path: Path) -> None:
    # The full plot's row shares the rent column with the half plot's and scores near it, but the
    # question names the half plot: the row above it is about another plot, not more of the answer.
    result = _ask_once(
        tmp_path,
        {"allotments.md": ALLOTMENTS},
        "How much is the yearly rent on a half plot?",
        FixedGenerator(""),
    )
    assert result.verdict == "PASS", result.packet.verification.verdict_reasons
    assert "Half plot" in result.answer
    assert "Full plot" not in result.answer, result.answer


def test_rows_for_each_thing_the_question_names_are_both_quoted(tmp_path: Path) -> None:
    # Asked for both plots, both rows are quoted: a row beside the best one is left out only when
    # it names none of the question's terms that the best row lacks. (The verdict is not asserted:
    # each row alone covers only part of a question about two things.)
    result = _ask_once(
        tmp_path,
        {"allotments.md": ALLOTMENTS},
        "How much is the yearly rent on a full plot and on a half plot?",
        FixedGenerator(""),
    )
    assert "Half plot" in result.answer and "Full plot" in result.answer, result.answer


PRINTER = """# Forge S3 Troubleshooting Guide

## Common problems

| Symptom | Likely cause | Fix |
|---|---|---|
| First layer does not stick to the bed | Bed dirty or nozzle too far from the bed | Clean the sheet with alcohol. |
| Printer will not connect to Wi-Fi | 5 GHz network selected | The printer supports 2.4 GHz networks only. |

## Maintenance

**Every 50 printing hours:**

- Clean the X and Y rods and apply a thin film of the supplied grease.

**Every 12 months:**

- Replace the PEI sheet if the surface is worn.
"""


@pytest.mark.parametrize(
    ("question", "quoted"),
    [
        pytest.param(
            "Why won't my Forge S3 connect to my wifi?",
            "| Printer will not connect to Wi-Fi | 5 GHz network selected |",
            id="a-row-under-a-cause-column-answers-why",
        ),
        pytest.param(
            "How often do I need to grease the rods on my Forge S3?",
            "**Every 50 printing hours:**\n- Clean the X and Y rods",
            id="every-so-many-hours-of-use-answers-how-often",
        ),
    ],
)
def test_a_troubleshooting_table_and_a_maintenance_schedule_answer(
    tmp_path: Path, question: str, quoted: str
) -> None:
    result = _ask_once(tmp_path, {"printer.md": PRINTER}, question, FixedGenerator(""))
    assert result.verdict == "PASS", result.packet.verification.verdict_reasons
    assert quoted in result.answer, result.answer
    assert "Every 12 months" not in result.answer


def test_a_row_of_a_table_cut_between_chunks_keeps_its_header_from_the_passage_before(
    tmp_path: Path,
) -> None:
    # A table longer than a chunk is cut between rows; the piece below has no header row of its own,
    # but the passage before it (attached as context) has: its "Likely cause" column says that the
    # row's second cell answers a "why". The header is context, not quoted.
    rows = [
        f"| Problem number {n} with the extruder | Worn part number {n} | Replace part number {n} and recalibrate. |"
        for n in range(14)
    ]
    table = "\n".join(
        [
            "| Symptom | Likely cause | Fix |",
            "|---|---|---|",
            *rows,
            "| Printer will not connect to Wi-Fi | 5 GHz network selected | Select a 2.4 GHz network. |",
        ]
    )
    assert len(table) > 1200
    doc = f"# Forge S3 Troubleshooting Guide\n\n## Common problems\n\n{table}\n"
    result = _ask_once(
        tmp_path, {"printer.md": doc}, "Why won't my Forge S3 connect to my wifi?", FixedGenerator("")
    )
    assert result.verdict == "PASS", result.packet.verification.verdict_reasons
    assert "| Printer will not connect to Wi-Fi | 5 GHz network selected |" in result.answer
    assert "Likely cause" not in result.answer
