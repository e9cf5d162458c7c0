from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import pytest

from akm.bench.retrieval import EmbeddingCache, load_qrels
from akm.cli.bench_retrieval import handle, register
from akm.retrieval.evaluation import collapse_to_documents, mrr_at_k, ndcg_at_k, percentile, recall_at_k
from akm.settings import load_settings

SCIFACT = Path(__file__).resolve().parents[3].parent / "shared" / "datasets" / "scifact"
DOCUMENTS = [
    {"_id": "d1", "title": "Zinc and colds", "text": "Zinc lozenges shorten the common cold."},
    {"_id": "d2", "title": "Vitamin C", "text": "Vitamin C does not prevent colds in most people."},
    {"_id": "d3", "title": "Sleep", "text": "Short sleep raises the risk of infection."},
    {"_id": "d4", "title": "Exercise", "text": "Moderate exercise improves immune markers."},
]
QUERIES = [
    {"_id": "q1", "text": "zinc lozenges common cold"},
    {"_id": "q2", "text": "sleep and infection risk"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n"


def test_ranking_measures_on_a_hand_checked_ranking():
    judgments = {"a": 1, "c": 1}
    ranking = ["b", "a", "d", "c"]
    assert ndcg_at_k(ranking, judgments, 10) == pytest.approx(
        (1 / 1.5849625 + 1 / 2.3219281) / (1 + 1 / 1.5849625)
    )
    assert recall_at_k(ranking, judgments, 2) == 0.5
    assert mrr_at_k(ranking, judgments, 10) == 0.5
    assert mrr_at_k(["x"], judgments, 10) == 0.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert collapse_to_documents(["a", "b", "a", "c"]) == ["a", "b", "c"]


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["retrieval", *argv])


def _write_inputs(folder: Path) -> tuple[Path, Path, Path]:
    corpus = folder / "corpus.jsonl.gz"
    with gzip.open(corpus, "wt", encoding="utf-8") as stream:
        stream.writelines(json.dumps(document) + "\n" for document in DOCUMENTS)
    queries = folder / "queries.jsonl"
    queries.write_text("".join(json.dumps(query) + "\n" for query in QUERIES), encoding="utf-8")
    qrels = folder / "qrels.tsv"
    qrels.write_text(QRELS, encoding="utf-8")
    return corpus, queries, qrels


def test_bench_writes_metrics_for_every_lane_and_method_and_reuses_cached_embeddings(tmp_path: Path, capsys):
    corpus, queries, qrels = _write_inputs(tmp_path)
    settings = load_settings(data_dir=tmp_path / "data", embedding_model="hashing")
    out = tmp_path / "out.json"
    argv = ["--corpus", str(corpus), "--queries", str(queries), "--qrels", str(qrels), "--json", str(out)]

    assert handle(_parse(argv), settings) == 0
    summary = json.loads(out.read_text())

    assert set(summary["lanes"]) == {"exact", "qmd-lexical", "qmd-semantic", "graphify-relationship"}
    assert set(summary["fused"]) == {"deterministic-priority", "rrf"}
    assert summary["lanes"]["qmd-lexical"]["ndcg@10"] == 1.0
    assert summary["lanes"]["qmd-lexical"]["mrr@10"] == 1.0
    assert summary["fused"]["rrf"]["recall@100"] == 1.0
    assert summary["lanes"]["qmd-lexical"]["laneRuns"] == {"completed": 2}
    assert summary["lanes"]["graphify-relationship"]["laneRuns"] == {"completed": 2}
    assert set(summary["latency_ms"]["lanes"]["qmd-semantic"]) == {"p50", "p95", "cpu_p50", "cpu_p95"}
    assert (
        summary["ingest"]["documents"],
        summary["ingest"]["embedded"],
        summary["ingest"]["cacheHits"],
    ) == (4, 4, 0)
    assert "lane qmd-lexical" in capsys.readouterr().out

    assert handle(_parse(argv), settings) == 0
    again = json.loads(out.read_text())
    assert (again["ingest"]["embedded"], again["ingest"]["cacheHits"]) == (0, 4)
    assert again["lanes"] == summary["lanes"]
    assert len(EmbeddingCache(tmp_path / "data" / "cache" / "embeddings", "akm-hashing-bow-384")) == 4


def test_bench_refuses_missing_inputs_with_a_message(tmp_path: Path, capsys):
    settings = load_settings(data_dir=tmp_path / "data", embedding_model="hashing")
    argv = [
        "--corpus",
        str(tmp_path / "nope.jsonl"),
        "--queries",
        "q",
        "--qrels",
        "r",
        "--json",
        str(tmp_path / "o"),
    ]
    assert handle(_parse(argv), settings) == 2
    assert capsys.readouterr().err == f"akm bench retrieval: {tmp_path / 'nope.jsonl'} does not exist\n"


def test_bench_refuses_a_truncated_corpus_with_a_message(tmp_path: Path, capsys):
    corpus, queries, qrels = _write_inputs(tmp_path)
    corpus.write_bytes(corpus.read_bytes()[:-12])
    settings = load_settings(data_dir=tmp_path / "data", embedding_model="hashing")
    argv = [
        "--corpus",
        str(corpus),
        "--queries",
        str(queries),
        "--qrels",
        str(qrels),
        "--json",
        str(tmp_path / "o"),
    ]

    assert handle(_parse(argv), settings) == 2
    error = capsys.readouterr().err
    assert error.startswith("akm bench retrieval: ") and "Traceback" not in error
    assert not (tmp_path / "o").exists()


@pytest.mark.datasets
@pytest.mark.slow
def test_scifact_lexical_lane_on_the_first_judged_queries(tmp_path: Path):
    if not (SCIFACT / "corpus.jsonl.gz").is_file():
        pytest.skip(f"SciFact is not present under {SCIFACT}")
    settings = load_settings(data_dir=tmp_path / "data", embedding_model="hashing")
    out = tmp_path / "scifact.json"
    argv = [
        "--corpus",
        str(SCIFACT / "corpus.jsonl.gz"),
        "--queries",
        str(SCIFACT / "queries-train.jsonl"),
        "--qrels",
        str(SCIFACT / "qrels-train.tsv"),
        "--limit-queries",
        "100",
        "--json",
        str(out),
    ]
    assert handle(_parse(argv), settings) == 0
    summary = json.loads(out.read_text())
    assert summary["parameters"]["queries"] == 100
    assert summary["ingest"]["documents"] == 5183
    # BM25 (FTS5, porter, stopwords dropped) scores 0.6607 on these 100 queries.
    assert summary["lanes"]["qmd-lexical"]["ndcg@10"] >= 0.65
    assert summary["lanes"]["qmd-lexical"]["recall@100"] >= 0.9
    assert len(load_qrels(SCIFACT / "qrels-train.tsv")) == 809
