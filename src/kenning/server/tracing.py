"""Tracing for ``kenning serve --otel``: the OTLP exporter, set up from the standard
``OTEL_*`` environment variables in each worker process.

FastAPI opens the server span of each HTTP request itself (its native telemetry, under the
HTTP conventions: ``METHOD route``, ``http.route``, ``http.response.status_code``; an incoming
``traceparent`` continues the caller's trace) as soon as a tracer provider is set; the memory
operations' spans (:mod:`kenning.telemetry`) are its descendants.
"""

from __future__ import annotations

import os

from kenning.errors import Unsupported

__all__ = ["require_api", "setup_otlp"]


def require_api() -> None:
    """Unsupported, naming the extra, where the OpenTelemetry API is not installed."""
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError as exc:
        raise Unsupported("tracing needs OpenTelemetry: pip install 'kenning[otel]'") from exc


def setup_otlp() -> None:
    """Export spans over OTLP (HTTP/protobuf) where ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or the
    traces endpoint) says, as ``service.name`` ``$OTEL_SERVICE_NAME`` or ``kenning``."""
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        needed = "--otel needs the OpenTelemetry SDK: pip install 'kenning[otel]'"
        raise Unsupported(needed) from exc
    # The SDK reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; kenning names itself only
    # where they do not.
    named = os.environ.get("OTEL_SERVICE_NAME")
    resource = Resource.create({} if named else {"service.name": "kenning"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
