from __future__ import annotations

from akm.fusion import FusionSettings, expand_winners, fuse
from akm.retrieval.neighbours import store_neighbours
from akm.retrieval.orchestrate import retrieve


def test_retrieve_fuse_and_expand_winners_from_adjacent_chunks(corpus_store, manifest, embedder):
    result = retrieve("install the service", corpus_store, manifest, embedder)
    fused = fuse(result.candidates, FusionSettings.from_manifest(manifest, max_rows=2))

    expanded = expand_winners(fused.winners, store_neighbours(corpus_store, result.chunk_ids), manifest)

    first = expanded[0]
    assert first.scope.locator.value == "docs/guide.md:1-1"
    assert first.content.before == ""
    assert first.content.after == "Ask a question; the answer cites the security policy in security.md."
    assert first.content.context_expansion is not None
    assert first.content.context_expansion.locator == first.scope.locator
    assert first.content.excerpt == "Install the service with make install, then run the tests."
    assert {contribution.evidence_id for contribution in fused.fusion.contributions} == {
        row.evidence_id for row in expanded
    }
