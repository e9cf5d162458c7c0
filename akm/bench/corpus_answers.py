"""Answers over a JSONL corpus: when the gold document was retrieved, is the answer backed by a
claim-supported row?

The corpus (``{"_id", "title", "text"}`` per line, optionally gzipped, e.g. SciFact's
``corpus.jsonl.gz``) is ingested as a corpus root of a throwaway project whose manifest is the
default one plus a ``corpus:<alias>`` source ref. Each claim of a claims file (SciFact's
``claims-*-with-evidence.jsonl``: ``claim``, ``label``, ``evidence_docs[].doc_id``) is asked as the
question, through :func:`akm.answer.answer`, with the lanes given (exact and lexical by default: a
corpus of thousands of abstracts is ingested without embeddings).

Per claim it records whether a gold document is among the packet's evidence rows (retrieved and
read), whether any row ended ``claim-supported``, and whether a gold document's row did. The
headline figure is the share of claims with a claim-supported row among those whose gold document
was retrieved.
"""

from __future__ import annotations

import gzip
import json
import shutil
import statistics
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml

from akm.answer import AnswerGenerator, AnswerOptions, EvidencePrompt, GeneratedAnswer, answer
from akm.config import DEFAULT_MANIFEST_FILE
from akm.ingest import ingest_corpus
from akm.manifest import load_manifest
from akm.store import open_store
from decoding.bench.errors import BenchmarkInputError

DEFAULT_LANES: tuple[str, ...] = ("exact", "qmd-lexical")
DEFAULT_LABEL = "SUPPORTS"


@dataclass(frozen=True, slots=True)
class CorpusClaim:
    claim_id: str
    text: str
    label: str
    gold_documents: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClaimOutcome:
    claim_id: str
    claim: str
    verdict: str
    gold_retrieved: bool
    any_supported: bool
    gold_supported: bool
    answer: str
    total_ms: float

    def to_json(self) -> dict[str, Any]:
        return {
            "claimId": self.claim_id,
            "claim": self.claim,
            "verdict": self.verdict,
            "goldRetrieved": self.gold_retrieved,
            "anySupported": self.any_supported,
            "goldSupported": self.gold_supported,
            "answer": self.answer,
            "totalMs": round(self.total_ms, 1),
        }


def _open_text(path: Path) -> TextIO:
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")


def load_claims(path: Path, *, label: str | None = DEFAULT_LABEL) -> list[CorpusClaim]:
    """The claims of a SciFact-style claims file with at least one evidence document (of ``label``
    when given)."""
    claims: list[CorpusClaim] = []
    try:
        with _open_text(path) as stream:
            for number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    documents = tuple(str(doc["doc_id"]) for doc in record.get("evidence_docs") or ())
                    claim = CorpusClaim(
                        str(record["id"]), str(record["claim"]), str(record["label"]), documents
                    )
                except (ValueError, KeyError, TypeError) as error:
                    raise BenchmarkInputError(f"{path}:{number}: not a claim record ({error})") from error
                if claim.gold_documents and (label is None or claim.label == label):
                    claims.append(claim)
    except OSError as error:
        raise BenchmarkInputError(f"cannot read {path}: {error.strerror or error}") from error
    return claims


def corpus_manifest(project: Path, alias: str) -> Path:
    """The default manifest plus a public source ref for the corpus root ``alias``."""
    document: dict[str, Any] = yaml.safe_load(DEFAULT_MANIFEST_FILE.read_text(encoding="utf-8"))
    document["sourceRefs"].append(
        {
            "sourceId": f"corpus:{alias}",
            "rootAlias": alias,
            "rootPath": ".",
            "classification": "public",
            "include": ["**"],
            "retrievalLanes": ["exact", "qmd-lexical", "qmd-semantic", "direct-read"],
            "authorityPolicy": "primary-literature",
            "freshnessPolicy": "corpus-file-checksum",
        }
    )
    path = project / "config" / "manifest.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def _document_id(source_id: str, alias: str) -> str | None:
    prefix = f"akm:{alias}:"
    return source_id[len(prefix) :] if source_id.startswith(prefix) else None


def outcome_of(claim: CorpusClaim, document: dict[str, Any], alias: str, total_ms: float) -> ClaimOutcome:
    """What one answer object says about one claim."""
    rows = document["packet"]["evidenceRows"]
    gold = set(claim.gold_documents)
    read = [(_document_id(row["source"]["sourceId"], alias), row["verification"]["state"]) for row in rows]
    return ClaimOutcome(
        claim_id=claim.claim_id,
        claim=claim.text,
        verdict=str(document["verdict"]["verdict"]),
        gold_retrieved=any(doc in gold for doc, _ in read),
        any_supported=any(state == "claim-supported" for _, state in read),
        gold_supported=any(doc in gold and state == "claim-supported" for doc, state in read),
        answer=str(document["answer"]),
        total_ms=total_ms,
    )


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summarize(outcomes: Sequence[ClaimOutcome]) -> dict[str, Any]:
    retrieved = [outcome for outcome in outcomes if outcome.gold_retrieved]
    times = sorted(outcome.total_ms for outcome in outcomes)
    return {
        "claims": len(outcomes),
        "goldRetrieved": len(retrieved),
        "goldRetrievedRate": _share(len(retrieved), len(outcomes)),
        "supportedWhenGoldRetrieved": sum(outcome.any_supported for outcome in retrieved),
        "supportedWhenGoldRetrievedRate": _share(sum(o.any_supported for o in retrieved), len(retrieved)),
        "goldSupportedWhenGoldRetrievedRate": _share(
            sum(o.gold_supported for o in retrieved), len(retrieved)
        ),
        "verdicts": {v: sum(o.verdict == v for o in outcomes) for v in sorted({o.verdict for o in outcomes})},
        "latencyMs": {
            "p50": round(statistics.median(times), 1) if times else None,
            "p95": round(times[min(len(times) - 1, int(0.95 * len(times)))], 1) if times else None,
        },
    }


class ExtractiveGenerator:
    """Answers with the first chosen sentence, word for word: a measure of retrieval, direct read
    and verification without a language model in the way."""

    def stream(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        text = prompt.passages[0] if prompt.passages else ""
        yield text
        return GeneratedAnswer(text=text, decode={})


@dataclass
class CorpusAnswerBenchmark:
    """One run: a fresh project under ``folder``, the corpus ingested, the claims asked."""

    corpus: Path
    folder: Path
    alias: str = "corpus"
    lanes: tuple[str, ...] = DEFAULT_LANES
    max_rows: int = 5

    def run(
        self,
        claims: Sequence[CorpusClaim],
        generator: AnswerGenerator,
        progress: Callable[[int, int, ClaimOutcome], None] | None = None,
    ) -> tuple[list[ClaimOutcome], dict[str, Any]]:
        if not self.corpus.is_file():
            raise BenchmarkInputError(f"corpus file not found: {self.corpus}")
        if self.folder.exists():
            shutil.rmtree(self.folder)
        manifest_path = corpus_manifest(self.folder, self.alias)
        store = open_store(f"sqlite:///{self.folder / 'store.sqlite3'}")
        try:
            started = time.perf_counter()
            report = ingest_corpus(store, self.corpus, alias=self.alias)
            ingest_s = time.perf_counter() - started
            manifest = load_manifest(manifest_path).with_corpus_files(store.corpus_files())
            options = AnswerOptions(lanes=self.lanes, max_rows=self.max_rows)
            outcomes: list[ClaimOutcome] = []
            for number, claim in enumerate(claims, start=1):
                begun = time.perf_counter()
                result = answer(
                    claim.text, options, store=store, manifest=manifest, embedder=None, generator=generator
                )
                outcome = outcome_of(
                    claim, result.to_json(), self.alias, (time.perf_counter() - begun) * 1000.0
                )
                outcomes.append(outcome)
                if progress is not None:
                    progress(number, len(claims), outcome)
        finally:
            store.close()
        return outcomes, {"ingestSeconds": round(ingest_s, 1), "documents": report.ingested}


__all__ = [
    "ClaimOutcome",
    "CorpusAnswerBenchmark",
    "CorpusClaim",
    "ExtractiveGenerator",
    "load_claims",
    "outcome_of",
    "summarize",
]
