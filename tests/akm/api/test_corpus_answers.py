"""POST /v1/answers over an ingested JSONL corpus: the winners are read from the corpus file and the
answer's claim is supported by a claim-supported corpus row (the production answer pipeline, with
a generator that quotes its first passage in place of the language model)."""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from api_fakes import FakeReverifyService
from fastapi.testclient import TestClient

from akm.answer import EvidencePrompt, GeneratedAnswer
from akm.api import ApiLimits, create_app
from akm.api.wiring import ApiServices, StoreHandle
from akm.config import DEFAULT_MANIFEST_FILE
from akm.ingest import ingest_corpus
from akm.manifest import load_manifest
from akm.runtime import Runtime
from akm.service.backend import PipelineAnswerService
from akm.service.scope import SourceScope
from akm.settings import load_settings
from akm.store import open_store

DOCUMENTS = [
    {"_id": "d1", "title": "Tidal locking", "text": "The Moon is tidally locked to the Earth."},
    {
        "_id": "d2",
        "title": "Photosynthesis",
        "text": "Chloroplasts convert light energy into chemical energy.",
    },
]
CORPUS_REF = {
    "sourceId": "corpus:facts",
    "rootAlias": "facts",
    "rootPath": ".",
    "classification": "public",
    "include": ["**"],
    "retrievalLanes": ["exact", "qmd-lexical", "qmd-semantic", "direct-read"],
    "authorityPolicy": "primary-literature",
    "freshnessPolicy": "corpus-file-checksum",
}


class QuotingGenerator:
    def stream(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        text = prompt.passages[0] if prompt.passages else ""
        yield text
        return GeneratedAnswer(text=text, decode={})


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    corpus = tmp_path / "facts.jsonl"
    corpus.write_text("".join(json.dumps(document) + "\n" for document in DOCUMENTS), encoding="utf-8")
    config = tmp_path / "project" / "config"
    config.mkdir(parents=True)
    manifest_document: dict[str, Any] = yaml.safe_load(DEFAULT_MANIFEST_FILE.read_text(encoding="utf-8"))
    manifest_document["sourceRefs"].append(CORPUS_REF)
    (config / "manifest.yaml").write_text(yaml.safe_dump(manifest_document), encoding="utf-8")
    settings = load_settings(
        data_dir=tmp_path, embedding_model="hashing", manifest_path=config / "manifest.yaml"
    )
    store = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    ingest_corpus(store, corpus)
    answers = PipelineAnswerService(settings, lambda: store)
    runtime = Runtime.from_settings(settings)
    runtime._store = store
    runtime._generator = QuotingGenerator()  # type: ignore[assignment]
    answers._runtime = runtime
    services = ApiServices(
        store=StoreHandle(store=store),
        scope=SourceScope(load_manifest(config / "manifest.yaml")),
        answers=answers,
        reverify=FakeReverifyService(),
    )
    with TestClient(create_app(settings, services, limits=ApiLimits())) as test_client:
        yield test_client
    store.close()


def test_an_answer_over_a_corpus_has_claim_supported_rows(client: TestClient) -> None:
    response = client.post("/v1/answers", json={"question": "Is the Moon tidally locked to the Earth?"})
    assert response.status_code == 200, response.text
    body = response.json()
    rows = body["packet"]["evidenceRows"]
    supported = [row for row in rows if row["verification"]["state"] == "claim-supported"]
    assert [row["source"]["canonicalUri"] for row in supported] == ["source:facts/d1"]
    assert supported[0]["verification"]["directRead"]["readMethod"] == "source-api-read"
    assert all(row["verification"]["state"] != "rejected" for row in rows)
    assert "tidally locked" in body["answer"]


def test_the_claim_audit_carries_the_support_score_recorded_with_the_judgement(client: TestClient) -> None:
    body = client.post("/v1/answers", json={"question": "Is the Moon tidally locked to the Earth?"}).json()
    supported = [claim for claim in body["claims"] if claim["status"] == "supported"]
    assert supported
    claim = supported[0]
    audit = client.get(f"/v1/claims/{claim['claimId']}").json()
    [occurrence] = [item for item in audit["occurrences"] if item["packetId"] == body["packet"]["packetId"]]
    scores = [row["supportScore"] for row in occurrence["support"]]
    assert scores and all(isinstance(score, float) for score in scores)
    assert max(scores) == claim["supportScore"]
