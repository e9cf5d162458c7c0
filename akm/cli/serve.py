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
            "global flags; API limits from AKM_API_* variables (e.g. AKM_API_GENERATION_CONCURRENCY). "
            "Binding an address other than loopback requires API keys (`akm keys create`): without an "
            "active key it refuses to start."
        ),
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1); any other than loopback requires API keys",
    )
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
    serve.add_argument(
        "--generator-only",
        action="store_true",
        help=(
            "serve only the target model behind the speculative decoder as OpenAI completions "
            "(POST /v1/completions, GET /healthz) for API workers elsewhere; no store, no retrieval"
        ),
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
    """The start-up notice for an address other machines can reach: every request needs an API key."""
    if is_loopback(host):
        return None
    return (
        f"akm serve: binding {host}, reachable from other machines: every request but /healthz and "
        "/readyz needs an API key (`Authorization: Bearer <key>`); the API itself has no TLS, so put "
        "a TLS-terminating proxy in front of it; see docs/security.md."
    )


def missing_keys_error(host: str, settings: Settings) -> str | None:
    """Why serving must not start: keys are required (a non-loopback ``host`` or ``require_api_keys``)
    and the store holds no active key, or cannot be read; None when serving may start."""
    if is_loopback(host) and not settings.require_api_keys:
        return None
    from sqlalchemy.exc import SQLAlchemyError

    from akm.store import open_store

    why = (
        f"binding {host}, which other machines can reach,"
        if not is_loopback(host)
        else "require_api_keys is set (AKM_REQUIRE_API_KEYS),"
    )
    try:
        store = open_store(settings.resolved_database_url)
        try:
            active = store.count_active_api_keys()
        finally:
            store.close()
    except (SQLAlchemyError, OSError) as error:
        return (
            f"akm serve: error: {why} needs API keys, and the store cannot be read to check for them "
            f"({type(error).__name__}); refusing to start."
        )
    if active:
        return None
    return (
        f"akm serve: error: {why} needs API keys, and the store has no active key; refusing to start. "
        "Create one with `akm keys create --scope ask` (scopes: ask, ingest, audit, admin; see "
        "docs/security.md), or bind 127.0.0.1 to serve this machine only."
    )


def run_serve(args: argparse.Namespace, settings: Settings) -> int:
    if not 0 < args.port < 65536:
        print(f"akm serve: error: --port must be 1-65535, got {args.port}", file=sys.stderr)
        return EXIT_USAGE
    if args.workers < 1:
        print(f"akm serve: error: --workers must be at least 1, got {args.workers}", file=sys.stderr)
        return EXIT_USAGE

    from akm.api.limits import ApiLimits

    try:
        ApiLimits()
    except ValueError as error:
        print(f"akm serve: error: invalid AKM_API_* setting: {error}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "generator_only", False):
        return run_generator_server(args, settings)
    _migrate_once(settings)
    refusal = missing_keys_error(args.host, settings)
    if refusal is not None:
        print(refusal, file=sys.stderr)
        return EXIT_USAGE
    notice = exposure_warning(args.host)
    if notice is not None:
        print(notice, file=sys.stderr)
        # Workers rebuild their settings from the environment: keys are required there too.
        settings = settings.model_copy(update={"require_api_keys": True})
    _export_settings(settings)
    if args.load_models:
        os.environ["AKM_API_LOAD_MODELS_AT_STARTUP"] = "true"
    return _run_uvicorn("akm.api.server:app_from_environment", args)


def _run_uvicorn(factory: str, args: argparse.Namespace) -> int:
    """uvicorn over the app ``factory`` builds in each worker, with this command's address and workers."""
    import uvicorn

    from akm.api.server import log_config

    extra: dict[str, object] = {}
    if "timeout_worker_healthcheck" in inspect.signature(uvicorn.run).parameters:
        # A worker imports torch and may load a model before it answers the supervisor's
        # ping; the default 5 s would have a slow machine's workers killed and restarted.
        extra["timeout_worker_healthcheck"] = WORKER_HEALTHCHECK_S
    uvicorn.run(
        factory,
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


def run_generator_server(args: argparse.Namespace, settings: Settings) -> int:
    """``akm serve --generator-only``: the target model as OpenAI completions (akm.api.generator_app)."""
    from akm.answer.remote import is_remote_target

    if is_remote_target(settings.target_model):
        print(
            f"akm serve: error: --generator-only serves a local target model, and target_model names a "
            f"remote server ({settings.target_model}); set AKM_TARGET_MODEL to smollm2 or a model directory",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not is_loopback(args.host):
        print(
            f"akm serve: warning: binding {args.host}: the generator server has no authentication; "
            "anyone who can connect can spend its CPU or GPU. Keep it on a private network reachable "
            "only by the API workers; see docs/deployment.md.",
            file=sys.stderr,
        )
    _export_settings(settings)
    return _run_uvicorn("akm.api.generator_app:generator_app_from_environment", args)


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
