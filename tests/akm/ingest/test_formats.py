"""Extraction of PDF, HTML and DOCX files: the text, the locators, and every refusal."""

from __future__ import annotations

import io
import socket
import time
import tracemalloc
import zipfile
from typing import Any

import docx
import pypdfium2 as pdfium
import pytest
from docx.oxml.ns import qn

from akm.ingest.content_types import DOCX, HTML, PDF
from akm.ingest.formats import (
    LAYOUT_VERSIONS,
    ExtractionError,
    ExtractionLimits,
    NoTextError,
    extract_document,
    extracted_text,
    source_text,
)
from akm.manifest import DenialReason

from .documents import (
    docx_bytes,
    pdf_bytes,
    pdf_table_bytes,
    scanned_pdf_bytes,
    two_column_pdf_bytes,
    zip_bomb_docx,
)

PAGES = [
    ["Observatory manual", "The telescope dome opens at dusk."],
    ["Chapter two", "The quasar catalogue lists 412 entries.", "Each entry has a redshift."],
    ["Chapter three", "Nebula spectra are stored nightly."],
]


def _page_text(raw: bytes, page: int) -> str:
    """Page ``page`` (1-based) as pypdfium2 reports it, line endings made ``\\n``."""
    document = pdfium.PdfDocument(raw)
    try:
        text = document[page - 1].get_textpage().get_text_range()
    finally:
        document.close()
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").splitlines()).strip("\n")


def _chars(value: str) -> tuple[int, int]:
    begin, end = value.rsplit("characters ", 1)[1].split("-")
    return int(begin), int(end)


def test_pdf_chunks_name_their_page_and_its_character_range() -> None:
    raw = pdf_bytes(PAGES)
    document = extract_document(PDF, raw, max_chars=60)
    assert document.pages == 3
    assert document.source_type == "artifact"
    assert {chunk.locator_type for chunk in document.chunks} == {"page"}
    pages_seen = set()
    for chunk in document.chunks:
        page = int(chunk.locator_value.split(",")[0].removeprefix("page "))
        pages_seen.add(page)
        begin, end = _chars(chunk.locator_value)
        # A reader of the original finds the passage at that page and character range ...
        assert _page_text(raw, page)[begin:end] == chunk.text
        # ... and the contract's line range cuts the same passage out of the extracted text.
        assert "\n".join(document.text.splitlines()[chunk.start_line - 1 : chunk.end_line]) == chunk.text
    assert pages_seen == {1, 2, 3}
    quasar = next(chunk for chunk in document.chunks if "quasar" in chunk.text)
    assert quasar.locator_value.startswith("page 2, characters ")
    assert extracted_text(PDF, raw) == document.text
    assert source_text("docs/manual.PDF", raw) == document.text


def test_pdf_lines_in_larger_type_are_the_heading_path_of_the_text_below_them() -> None:
    raw = pdf_bytes(
        [
            [(20, "Skarvholm Lighthouse: a short history"), "The tower is 31 metres tall.", (15, "Keepers")],
            ["Keepers lived on the skerry until 1987.", "The last keeper served for 22 years."],
            [(15, "Visiting"), "A boat leaves Hamnvik at 10:00."],
        ]
    )
    document = extract_document(PDF, raw)
    assert [(chunk.heading_path, chunk.text) for chunk in document.chunks] == [
        (("Skarvholm Lighthouse: a short history",), "The tower is 31 metres tall."),
        (
            ("Skarvholm Lighthouse: a short history", "Keepers"),
            "Keepers lived on the skerry until 1987.\nThe last keeper served for 22 years.",
        ),
        (("Skarvholm Lighthouse: a short history", "Visiting"), "A boat leaves Hamnvik at 10:00."),
    ]
    for chunk in document.chunks:
        page = int(chunk.locator_value.split(",")[0].removeprefix("page "))
        begin, end = _chars(chunk.locator_value)
        # The heading lines stay in the page's text: the character ranges still count from its start.
        assert _page_text(raw, page)[begin:end] == chunk.text
        assert "\n".join(document.text.splitlines()[chunk.start_line - 1 : chunk.end_line]) == chunk.text
    # A long line in large type is no heading, and then that size heads nothing.
    display = pdf_bytes(
        [
            [
                (20, "A display paragraph set large that runs on for well over twelve words in all"),
                (20, "Short"),
                "Body text of the page.",
            ]
        ]
    )
    assert [chunk.heading_path for chunk in extract_document(PDF, display).chunks] == [()]
    # The heading the PDF opens with, in its largest type, is its title; a PDF that opens with body
    # text has none of its own.
    assert document.title == "Skarvholm Lighthouse: a short history"
    assert extract_document(PDF, display).title is None
    body_first = pdf_bytes([["Body text first.", (20, "Later heading"), "More text."]])
    assert extract_document(PDF, body_first).title is None


PAGE = b"""<!doctype html>
<html><head><title>Station guide</title>
<script>document.write('INJECTED-SCRIPT'); fetch('http://127.0.0.1:9/steal')</script>
<style>body { color: red } .STYLE-RULE {}</style>
<link rel="stylesheet" href="http://127.0.0.1:9/style.css">
</head>
<body>
<nav>NAV-MENU <a href="/home">Home</a></nav>
<main>
<p>Welcome to the station.</p>
<h1>Install</h1>
<p>Run the <b>inst</b>aller with care. <a href="javascript:alert('JS-LINK-BODY')">Open the panel</a></p>
<img src="http://127.0.0.1:9/pixel.png" alt="pixel">
<h2>Linux</h2>
<p># Not a heading</p>
<ul><li>Unpack the archive.</li><li># a line that looks like a heading</li></ul>
<pre>make build
# build comment<script>INJECTED-IN-PRE</script></pre>
<table><tr><th>Port</th><th>Use<style>.STYLE-RULE-CELL {}</style></th></tr><tr><td>8080</td><td>dashboard</td></tr></table>
<h2>Empty section</h2>
<h1>Operate</h1>
<p>Restart the relay every <i>twelve</i> hours.</p>
<form><input value="FORM-VALUE"><button>FORM-BUTTON</button></form>
</main>
<footer>FOOTER-TEXT</footer>
<script>INJECTED-SECOND</script>
</body></html>
"""


def test_html_main_content_is_located_by_heading_path_and_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("extraction opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    document = extract_document(HTML, PAGE)
    text = document.text
    for absent in (
        "INJECTED",
        "steal",
        "STYLE-RULE",
        "NAV-MENU",
        "FOOTER-TEXT",
        "FORM-",
        "javascript",
        "JS-LINK-BODY",
        "pixel",
    ):
        assert absent not in text
    assert document.title == "Station guide"
    assert document.source_type == "web"
    assert "Run the installer with care. Open the panel" in text
    # A table's rows stay together as Markdown rows, its header cells over a rule.
    assert "| Port | Use |\n| --- | --- |\n| 8080 | dashboard |" in text
    # A text line that looks like Markdown markup is escaped; code keeps its own lines.
    assert "\\# Not a heading" in text and "- # a line that looks like a heading" in text
    assert "make build\n# build comment" in text

    by_path = {chunk.heading_path: chunk for chunk in document.chunks}
    assert set(by_path) == {(), ("Install",), ("Install", "Linux"), ("Operate",)}
    assert by_path[()].locator_type == "other"
    assert by_path[()].locator_value == "document start, characters 0-23"
    linux = by_path[("Install", "Linux")]
    assert linux.locator_type == "heading"
    assert linux.locator_value.startswith("Install > Linux, characters 0-")
    lines = text.splitlines()
    for chunk in document.chunks:
        assert "\n".join(lines[chunk.start_line - 1 : chunk.end_line]) == chunk.text
        # Characters count from the start of the chunk's section: its heading line.
        begin, end = _chars(chunk.locator_value)
        section_line = chunk.start_line - 1
        while chunk.heading_path and not lines[section_line].startswith("#"):
            section_line -= 1
        section_start = sum(len(line) + 1 for line in lines[:section_line]) if chunk.heading_path else 0
        assert text[section_start + begin : section_start + end] == chunk.text
    operate = by_path[("Operate",)]
    assert operate.text == "# Operate\n\nRestart the relay every twelve hours."


def test_html_without_main_drops_page_header_and_footer() -> None:
    page = b"<body><header>SITE-HEADER</header><h2>Notes</h2><p>Body text here.</p><footer>SITE-FOOTER</footer></body>"
    document = extract_document(HTML, page)
    assert document.text == "## Notes\n\nBody text here."
    assert document.title == "Notes"


def test_html_charset_from_meta_and_deep_nesting() -> None:
    latin = "<html><head><meta charset='iso-8859-1'></head><body><p>Caf\xe9 cr\xe8me</p></body></html>"
    assert extract_document(HTML, latin.encode("latin-1")).text == "Café crème"
    deep = b"<div>" * 20000 + b"<p>deep text</p>" + b"</div>" * 20000
    assert extract_document(HTML, b"<body>" + deep + b"</body>").text == "deep text"


def test_html_without_text_is_no_text() -> None:
    with pytest.raises(NoTextError) as caught:
        extract_document(HTML, b"<html><body><script>only()</script><h1>Title only</h1></body></html>")
    assert caught.value.reason == DenialReason.NO_TEXT


def test_docx_chunks_are_paragraph_ranges() -> None:
    raw = docx_bytes(
        [
            ("p", "Preface before any heading."),
            ("h1", "Policy"),
            ("p", "Badges are renewed every 90 days."),
            ("p", ""),
            ("p", "Visitors sign in at the desk."),
            ("h2", "Exceptions"),
            ("p", "Contractors renew every 30 days."),
        ]
    )
    document = extract_document(DOCX, raw)
    paragraphs = [paragraph.text for paragraph in docx.Document(io.BytesIO(raw)).paragraphs]
    assert [(chunk.locator_value, chunk.heading_path) for chunk in document.chunks] == [
        ("paragraphs 1-1", ()),
        ("paragraphs 2-5", ("Policy",)),
        ("paragraphs 6-7", ("Policy", "Exceptions")),
    ]
    # A heading paragraph is written as a Markdown heading.
    paragraphs = [
        {"Policy": "# Policy", "Exceptions": "## Exceptions"}.get(text, text) for text in paragraphs
    ]
    for chunk in document.chunks:
        first, last = (int(n) for n in chunk.locator_value.removeprefix("paragraphs ").split("-"))
        assert (chunk.start_line, chunk.end_line) == (first, last)
        # Paragraph N of the document is line N of the extracted text.
        assert chunk.text == "\n".join(paragraphs[first - 1 : last])
    assert document.title == "Policy"


@pytest.mark.parametrize("first_row", ["1", "0"], ids=["header-row", "no-header-row"])
def test_docx_tables_are_markdown_rows_and_paragraphs_still_count_them(first_row: str) -> None:
    document = docx.Document()
    document.add_paragraph("Rates below.")
    table = document.add_table(rows=2, cols=3)
    # The table's look says whether its first row heads the columns (Word sets it by default).
    look = table._tbl.tblPr.find(qn("w:tblLook"))
    look.set(qn("w:firstRow"), first_row)
    for column, value in enumerate(["Zone", "Rate", "Note"]):
        table.cell(0, column).text = value
    table.cell(1, 0).text = "North"
    merged = table.cell(1, 1).merge(table.cell(1, 2))
    merged.text = "Closed"
    document.add_paragraph("After the table.")
    stream = io.BytesIO()
    document.save(stream)
    extracted = extract_document(DOCX, stream.getvalue())
    rule = "| --- | --- | --- |\n" if first_row == "1" else ""
    assert (
        extracted.text == f"Rates below.\n| Zone | Rate | Note |\n{rule}| North | Closed |\nAfter the table."
    )
    # The rule is no paragraph: the four paragraphs (a row counts as one) are still four.
    assert [chunk.locator_value for chunk in extracted.chunks] == ["paragraphs 1-4"]
    assert extracted.chunks[0].end_line == (5 if first_row == "1" else 4)


@pytest.mark.parametrize(
    ("content_type", "make", "reason", "words"),
    [
        (PDF, lambda: pdf_bytes([["classified"]], user_password="pw"), DenialReason.ENCRYPTED, "encrypted"),
        (PDF, lambda: pdf_bytes(PAGES)[:400], DenialReason.CORRUPT, "cannot be parsed"),
        (PDF, lambda: b"%PDF-1.7\nnot really a pdf", DenialReason.CORRUPT, "cannot be parsed"),
        (DOCX, lambda: docx_bytes([("p", "text")])[:-200], DenialReason.CORRUPT, "truncated or damaged"),
        (DOCX, lambda: b"PK\x03\x04 not a zip", DenialReason.CORRUPT, "truncated or damaged"),
        (DOCX, lambda: _zip({"readme.txt": b"hello"}), DenialReason.CORRUPT, "no word/document.xml"),
        (DOCX, lambda: _zip({"word/document.xml": b"<not-closed"}), DenialReason.CORRUPT, "cannot be parsed"),
        (DOCX, lambda: zip_bomb_docx(32 * 2**20), DenialReason.OVER_LIMIT, "expands"),
        (
            DOCX,
            lambda: _zip({"word/document.xml": b"<w/>"}, compression=zipfile.ZIP_BZIP2),
            DenialReason.OVER_LIMIT,
            "not stored or deflate",
        ),
    ],
    ids=[
        "encrypted-pdf",
        "truncated-pdf",
        "garbage-pdf",
        "truncated-docx",
        "not-a-zip",
        "zip-without-document",
        "broken-xml",
        "zip-bomb",
        "bzip2-member",
    ],
)
def test_bad_files_are_refused_with_a_reason(
    content_type: str, make: Any, reason: DenialReason, words: str
) -> None:
    raw = make()
    with pytest.raises(ExtractionError) as caught:
        extract_document(content_type, raw)
    assert caught.value.reason == reason
    assert words in str(caught.value)
    # A direct read meets the same refusal as a ValueError, never another exception.
    with pytest.raises(ValueError, match=words):
        source_text("docs/file" + (".pdf" if content_type == PDF else ".docx"), raw)


def _zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return stream.getvalue()


def test_zip_bomb_is_refused_before_decompression() -> None:
    bomb = zip_bomb_docx(256 * 2**20)
    assert len(bomb) < 2 * 2**20
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(ExtractionError) as caught:
            extract_document(DOCX, bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.reason == DenialReason.OVER_LIMIT
    assert peak < 16 * 2**20
    assert time.perf_counter() - started < 2.0


def test_limits_bound_pages_and_members() -> None:
    with pytest.raises(ExtractionError, match="over the limit of 2") as caught:
        extract_document(PDF, pdf_bytes(PAGES), limits=ExtractionLimits(max_pdf_pages=2))
    assert caught.value.reason == DenialReason.OVER_LIMIT
    with pytest.raises(ExtractionError, match="zip members") as caught:
        extract_document(DOCX, docx_bytes([("p", "x")]), limits=ExtractionLimits(max_zip_members=3))
    assert caught.value.reason == DenialReason.OVER_LIMIT
    with pytest.raises(ExtractionError, match="bytes, over the limit"):
        extract_document(HTML, b"<p>" + b"x" * 2000 + b"</p>", limits=ExtractionLimits(max_file_bytes=1000))


def test_scanned_pdf_has_no_text() -> None:
    with pytest.raises(NoTextError, match="2 page\\(s\\) but no text layer"):
        extract_document(PDF, scanned_pdf_bytes(2))


def test_pdf_with_some_empty_pages_keeps_page_numbers() -> None:
    raw = pdf_bytes([["First page words."], [], ["Third page words."]])
    document = extract_document(PDF, raw)
    assert [chunk.locator_value.split(",")[0] for chunk in document.chunks] == ["page 1", "page 3"]
    assert document.pages == 3


def test_html_tables_are_markdown_tables_with_their_header_over_a_rule() -> None:
    page = (
        b"<main><p>Fees below.</p><table><caption>Fees</caption>"
        b"<thead><tr><td>Item</td><td>Fee</td></tr></thead>"
        b"<tbody><tr><td>Locker | key</td><td></td></tr><tr><th>Total</th><td>1 pound</td></tr></tbody>"
        b"</table><table><tr><td>no</td><td>header</td></tr><tr><td>two</td><td>rows</td></tr></table></main>"
    )
    assert extract_document(HTML, page).text == (
        "Fees below.\n\nFees\n\n| Item | Fee |\n| --- | --- |\n| Locker \\| key |  |\n| Total | 1 pound |"
        "\n\n| no | header |\n| two | rows |"
    )


def test_a_bold_phrase_that_opens_an_html_block_stays_bold() -> None:
    page = (
        b"<main><p><strong>The float test.</strong> Many books tell you to <b>drop</b> a spoonful.</p>"
        b"<p>It is <strong>not</strong> reliable.</p><ul><li><b>Jar:</b> 750 ml</li></ul></main>"
    )
    assert extract_document(HTML, page).text == (
        "**The float test.** Many books tell you to drop a spoonful.\n\nIt is not reliable.\n\n- **Jar:** 750 ml"
    )


def test_a_docx_title_heads_its_heading_1_sections() -> None:
    raw = docx_bytes(
        [
            ("h0", "Allotment committee: minutes"),
            ("p", "Chair: Hannah Ruiz."),
            ("h1", "Decisions"),
            ("p", "Bonfires are banned from April to September."),
        ]
    )
    document = extract_document(DOCX, raw)
    assert document.text.splitlines()[0] == "# Allotment committee: minutes"
    assert document.text.splitlines()[2] == "## Decisions"
    assert [chunk.heading_path for chunk in document.chunks] == [
        ("Allotment committee: minutes",),
        ("Allotment committee: minutes", "Decisions"),
    ]


SERVICES = [
    ["Package", "Price", "What's included", "Turnaround"],
    [
        "Bronze Service",
        "£45",
        "Safety check, brake and gear adjustment, tyre pressures, chain clean and lube",
        "Same day if dropped off by 10am",
    ],
    [
        "Silver Service",
        "£85",
        "Everything in Bronze, plus wheel truing, hub and headset adjustment",
        "2 working days",
    ],
    [
        "Gold Service",
        "£145",
        "Everything in Silver, plus full strip-down, new cables and outers, frame polish",
        "3 to 5 working days",
    ],
]


@pytest.mark.parametrize("borders", [True, False])
def test_a_pdf_table_is_laid_out_as_markdown_rows_its_wrapped_cells_joined(borders: bool) -> None:
    raw = pdf_table_bytes(
        SERVICES,
        (28, 16, 100, 30),
        before="All bikes are booked in by appointment.",
        after="Parts are charged in addition to all package prices.",
        borders=borders,
    )
    text = extracted_text(PDF, raw)
    lines = text.splitlines()
    assert lines[0] == "All bikes are booked in by appointment."
    assert lines[1:3] == ["| Package | Price | What's included | Turnaround |", "| --- | --- | --- | --- |"]
    assert (
        "| Gold Service | £145 | Everything in Silver, plus full strip-down, new cables and outers, frame polish "
        "| 3 to 5 working days |"
    ) in lines
    assert (
        "| Bronze Service | £45 | Safety check, brake and gear adjustment, tyre pressures, chain clean and lube | Same day if dropped off by 10am |"
        in lines
    )
    assert lines[-1] == "Parts are charged in addition to all package prices."
    # The rows are cut into chunks as Markdown tables are: a chunk holds whole rows.
    document = extract_document(PDF, raw, max_chars=2000)
    assert any("| Silver Service | £85 |" in chunk.text for chunk in document.chunks)


MEMBERSHIPS = [
    ["Membership", "Monthly price", "Joining fee", "Access hours", "Classes included"],
    [
        "Off-peak",
        "£24.99",
        "£15.00",
        "Mon-Fri 10:00 - 16:00 and after 20:00; weekends after 14:00",
        "4 per month",
    ],
    ["Standard", "£34.99", "£20.00", "All opening hours", "8 per month"],
    [
        "Premium",
        "£49.99",
        "None",
        "All opening hours, plus access to all three Pulse clubs (Harford, Kingsbridge and Alton Vale)",
        "Unlimited, with priority booking 8 days ahead",
    ],
    [
        "Student",
        "£21.99",
        "£10.00",
        "All opening hours; valid student card required at every visit",
        "4 per month",
    ],
]


def test_a_pdf_table_row_taller_than_its_first_cell_keeps_every_line_of_its_cells() -> None:
    # Set in 9 points on lines of 5 mm, a cell's lines do not touch one another: the access hours'
    # first line lies above the row's one-line cells, and a narrow cell's line is spread out.
    raw = pdf_table_bytes(MEMBERSHIPS, (24, 22, 20, 58, 40), after="All prices are per person.", size=9)
    lines = extracted_text(PDF, raw).splitlines()
    assert lines[:2] == [
        "| Membership | Monthly price | Joining fee | Access hours | Classes included |",
        "| --- | --- | --- | --- | --- |",
    ]
    assert (
        "| Premium | £49.99 | None | All opening hours, plus access to all three Pulse clubs (Harford, Kingsbridge "
        "and Alton Vale) | Unlimited, with priority booking 8 days ahead |"
    ) in lines
    assert lines[-1] == "All prices are per person."
    assert len(lines) == 2 + 4 + 1


def test_two_columns_of_running_text_and_a_form_line_stay_lines() -> None:
    left = "The committee met on Tuesday to discuss the plans for the summer fete. " * 4
    right = "Volunteers are needed for the cake stall, the tombola and the car park. " * 4
    text = extracted_text(PDF, two_column_pdf_bytes(left, right))
    assert "|" not in text
    assert text.splitlines()[-1].startswith("Name: ")
    assert "Tuesday" in text and "tombola" in text


def test_a_pdf_table_layout_is_a_new_layout_version() -> None:
    # Stored line ranges of PDFs cut before tables were laid out as rows are cut again at ingest.
    assert LAYOUT_VERSIONS[PDF] == "pdf-3"
