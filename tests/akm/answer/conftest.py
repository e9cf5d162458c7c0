"""A temporary copy of the bundled corpus with its own manifest and store, and fixed-text generators."""

from __future__ import annotations

import json
import shutil
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from akm.answer import EvidencePrompt, GeneratedAnswer
from akm.config import DEFAULT_MANIFEST_FILE
from akm.embedding import Embedder, load_embedder
from akm.ingest import ingest
from akm.manifest import Manifest, load_manifest
from akm.store import EvidenceStore, open_store

REPO_ROOT_DIR = Path(__file__).resolve().parents[3]

REFERENCE_SCHEMA = REPO_ROOT_DIR.parent / "shared" / "reference" / "akm" / "evidence-row.schema.json"
CAP_SENTENCE = "The manifest also sets the per-source cap (2 rows per source)."


@dataclass
class FixedGenerator:
    """Returns a fixed answer and remembers the prompts it was given."""

    text: str
    prompts: list[EvidencePrompt] = field(default_factory=list)

    def stream(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        self.prompts.append(prompt)
        yield self.text
        return GeneratedAnswer(text=self.text, decode={"new_tokens": 0, "source": "fixed"})


@dataclass
class Corpus:
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
def corpus(tmp_path: Path) -> Iterator[Corpus]:
    root = tmp_path / "project"
    shutil.copytree(REPO_ROOT_DIR / "docs", root / "docs")
    (root / "config").mkdir()
    shutil.copy(DEFAULT_MANIFEST_FILE, root / "config" / "manifest.yaml")
    store = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    embedder = load_embedder("hashing")
    manifest = load_manifest(root / "config" / "manifest.yaml")
    ingest(store, manifest, embedder=embedder)
    yield Corpus(root=root, manifest=manifest, store=store, embedder=embedder)
    store.close()


def assert_upstream_valid(document: dict[str, Any]) -> None:
    """The packet validates against the shared upstream schema (skips when it is absent)."""
    if not REFERENCE_SCHEMA.is_file():
        pytest.skip(f"upstream schema not found at {REFERENCE_SCHEMA}")
    schema = json.loads(REFERENCE_SCHEMA.read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(document), key=str)
    assert [error.message for error in errors] == []


@pytest.fixture(scope="session")
def smollm2_generator(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The real SmolLM2 target behind the speculative decoder, converted once per session
    (into ``AKM_TEST_MODEL_CACHE`` when set, so CI can keep the conversion between runs)."""
    import os

    from akm.answer import SpeculativeAnswerGenerator
    from decoding.models import ModelLoadError, load_target

    cache = Path(os.environ.get("AKM_TEST_MODEL_CACHE") or tmp_path_factory.mktemp("models"))
    try:
        loaded = load_target("smollm2", cache)
    except ModelLoadError as error:
        pytest.skip(f"the SmolLM2 target is not available: {error}")
    return SpeculativeAnswerGenerator(loaded.model, loaded.tokenizer, cost_cache_dir=cache)
