"""``akm serve``: the REST API under uvicorn; ``akm openapi``: write or check its OpenAPI document."""

from __future__ import annotations

import argparse
import inspect
import ipaddress
import os
import sys
from pathlib import Path

from akm.settings import Settings

EXIT_OK = 0
EXIT_DIFFERENT = 1
EXIT_USAGE = 2
WORKER_HEALTHCHECK_S = 120
# The committed copy in a checkout, relative to the working directory (the checkout's root).
DEFAULT_OPENAPI_PATH = Path("docs") / "openapi.json"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="serve the REST API (answers, audits, metrics)",
        description=(
            "Serve the REST API with uvicorn. Settings come from AKM_* environment variables and the "
            "global flags; API limits from AKM_API_* variables (e.g. AKM_API_GENERATION_CONCURRENCY)."
        ),
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    serve.add_argument(
        "--log-level", default="info", choices=("debug", "info", "warning", "error"), help="log level"
    )
    serve.add_argument(
        "--load-models",
        action="store_true",
        help="load the models when each worker starts instead of on the first answer",
    )
    serve.set_defaults(handler=run_serve)

    openapi = subparsers.add_parser(
        "openapi",
        help="write the REST API's OpenAPI document, or check a committed copy",
        description="Generate the OpenAPI document of the REST API.",
    )
    openapi.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OPENAPI_PATH,
        help=f"file to write (default {DEFAULT_OPENAPI_PATH})",
    )
    openapi.add_argument(
        "--check", action="store_true", help="exit 1 if the file differs from the generated document"
    )
    openapi.set_defaults(handler=run_openapi)


def _export_settings(settings: Settings) -> None:
    # Workers are separate processes that rebuild settings from the environment.
    for name in type(settings).model_fields:
        os.environ[f"AKM_{name.upper()}"] = str(getattr(settings, name))


def _migrate_once(settings: Settings) -> None:
    """Bring the store to the head revision before workers start, so they never race to migrate.

    An unreachable database is not fatal: workers answer 503 until it can be reached.
    """
    from sqlalchemy.exc import SQLAlchemyError

    from akm.store import open_store

    try:
        open_store(settings.resolved_database_url).close()
    except (SQLAlchemyError, OSError) as error:
        print(f"akm serve: warning: the store cannot be opened yet: {type(error).__name__}", file=sys.stderr)


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the API on this machine (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str) -> str | None:
    """The start-up warning for an address other machines can reach: the API has no authentication."""
    if is_loopback(host):
        return None
    return (
        f"akm serve: warning: binding {host}, reachable from other machines, and the API has no "
        "authentication: anyone who can connect can ask (and spend CPU), re-verify (which writes) and "
        "read audits and metrics. Bind 127.0.0.1 behind an authenticating reverse proxy instead; "
        "see docs/deployment.md."
    )


def run_serve(args: argparse.Namespace, settings: Settings) -> int:
    if not 0 < args.port < 65536:
        print(f"akm serve: error: --port must be 1-65535, got {args.port}", file=sys.stderr)
        return EXIT_USAGE
    if args.workers < 1:
        print(f"akm serve: error: --workers must be at least 1, got {args.workers}", file=sys.stderr)
        return EXIT_USAGE
    import uvicorn

    from akm.api.limits import ApiLimits
    from akm.api.server import log_config

    try:
        ApiLimits()
    except ValueError as error:
        print(f"akm serve: error: invalid AKM_API_* setting: {error}", file=sys.stderr)
        return EXIT_USAGE
    warning = exposure_warning(args.host)
    if warning is not None:
        print(warning, file=sys.stderr)
    _migrate_once(settings)
    _export_settings(settings)
    if args.load_models:
        os.environ["AKM_API_LOAD_MODELS_AT_STARTUP"] = "true"
    extra: dict[str, object] = {}
    if "timeout_worker_healthcheck" in inspect.signature(uvicorn.run).parameters:
        # A worker imports torch and may load a model before it answers the supervisor's
        # ping; the default 5 s would have a slow machine's workers killed and restarted.
        extra["timeout_worker_healthcheck"] = WORKER_HEALTHCHECK_S
    uvicorn.run(
        "akm.api.server:app_from_environment",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_config=log_config(args.log_level),
        access_log=False,
        timeout_graceful_shutdown=10,
        **extra,  # type: ignore[arg-type]
    )
    return EXIT_OK


def run_openapi(args: argparse.Namespace, settings: Settings) -> int:
    from akm.api.app import create_app
    from akm.api.server import openapi_json

    document = openapi_json(create_app(settings))
    path: Path = args.output
    if args.check:
        try:
            committed = path.read_text(encoding="utf-8")
        except OSError as error:
            print(f"akm openapi: error: cannot read {path}: {error.strerror}", file=sys.stderr)
            return EXIT_USAGE
        if committed != document:
            print(
                f"akm openapi: {path} differs from the generated document; run `akm openapi`", file=sys.stderr
            )
            return EXIT_DIFFERENT
        print(f"akm openapi: {path} is up to date")
        return EXIT_OK
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document, encoding="utf-8")
    print(f"akm openapi: wrote {path}")
    return EXIT_OK
