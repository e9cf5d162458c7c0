"""Query admission and classification (EVIDENCE-SCHEMA §5.2).

A query is checked before any lane touches the store: empty, oversized or binary input
is refused with a typed error. Classification records intent and drives selective
fan-out; every lane that is not run is recorded with a skip reason by the orchestrator.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

MAX_QUERY_CHARS = 4000


class QueryError(ValueError):
    """A query that cannot be searched; the message says why."""


class EmptyQueryError(QueryError):
    pass


class QueryTooLongError(QueryError):
    pass


class BinaryQueryError(QueryError):
    pass


class QueryClass(StrEnum):
    EXACT_PATH_PROPERTY = "exact-path-property"
    LITERAL_TOKEN = "literal-token"
    SEMANTIC_RECALL = "semantic-recall"
    RELATIONSHIP_NEIGHBORHOOD = "relationship-neighborhood"
    AUTHORITY_CONFLICT = "authority-conflict"
    MIXED = "mixed"


_QUOTED = re.compile(r'"([^"\n]{1,200})"|`([^`\n]{1,200})`')
# A path has a separator or a file extension; absolute and parent-escaping forms are kept
# as literals so the exact lane can answer them "not found" without consulting the disk.
_PATH = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]+|(?<![\w/.-])[\w-]+\.(?:md|markdown|txt|py|yaml|yml|json|toml|rst)\b"
)
_SOURCE_ID = re.compile(r"\b[a-z][\w-]*:[\w:./-]*[\w]\b")
_PROPERTY = re.compile(r"^\s*[A-Za-z][\w-]*\s*:\s*\S")
_RARE_TOKEN = re.compile(
    r"(?<![\w-])(?:(?<!\S)--?[a-z][\w-]+|[A-Za-z]+_[\w]+|[a-z]+[A-Z]\w*|[A-Z]{2,}[\w-]*\d[\w-]*|[A-Za-z]+-\d[\w-]*|\w*\d\w*[A-Za-z]\w*\d\w*)"
)
_WIKILINK = re.compile(r"\[\[([^\]\n]{1,200})\]\]")
_RELATIONSHIP_WORDS = re.compile(
    r"\b(?:link(?:s|ed)? (?:to|from)|backlinks?|neighbou?r(?:s|hood)?|related (?:to|notes?)|depends? on|"
    r"dependenc(?:y|ies)|references? (?:to|from)|connected to|graph)\b",
    re.IGNORECASE,
)
_AUTHORITY_WORDS = re.compile(
    r"\b(?:conflict(?:s|ing)?|contradict(?:s|ion|ory)?|authoritative|supersed(?:e|es|ed)|"
    r"canonical (?:vs|versus|or)|which (?:source|policy) (?:wins|applies))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class QueryClassification:
    """The recorded intent of one query and the literal anchors the exact lane uses."""

    query: str
    query_class: QueryClass
    literals: tuple[str, ...]
    paths: tuple[str, ...]
    signals: tuple[str, ...]


def validate_query(query: object) -> str:
    """Return the query stripped of surrounding whitespace or raise a `QueryError`."""
    if isinstance(query, bytes | bytearray):
        raise BinaryQueryError("query must be text, not bytes")
    if not isinstance(query, str):
        raise QueryError(f"query must be a string, not {type(query).__name__}")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryTooLongError(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    if "\x00" in query or any(_is_binary_char(char) for char in query):
        raise BinaryQueryError("query contains control or binary characters")
    text = query.strip()
    if not text:
        raise EmptyQueryError("query is empty")
    return text


def _is_binary_char(char: str) -> bool:
    if char in "\t\n\r":
        return False
    category = unicodedata.category(char)
    # Cc: control characters; Cs: lone surrogates from undecodable bytes; Co: private use.
    return category in {"Cc", "Cs", "Co"} or char == "\ufffd"


def classify_query(query: str) -> QueryClassification:
    """Classify a validated query into one §5.2 class and extract its literal anchors."""
    text = validate_query(query)
    quoted = [first or second for first, second in _QUOTED.findall(text)]
    unquoted = _QUOTED.sub(" ", text)
    paths = list(dict.fromkeys(_PATH.findall(unquoted)))
    source_ids = [
        match for match in _SOURCE_ID.findall(unquoted) if match not in paths and "://" not in match
    ]
    rare = [token for token in _RARE_TOKEN.findall(unquoted) if not any(token in path for path in paths)]
    wikilinks = _WIKILINK.findall(text)
    properties = [unquoted.strip()] if _PROPERTY.match(unquoted) and not source_ids else []

    signals: list[str] = []
    if paths or source_ids or properties:
        signals.append("path-or-property")
    if quoted or rare:
        signals.append("literal")
    if wikilinks or _RELATIONSHIP_WORDS.search(text):
        signals.append("relationship")
    if _AUTHORITY_WORDS.search(text):
        signals.append("authority")
    residual_words = re.findall(r"[A-Za-z]{3,}", _PATH.sub(" ", unquoted))
    if len(residual_words) >= 3:
        signals.append("natural-language")

    literals = tuple(dict.fromkeys([*quoted, *paths, *source_ids, *properties, *rare, *wikilinks]))
    return QueryClassification(
        query=text,
        query_class=_class_from_signals(signals),
        literals=literals,
        paths=tuple(paths),
        signals=tuple(signals),
    )


def _class_from_signals(signals: list[str]) -> QueryClass:
    anchors = {"path-or-property", "literal", "relationship", "authority"} & set(signals)
    if not anchors:
        return QueryClass.SEMANTIC_RECALL
    if len(anchors) > 1:
        return QueryClass.MIXED
    (anchor,) = anchors
    return {
        "path-or-property": QueryClass.EXACT_PATH_PROPERTY,
        "literal": QueryClass.LITERAL_TOKEN,
        "relationship": QueryClass.RELATIONSHIP_NEIGHBORHOOD,
        "authority": QueryClass.AUTHORITY_CONFLICT,
    }[anchor]
