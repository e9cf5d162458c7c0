"""The text next to a winner, read from the store by the ID of the chunk the winner was cut from.

``akm.fusion.expand_winners`` decides which winners get context and how much; this module is the
store side of it: given the chunk IDs that came with the retrieved rows, it fetches the adjacent
chunks of the same source version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from akm.contract.models import EvidenceRow
from akm.fusion import NeighbourContext
from akm.store import EvidenceStore


def store_neighbours(
    store: EvidenceStore, chunk_ids: Mapping[str, int]
) -> Callable[[EvidenceRow, int, int], NeighbourContext | None]:
    """Neighbour provider for ``expand_winners``: adjacent chunks of the winner's own chunk.

    ``chunk_ids`` maps evidence IDs to chunk IDs (``RetrievalResult.chunk_ids``); a row without
    a chunk gets no context.
    """

    def neighbours(row: EvidenceRow, before: int, after: int) -> NeighbourContext | None:
        chunk_id = chunk_ids.get(row.evidence_id)
        if chunk_id is None:
            return None
        around = store.neighbours(chunk_id, before=before, after=after)
        anchor = next((chunk for chunk in around if chunk.chunk_id == chunk_id), None)
        if anchor is None:
            return None
        return NeighbourContext(
            before="\n\n".join(chunk.text for chunk in around if chunk.ordinal < anchor.ordinal),
            after="\n\n".join(chunk.text for chunk in around if chunk.ordinal > anchor.ordinal),
        )

    return neighbours


__all__ = ["store_neighbours"]
