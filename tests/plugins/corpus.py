"""The service-documentation corpus, fixed-text generators, the real SmolLM2 generator and the
upstream-schema validator, shared by the answer, packet, re-verify and reliability tests.

The corpus is ``tests/fixtures/service_docs``: a frozen copy of the project's documentation, so
tests that assert what an answer quotes do not move when the live ``docs/`` is edited. Stores
are copies of the session's migrated SQLite template (see ``tests/conftest.py``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from akm.answer import EvidencePrompt, GeneratedAnswer
from akm.config import DEFAULT_MANIFEST_FILE
from akm.contract.schema import UPSTREAM_SCHEMA_PATH
from akm.embedding import Embedder, load_embedder
from akm.ingest import ingest
from akm.manifest import Manifest, load_manifest
from akm.store import EvidenceStore, open_store

SERVICE_DOCS = Path(__file__).resolve().parents[1] / "fixtures" / "service_docs"
# A sentence of service_docs/configuration.md that answers "What is the per-source cap?".
CAP_SENTENCE = "The manifest also sets the per-source cap (2 rows per source)."


@dataclass
class FixedGenerator:
    """Streams a fixed answer and remembers the prompts it was given."""

    text: str
    prompts: list[EvidencePrompt] = field(default_factory=list)

    def stream(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        self.prompts.append(prompt)
        yield self.text
        return GeneratedAnswer(text=self.text, decode={"new_tokens": 0, "source": "fixed"})


def upstream_schema() -> dict[str, Any]:
    """The upstream AKM evidence schema, as vendored unchanged inside the package."""
    loaded: dict[str, Any] = json.loads(UPSTREAM_SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def assert_upstream_valid(document: dict[str, Any]) -> None:
    """The packet validates against the upstream schema."""
    errors = sorted(jsonschema.Draft202012Validator(upstream_schema()).iter_errors(document), key=str)
    assert [error.message for error in errors] == []


@dataclass
class Corpus:
    """A copy of the service docs with its own manifest and SQLite store, ingested once."""

    root: Path
    manifest: Manifest
    store: EvidenceStore
    embedder: Embedder

    @staticmethod
    def generator(text: str) -> FixedGenerator:
        return FixedGenerator(text)

    @staticmethod
    def check_upstream(document: dict[str, Any]) -> None:
        assert_upstream_valid(document)


@pytest.fixture
def corpus(tmp_path: Path, migrated_sqlite_url: str) -> Iterator[Corpus]:
    root = tmp_path / "project"
    shutil.copytree(SERVICE_DOCS, root / "docs")
    (root / "config").mkdir()
    shutil.copy(DEFAULT_MANIFEST_FILE, root / "config" / "manifest.yaml")
    store = open_store(migrated_sqlite_url)
    embedder = load_embedder("hashing")
    manifest = load_manifest(root / "config" / "manifest.yaml")
    ingest(store, manifest, embedder=embedder)
    yield Corpus(root=root, manifest=manifest, store=store, embedder=embedder)
    store.close()


@pytest.fixture
def contract_validator() -> Callable[[dict[str, Any], str], None]:
    """Validates a document against one ``$defs`` entry of the upstream schema."""
    schema = upstream_schema()

    def validate(document: dict[str, Any], definition: str) -> None:
        wrapper = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
        jsonschema.Draft202012Validator(wrapper, format_checker=jsonschema.FormatChecker()).validate(document)

    return validate


@pytest.fixture(scope="session")
def smollm2_generator(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The real SmolLM2 target behind the speculative decoder, converted once per session
    (into ``AKM_TEST_MODEL_CACHE`` when set, so CI can keep the conversion between runs)."""
    from akm.answer import SpeculativeAnswerGenerator
    from decoding.models import ModelLoadError, load_target

    cache = Path(os.environ.get("AKM_TEST_MODEL_CACHE") or tmp_path_factory.mktemp("models"))
    try:
        loaded = load_target("smollm2", cache)
    except ModelLoadError as error:
        pytest.skip(f"the SmolLM2 target is not available: {error}")
    return SpeculativeAnswerGenerator(loaded.model, loaded.tokenizer, cost_cache_dir=cache)
