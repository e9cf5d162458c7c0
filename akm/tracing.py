"""OpenTelemetry spans for the stages of an answer, off unless configured.

The answer path already measures each stage (``timings_ms``); with tracing on, each stage is also
a span under one ``akm.answer`` span: ``akm.retrieval`` (with one ``akm.lane`` child per lane,
built from the lane's own recorded start and latency, since lanes run on worker threads),
``akm.fusion``, ``akm.direct_read``, ``akm.selection``, ``akm.generation``, ``akm.verification`` and
``akm.storage``. Spans are started with an explicit parent and never made "current", so a stage
that spans a generator's ``yield`` (generation streams its text) cannot leak context into the
caller's code.

``settings.tracing``: ``off`` (default: OpenTelemetry's no-op tracer, nothing recorded),
``console`` (each finished span printed as JSON on stderr) or ``otlp`` (exported over OTLP/HTTP
to ``OTEL_EXPORTER_OTLP_ENDPOINT``; needs the ``opentelemetry-exporter-otlp-proto-http`` package).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal

from opentelemetry import trace
from opentelemetry.trace import Span, Tracer, TracerProvider

TracingExporter = Literal["off", "console", "otlp"]
TRACER_NAME = "akm"

_provider: TracerProvider | None = None


class TracingConfigurationError(RuntimeError):
    """The configured exporter cannot be set up (its package is missing)."""


def use_provider(provider: TracerProvider | None) -> None:
    """Record spans through ``provider`` from now on (None: back to the global, no-op by default)."""
    global _provider
    _provider = provider


def configure(exporter: TracingExporter) -> None:
    """Set up the exporter named in the settings; ``off`` leaves tracing off."""
    if exporter == "off":
        use_provider(None)
        return
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    span_exporter: SpanExporter
    if exporter == "console":
        span_exporter = ConsoleSpanExporter()
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as error:
            raise TracingConfigurationError(
                "tracing 'otlp' needs the opentelemetry-exporter-otlp-proto-http package"
            ) from error
        span_exporter = OTLPSpanExporter()
    provider = SdkTracerProvider(resource=Resource.create({"service.name": "akm"}))
    provider.add_span_processor(BatchSpanProcessor(span_exporter))
    use_provider(provider)


def tracer() -> Tracer:
    return (_provider or trace.get_tracer_provider()).get_tracer(TRACER_NAME)


def start_span(name: str, parent: Span | None = None, attributes: Mapping[str, Any] | None = None) -> Span:
    """A span under ``parent`` (a root span when None), not made current."""
    context = trace.set_span_in_context(parent) if parent is not None else None
    return tracer().start_span(name, context=context, attributes=dict(attributes or {}))


@contextmanager
def span(name: str, parent: Span | None, attributes: Mapping[str, Any] | None = None) -> Iterator[Span]:
    """``start_span`` for the duration of a block; an exception is recorded on the span."""
    opened = start_span(name, parent, attributes)
    try:
        yield opened
    except BaseException as error:
        opened.record_exception(error)
        opened.set_status(trace.Status(trace.StatusCode.ERROR, str(error)))
        raise
    finally:
        opened.end()


def record_finished(
    name: str, parent: Span | None, started_at: str, latency_ms: float, attributes: Mapping[str, Any]
) -> None:
    """A span for work that already ran, from its recorded ISO start and latency."""
    start_ns = int(datetime.fromisoformat(started_at.replace("Z", "+00:00")).timestamp() * 1e9)
    context = trace.set_span_in_context(parent) if parent is not None else None
    recorded = tracer().start_span(name, context=context, attributes=dict(attributes), start_time=start_ns)
    recorded.end(end_time=start_ns + int(latency_ms * 1e6))


__all__ = [
    "TracingConfigurationError",
    "TracingExporter",
    "configure",
    "record_finished",
    "span",
    "start_span",
    "tracer",
    "use_provider",
]
