"""Spans per answer stage, recorded with an in-memory exporter; off by default."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from akm import tracing
from akm.answer import AnswerOptions, answer
from akm.cli import main
from tests.plugins.corpus import CAP_SENTENCE, Corpus

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STAGES = {
    "akm.retrieval",
    "akm.fusion",
    "akm.direct_read",
    "akm.selection",
    "akm.generation",
    "akm.verification",
    "akm.storage",
}


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    yield exporter
    tracing.use_provider(None)


def _ask(corpus: Corpus) -> object:
    return answer(
        "What does the per-source cap limit?",
        AnswerOptions(max_rows=3),
        store=corpus.store,
        manifest=corpus.manifest,
        embedder=corpus.embedder,
        generator=corpus.generator(CAP_SENTENCE),
    )


def test_every_stage_is_a_span_under_one_answer_span(corpus: Corpus, exporter: InMemorySpanExporter) -> None:
    result = _ask(corpus)
    spans = exporter.get_finished_spans()
    (root,) = [span for span in spans if span.name == "akm.answer"]
    assert root.attributes is not None
    assert root.attributes["akm.packet_id"] == result.packet_id  # type: ignore[attr-defined]
    assert root.attributes["akm.verdict"] == result.verdict  # type: ignore[attr-defined]
    by_name = {span.name: span for span in spans}
    assert set(by_name) >= STAGES
    stages_under_root = {
        span.name for span in spans if span.parent is not None and span.parent.span_id == root.context.span_id
    }
    assert STAGES - {"akm.fusion"} <= stages_under_root
    retrieval = by_name["akm.retrieval"]
    lanes = [span for span in spans if span.name == "akm.lane"]
    assert lanes and all(
        span.parent is not None and span.parent.span_id == retrieval.context.span_id for span in lanes
    )
    assert {span.attributes["akm.lane"] for span in lanes if span.attributes} >= {"qmd-lexical"}
    assert by_name["akm.fusion"].parent.span_id == retrieval.context.span_id  # type: ignore[union-attr]
    assert all(span.context.trace_id == root.context.trace_id for span in spans)
    # Every stage lies inside the answer's span.
    assert all(
        root.start_time <= span.start_time and span.end_time <= root.end_time
        for span in spans
        if span.name in STAGES
    )  # type: ignore[operator]


def test_a_failed_answer_marks_its_span_as_an_error(corpus: Corpus, exporter: InMemorySpanExporter) -> None:
    class Broken:
        def stream(self, prompt: object, **kwargs: object) -> Iterator[str]:
            yield from ()
            raise RuntimeError("generator failed")

    with pytest.raises(RuntimeError, match="generator failed"):
        answer(
            "What does the per-source cap limit?",
            AnswerOptions(max_rows=3),
            store=corpus.store,
            manifest=corpus.manifest,
            embedder=corpus.embedder,
            generator=Broken(),  # type: ignore[arg-type]
        )
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert not spans["akm.answer"].status.is_ok
    assert not spans["akm.generation"].status.is_ok
    assert "akm.storage" not in spans


def test_tracing_is_off_unless_configured(corpus: Corpus) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    tracing.configure("off")
    _ask(corpus)
    assert exporter.get_finished_spans() == ()
    assert not tracing.start_span("probe").is_recording()


def test_an_exporter_whose_package_is_missing_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        import opentelemetry.exporter.otlp.proto.http  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("the OTLP exporter package is installed here, so the missing-package error cannot occur")
    with pytest.raises(tracing.TracingConfigurationError, match="opentelemetry-exporter-otlp-proto-http"):
        tracing.configure("otlp")
    monkeypatch.setenv("AKM_TRACING", "otlp")
    assert main(["validate", str(EXAMPLES)]) == 2
    assert (
        "akm: tracing 'otlp' needs the opentelemetry-exporter-otlp-proto-http package"
        in capsys.readouterr().err
    )
    tracing.configure("off")
