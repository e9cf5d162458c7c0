"""Ranking-quality measures for the retrieval benchmark (BEIR conventions).

Rankings are document-level: the caller collapses chunks so a document's position is
that of its best chunk. Gains are linear in the judged relevance, as in pytrec_eval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at_k(ranking: Sequence[str], judgments: Mapping[str, int], k: int = 10) -> float:
    """Normalised discounted cumulative gain of the first `k` documents of `ranking`."""
    ideal_gains = sorted((grade for grade in judgments.values() if grade > 0), reverse=True)[:k]
    ideal = sum(grade / math.log2(position + 2) for position, grade in enumerate(ideal_gains))
    if ideal == 0.0:
        return 0.0
    gained = sum(
        judgments.get(doc_id, 0) / math.log2(position + 2) for position, doc_id in enumerate(ranking[:k])
    )
    return gained / ideal


def recall_at_k(ranking: Sequence[str], judgments: Mapping[str, int], k: int = 100) -> float:
    """Share of the relevant documents found in the first `k` of `ranking`."""
    relevant = {doc_id for doc_id, grade in judgments.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def mrr_at_k(ranking: Sequence[str], judgments: Mapping[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first relevant document within the first `k`, else 0."""
    for position, doc_id in enumerate(ranking[:k]):
        if judgments.get(doc_id, 0) > 0:
            return 1.0 / (position + 1)
    return 0.0


def percentile(values: Sequence[float], fraction: float) -> float:
    """Linear-interpolated percentile (`fraction` in [0, 1]) of a non-empty sample."""
    if not values:
        raise ValueError("percentile of an empty sample")
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    lower = math.floor(position)
    upper = math.ceil(position)
    weight = position - lower
    return ordered[lower] * (1.0 - weight) + ordered[upper] * weight


def collapse_to_documents(chunk_doc_ids: Sequence[str]) -> list[str]:
    """Document ranking from a chunk ranking: each document at the position of its best chunk."""
    return list(dict.fromkeys(chunk_doc_ids))
