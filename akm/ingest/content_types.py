"""The document formats the service knows, by file extension and by content type.

One table serves the walk (which files a manifest's ``allowedContentTypes`` admits), the
extractors (which reader turns a file into text) and REST uploads (whether a declared content
type agrees with the file name). A format absent from the manifest's list is denied.
"""

from __future__ import annotations

from pathlib import PurePosixPath

MARKDOWN = "text/markdown"
PLAIN_TEXT = "text/plain"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
JSONL = "application/x-ndjson"

CONTENT_TYPE_BY_SUFFIX: dict[str, str] = {
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".txt": PLAIN_TEXT,
    ".html": HTML,
    ".htm": HTML,
    ".pdf": PDF,
    ".docx": DOCX,
    ".jsonl": JSONL,
}

KNOWN_CONTENT_TYPES: frozenset[str] = frozenset(CONTENT_TYPE_BY_SUFFIX.values())


def content_type_of(name: str) -> str | None:
    """The content type a file name's extension stands for, or None when it is not known."""
    return CONTENT_TYPE_BY_SUFFIX.get(PurePosixPath(name).suffix.lower())


def suffixes_of(content_type: str) -> frozenset[str]:
    """Every extension that names ``content_type`` (empty when the type is not known)."""
    wanted = normalise(content_type)
    return frozenset(s for s, t in CONTENT_TYPE_BY_SUFFIX.items() if t == wanted)


def normalise(content_type: str) -> str:
    """A content type without parameters, lower-cased: ``Text/HTML; charset=utf-8`` → ``text/html``."""
    return content_type.split(";", 1)[0].strip().lower()
