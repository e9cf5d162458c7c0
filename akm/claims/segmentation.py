"""Sentence and list-item segmentation with character offsets, and evidence citation markers.

Offsets always index the original text, so a span found here slices back to what the
answer or passage actually said.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Tokens that end with a period without ending a sentence. Lowercased, without the final period.
ABBREVIATIONS: frozenset[str] = frozenset(
    {
        "e.g", "i.e", "etc", "vs", "cf", "al", "approx", "ca", "fig", "figs", "eq", "eqs", "ref", "refs",
        "no", "nos", "vol", "pp", "p", "dr", "mr", "mrs", "ms", "prof", "sr", "jr", "st", "inc", "ltd",
        "co", "corp", "dept", "est", "resp", "sec", "u.s", "u.k", "e.u", "jan", "feb", "mar", "apr",
        "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "min", "max", "avg", "incl", "excl",
        "cllr", "rev", "revd", "capt", "sgt", "lt", "col", "hon", "supt", "insp", "fr",
    }
)  # fmt: skip

CITATION = re.compile(r"\[\s*E\d+(?:\s*[,;–-]\s*E?\d+)*\s*\]")
_CITATION_LABEL = re.compile(r"E?(\d+)")
_HEADING = re.compile(r"[ \t]*(?:#{1,6}\s|(?:[-*_][ \t]*){3,}$)")
_EMPHASIS = re.compile(r"\*\*|__|`+|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)")
# A Markdown table row ("| a | b |") is a unit of its own; its rule ("|---|---|") states nothing.
_TABLE_ROW = re.compile(r"[ \t]*\|.*\|[ \t]*$")
_TABLE_RULE = re.compile(r"[ \t]*\|[ \t:|-]*\|[ \t]*$")
# A Markdown link reference definition ("[2.4.1]: https://example.org/compare/v2.4.0...v2.4.1") is
# markup a reader never sees: it states nothing.
_LINK_DEFINITION = re.compile(r" {0,3}\[[^\]\n]+\]:[ \t]*<?\S+>?(?:[ \t]+[\"'(].*)?[ \t]*$")
# Up to four words, capitalised, with no closing punctuation: a plain text's section title.
_PLAIN_HEADING = re.compile(r"[A-Z][\w'’&/-]*(?:[ \t]+[\w'’&/-]+){0,3}")
# A line of fields ("From: Idris Fennimore", "**Venue:** St Brannock's Church Hall", "Tents, caravans
# and motorhomes: arrive from 1:00pm"): a label of up to four words (commas between them), a colon,
# a value. In a run of two or more such lines each line is an entry of its
# own, as an email's header or a record's fields are, not one sentence wrapped over lines.
_FIELD_LINE = re.compile(
    r"[ \t]*(?:\*\*|__)?[A-Z][\w'’&/().-]*(?:,?[ \t]+[\w'’&/().-]+){0,3}:(?:\*\*|__)?[ \t]+\S"
)
# A list item's bullet or number; an FAQ's "Q." and "A." mark its question and its answer so.
_BULLET = re.compile(r"[ \t]*(?:[-*•·▪‣]|\d{1,3}[.)]|[a-z][.)]|[QA][.:])[ \t]+")
_FAQ_QUESTION = re.compile(r"[ \t]*Q[.:][ \t]+")
# A plain text's table set out in columns: a line whose cells are parted by a gap of two or more
# spaces or a tab ("Kingsmoor and Pelling        Wednesday"; not after a full stop, where a
# typist's double space parts two sentences) or by a leader of dots ("Up to 3 items ...... £32.00").
_CELL_GAP = re.compile(r"[^\s.!?:;,](?: {2,}|\t+)(?=\S)|\S ?\.{4,} ?(?=\S)")
# The rule under such a table's header: runs of dashes parted by spaces ("-------  ------").
_COLUMN_RULE = re.compile(r"[ \t]*-{2,}(?:[ \t]+-{2,})+[ \t]*")
# A terminator candidate: ., ! or ? (runs allowed), optional closing quotes/brackets.
_TERMINATOR = re.compile(r"[.!?]+[\"'”’)\]*_]*")
_NEXT_START = re.compile(r"\s+(?=[\"'“‘(\[]?[A-Z0-9ΑΒΓΔα-ω])")


@dataclass(frozen=True, slots=True)
class TextSpan:
    """Half-open character range [start, end) of a text."""

    start: int
    end: int

    def slice(self, text: str) -> str:
        return text[self.start : self.end]


def _is_abbreviation(text: str, dot: int) -> bool:
    """True when the period at ``dot`` closes an abbreviation or an initial rather than a sentence."""
    word_start = dot
    while word_start > 0 and not text[word_start - 1].isspace() and text[word_start - 1] not in "([\"'":
        word_start -= 1
    word = text[word_start:dot].lower()
    if word in ABBREVIATIONS:
        return True
    # Single capital initials ("J. Smith") and dotted acronyms ("U.S.A"); a lowercase letter after a
    # number is a unit that ends its sentence ("The highest point is 1,465 m. Friday is shorter").
    if len(word) == 1 and word.isalpha():
        return not (text[word_start].islower() and re.search(r"\d[ \t]*$", text[:word_start]))
    return bool(re.fullmatch(r"(?:[a-z]\.)+[a-z]", word))


def is_plain_title(line: str, following: str) -> bool:
    """Whether ``line``, opening a paragraph of a plain text, is a section title: up to four
    capitalised words without closing punctuation, before a line that does not go on with its
    sentence (``following`` is the next line, blank when there is none)."""
    stripped = line.strip()
    return (
        _BULLET.match(stripped) is None
        and _PLAIN_HEADING.fullmatch(stripped) is not None
        and not following.strip()[:1].islower()
    )


# A line ends where it was broken, not wrapped, when the next line's first word would have fitted on
# it with this much of the wrap width to spare (a proportional font's lines vary in characters).
_WRAP_SPARE = 0.85


def _wrap_width(lines: Sequence[str]) -> int:
    """The width in characters that the text's lines were wrapped at: its second-longest line
    (the longest may be a link or a table row that overran it); 0 for fewer than two lines."""
    lengths = sorted(
        (len(line.strip()) for line in lines if line.strip() and not _TABLE_ROW.match(line)),
        reverse=True,
    )
    return lengths[1] if len(lengths) > 1 else 0


def _broken_after(line: str, following: str, width: int) -> bool:
    """Whether the line break after ``line`` ends a unit rather than wrapping a sentence: the next
    line opens with a capital, a digit or a currency sign and its first word would have fitted on this line (a
    PDF's opening hours, one day a line, above a wrapped paragraph; a table row's cells)."""
    if not width or not line or not re.match(r"[A-Z0-9£$€]", following):
        return False
    return len(line) + 1 + len(following.split()[0]) <= _WRAP_SPARE * width


def is_cell_line(line: str) -> bool:
    """Whether a line of a plain text is a row of a table set out in columns: cells parted by a gap
    of spaces or a leader of dots (see ``_CELL_GAP``), each cell with a word or a figure."""
    stripped = line.strip()
    if not _CELL_GAP.search(stripped) or _TABLE_ROW.fullmatch(stripped):
        return False
    cells = line_cells(stripped)
    return len(cells) >= 2 and all(re.search(r"\w", cell) for cell in cells)


def line_cells(line: str) -> list[str]:
    """The cells of a plain text's table row set out in columns (see ``is_cell_line``)."""
    return [
        cell.strip()
        for cell in re.split(r"(?<=[^\s.!?:;,])(?: {2,}|\t+)| ?\.{4,} ?", line.strip())
        if cell.strip()
    ]


def is_column_rule(line: str) -> bool:
    """Whether a line is the rule under the header of a plain text's table ("-------  ------")."""
    return bool(_COLUMN_RULE.fullmatch(line))


def _line_blocks(text: str) -> list[TextSpan]:
    """Split at blank lines, at lines that start a list item, around each table row (a Markdown
    one or a plain text's row of cells) and after a line broken short of the wrap width; join
    wrapped lines otherwise."""
    blocks: list[TextSpan] = []
    start: int | None = None
    end = 0
    position = 0
    lines = text.splitlines(keepends=True)
    width = _wrap_width(lines)
    broken = False
    for index, line in enumerate(lines):
        line_start, position = position, position + len(line)
        stripped = line.strip()
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        bullet = _BULLET.match(line)
        field = _FIELD_LINE.match(line) is not None and (
            (index > 0 and _FIELD_LINE.match(lines[index - 1]) is not None)
            or (index + 1 < len(lines) and _FIELD_LINE.match(lines[index + 1]) is not None)
        )
        # Headings and rules title or separate the answer; they state nothing.
        if not stripped or _HEADING.match(line) or _TABLE_RULE.match(line) or _LINK_DEFINITION.match(line):
            if start is not None:
                blocks.append(TextSpan(start, end))
                start = None
            continue
        if _TABLE_ROW.match(line) or is_cell_line(line):
            if start is not None:
                blocks.append(TextSpan(start, end))
                start = None
            blocks.append(
                TextSpan(line_start + len(line) - len(line.lstrip()), line_start + len(line.rstrip()))
            )
            continue
        content_start = line_start + (bullet.end() if bullet else len(line) - len(line.lstrip()))
        content_end = line_start + len(line.rstrip())
        if start is None and not bullet and is_plain_title(stripped, following):
            # A short line of a plain text that opens a paragraph, without a full stop, before a
            # line that does not go on with its sentence ("Root cause", "Timeline"), titles what
            # follows as a Markdown heading would.
            blocks.append(TextSpan(content_start, content_end))
            continue
        if bullet or field or broken or start is None:
            if start is not None:
                blocks.append(TextSpan(start, end))
            start = content_start
        end = content_end
        broken = _broken_after(stripped, following, width)
    if start is not None:
        blocks.append(TextSpan(start, end))
    return blocks


def _sentences_in_block(text: str, block: TextSpan) -> list[TextSpan]:
    spans: list[TextSpan] = []
    start = block.start
    for match in _TERMINATOR.finditer(text, block.start, block.end):
        stop = match.end()
        if (
            match.group().startswith(".")
            and len(match.group()) == 1
            and _is_abbreviation(text, match.start())
        ):
            continue
        # Citation markers right after the terminator belong to the sentence they close.
        while True:
            gap = re.compile(r"[ \t]*").match(text, stop, block.end)
            after = gap.end() if gap else stop
            citation = CITATION.match(text, after, block.end)
            if not citation:
                break
            stop = citation.end()
        if stop >= block.end:
            break
        boundary = _NEXT_START.match(text, stop, block.end)
        if boundary is None:
            continue
        spans.append(TextSpan(start, stop))
        start = boundary.end()
    if start < block.end:
        spans.append(TextSpan(start, block.end))
    return [span for span in spans if text[span.start : span.end].strip()]


def sentence_spans(text: str) -> list[TextSpan]:
    """Sentences, list items and Markdown table rows of ``text`` as spans without surrounding
    whitespace or bullets (a table row is one unit, whatever its cells hold).

    A period ends a sentence only when whitespace and a capital letter, digit or opening
    quote/bracket follow, and it does not close a known abbreviation or an initial; so
    decimals (3.5), versions (v1.2.3) and "e.g." stay inside their sentence.
    """
    spans: list[TextSpan] = []
    for block in _line_blocks(text):
        if _TABLE_ROW.fullmatch(block.slice(text)) or is_cell_line(block.slice(text)):
            spans.append(block)
        else:
            spans.extend(_sentences_in_block(text, block))
    return spans


def table_header(text: str, row: TextSpan) -> TextSpan | None:
    """The header row of the Markdown table whose body holds ``row`` (a span inside a table row),
    or of a plain text's table set out in columns (the line above its column rule).

    None when the row is no body row: outside a table, the header itself, or in a table without a
    rule under its first row (then no row is marked as the header).
    """
    lines: list[TextSpan] = []
    position = 0
    for line in text.splitlines(keepends=True):
        lines.append(TextSpan(position, position + len(line.rstrip())))
        position += len(line)
    at = next((index for index, line in enumerate(lines) if line.start <= row.start <= line.end), None)
    if at is not None and is_cell_line(lines[at].slice(text)):
        return _cell_table_header(text, lines, at)
    if (
        at is None
        or not _TABLE_ROW.fullmatch(lines[at].slice(text))
        or _TABLE_RULE.fullmatch(lines[at].slice(text))
    ):
        return None
    top = at
    while top > 0 and _TABLE_ROW.fullmatch(lines[top - 1].slice(text)):
        top -= 1
    if at <= top + 1 or not _TABLE_RULE.fullmatch(lines[top + 1].slice(text)):
        return None
    header = lines[top]
    indent = len(header.slice(text)) - len(header.slice(text).lstrip())
    return TextSpan(header.start + indent, header.end)


def _cell_table_header(text: str, lines: list[TextSpan], at: int) -> TextSpan | None:
    """The header of the plain text's table (cells set out in columns) whose row is line ``at``:
    the line above the column rule over the rows (None for the header itself or with no rule)."""
    top = at
    while top > 0 and is_cell_line(lines[top - 1].slice(text)):
        top -= 1
    if top < 2 or not is_column_rule(lines[top - 1].slice(text)):
        return None
    header = lines[top - 2]
    if not is_cell_line(header.slice(text)):
        return None
    indent = len(header.slice(text)) - len(header.slice(text).lstrip())
    return TextSpan(header.start + indent, header.end)


def heads_cell_table(text: str, span: TextSpan) -> bool:
    """Whether ``span`` is the header row of a plain text's table: a column rule follows it."""
    line_end = text.find("\n", span.end)
    following = "" if line_end < 0 else text[line_end + 1 :].split("\n", 1)[0]
    return is_cell_line(span.slice(text)) and is_column_rule(following)


def is_table_row(text: str, span: TextSpan) -> bool:
    """Whether ``span`` of ``text`` is a Markdown table row (a unit of ``sentence_spans``)."""
    return bool(_TABLE_ROW.fullmatch(span.slice(text)))


def is_list_item(text: str, span: TextSpan) -> bool:
    """Whether ``span`` of ``text`` starts a list item: only a bullet or an item number stands
    before it on its line."""
    line_start = text.rfind("\n", 0, span.start) + 1
    bullet = _BULLET.match(text, line_start)
    return bullet is not None and bullet.end() == span.start


# A line that leads in to the list below it: a few words ending with a colon, bold or not.
_LEAD_IN = re.compile(r"[ \t]*(?:\*\*|__)?[^\n]{1,80}?:(?:\*\*|__)?[ \t]*")


def _line_at(text: str, position: int) -> TextSpan:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return TextSpan(start, len(text) if end < 0 else end)


def is_lead_in(text: str, span: TextSpan) -> bool:
    """Whether ``span`` of ``text`` is a line that leads in to the list below it ("**Every 3 months
    (owner):**" over "- Clean the magnetic filter"), or a plain text's term over its indented
    description (see ``definition_term``): it names what the lines below it are about, as a
    heading does, and states nothing itself."""
    line = _line_at(text, span.start)
    if text[line.start : span.start].strip() or text[span.end : line.end].strip():
        return False
    if line.end < len(text) and _is_term(line.slice(text), _line_at(text, line.end + 1).slice(text)):
        return True
    if not _LEAD_IN.fullmatch(line.slice(text)) or _BULLET.match(line.slice(text)):
        return False
    following = [later for later in text[line.end + 1 :].split("\n", 2)[:2] if later.strip()]
    return bool(following) and _BULLET.match(following[0]) is not None


def lead_in(text: str, span: TextSpan) -> TextSpan | None:
    """The line that leads in to the list whose item ``span`` is (see ``is_lead_in``), if any; for
    a sentence of a plain text's description, the term it describes (see ``definition_term``); for
    an entry set out one a line without bullets ("Friday 28 November 2025" under "INSET days -
    school closed to pupils:"), the line ending in a colon right above the run of entries."""
    if not is_list_item(text, span):
        term = definition_term(text, span)
        if term is not None:
            return term
        return _line_entries_lead_in(text, span) if is_line_entry(text, span) else None
    line = _line_at(text, span.start)
    while line.start > 0:
        line = _line_at(text, line.start - 1)
        content = line.slice(text)
        if not content.strip() or _BULLET.match(content) or content[:1] in " \t":
            continue  # a blank line, an item before, or an item's wrapped line
        stripped = content.strip()
        at = line.start + content.index(stripped)
        candidate = TextSpan(at, at + len(stripped))
        return candidate if is_lead_in(text, candidate) else None
    return None


# How many lines a plain text's description of a term may run to (see ``definition_term``).
_MOST_DESCRIPTION_LINES = 12


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def _is_term(line: str, following: str) -> bool:
    """Whether ``line`` of a plain text is a term that the line below it (``following``), indented
    deeper, starts to describe: a short line without closing punctuation, neither a list item, a
    table row nor a section title ("Thu 26 December (Boxing Day)" over "    Sunday timetable on
    route 12 only.")."""
    stripped = line.strip()
    return (
        bool(stripped)
        and len(stripped) <= 80
        and bool(following.strip())
        and _indent(following) > _indent(line)
        and stripped[-1] not in ".!?,;"
        and _BULLET.match(line) is None
        and _BULLET.match(following) is None
        and not _HEADING.match(line)
        and not _TABLE_ROW.match(line)
        and not is_cell_line(line)
        and not _PLAIN_HEADING.fullmatch(stripped)
        and re.match(r"[\"'“‘(]?[A-Z0-9£$€]", following.strip()) is not None
    )


def definition_term(text: str, span: TextSpan) -> TextSpan | None:
    """The term that the sentence ``span`` of a plain text's definition list describes: the line
    above its description, indented less deeply than it ("Thu 26 December (Boxing Day)" over
    "    Sunday timetable on route 12 only. No service on routes 27, 41 or X5."); None when the
    sentence is no such description's."""
    line = _line_at(text, span.start)
    depth = _indent(line.slice(text))
    if not depth:
        return None
    for _ in range(_MOST_DESCRIPTION_LINES):
        if line.start == 0:
            return None
        above = _line_at(text, line.start - 1)
        content = above.slice(text)
        if not content.strip():
            return None
        if _indent(content) < depth:
            if not _is_term(content, line.slice(text)):
                return None
            stripped = content.strip()
            at = above.start + content.index(stripped)
            return TextSpan(at, at + len(stripped))
        line = above
    return None


# How many entries set out one a line may stand between an entry and the line that leads in to them.
_MOST_LINE_ENTRIES = 12


def _line_entries_lead_in(text: str, span: TextSpan) -> TextSpan | None:
    line = _line_at(text, span.start)
    for _ in range(_MOST_LINE_ENTRIES):
        if line.start == 0:
            return None
        line = _line_at(text, line.start - 1)
        content = line.slice(text)
        if not content.strip() or content.lstrip().startswith("|"):
            return None  # a blank line or a table parts the entries from what is above them
        stripped = content.strip()
        if _LEAD_IN.fullmatch(content) and stripped.rstrip("*_").endswith(":"):
            at = line.start + content.index(stripped)
            return TextSpan(at, at + len(stripped))
    return None


def lead_in_before(text: str, claim: str) -> str:
    """The line that leads in to the list whose item ``claim`` quotes ("" when there is none)."""
    wanted = claim_text(claim)
    for span in sentence_spans(text):
        sentence = claim_text(span.slice(text))
        if wanted and (sentence == wanted or wanted in sentence):
            lead = lead_in(text, span)
            return "" if lead is None else lead.slice(text)
    return ""


def is_field_entry(text: str, span: TextSpan) -> bool:
    """Whether ``span`` of ``text`` opens a line of fields in a run of two or more ("From: ...",
    "**Venue:** ..."), which ``sentence_spans`` makes an entry of its own."""
    line_start = text.rfind("\n", 0, span.start) + 1
    if text[line_start : span.start].strip():
        return False
    lines = text.splitlines()
    at = text.count("\n", 0, line_start)
    if _FIELD_LINE.match(lines[at]) is None:
        return False
    return (at > 0 and _FIELD_LINE.match(lines[at - 1]) is not None) or (
        at + 1 < len(lines) and _FIELD_LINE.match(lines[at + 1]) is not None
    )


def is_line_entry(text: str, span: TextSpan) -> bool:
    """Whether ``span`` of ``text`` is a whole line that its line breaks made a unit of its own, as
    ``sentence_spans`` does with a line broken short of the wrap width ("Friday 8.30am - 4.00pm" in
    a PDF's opening hours): an entry of a list set out one a line, without bullets."""
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    line_end = len(text) if line_end < 0 else line_end
    if (
        "\n" in text[span.start : span.end]
        or text[line_start : span.start].strip()
        or text[span.end : line_end].strip()
    ):
        return False
    if is_cell_line(text[line_start:line_end]):
        return True
    lines = text.splitlines()
    width = _wrap_width(lines)
    at = text.count("\n", 0, line_start)
    return (at > 0 and _broken_after(lines[at - 1].strip(), lines[at].strip(), width)) or (
        at + 1 < len(lines) and _broken_after(lines[at].strip(), lines[at + 1].strip(), width)
    )


_ASKS = re.compile(r"\?[\"'”’)\]*_]*$")


def is_question(sentence: str) -> bool:
    """Whether a sentence asks rather than states: it ends with a question mark (closing quotes,
    brackets or emphasis after it allowed), as the questions of an FAQ do."""
    return bool(_ASKS.search(sentence.rstrip()))


def is_faq_question(text: str, span: TextSpan) -> bool:
    """Whether ``span`` of ``text`` is part of an FAQ's question marked "Q." ("Q. My bin was missed.
    What should I do?"): all of it asks, the statement before its question mark included."""
    line_start = text.rfind("\n", 0, span.start) + 1
    return _FAQ_QUESTION.match(text, line_start) is not None


_RUN_IN = re.compile(r"(?:\*\*|__)[^*_\n]{1,80}?(?:\*\*|__)[.:]?")


def is_run_in_heading(text: str, span: TextSpan) -> bool:
    """Whether ``span`` of ``text`` is a run-in heading: a short phrase in bold that opens a line and
    has the line's text after it ("**Grey liquid on top.** This is hooch ..."), naming what that text
    is about as a heading would."""
    sentence = span.slice(text)
    if not _RUN_IN.fullmatch(sentence) or len(re.findall(r"\w+", sentence)) > 8:
        return False
    line_start = text.rfind("\n", 0, span.start) + 1
    before = text[line_start : span.start]
    if before.strip() and _BULLET.fullmatch(before) is None:
        return False
    line_end = text.find("\n", span.end)
    return bool(text[span.end : len(text) if line_end < 0 else line_end].strip())


def asked_before(text: str, claim: str) -> str:
    """The question of ``text`` that the sentence ``claim`` quotes answers: the last question before
    it, as an FAQ's answer answers the question above it, the run-in heading of its paragraph
    ("**The float test.** ..."), or the line that leads in to the list it is an item of; "" when it
    quotes no sentence of ``text`` or none stands before it."""
    wanted = claim_text(claim)
    asked = ""
    faq = False
    for span in sentence_spans(text):
        sentence = span.slice(text)
        lead = lead_in(text, span)
        if lead is not None and (claim_text(sentence) == wanted or wanted in claim_text(sentence)):
            return lead.slice(text)
        if is_faq_question(text, span):
            asked = f"{asked} {sentence}" if faq else sentence
            faq = True
            continue
        faq = False
        if is_question(sentence) or is_run_in_heading(text, span):
            asked = sentence
        elif claim_text(sentence) == wanted or wanted in claim_text(sentence):
            return asked
    return ""


_REFERRING_START = re.compile(
    r"\W*(?:it|its|they|their|them|he|his|she|her|this|these|those)\b", re.IGNORECASE
)


def referred_before(text: str, claim: str) -> str:
    """What a claim that opens with a pronoun refers back to: the words of ``text`` before the clause
    it quotes ("Lost property goes to him; " for "it is kept for 30 days, then donated."), or the
    sentence before when it quotes a whole sentence ("" when it opens otherwise or quotes nothing)."""
    wanted = claim_text(claim).lower()
    if not wanted or not _REFERRING_START.match(wanted):
        return ""
    previous = ""
    for span in sentence_spans(text):
        sentence = claim_text(span.slice(text))
        at = sentence.lower().find(wanted)
        if at > 0:
            return sentence[:at]
        if at == 0:
            return previous
        previous = sentence
    return ""


def said_before(text: str, claim: str) -> str:
    """The sentences of the paragraph or list item of ``text`` before the sentence ``claim`` quotes:
    what it goes on from ("On Fridays the 18:05 from Ardmore departs at 18:35 instead." before "The
    return sailing from Inchkerran leaves at 19:20."); "" when it quotes no sentence of ``text``."""
    wanted = claim_text(claim)
    if not wanted:
        return ""
    for block in _line_blocks(text):
        before: list[str] = []
        for span in _sentences_in_block(text, block):
            sentence = claim_text(span.slice(text))
            if sentence == wanted or wanted in sentence:
                return " ".join(before)
            before.append(sentence)
    return ""


def row_header(text: str, claim: str) -> str:
    """The header row of the table row of ``text`` that ``claim`` quotes ("" when it quotes none)."""
    wanted = claim_text(claim)
    # A plain text's row set out in columns is quoted as a Markdown row of its cells.
    cells = (
        [claim_text(cell) for cell in claim.strip().strip("|").split("|")]
        if claim.lstrip().startswith("|")
        else None
    )
    for span in sentence_spans(text):
        row = span.slice(text)
        if (row.startswith("|") and claim_text(row) == wanted) or (
            is_cell_line(row)
            and (claim_text(row) == wanted or [claim_text(cell) for cell in line_cells(row)] == cells)
        ):
            header = table_header(text, span)
            return header.slice(text) if header is not None else ""
    return ""


def strip_citations(text: str) -> str:
    """The text without citation markers, with whitespace collapsed and no space before punctuation."""
    without = CITATION.sub(" ", text)
    collapsed = re.sub(r"\s+", " ", without).strip()
    return re.sub(r"\s+([.,;:!?])", r"\1", collapsed)


def cited_evidence(text: str) -> tuple[int, ...]:
    """Evidence indices cited by markers such as [E1], [E1, E3] or [E2-E4], in order, without repeats."""
    indices: list[int] = []
    for marker in CITATION.finditer(text):
        body = marker.group()[1:-1]
        numbers = [int(number) for number in _CITATION_LABEL.findall(body)]
        ranged = re.search(r"[–-]", body)
        if ranged and len(numbers) == 2 and numbers[0] <= numbers[1] <= numbers[0] + 50:
            numbers = list(range(numbers[0], numbers[1] + 1))
        for number in numbers:
            if number not in indices:
                indices.append(number)
    return tuple(indices)


def claim_text(raw: str) -> str:
    """Claim text from an answer fragment: no citation markers, no Markdown emphasis, collapsed spaces."""
    return strip_citations(_EMPHASIS.sub("", raw))
