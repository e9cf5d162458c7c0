"""Sentence spans, citation stripping and citation parsing."""

from __future__ import annotations

import pytest

from akm.claims import cited_evidence, sentence_spans, strip_citations


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
        "empty",
        "blank",
    ],
)
def test_sentence_spans(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_spans_index_the_original_text() -> None:
    text = "  Alpha is on [E1].\n\n- Beta is off.\n"
    assert [(span.start, span.end) for span in sentence_spans(text)] == [(2, 19), (23, 35)]


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
