"""PDF, HTML and DOCX sources turned into located text, the same way at ingest and at direct read.

Each format is laid out as lines of extracted text; line numbers are 1-based over
``str.splitlines()`` of that text (the text is the lines joined by ``\\n``), exactly as for
Markdown, so the contract's ``startLine``/``endLine`` locate every chunk and a direct read
re-extracts the original file and cuts the same lines out again. The locator value says where
the passage lies in terms a reader of the original can follow:

* PDF: ``page 3, characters 120-480``: the page and the character range of that page's
  extracted text (locator type ``page``); one line per text line pdfium reports, but a table's
  rows, whose cells pdfium reports one after another, become Markdown table rows. Lines set in a
  larger type than the body's head the text below them (its heading path) and join no chunk.
* HTML: ``Install > Linux, characters 40-530``: the heading path and the character range from
  the start of that heading's section in the extracted text (locator type ``heading``; text
  before the first heading is ``document start, characters ...`` with type ``other``). Scripts,
  styles, forms, navigation and embedded objects are dropped unread; nothing is executed and
  no link or resource is fetched.
* DOCX: ``paragraphs 4-9`` (locator type ``other``): body paragraphs and table rows in document
  order, empty ones included, one line each (a table's header row also gets a rule line, which
  shares its paragraph number); heading styles give the heading path and are written as Markdown
  headings. Tables of HTML and DOCX are written as Markdown tables.

The source checksum stays the sha256 of the original file. A file that cannot be read is
refused with an ``ExtractionError`` whose ``reason`` is a counted denial reason; a file with no
text at all (a scanned PDF without a text layer) raises ``NoTextError``.
"""

from __future__ import annotations

import codecs
import io
import itertools
import re
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from akm.ingest.chunking import DEFAULT_MAX_CHARS, TextChunk, is_markup_line
from akm.ingest.content_types import DOCX, HTML, PDF, content_type_of
from akm.manifest import DenialReason

if TYPE_CHECKING:
    from selectolax.lexbor import LexborNode

EXTRACTED_TYPES: frozenset[str] = frozenset({PDF, HTML, DOCX})
# How each format is laid out as lines. A source version stores the layout its chunks were cut
# with; when the layout of its format changes, ingest cuts the unchanged file again, so that no
# stored line range is read against lines laid out another way.
LAYOUT_VERSIONS: dict[str, str] = {PDF: "pdf-3", HTML: "html-3", DOCX: "docx-2"}
SOURCE_TYPES: dict[str, str] = {PDF: "artifact", HTML: "web", DOCX: "artifact"}

# Every character ``str.splitlines`` breaks at; inside one extracted line they become spaces.
_LINE_BREAKS = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# Control characters other than tab, and the non-characters pdfium uses as markers.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f\ufffe\uffff]")
_SPACES = re.compile(r"\s+")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


class ExtractionError(ValueError):
    """A file that cannot be turned into text; ``reason`` is the denial reason it is counted under."""

    def __init__(self, reason: DenialReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class NoTextError(ExtractionError):
    """A readable file without any text (a PDF of scanned pages has no text layer; OCR is not done)."""

    def __init__(self, message: str) -> None:
        super().__init__(DenialReason.NO_TEXT, message)


@dataclass(frozen=True)
class ExtractionLimits:
    """Bounds on what one file may cost to read. A DOCX is checked from its zip directory
    before anything is decompressed: member count, declared sizes, compression ratio and
    compression method (only stored and deflate, whose output zipfile cuts at the declared size)."""

    max_file_bytes: int = 256 * 2**20
    max_pdf_pages: int = 10_000
    max_zip_members: int = 2_000
    max_zip_member_bytes: int = 64 * 2**20
    max_zip_total_bytes: int = 256 * 2**20
    max_zip_ratio: float = 100.0
    # Small XML parts compress far better than the ratio allows; below this size none is refused.
    zip_ratio_floor_bytes: int = 2**20


DEFAULT_LIMITS = ExtractionLimits()


@dataclass(frozen=True)
class _Section:
    """Lines [start, end) under one heading path (a page of a PDF has an empty path)."""

    heading_path: tuple[str, ...]
    start: int
    end: int
    # The line the section's character ranges count from, and the page it lies on (PDF).
    origin: int
    page: int | None = None
    # A heading line opening the section: it joins the text below it and never stands alone.
    heading_line: bool = False


@dataclass(frozen=True)
class _Layout:
    lines: list[str]
    sections: list[_Section]
    title: str | None = None
    pages: int = 0
    # DOCX: the paragraph number of each line (a table's header rule shares its row's number).
    paragraphs: list[int] | None = None


@dataclass(frozen=True)
class ExtractedDocument:
    """A document's extracted lines, its located chunks, and what it is."""

    content_type: str
    text: str
    chunks: tuple[TextChunk, ...]
    title: str | None
    pages: int

    @property
    def source_type(self) -> str:
        return SOURCE_TYPES[self.content_type]


def _clean(line: str) -> str:
    """One extracted line: no line breaks inside, no control characters, no trailing blanks."""
    return _CONTROL.sub("", _LINE_BREAKS.sub(" ", line)).rstrip()


def _trim_trailing_blank(lines: list[str]) -> list[str]:
    # ``"\\n".join`` then ``splitlines`` would drop trailing empty lines and shift nothing else.
    while lines and not lines[-1]:
        lines.pop()
    return lines


# ---- PDF ---------------------------------------------------------------------------------------

_PDFIUM_PASSWORD_ERRORS = {4, 6}  # FPDF_ERR_PASSWORD, FPDF_ERR_SECURITY


def _pdf_layout(raw: bytes, limits: ExtractionLimits) -> _Layout:
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(raw)
    except pdfium.PdfiumError as error:
        if getattr(error, "err_code", None) in _PDFIUM_PASSWORD_ERRORS or "password" in str(error).lower():
            raise ExtractionError(
                DenialReason.ENCRYPTED, "the PDF is encrypted: it cannot be opened without a password"
            ) from error
        raise ExtractionError(DenialReason.CORRUPT, f"the PDF cannot be parsed ({error})") from error
    try:
        page_count = len(document)
        if page_count > limits.max_pdf_pages:
            raise ExtractionError(
                DenialReason.OVER_LIMIT,
                f"the PDF has {page_count} pages, over the limit of {limits.max_pdf_pages}",
            )
        # Each page's lines, each with the font size most of its characters are set in.
        pages: list[tuple[int, list[tuple[str, float]]]] = []
        for index in range(page_count):
            page = document[index]
            try:
                textpage = page.get_textpage()
                try:
                    text = textpage.get_text_range()
                    sizes = _pdf_font_sizes(textpage, text)
                    boxes = _pdf_char_boxes(textpage, text) if sizes else []
                finally:
                    textpage.close()
            finally:
                page.close()
            page_lines = _pdf_page_lines(text, sizes, boxes)
            if page_lines:
                pages.append((index + 1, page_lines))
    except pdfium.PdfiumError as error:
        raise ExtractionError(DenialReason.CORRUPT, f"the PDF cannot be read ({error})") from error
    finally:
        document.close()
    if not pages:
        raise NoTextError(
            f"the PDF has {page_count} page(s) but no text layer (scanned pages?); OCR is not done"
        )
    levels = _pdf_heading_levels([line for _, page_lines in pages for line in page_lines])
    lines: list[str] = []
    sections: list[_Section] = []
    path: list[tuple[int, str]] = []
    for number, page_lines in pages:
        origin = start = len(lines)
        after_heading = False
        for text, size in page_lines:
            level = levels.get(size, 0)
            lines.append(text)
            if not level:
                after_heading = False
                continue
            # A line in a larger type than the body's heads the text below it, up to the next such
            # line, as a plain text's title line does: it is the heading path of that text and no
            # part of its chunks (the lines stay as PDFium gives them, so the character ranges
            # still count from the start of the page). A heading over two lines is one heading.
            if len(lines) - 1 > start:
                sections.append(_pdf_section(path, start, len(lines) - 1, origin, number))
            if after_heading and path and path[-1][0] == level:
                path[-1] = (level, f"{path[-1][1]} {text.strip()}")
            else:
                path = [(depth, name) for depth, name in path if depth < level]
                path.append((level, text.strip()))
            start, after_heading = len(lines), True
        if len(lines) > start:
            sections.append(_pdf_section(path, start, len(lines), origin, number))
    # A heading the PDF opens with, in its largest type, is its title (as a DOCX's first heading is
    # where the document has no title of its own).
    opening = pages[0][1][0]
    title = opening[0].strip() if levels.get(opening[1]) == 1 else None
    return _Layout(lines, sections, pages=page_count, title=title)


def _pdf_section(path: Sequence[tuple[int, str]], start: int, end: int, origin: int, page: int) -> _Section:
    return _Section(tuple(name for _, name in path), start, end, origin, page=page)


def _pdf_font_sizes(textpage: object, text: str) -> list[float]:
    """The font size of each character of ``text`` (the page's whole text range); none when PDFium
    counts its characters otherwise (then the page's lines are all body text)."""
    import pypdfium2.raw as pdfium_c

    handle = textpage.raw  # type: ignore[attr-defined]
    count = pdfium_c.FPDFText_CountChars(handle)
    if count != len(text):
        return []
    return [round(pdfium_c.FPDFText_GetFontSize(handle, index), 1) for index in range(count)]


def _pdf_char_boxes(textpage: object, text: str) -> list[tuple[float, float, float, float]]:
    """The box (left, right, bottom, top, in points) of each character of ``text`` (the page's whole
    text range); none when PDFium counts its characters otherwise."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    handle = textpage.raw  # type: ignore[attr-defined]
    if pdfium_c.FPDFText_CountChars(handle) != len(text):
        return []
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    boxes = []
    for index in range(len(text)):
        pdfium_c.FPDFText_GetCharBox(handle, index, left, right, bottom, top)
        boxes.append((left.value, right.value, bottom.value, top.value))
    return boxes


def _pdf_page_lines(
    text: str, sizes: Sequence[float], boxes: Sequence[tuple[float, float, float, float]] = ()
) -> list[tuple[str, float]]:
    """A page's cleaned lines, blank lines at its top and bottom dropped, each with the size most
    of its characters are set in (0 when unknown); lines set side by side in the columns of a table
    become its rows (`_pdf_table_rows`) where the characters' boxes are known."""
    page_lines: list[tuple[str, float]] = []
    pieces: list[list[_PdfPiece]] = []
    position = 0
    for raw_line in text.replace("\r\n", "\n").split("\n"):
        width = len(raw_line) + (2 if text.startswith("\r\n", position + len(raw_line)) else 1)
        counted = [size for size in sizes[position : position + len(raw_line)] if size > 0]
        size = max(set(counted), key=counted.count) if counted else 0.0
        page_lines.append((_clean(raw_line), size))
        if boxes:
            pieces.append(_pdf_pieces(raw_line, boxes[position : position + len(raw_line)], size))
        position += width
    if pieces:
        page_lines = _pdf_table_rows(page_lines, pieces)
    while page_lines and not page_lines[0][0]:
        page_lines.pop(0)
    while page_lines and not page_lines[-1][0]:
        page_lines.pop()
    return page_lines


@dataclass(frozen=True, slots=True)
class _PdfPiece:
    """A run of a PDF line's characters with no wide gap inside: its text and where it is set."""

    text: str
    left: float
    right: float
    bottom: float
    top: float
    # Its words, each with where it starts: a piece may run across a table's columns (a header's
    # cells set close together), and is then cut between them.
    words: tuple[tuple[str, float], ...] = ()


# Words of a line are parted by a space of a fraction of the type size; cells of a table row set on
# one line ("Bronze Service      £45") by more than this many times the type size.
_PDF_CELL_GAP = 1.5
# A column's pieces start within this many points of one another.
_PDF_COLUMN_SLACK = 6.0
# A row with more lines than this in one of its cells is no table row (two columns of running text).
_PDF_ROW_MAX_LINES = 6
# Lines whose glyphs come this close in height (points) lie in one band.
_PDF_TOUCH = 0.5


def _pdf_pieces(
    line: str, boxes: Sequence[tuple[float, float, float, float]], size: float
) -> list[_PdfPiece]:
    """``line`` cut at wide gaps between its characters, each piece with the box of its characters
    and its words."""
    gap = _PDF_CELL_GAP * (size or 10.0)
    runs: list[list[int]] = []
    previous_right: float | None = None
    for index, character in enumerate(line):
        left, right, _, _ = boxes[index]
        if character.isspace() or right <= left:
            continue
        if previous_right is None or left - previous_right > gap:
            runs.append([])
        runs[-1].append(index)
        previous_right = right
    return [
        _PdfPiece(
            text=_SPACES.sub(" ", _clean(line[run[0] : run[-1] + 1])).strip(),
            left=boxes[run[0]][0],
            right=max(boxes[index][1] for index in run),
            bottom=min(boxes[index][2] for index in run),
            top=max(boxes[index][3] for index in run),
            words=_pdf_words(line, boxes, run[0], run[-1] + 1),
        )
        for run in runs
    ]


def _pdf_words(
    line: str, boxes: Sequence[tuple[float, float, float, float]], start: int, end: int
) -> tuple[tuple[str, float], ...]:
    """The words of ``line[start:end]``, each with the left edge of its first character."""
    return tuple(
        (_clean(match.group()), boxes[start + match.start()][0])
        for match in re.finditer(r"\S+", line[start:end])
        if _clean(match.group())
    )


def _pdf_table_rows(lines: list[tuple[str, float]], pieces: list[list[_PdfPiece]]) -> list[tuple[str, float]]:
    """A page's lines with each table written as Markdown table rows, a rule under its first.

    Consecutive lines whose glyphs overlap in height make one band: a table row whose cells wrap
    over several lines (set one column after another, each cell's lines centred or not), or a
    single line. A band with pieces starting at two or more places side by side is a candidate row;
    two or more candidate rows in a row are a table when two or more places are where pieces start
    in at least two of them: those are its columns (a wide space in a justified cell starts no
    column). A cell's lines join from the top down."""
    # Each band with its extent in height (None for a blank line, which touches nothing). A line
    # that touches the band before it joins it; a band that a later line made touch the one before
    # it ("E-bike Health" over "Check", with "£55" beside both) joins that one.
    bands: list[list[int]] = []
    extents: list[tuple[float, float] | None] = []
    for index, line_pieces in enumerate(pieces):
        extent = (
            (min(piece.bottom for piece in line_pieces), max(piece.top for piece in line_pieces))
            if line_pieces
            else None
        )
        if extent is not None and extents and _touch(extents[-1], extent):
            bands[-1].append(index)
            extents[-1] = _union(extents[-1], extent)
            while len(bands) > 1 and _touch(extents[-2], extents[-1]):
                bands[-2:] = [bands[-2] + bands[-1]]
                extents[-2:] = [_union(extents[-2], extents[-1])]
        else:
            bands.append([index])
            extents.append(extent)
    candidate = [_pdf_row_candidate(band, pieces) for band in bands]
    out: list[tuple[str, float]] = []
    at = 0
    while at < len(bands):
        # A run of rows: each a candidate band with the bands after it that go on its cells (a cell
        # of more lines than the row's others, its first line above the row's middle).
        groups: list[list[int]] = []
        end = at
        while end < len(bands):
            if groups and _goes_on(bands[end], groups[-1], groups[0], pieces):
                # Right of the first column and close to the row: it goes on the row's cells, even
                # where a justified line of a cell has wide spaces.
                groups[-1].extend(bands[end])
            elif candidate[end]:
                groups.append(list(bands[end]))
            else:
                break
            end += 1
        columns = _pdf_columns(groups, pieces) if len(groups) >= 2 else []
        # A row of the table starts pieces at two of its columns at least ("Name: ____  Date: ____"
        # below a table is no row of it).
        rows = [group for group in groups if _matched_columns(group, pieces, columns) >= 2]
        if len(columns) < 2 or len(rows) < 2:
            out.extend(lines[index] for index in bands[at])
            at += 1
            continue
        for group in groups:
            if group in rows:
                out.extend(_pdf_table_row(group, pieces, lines, columns, first=group is rows[0]))
            else:
                out.extend(lines[index] for index in sorted(group))
        at = end
    return out


def _goes_on(band: list[int], row: list[int], first: list[int], pieces: list[list[_PdfPiece]]) -> bool:
    """Whether ``band`` goes on the cells of ``row``: all its pieces start right of the first row's
    first column, and it lies within one and a half of its lines' height of the row."""
    found = [piece for index in band for piece in pieces[index]]
    row_pieces = [piece for index in row for piece in pieces[index]]
    if not found or not row_pieces:
        return False
    first_left = min(piece.left for index in first for piece in pieces[index])
    if min(piece.left for piece in found) <= first_left + _PDF_COLUMN_SLACK:
        return False
    height = max(piece.top - piece.bottom for piece in found)
    bottom, top = min(piece.bottom for piece in row_pieces), max(piece.top for piece in row_pieces)
    gap = max(min(piece.bottom for piece in found) - top, bottom - max(piece.top for piece in found), 0.0)
    return gap <= 1.5 * height


def _matched_columns(band: list[int], pieces: list[list[_PdfPiece]], columns: list[float]) -> int:
    """How many of ``columns`` a band's pieces start at."""
    return sum(
        1
        for start in columns
        if any(abs(piece.left - start) <= _PDF_COLUMN_SLACK for index in band for piece in pieces[index])
    )


def _touch(first: tuple[float, float] | None, second: tuple[float, float] | None) -> bool:
    """Whether two extents in height (bottom, top) overlap or come within `_PDF_TOUCH` points."""
    if first is None or second is None:
        return False
    return second[0] <= first[1] + _PDF_TOUCH and second[1] >= first[0] - _PDF_TOUCH


def _union(
    first: tuple[float, float] | None, second: tuple[float, float] | None
) -> tuple[float, float] | None:
    if first is None or second is None:
        return second if first is None else first
    return (min(first[0], second[0]), max(first[1], second[1]))


def _starts(pieces: Sequence[_PdfPiece]) -> list[float]:
    """The places pieces start, those within `_PDF_COLUMN_SLACK` of one another taken as one."""
    starts: list[float] = []
    for left in sorted(piece.left for piece in pieces):
        if not starts or left - starts[-1] > _PDF_COLUMN_SLACK:
            starts.append(left)
    return starts


def _pdf_row_candidate(band: list[int], pieces: list[list[_PdfPiece]]) -> bool:
    """Whether a band may be a table row: pieces at two or more places side by side, and no place
    with more than `_PDF_ROW_MAX_LINES` pieces (two columns of running text are no row)."""
    found = [piece for index in band for piece in pieces[index]]
    starts = _starts(found)
    if len(starts) < 2:
        return False
    return all(
        sum(1 for piece in found if abs(piece.left - start) <= _PDF_COLUMN_SLACK) <= _PDF_ROW_MAX_LINES
        for start in starts
    )


def _pdf_columns(bands: list[list[int]], pieces: list[list[_PdfPiece]]) -> list[float]:
    """The places where pieces start in at least two of the bands: a table's columns."""
    seen: list[tuple[float, int]] = []
    for number, band in enumerate(bands):
        seen.extend(
            (start, number) for start in _starts([piece for index in band for piece in pieces[index]])
        )
    columns: list[float] = []
    for start in _starts([_PdfPiece("", left, left, 0, 0) for left, _ in seen]):
        rows = {number for left, number in seen if abs(left - start) <= _PDF_COLUMN_SLACK}
        if len(rows) >= 2:
            columns.append(start)
    return columns


def _pdf_table_row(
    band: list[int],
    pieces: list[list[_PdfPiece]],
    lines: list[tuple[str, float]],
    columns: list[float],
    *,
    first: bool,
) -> list[tuple[str, float]]:
    """One row of a table, and the rule under it if it is the first: each piece under the column it
    starts at; a piece that starts at no column (after a wide space in a justified cell) goes on
    with the piece before it on its line."""
    cells: list[list[tuple[float, float, str]]] = [[] for _ in columns]
    for index in band:
        # The line's own top orders its pieces in a cell: the tops of single words differ by their
        # letters ("Same day if").
        line_top = max(piece.top for piece in pieces[index]) if pieces[index] else 0.0
        for piece in pieces[index]:
            # Each word under the last column that starts at or before it: a justified cell's wide
            # space starts no column, and a header's cells set close together part at the columns.
            parts: dict[int, list[str]] = {}
            for word, left in piece.words or ((piece.text, piece.left),):
                column = max(
                    (at for at, start in enumerate(columns) if start <= left + _PDF_COLUMN_SLACK), default=0
                )
                parts.setdefault(column, []).append(word)
            for column, words in parts.items():
                cells[column].append((line_top, piece.left, " ".join(words)))
    # A cell's lines from the top of the page down.
    texts = [
        " ".join(text for _, _, text in sorted(cell, key=lambda item: (-item[0], item[1]))) for cell in cells
    ]
    counted = [lines[index][1] for index in band if lines[index][1] > 0]
    size = max(set(counted), key=counted.count) if counted else 0.0
    row = [(table_row(texts), size)]
    return [*row, (table_rule(len(columns)), size)] if first else row


# A heading: a short line with a letter, without a sentence's closing full stop.
_PDF_HEADING_TEXT = re.compile(r"(?=.*[^\W\d_])(?!.*[.:;,]$).{1,120}")
# A heading is set at least this much larger than the body text.
_PDF_HEADING_RATIO = 1.15
_PDF_HEADING_MAX_WORDS = 12
_PDF_HEADING_LEVELS = 3


def _pdf_heading_levels(lines: Sequence[tuple[str, float]]) -> dict[float, int]:
    """The heading level of each font size larger than the body's: the body size is the one most
    characters of the document are set in; the sizes of short lines set larger (at most three
    sizes, largest first) head sections. Empty when the document has one size, or when the larger
    sizes are not used for short lines only."""
    weights: dict[float, int] = {}
    for text, size in lines:
        if size > 0:
            weights[size] = weights.get(size, 0) + len(text)
    if not weights:
        return {}
    body = max(weights, key=lambda size: weights[size])
    larger: set[float] = set()
    for text, size in lines:
        if size >= body * _PDF_HEADING_RATIO:
            if len(text.split()) > _PDF_HEADING_MAX_WORDS or not _PDF_HEADING_TEXT.fullmatch(text.strip()):
                # Large type that is no heading (a pull quote, a display paragraph): this size heads
                # nothing.
                weights[size] = -1
            larger.add(size)
    headings = sorted((size for size in larger if weights[size] >= 0), reverse=True)[:_PDF_HEADING_LEVELS]
    return {size: level for level, size in enumerate(headings, start=1)}


# ---- HTML --------------------------------------------------------------------------------------

# Dropped with everything inside, never read: executable, styling, interactive or embedded content.
_HTML_DROPPED = frozenset(
    {
        "script", "style", "noscript", "template", "iframe", "frame", "frameset", "object", "embed",
        "applet", "svg", "math", "canvas", "video", "audio", "picture", "img", "map", "form",
        "button", "input", "select", "textarea", "nav", "aside", "dialog", "head", "link", "meta",
        "base",
    }
)  # fmt: skip
# Page furniture around the main content, dropped only when there is no <main> or <article>.
_HTML_FURNITURE = frozenset({"header", "footer"})
_HTML_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_HTML_BLOCKS = frozenset(
    {
        "address", "article", "blockquote", "body", "caption", "center", "dd", "details", "div", "dl",
        "dt", "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "hr", "html", "legend",
        "li", "main", "ol", "p", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead",
        "tr", "ul",
    }
)  # fmt: skip


def _html_text(raw: bytes) -> str:
    """The page decoded by its byte-order mark, else its ``<meta charset>``, else as UTF-8."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if raw.startswith(bom):
            return raw.decode(encoding, errors="replace")
    match = _META_CHARSET.search(raw[:4096])
    encoding = "utf-8"
    if match is not None:
        try:
            encoding = codecs.lookup(match.group(1).decode("ascii")).name
        except LookupError:
            encoding = "utf-8"
    return raw.decode(encoding, errors="replace")


def _html_blocks(root: LexborNode, drop_furniture: bool) -> Iterator[tuple[str, int, str]]:
    """(kind, heading level, text) for each block in reading order; kind: heading, text, item, row, pre."""
    buffer: list[str] = []

    def flush(kind: str = "text", level: int = 0) -> Iterator[tuple[str, int, str]]:
        text = _SPACES.sub(" ", "".join(buffer)).strip()
        buffer.clear()
        if text:
            yield kind, level, text

    # An explicit stack: deeply nested markup cannot exhaust the interpreter's recursion limit.
    stack: list[tuple[LexborNode, bool]] = [(root, False)]
    last_table: int | None = None
    while stack:
        node, leaving = stack.pop()
        tag: str = node.tag or ""
        if leaving:
            if tag in _HTML_HEADINGS:
                yield from flush("heading", _HTML_HEADINGS[tag])
            elif tag == "li":
                yield from flush("item")
            else:
                yield from flush()
            continue
        if tag == "-text":
            buffer.append(node.text_content or "")
            continue
        if tag.startswith("-") or tag in _HTML_DROPPED or (drop_furniture and tag in _HTML_FURNITURE):
            continue
        if tag == "br":
            buffer.append(" ")
            continue
        if tag in ("strong", "b") and not "".join(buffer).strip():
            # A bold phrase that opens its block ("<p><strong>The float test.</strong> Many books
            # ...") is a run-in heading; it stays bold, as Markdown writes it.
            bold = _SPACES.sub(" ", node.text(deep=True)).strip()
            if bold:
                buffer.append(f"**{bold}** ")
            continue
        if tag == "pre":
            yield from flush()
            text = node.text(deep=True)
            if text.strip():
                yield "pre", 0, text
            continue
        if tag == "tr":
            yield from flush()
            cells = [cell for cell in node.iter() if cell.tag in ("td", "th")]
            texts = [_SPACES.sub(" ", cell.text(deep=True)).strip() for cell in cells]
            if any(texts):
                # A row of header cells only, or one in <thead>, heads the table's columns (the level
                # carries the count).
                parent = node.parent
                header = all(cell.tag == "th" for cell in cells) or (
                    parent is not None and parent.tag == "thead"
                )
                # The first row of another table opens a table of its own ("+").
                while parent is not None and parent.tag != "table":
                    parent = parent.parent
                table = parent.mem_id if parent is not None else None
                opens = table != last_table
                last_table = table
                yield ("header" if header else "row") + ("+" if opens else ""), len(texts), table_row(texts)
            continue
        block = tag in _HTML_BLOCKS or tag in _HTML_HEADINGS
        if block:
            yield from flush()
            stack.append((node, True))
        children = list(node.iter(include_text=True))
        stack.extend((child, False) for child in reversed(children))


def _html_layout(raw: bytes, limits: ExtractionLimits) -> _Layout:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(_html_text(raw))
    title_node = tree.css_first("title")
    title = _SPACES.sub(" ", title_node.text()).strip() if title_node is not None else ""
    # Dropped elements go with everything inside them before any text is read, so no text of a
    # script or style can reach a <pre> or a table cell, whose text is read whole.
    tree.strip_tags(sorted(_HTML_DROPPED))
    root = tree.css_first("main") or tree.css_first("article") or tree.css_first("[role=main]")
    drop_furniture = root is None
    if drop_furniture:
        tree.strip_tags(sorted(_HTML_FURNITURE))
    root = root or tree.body or tree.root
    lines: list[str] = []
    headings: list[tuple[int, int, str]] = []  # (line index, level, title)
    first_heading = ""
    if root is not None:
        previous = ""
        for kind, level, text in _html_blocks(root, drop_furniture):
            in_table = kind in ("row", "header") and previous.rstrip("+") in ("row", "header")
            previous = kind
            if lines and not in_table:
                lines.append("")
            if kind.rstrip("+") in ("row", "header"):
                # The rows of a table stay together, as in Markdown; a header row that opens the
                # table gets the rule under it.
                lines.append(_clean(text))
                if kind == "header+":
                    lines.append(table_rule(level))
            elif kind == "heading":
                text = _clean(text)
                headings.append((len(lines), level, text))
                first_heading = first_heading or text
                lines.append("#" * level + " " + text)
            elif kind == "pre":
                lines.append("```")
                lines.extend(_clean(line) for line in text.strip("\n").splitlines())
                lines.append("```")
            else:
                prefix = "- " if kind == "item" else ""
                lines.append(_escape(prefix + _clean(text)))
    _trim_trailing_blank(lines)
    heading_lines = {index for index, _, _ in headings}
    if not any(line.strip() for index, line in enumerate(lines) if index not in heading_lines):
        raise NoTextError("the HTML page has no text in its main content")
    return _Layout(lines, _heading_sections(headings, len(lines)), title=title or first_heading or None)


def table_row(cells: Sequence[str]) -> str:
    """A table row as a Markdown table row: ``| Season pass | £145 |`` (a ``|`` inside a cell is
    escaped, an empty cell kept, so that every cell stays under its column)."""
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def table_rule(columns: int) -> str:
    """The rule under a Markdown table's header row."""
    return "|" + " --- |" * max(columns, 1)


def _heading_sections(headings: Sequence[tuple[int, int, str]], line_count: int) -> list[_Section]:
    """Sections cut at heading lines ``(line index, level, title)``; text before the first heading
    is a section with an empty heading path."""
    cuts = [*headings, (line_count, 0, "")]
    sections: list[_Section] = []
    if cuts[0][0] > 0:
        sections.append(_Section((), 0, cuts[0][0], 0))
    path: list[tuple[int, str]] = []
    for (index, level, text), (following, _, _) in itertools.pairwise(cuts):
        path = [(depth, name) for depth, name in path if depth < level]
        path.append((level, text))
        sections.append(_Section(tuple(name for _, name in path), index, following, index, heading_line=True))
    return sections


def _escape(line: str) -> str:
    """A text line that would read as a Markdown heading or code fence gets a leading backslash."""
    return "\\" + line if is_markup_line(line) else line


# ---- DOCX --------------------------------------------------------------------------------------

_DOCX_HEADING = re.compile(r"^(?:heading\s*(\d)|title)$", re.IGNORECASE)


def check_zip(raw: bytes, limits: ExtractionLimits, *, required: str) -> None:
    """Refuse a zip container from its directory alone, before any member is decompressed."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as error:
        raise ExtractionError(
            DenialReason.CORRUPT, f"not a readable zip container (truncated or damaged: {error})"
        ) from error
    with archive:
        members = archive.infolist()
    if len(members) > limits.max_zip_members:
        raise ExtractionError(
            DenialReason.OVER_LIMIT, f"{len(members)} zip members, over the limit of {limits.max_zip_members}"
        )
    total = 0
    for member in members:
        if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ExtractionError(
                DenialReason.OVER_LIMIT,
                f"zip member compressed with method {member.compress_type}, not stored or deflate",
            )
        if member.file_size > limits.max_zip_member_bytes:
            raise ExtractionError(
                DenialReason.OVER_LIMIT,
                f"a zip member expands to {member.file_size} bytes, over the limit of {limits.max_zip_member_bytes}",
            )
        if member.file_size > limits.zip_ratio_floor_bytes and member.file_size > limits.max_zip_ratio * max(
            member.compress_size, 1
        ):
            raise ExtractionError(
                DenialReason.OVER_LIMIT,
                f"a zip member expands {member.file_size / max(member.compress_size, 1):.0f} times, "
                f"over the limit of {limits.max_zip_ratio:.0f} (a zip bomb?)",
            )
        total += member.file_size
    if total > limits.max_zip_total_bytes:
        raise ExtractionError(
            DenialReason.OVER_LIMIT,
            f"zip members expand to {total} bytes, over the limit of {limits.max_zip_total_bytes}",
        )
    if required not in {member.filename for member in members}:
        raise ExtractionError(DenialReason.CORRUPT, f"the container has no {required}")


def _docx_layout(raw: bytes, limits: ExtractionLimits) -> _Layout:
    check_zip(raw, limits, required="word/document.xml")
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(raw))
        style_names = {style.style_id: style.name or "" for style in document.styles}
        lines: list[str] = []
        # The paragraph (1-based; a table row counts as one) each line is, or the rule under a
        # table's header row belongs to.
        paragraphs: list[int] = []
        count = 0
        headings: list[tuple[int, int, str]] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                rows = list(item.rows)
                for number, row in enumerate(rows):
                    # A merged cell appears once per grid column it spans; it is read once.
                    cells: list[str] = []
                    spans: set[int] = set()
                    for cell in row.cells:
                        if id(cell._tc) not in spans:
                            spans.add(id(cell._tc))
                            cells.append(_SPACES.sub(" ", cell.text).strip())
                    count += 1
                    lines.append(_clean(table_row(cells)) if any(cells) else "")
                    paragraphs.append(count)
                    if number == 0 and len(rows) > 1 and any(cells) and _docx_header_row(item):
                        lines.append(table_rule(len(cells)))
                        paragraphs.append(count)
                continue
            text = _clean(item.text)
            # The style id straight from the paragraph's XML: python-docx's ``paragraph.style``
            # searches every style for the default one, which costs more than the text itself.
            style_id = item._p.style
            style = style_names.get(style_id, "") if style_id else ""
            match = _DOCX_HEADING.match(style.strip())
            if match is not None and text.strip():
                # The Title style heads the Heading 1 sections under it (level 0 for now).
                headings.append((len(lines), int(match.group(1) or 0), text.strip()))
            elif text.strip():
                text = _escape(text)
            count += 1
            paragraphs.append(count)
            lines.append(text)
        # A heading is written as a Markdown heading, as in HTML: it titles what follows and never
        # runs into its first sentence. Where the Title style is used, it is level 1 and each
        # Heading N level N + 1.
        shift = 1 if any(level == 0 for _, level, _ in headings) else 0
        headings = [(index, min(level + shift, 6) or 1, text) for index, level, text in headings]
        for index, level, text in headings:
            lines[index] = "#" * level + " " + text
        title = (document.core_properties.title or "").strip()
    except ExtractionError:
        raise
    except Exception as error:  # python-docx and lxml raise many kinds on a damaged package
        raise ExtractionError(
            DenialReason.CORRUPT, f"the DOCX cannot be parsed ({type(error).__name__}: {error})"
        ) from error
    _trim_trailing_blank(lines)
    heading_lines = {index for index, _, _ in headings}
    if not any(line.strip() for index, line in enumerate(lines) if index not in heading_lines):
        raise NoTextError("the DOCX has no text in its body")
    return _Layout(
        lines,
        _heading_sections(headings, len(lines)),
        title=title or (headings[0][2] if headings else None),
        paragraphs=paragraphs[: len(lines)],
    )


def _docx_header_row(table: object) -> bool:
    """Whether a DOCX table's first row heads its columns: marked to repeat as a header row, or the
    table's look sets the first row apart (Word's default for a styled table)."""
    from docx.oxml.ns import qn

    element = table._tbl  # type: ignore[attr-defined]
    first = element.find(qn("w:tr"))
    if first is not None and first.find(f"{qn('w:trPr')}/{qn('w:tblHeader')}") is not None:
        return True
    look = element.find(f"{qn('w:tblPr')}/{qn('w:tblLook')}")
    if look is None:
        return False
    flag = look.get(qn("w:firstRow"))
    if flag is not None:
        return flag.lower() in ("1", "true", "on")
    value = look.get(qn("w:val"))
    try:
        return value is not None and bool(int(value, 16) & 0x0020)
    except ValueError:
        return False


# ---- chunks and locators -----------------------------------------------------------------------


def _pack(lines: Sequence[str], section: _Section, max_chars: int) -> list[tuple[int, int]]:
    """Runs of whole lines [first, last) of one section, each at most ``max_chars`` where a line
    allows; a heading line joins the text after it; blank lines never start or end a run."""
    runs: list[tuple[int, int]] = []
    first: int | None = None
    last = 0
    size = 0
    for index in range(section.start, section.end):
        line = lines[index]
        if not line.strip():
            continue
        length = len(line) + 1
        only_heading = section.heading_line and first == section.start and last == section.start + 1
        if first is not None and size + length > max_chars and not only_heading:
            runs.append((first, last))
            first = None
        if first is None:
            first, size = index, 0
        size += length
        last = index + 1
    if first is not None:
        runs.append((first, last))
    if section.heading_line and runs and runs[0] == (section.start, section.start + 1):
        runs.pop(0)  # a heading with no text under it says nothing
    return runs


def _locator(
    content_type: str,
    section: _Section,
    offsets: Sequence[int],
    first: int,
    last: int,
    lines: Sequence[str],
    paragraphs: Sequence[int] | None = None,
) -> tuple[str, str]:
    begin = offsets[first] - offsets[section.origin]
    end = offsets[last - 1] + len(lines[last - 1]) - offsets[section.origin]
    if content_type == PDF:
        return "page", f"page {section.page}, characters {begin}-{end}"
    if content_type == HTML:
        if section.heading_path:
            return "heading", f"{' > '.join(section.heading_path)}, characters {begin}-{end}"
        return "other", f"document start, characters {begin}-{end}"
    if paragraphs is not None:
        return "other", f"paragraphs {paragraphs[first]}-{paragraphs[last - 1]}"
    return "other", f"paragraphs {first + 1}-{last}"


_LAYOUTS: dict[str, Callable[[bytes, ExtractionLimits], _Layout]] = {
    PDF: _pdf_layout,
    HTML: _html_layout,
    DOCX: _docx_layout,
}


def _layout(content_type: str, raw: bytes, limits: ExtractionLimits) -> _Layout:
    reader = _LAYOUTS.get(content_type)
    if reader is None:
        raise ExtractionError(DenialReason.UNKNOWN_CONTENT_TYPE, f"no extractor for {content_type}")
    if len(raw) > limits.max_file_bytes:
        raise ExtractionError(
            DenialReason.OVER_LIMIT, f"{len(raw)} bytes, over the limit of {limits.max_file_bytes}"
        )
    return reader(raw, limits)


def extract_document(
    content_type: str,
    raw: bytes,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    limits: ExtractionLimits = DEFAULT_LIMITS,
) -> ExtractedDocument:
    """The extracted text of a PDF, HTML or DOCX file and its located chunks."""
    layout = _layout(content_type, raw, limits)
    lines = layout.lines
    offsets = [0] * (len(lines) + 1)
    for index, line in enumerate(lines):
        offsets[index + 1] = offsets[index] + len(line) + 1
    chunks: list[TextChunk] = []
    for section in layout.sections:
        for first, last in _pack(lines, section, max_chars):
            locator_type, locator_value = _locator(
                content_type, section, offsets, first, last, lines, layout.paragraphs
            )
            chunks.append(
                TextChunk(
                    ordinal=len(chunks),
                    locator_type=locator_type,
                    locator_value=locator_value,
                    heading_path=section.heading_path,
                    start_line=first + 1,
                    end_line=last,
                    text="\n".join(lines[first:last]),
                )
            )
    return ExtractedDocument(
        content_type=content_type,
        text="\n".join(lines),
        chunks=tuple(chunks),
        title=layout.title,
        pages=layout.pages,
    )


def extracted_text(content_type: str, raw: bytes, *, limits: ExtractionLimits = DEFAULT_LIMITS) -> str:
    """The text whose lines a PDF, HTML or DOCX file's locators count."""
    return "\n".join(_layout(content_type, raw, limits).lines)


def source_text(name: str, raw: bytes) -> str:
    """The text a direct read cuts a locator from: extracted for PDF, HTML and DOCX (by the
    file name's extension), the UTF-8 text itself for everything else."""
    content_type = content_type_of(name)
    if content_type in EXTRACTED_TYPES:
        return extracted_text(content_type, raw)
    return raw.decode("utf-8")


__all__ = [
    "DEFAULT_LIMITS",
    "EXTRACTED_TYPES",
    "LAYOUT_VERSIONS",
    "ExtractedDocument",
    "ExtractionError",
    "ExtractionLimits",
    "NoTextError",
    "check_zip",
    "extract_document",
    "extracted_text",
    "source_text",
    "table_row",
    "table_rule",
]
