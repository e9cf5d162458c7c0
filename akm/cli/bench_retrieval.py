"""``akm bench retrieval``: nDCG@10, Recall@100, MRR@10 and latency per lane and per fusion method.

Indexes the corpus into a throwaway store (SQLite file in a temporary folder, or a
PostgreSQL database), runs every judged query through all four lanes, and fuses the lane
candidates with both methods. Prints a table and writes the JSON summary.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from akm.bench.retrieval import (
    BenchmarkSettings,
    CachingEmbedder,
    EmbeddingCache,
    benchmark_manifest,
    ingest_benchmark_corpus,
    load_qrels,
    load_queries,
    run_queries,
)
from akm.embedding import Embedder, EmbeddingModelError, load_embedder
from akm.ingest import IngestError
from akm.manifest import ManifestError, load_manifest
from akm.retrieval.lanes import ALL_LANES
from akm.runtime import freeze_loaded_objects
from akm.settings import Settings
from akm.store import EvidenceStore, open_store
from decoding.bench.errors import BenchmarkInputError, import_bench_extra

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
TARGETS = {"qmd-lexical": 0.66, "qmd-semantic": 0.64, "best-fusion": 0.70, "sqlite-p95-ms": 50.0}


def register(subparsers: Any) -> None:
    """Add the ``retrieval`` benchmark to a ``bench`` sub-parser group."""
    parser = subparsers.add_parser(
        "retrieval",
        help="retrieval quality and latency per lane and per fusion method on a BEIR corpus",
        description=__doc__,
    )
    parser.add_argument("--corpus", type=Path, required=True, help="BEIR corpus.jsonl(.gz): _id, title, text")
    parser.add_argument("--queries", type=Path, required=True, help="BEIR queries.jsonl: _id, text")
    parser.add_argument("--qrels", type=Path, required=True, help="qrels TSV: query-id, corpus-id, score")
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument(
        "--database-url",
        dest="bench_database_url",
        help="PostgreSQL URL of an empty database (default with --backend postgresql: a temporary pgserver)",
    )
    parser.add_argument(
        "--limit-queries", type=int, default=None, help="score only the first N judged queries"
    )
    parser.add_argument(
        "--depth", type=int, default=100, help="candidates per lane and fused rows (default 100)"
    )
    parser.add_argument("--per-source-cap", type=int, default=1, help="fusion per-source cap (default 1)")
    parser.add_argument("--rrf-k", type=int, default=60, help="RRF k (default 60)")
    parser.add_argument(
        "--fuse-lanes",
        default="qmd-lexical,qmd-semantic",
        help="comma-separated lanes whose candidates are fused for the headline figures "
        "(all four lanes are also fused and reported under fusedVariants)",
    )
    parser.add_argument(
        "--json", dest="json_out", type=Path, required=True, help="write the JSON summary here"
    )
    parser.set_defaults(handler=handle)


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"akm bench retrieval: {message}", file=sys.stderr)
    return code


@contextlib.contextmanager
def _temporary_store(args: argparse.Namespace) -> Iterator[EvidenceStore]:
    if args.backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="akm-bench-") as folder:
            store = open_store(f"sqlite:///{Path(folder) / 'bench.sqlite3'}")
            try:
                yield store
            finally:
                store.close()
        return
    if args.bench_database_url:
        store = open_store(args.bench_database_url)
        try:
            yield store
        finally:
            store.close()
        return
    pgserver = import_bench_extra("pgserver", "--backend postgresql without --database-url")
    with tempfile.TemporaryDirectory(prefix="akm-bench-pg-") as folder:
        Path(folder).chmod(0o755)
        server = pgserver.get_server(Path(folder) / "pgdata", cleanup_mode="delete")
        try:
            server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
            store = open_store(server.get_uri())
            try:
                yield store
            finally:
                store.close()
        finally:
            server.cleanup()


def _embedder(settings: Settings) -> tuple[Embedder | None, str | None]:
    if settings.torch_threads:
        import torch

        torch.set_num_threads(settings.torch_threads)
    try:
        embedder = load_embedder(settings.embedding_model, device=settings.device)
        embedder.embed(["warm-up query"])  # load the weights before anything is timed
    except EmbeddingModelError as error:
        return None, str(error)
    freeze_loaded_objects()
    return embedder, None


@contextlib.contextmanager
def _single_query_threads(settings: Settings) -> Iterator[None]:
    """One intra-op thread for query embedding unless configured otherwise.

    Batched ingest gains from several threads; a single short query does not, and on a
    shared machine idle OpenMP threads spin: measured here, 18 ms CPU per query embedding
    with one thread against 186 ms with two.
    """
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(settings.torch_threads or 1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def handle(args: argparse.Namespace, settings: Settings) -> int:
    lanes = tuple(lane.strip() for lane in args.fuse_lanes.split(",") if lane.strip())
    unknown = [lane for lane in lanes if lane not in ALL_LANES]
    if unknown or not lanes:
        return _fail(f"--fuse-lanes takes lanes from {', '.join(ALL_LANES)}; got {args.fuse_lanes!r}")
    if args.depth < 10 or args.per_source_cap < 1 or args.rrf_k < 1:
        return _fail("--depth must be at least 10; --per-source-cap and --rrf-k must be positive")
    if args.limit_queries is not None and args.limit_queries < 1:
        return _fail("--limit-queries must be positive")
    if not args.corpus.is_file():
        return _fail(f"{args.corpus} does not exist")
    try:
        queries = load_queries(args.queries)
        qrels = load_qrels(args.qrels)
        manifest = benchmark_manifest(load_manifest(settings.manifest_path), args.corpus)
    except (BenchmarkInputError, ManifestError, IngestError) as error:
        return _fail(str(error))
    judged = {query_id: qrels[query_id] for query_id in qrels if query_id in queries}
    if args.limit_queries is not None:
        judged = dict(list(judged.items())[: args.limit_queries])
    if not judged:
        return _fail("no query has judgments")

    embedder, embedder_error = _embedder(settings)
    caching = (
        CachingEmbedder(
            embedder, EmbeddingCache(settings.data_dir / "cache" / "embeddings", embedder.model_id)
        )
        if embedder is not None
        else None
    )
    bench = BenchmarkSettings(
        depth=args.depth,
        per_source_cap=args.per_source_cap,
        rrf_k=args.rrf_k,
        fused_lanes=lanes,
        variant_lane_sets=tuple(lane_set for lane_set in (ALL_LANES,) if lane_set != lanes),
    )
    started = time.perf_counter()
    try:
        with _temporary_store(args) as store:
            ingest = ingest_benchmark_corpus(store, args.corpus, caching)
            if not ingest["documents"]:
                return _fail(f"{args.corpus} holds no documents")
            with _single_query_threads(settings):
                scores = run_queries(store, manifest, embedder, queries, judged, bench)
    except (BenchmarkInputError, IngestError) as error:
        return _fail(str(error))
    summary: dict[str, Any] = {
        "corpus": str(args.corpus),
        "backend": args.backend,
        "embeddingModel": embedder.model_id if embedder else None,
        "embeddingError": embedder_error,
        "parameters": {
            "depth": bench.depth,
            "perSourceCap": bench.per_source_cap,
            "rrfK": bench.rrf_k,
            "fusedLanes": list(bench.fused_lanes),
            "queries": len(judged),
        },
        **scores,
        "ingest": ingest,
        "targets": TARGETS,
        "wallSeconds": round(time.perf_counter() - started, 1),
    }
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    _print_table(summary)
    return EXIT_OK


def _print_table(summary: dict[str, Any]) -> None:
    print(
        f"{'run':<26} {'nDCG@10':>8} {'R@100':>7} {'MRR@10':>7} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'cpu p50':>8} {'cpu p95':>8}"
    )
    latency = summary["latency_ms"]
    rows = [(f"lane {name}", metrics, latency["lanes"][name]) for name, metrics in summary["lanes"].items()]
    rows += [(f"fused {name}", metrics, latency["fused"][name]) for name, metrics in summary["fused"].items()]
    for name, metrics, timing in rows:
        print(
            f"{name:<26} {metrics['ndcg@10']:>8.4f} {metrics['recall@100']:>7.4f} {metrics['mrr@10']:>7.4f} "
            f"{timing['p50']:>8.2f} {timing['p95']:>8.2f} {timing['cpu_p50']:>8.2f} {timing['cpu_p95']:>8.2f}"
        )
    service = latency["service"]
    print(
        f"service (fan-out, limit {service['limit']}, default fusion): p50 {service['p50']:.2f} ms, "
        f"p95 {service['p95']:.2f} ms, cpu p50 {service['cpu_p50']:.2f} ms, cpu p95 {service['cpu_p95']:.2f} ms"
    )
    ingest = summary["ingest"]
    print(
        f"ingest: {ingest['documents']} documents in {ingest['totalSeconds']} s "
        f"({ingest['embedded']} embedded, {ingest['cacheHits']} from cache)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point: ``python -m akm.cli.bench_retrieval --corpus ... --json ...``."""
    from akm.settings import load_settings

    parser = argparse.ArgumentParser(prog="akm bench retrieval")
    subparsers = parser.add_subparsers(dest="bench")
    register(subparsers)
    args = parser.parse_args(["retrieval", *(argv if argv is not None else sys.argv[1:])])
    code: int = args.handler(args, load_settings())
    return code


if __name__ == "__main__":
    raise SystemExit(main())
