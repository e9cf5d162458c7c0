from __future__ import annotations

import pytest

from akm.retrieval.query import (
    MAX_QUERY_CHARS,
    BinaryQueryError,
    EmptyQueryError,
    QueryClass,
    QueryError,
    QueryTooLongError,
    classify_query,
    validate_query,
)


@pytest.mark.parametrize(
    ("query", "error", "message"),
    [
        ("", EmptyQueryError, "query is empty"),
        ("   \n\t ", EmptyQueryError, "query is empty"),
        ("x" * (MAX_QUERY_CHARS + 1), QueryTooLongError, "query is 4001 characters; the limit is 4000"),
        (b"bytes query", BinaryQueryError, "query must be text, not bytes"),
        ("abc\x00def", BinaryQueryError, "query contains control or binary characters"),
        ("PK\x03\x04\x14\x00", BinaryQueryError, "query contains control or binary characters"),
        ("bad \udcff surrogate", BinaryQueryError, "query contains control or binary characters"),
        (42, QueryError, "query must be a string, not int"),
    ],
    ids=["empty", "whitespace", "too-long", "bytes", "nul", "zip-header", "surrogate", "not-a-string"],
)
def test_bad_queries_raise_typed_errors(query: object, error: type[QueryError], message: str):
    with pytest.raises(error) as raised:
        validate_query(query)
    assert str(raised.value) == message


def test_longest_allowed_query_is_accepted():
    assert validate_query("y" * MAX_QUERY_CHARS) == "y" * MAX_QUERY_CHARS


@pytest.mark.parametrize(
    ("query", "expected_class", "literals"),
    [
        ("docs/guide.md", QueryClass.EXACT_PATH_PROPERTY, ("docs/guide.md",)),
        ("status: draft", QueryClass.EXACT_PATH_PROPERTY, ("status: draft",)),
        ("akm:docs:SECURITY", QueryClass.EXACT_PATH_PROPERTY, ("akm:docs:SECURITY",)),
        ('the "never store secrets" rule', QueryClass.LITERAL_TOKEN, ("never store secrets",)),
        ("what does --max-rows do", QueryClass.LITERAL_TOKEN, ("--max-rows",)),
        ("how are signing keys rotated", QueryClass.SEMANTIC_RECALL, ()),
        ("notes linked to [[SECURITY]]", QueryClass.RELATIONSHIP_NEIGHBORHOOD, ("SECURITY",)),
        ("which policy is authoritative for keys", QueryClass.AUTHORITY_CONFLICT, ()),
        ('docs/guide.md conflicts with "k=60"', QueryClass.MIXED, ("k=60", "docs/guide.md")),
    ],
    ids=["path", "property", "source-id", "quoted", "flag", "paraphrase", "wikilink", "authority", "mixed"],
)
def test_classification(query: str, expected_class: QueryClass, literals: tuple[str, ...]):
    classification = classify_query(query)
    assert classification.query_class is expected_class
    assert classification.literals == literals
