"""Retrieval lanes, query classification and the orchestration that runs them.

``retrieve(query, store, manifest, embedder, lanes=...)`` is the entry point; see
``akm.retrieval.orchestrate``. Fusion and direct reads are the next steps of the data flow
(``akm.fusion``, ``akm.direct_read``).
"""

from akm.retrieval.lanes import (
    ALL_LANES,
    EXACT,
    LEXICAL,
    RELATIONSHIP,
    SEMANTIC,
    ExactLane,
    Lane,
    LaneRequest,
    LaneResult,
    LexicalLane,
    RelationshipLane,
    SemanticLane,
)
from akm.retrieval.orchestrate import FANOUT, RetrievalResult, UnknownLaneError, retrieve
from akm.retrieval.query import (
    MAX_QUERY_CHARS,
    BinaryQueryError,
    EmptyQueryError,
    QueryClass,
    QueryClassification,
    QueryError,
    QueryTooLongError,
    classify_query,
    validate_query,
)

__all__ = [
    "ALL_LANES",
    "EXACT",
    "FANOUT",
    "LEXICAL",
    "MAX_QUERY_CHARS",
    "RELATIONSHIP",
    "SEMANTIC",
    "BinaryQueryError",
    "EmptyQueryError",
    "ExactLane",
    "Lane",
    "LaneRequest",
    "LaneResult",
    "LexicalLane",
    "QueryClass",
    "QueryClassification",
    "QueryError",
    "QueryTooLongError",
    "RelationshipLane",
    "RetrievalResult",
    "SemanticLane",
    "UnknownLaneError",
    "classify_query",
    "retrieve",
    "validate_query",
]
