"""Cut Markdown and plain text into located chunks, and find the links between documents.

Line numbers are 1-based over ``str.splitlines()`` of the decoded file, the same numbering
the direct reader uses, and a chunk's text is exactly its lines joined by ``\\n`` so the
excerpt checksum can be recomputed from the source and the locator alone.

A chunk that covers a whole heading section gets a ``heading`` locator; a part of a long
section, or text outside any heading, gets a ``line-range`` locator. Both carry the heading
path and the line range. A chunk is never just a heading: a heading line joins the text that
follows it even past ``max_chars``, and a section with no text of its own makes no chunk.

A plain text has no markup, but its own title (a short first line before a blank line) and
its section titles (a short capitalised line opening a paragraph: "Timeline", "Root cause")
cut it and name its chunks' heading paths the same way; its chunks keep ``line-range``
locators.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from akm.claims import is_cell_line, is_column_rule, is_plain_title

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_MARKDOWN_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_WIKILINK = re.compile(r"\[\[([^\]|#]+)(?:#([^\]|]*))?(?:\|[^\]]*)?\]\]")
_EXTERNAL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
DEFAULT_MAX_CHARS = 1200


@dataclass(frozen=True)
class TextChunk:
    ordinal: int
    locator_type: str
    locator_value: str
    heading_path: tuple[str, ...]
    start_line: int
    end_line: int
    text: str


@dataclass(frozen=True)
class DocumentLink:
    """A link found in a document; ``target`` is root-relative (markdown) or ``[[name]]`` (wikilink)."""

    link_type: str
    target: str
    anchor: str | None
    line: int


@dataclass(frozen=True)
class _Section:
    heading_path: tuple[str, ...]
    heading_line: str | None
    start: int  # 0-based index of the first line
    end: int  # 0-based index one past the last line


# A plain text's own title: its first line, before a blank line, of at most this many words.
MAX_PLAIN_TITLE_WORDS = 12
_CLOSING_PUNCTUATION = re.compile(r"[.!?,;:]$")
# A title's block may run to this many lines with the rule of "=" under it.
_MOST_TITLE_LINES = 4
# A rule of a plain text: a run of one character that frames a title between two such lines or
# underlines it ("=====", "-----"); "=" marks a title of the first level, any other a section's.
_RULE_LINE = re.compile(r"[ \t]*([-=_*~#])\1{2,}[ \t]*")


def _ruled_title_level(lines: list[str], index: int) -> int | None:
    """The level of line ``index`` if a rule underlines it and a rule or a blank line (or nothing)
    stands above it: "BANK HOLIDAYS" between two lines of dashes; None otherwise."""
    line = lines[index].strip()
    if (
        not line
        or _RULE_LINE.fullmatch(line)
        or len(line.split()) > MAX_PLAIN_TITLE_WORDS
        or line.endswith((".", ",", ";"))
    ):
        return None
    below = _RULE_LINE.fullmatch(lines[index + 1]) if index + 1 < len(lines) else None
    if below is None or (
        index > 0 and lines[index - 1].strip() and not _RULE_LINE.fullmatch(lines[index - 1])
    ):
        return None
    return 1 if below.group(1) == "=" else 2


def _plain_title_lines(lines: list[str]) -> dict[int, int]:
    """The lines of a plain text that title what follows, each with its level: the text's own
    title (its first line, short, unpunctuated, before a blank line) at 1, and its section titles
    (up to four capitalised words opening a paragraph before the text they title; see
    `akm.claims.is_plain_title`) one level below it."""
    titles: dict[int, int] = {}
    first = next((index for index, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return titles
    head = lines[first].strip()
    # The title may stand over a line or two more (a subtitle, a date) above a rule of "=".
    block = next((index for index in range(first, len(lines)) if not lines[index].strip()), len(lines))
    framed = block - first <= _MOST_TITLE_LINES and bool(re.fullmatch(r"[ \t]*={3,}[ \t]*", lines[block - 1]))
    if (
        (first + 1 == len(lines) or not lines[first + 1].strip() or framed)
        and len(head.split()) <= MAX_PLAIN_TITLE_WORDS
        and not _CLOSING_PUNCTUATION.search(head)
        and head[:1].isupper()
        and not next((line.strip() for line in lines[first + 1 :] if line.strip()), "a")[:1].islower()
    ):
        titles[first] = 1
    ruled = {index: level for index in range(len(lines)) if (level := _ruled_title_level(lines, index))}
    titles.update(ruled)
    plain: list[int] = []
    for index, line in enumerate(lines):
        if index in titles or not line.strip() or (index and lines[index - 1].strip()):
            continue
        # The text it titles: the next non-blank line, at most one blank line away. A line over a
        # column rule heads a table's columns ("Area        Collection day"), not a section.
        body = next((later for later in lines[index + 1 : index + 3] if later.strip()), "")
        if (
            body
            and not is_column_rule(body)
            and not is_cell_line(line)
            and is_plain_title(line, body)
            and not is_plain_title(body, "")
        ):
            plain.append(index)
    # One that opens the text titles it ("FERNCLIFFE ROAD ALLOTMENT SOCIETY" over its subtitle);
    # the others stand below the ruled titles ("DOGS" under "5. ON BOARD" between lines of dashes),
    # so that the next ruled title ends their section.
    top = titles.get(first) == 1 or first in plain
    level = max([2 if top else 1, *(ruled_level + 1 for ruled_level in ruled.values())])
    titles.update({index: 1 if index == first else level for index in plain})
    return titles


def plain_text_title(text: str) -> str | None:
    """The title of a whole plain text: its email subject, or the title line it opens with (a
    short first line before a blank line, or a line framed by rules of "="); None without one."""
    lines = text.splitlines()
    subject = _email_subject(lines)
    if subject is not None:
        return subject
    first = next(
        (index for index, line in enumerate(lines) if line.strip() and not _RULE_LINE.fullmatch(line)), None
    )
    if first is None or _plain_title_lines(lines).get(first) != 1:
        return None
    return lines[first].strip()


def _sections(lines: list[str], *, markdown: bool) -> list[_Section]:
    if not markdown:
        return _plain_sections(lines)
    sections: list[_Section] = []
    path: list[tuple[int, str]] = []
    start = 0
    heading_line: str | None = None
    in_fence = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            continue
        if index > start:
            sections.append(_Section(tuple(title for _, title in path), heading_line, start, index))
        level = len(match.group(1))
        path = [(depth, title) for depth, title in path if depth < level]
        path.append((level, match.group(2)))
        start = index
        heading_line = line.strip()
    if len(lines) > start:
        sections.append(_Section(tuple(title for _, title in path), heading_line, start, len(lines)))
    return sections


_EMAIL_HEADER = re.compile(r"(From|To|Cc|Bcc|Date|Sent|Subject|Reply-To):[ \t]*(.*)$", re.IGNORECASE)


def _email_subject(lines: list[str]) -> str | None:
    """The subject of a plain text that opens with an email's header (two or more lines such as
    "From: ...", "To: ...", "Subject: ..."): what the whole text is about, as a title would say."""
    header: list[re.Match[str]] = []
    for line in lines:
        if not line.strip():
            if header:
                break
            continue
        match = _EMAIL_HEADER.match(line.strip())
        if match is None:
            break
        header.append(match)
    subject = next((match.group(2).strip() for match in header if match.group(1).lower() == "subject"), "")
    return subject if len(header) >= 2 and subject else None


def _plain_sections(lines: list[str]) -> list[_Section]:
    """A plain text cut at its title lines as a Markdown text is at its headings; the heading
    path names the text's own title (an email's subject) and the section's."""
    titles = _plain_title_lines(lines)
    sections: list[_Section] = []
    path: list[tuple[int, str]] = []
    subject = _email_subject(lines)
    if subject is not None:
        titles = {index: level + 1 for index, level in titles.items()}
        path = [(1, subject)]
    start = 0
    for index, level in sorted(titles.items()):
        if index > start and any(line.strip() for line in lines[start:index]):
            sections.append(_Section(tuple(title for _, title in path), None, start, index))
        path = [(depth, title) for depth, title in path if depth < level]
        path.append((level, lines[index].strip()))
        start = index
    if len(lines) > start:
        sections.append(_Section(tuple(title for _, title in path), None, start, len(lines)))
    return sections


def _blocks(lines: list[str], start: int, end: int) -> list[tuple[int, int]]:
    """Paragraph blocks (0-based [first, last+1)) separated by blank lines; fences stay whole."""
    blocks: list[tuple[int, int]] = []
    block_start: int | None = None
    in_fence = False
    for index in range(start, end):
        line = lines[index]
        if _FENCE.match(line):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if block_start is not None:
                blocks.append((block_start, index))
                block_start = None
            continue
        if block_start is None:
            block_start = index
    if block_start is not None:
        blocks.append((block_start, end))
    return blocks


def _split_long_block(lines: list[str], first: int, last: int, max_chars: int) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    piece_start = first
    size = 0
    for index in range(first, last):
        length = len(lines[index]) + 1
        if size and size + length > max_chars:
            pieces.append((piece_start, index))
            piece_start, size = index, 0
        size += length
    pieces.append((piece_start, last))
    return pieces


def is_markup_line(line: str) -> bool:
    """Whether a line would read as a Markdown heading or code fence."""
    return bool(_HEADING.match(line) or _FENCE.match(line))


def _titles_only(lines: list[str], first: int, last: int, titles: set[int]) -> bool:
    """True when every non-blank line of ``lines[first:last]`` is a title (no text of its own)."""
    return all(index in titles for index in range(first, last) if lines[index].strip())


def chunk_text(text: str, *, markdown: bool, max_chars: int = DEFAULT_MAX_CHARS) -> list[TextChunk]:
    """Chunks of a document: heading sections, split at paragraph boundaries when long."""
    lines = text.splitlines()
    chunks: list[TextChunk] = []
    # Rules frame or underline a plain text's titles and say nothing themselves.
    titles = (
        {index for index, line in enumerate(lines) if _HEADING.match(line)}
        if markdown
        else set(_plain_title_lines(lines))
        | {index for index, line in enumerate(lines) if _RULE_LINE.fullmatch(line)}
    )
    for section in _sections(lines, markdown=markdown):
        groups: list[tuple[int, int]] = []
        for first, last in _blocks(lines, section.start, section.end):
            pieces = (
                _split_long_block(lines, first, last, max_chars)
                if sum(len(line) + 1 for line in lines[first:last]) > max_chars
                else [(first, last)]
            )
            for piece_first, piece_last in pieces:
                if groups:
                    group_first, group_last = groups[-1]
                    size = sum(len(line) + 1 for line in lines[group_first:piece_last])
                    # A heading belongs to the text it introduces, however long that text is.
                    if size <= max_chars or _titles_only(lines, group_first, group_last, titles):
                        groups[-1] = (group_first, piece_last)
                        continue
                groups.append((piece_first, piece_last))
        for first, last in groups:
            body = "\n".join(lines[first:last])
            # A section with nothing but its heading says nothing; its title stays in the heading
            # path of the chunks below it.
            if not body.strip() or _titles_only(lines, first, last, titles):
                continue
            whole_section = len(groups) == 1 and section.heading_line is not None and first == section.start
            if whole_section:
                locator_type, locator_value = "heading", section.heading_line or ""
            else:
                locator_type, locator_value = "line-range", f"{first + 1}-{last}"
            chunks.append(
                TextChunk(
                    ordinal=len(chunks),
                    locator_type=locator_type,
                    locator_value=locator_value,
                    heading_path=section.heading_path,
                    start_line=first + 1,
                    end_line=last,
                    text=body,
                )
            )
    return chunks


def _normalise_target(document_path: str, target: str) -> str | None:
    """Root-relative path of a relative link target, or None if it leaves the root."""
    parts: list[str] = list(PurePosixPath(document_path).parent.parts)
    for part in PurePosixPath(target).parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part == "/":
            return None
        else:
            parts.append(part)
    return "/".join(parts) if parts else None


def extract_links(text: str, document_path: str) -> list[DocumentLink]:
    """Markdown links to relative files and ``[[wikilinks]]``, in reading order, without duplicates."""
    links: list[DocumentLink] = []
    seen: set[tuple[str, str]] = set()
    in_fence = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for match in _MARKDOWN_LINK.finditer(line):
            raw = match.group(1)
            if _EXTERNAL.match(raw) or raw.startswith("#"):
                continue
            target_path, _, anchor = raw.partition("#")
            target = _normalise_target(document_path, target_path)
            if target is None or (("markdown", target) in seen):
                continue
            seen.add(("markdown", target))
            links.append(DocumentLink("markdown", target, anchor or None, number))
        for match in _WIKILINK.finditer(line):
            name = match.group(1).strip()
            if not name:
                continue
            target = wikilink_key(name)
            if ("wikilink", target) in seen:
                continue
            seen.add(("wikilink", target))
            links.append(DocumentLink("wikilink", target, (match.group(2) or "").strip() or None, number))
    return links


def wikilink_key(name: str) -> str:
    """How a wikilink names a document: ``[[lowercased name without .md]]``."""
    name = name.strip().lower()
    if name.endswith(".md"):
        name = name[:-3]
    return f"[[{name}]]"


def wikilink_keys_for(path: str) -> list[str]:
    """The wikilink keys that resolve to the document at root-relative ``path``."""
    stem = str(PurePosixPath(path).with_suffix(""))
    return list(dict.fromkeys([wikilink_key(PurePosixPath(stem).name), wikilink_key(stem)]))
