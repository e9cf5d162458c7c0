"""The production answer and re-verify services over the real pipeline, with a scripted generator."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from api_fakes import GUIDE, HIDDEN_BY_EXCLUDE, default_manifest

from akm.answer import GeneratedAnswer
from akm.config import DEFAULT_MANIFEST_FILE
from akm.embedding import load_embedder
from akm.ingest import ingest
from akm.manifest import load_manifest
from akm.runtime import Runtime
from akm.service.answers import AnswerRequest, CancelSignal
from akm.service.backend import PipelineAnswerService, PipelineReverifyService, answer_options
from akm.service.errors import GenerationCancelledError, InvalidRequestError, NotFoundError
from akm.service.scope import SourceScope
from akm.settings import load_settings
from akm.store import EvidenceStore, open_store

WORDS = (
    "Construction began in 1921 ",
    "and the bridge was opened ",
    "to traffic on 19 March 1932 ",
    "by the mayor, ",
    "Edith Carrow.",
)
QUESTION = "When was the Kestrel Harbour Bridge opened to traffic?"
FIXTURE_DOCS = Path(__file__).resolve().parents[2] / "fixtures" / "answers" / "docs"


class ScriptedGenerator:
    """Streams fixed words; ``pause`` is waited on after the second word."""

    def __init__(self, pause: threading.Event | None = None) -> None:
        self.pause = pause

    def stream(
        self, prompt: Any, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        for index, word in enumerate(WORDS):
            yield word
            if index == 1 and self.pause is not None:
                self.pause.wait(5)
        return GeneratedAnswer(text="".join(WORDS), decode={"new_tokens": len(WORDS), "tokens_per_s": 50.0})


@pytest.fixture
def answer_store(tmp_path: Path) -> Iterator[EvidenceStore]:
    """The fixture articles ingested into a fresh store, under a copy of the default manifest."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURE_DOCS, root / "docs")
    (root / "config").mkdir()
    shutil.copy(DEFAULT_MANIFEST_FILE, root / "config" / "manifest.yaml")
    store = open_store(f"sqlite:///{tmp_path / 'answers.sqlite3'}")
    ingest(store, load_manifest(root / "config" / "manifest.yaml"), embedder=load_embedder("hashing"))
    yield store
    store.close()


def service_over(store: EvidenceStore, tmp_path: Path, generator: ScriptedGenerator) -> PipelineAnswerService:
    manifest = tmp_path / "project" / "config" / "manifest.yaml"
    settings = (
        load_settings(data_dir=tmp_path, embedding_model="hashing", manifest_path=manifest)
        if manifest.is_file()
        else load_settings(data_dir=tmp_path, embedding_model="none")
    )
    service = PipelineAnswerService(settings, lambda: store)
    runtime = Runtime.from_settings(settings)
    runtime._store = store
    runtime._generator = generator  # type: ignore[assignment]
    service._runtime = runtime
    return service


def test_stream_yields_drafts_claims_and_the_stored_answer(
    answer_store: EvidenceStore, tmp_path: Path
) -> None:
    seeded_store = answer_store
    service = service_over(seeded_store, tmp_path, ScriptedGenerator())
    before = seeded_store.count_packets()
    events = list(service.stream(AnswerRequest(QUESTION, {"maxRows": 2}), CancelSignal()))
    kinds = [event.kind for event in events]
    assert kinds[: len(WORDS)] == ["draft"] * len(WORDS)
    assert [event.data["text"] for event in events[: len(WORDS)]] == list(WORDS)
    assert kinds[-1] == "verdict"
    assert set(kinds[len(WORDS) : -1]) <= {"claim"}
    final = events[-1].data
    assert set(final) == {"answer", "claims", "verdict", "packetId", "packet", "decode", "selection"}
    assert final["answer"] == "".join(WORDS)
    assert final["verdict"]["verdict"] == "PASS"
    assert seeded_store.count_packets() == before + 1
    assert seeded_store.get_packet(final["packetId"]) is not None


def test_cancel_during_generation_stores_nothing(answer_store: EvidenceStore, tmp_path: Path) -> None:
    seeded_store = answer_store
    pause = threading.Event()
    service = service_over(seeded_store, tmp_path, ScriptedGenerator(pause))
    cancel = CancelSignal()
    before = seeded_store.count_packets()
    stream = service.stream(AnswerRequest(QUESTION), cancel)
    first = next(stream)
    assert (first.kind, first.data["text"]) == ("draft", WORDS[0])
    cancel.set()
    pause.set()
    with pytest.raises(GenerationCancelledError):
        list(stream)
    assert seeded_store.count_packets() == before


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, {}),
        (
            {"lanes": ["exact"], "fusion": "rrf", "max_rows": 2, "max_new_tokens": 8, "strict": True},
            {"lanes": ("exact",), "fusion_method": "rrf", "max_rows": 2, "max_new_tokens": 8, "strict": True},
        ),
    ],
    ids=["defaults", "all"],
)
def test_answer_options_map_to_the_pipeline(options: dict[str, Any], expected: dict[str, Any]) -> None:
    mapped = answer_options(options)
    for name, value in expected.items():
        assert getattr(mapped, name) == value


def test_bad_question_is_invalid_request(seeded_store: EvidenceStore, tmp_path: Path) -> None:
    service = service_over(seeded_store, tmp_path, ScriptedGenerator())
    with pytest.raises(InvalidRequestError):
        service.answer(AnswerRequest("   "), CancelSignal())


def test_reverify_covers_only_sources_in_scope(seeded_store: EvidenceStore, tmp_path: Path) -> None:
    manifest = default_manifest()
    service = PipelineReverifyService(
        load_settings(data_dir=tmp_path), lambda: seeded_store, manifest, SourceScope(manifest)
    )
    report = service.reverify(None)
    assert report["sourcesChecked"] == 1
    assert service.reverify(GUIDE)["sourcesChecked"] == 1
    with pytest.raises(NotFoundError):
        service.reverify(HIDDEN_BY_EXCLUDE)


class CountingGenerator(ScriptedGenerator):
    def __init__(self) -> None:
        super().__init__()
        self.inside = 0
        self.most_inside = 0
        self.guard = threading.Lock()

    def stream(self, prompt: Any, **kwargs: Any) -> Generator[str, None, GeneratedAnswer]:
        with self.guard:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        try:
            threading.Event().wait(0.05)
            return (yield from super().stream(prompt, **kwargs))
        finally:
            with self.guard:
                self.inside -= 1


def test_overlapping_answers_decode_one_at_a_time(answer_store: EvidenceStore, tmp_path: Path) -> None:
    generator = CountingGenerator()
    service = service_over(answer_store, tmp_path, generator)
    results: list[dict[str, Any]] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(service.answer(AnswerRequest(QUESTION), CancelSignal()))
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(results) == 3
    assert generator.most_inside == 1
