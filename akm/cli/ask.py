"""``akm ask "QUESTION"``: a grounded answer with claim states, citations, verdict and packet ID.

On an empty store the manifest's sources are ingested first (with the default manifest: the
Markdown and plain text under ``docs/`` of the working directory), and what that ingest left out
is counted on stderr. ``--json`` prints one object ``{answer, claims, verdict, packetId, packet, decode}``.

Exit status: 0 answered (whatever the verdict), 2 bad input, manifest or database,
3 a model could not be loaded, 4 the service built an invalid packet (a bug; nothing stored).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, get_args

from sqlalchemy.exc import SQLAlchemyError

from akm.contract.models import FusionMethod
from akm.ingest import IngestError, IngestReport, ingest
from akm.manifest import Manifest, ManifestError
from akm.retrieval.lanes import ALL_LANES
from akm.retrieval.orchestrate import UnknownLaneError
from akm.retrieval.query import QueryError
from akm.settings import Settings

if TYPE_CHECKING:
    from akm.answer import AnswerOptions, AnswerResult
    from akm.runtime import Runtime

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_MODEL = 3
EXIT_INVALID_PACKET = 4
_MARKS = {
    "supported": "supported",
    "unsupported": "UNSUPPORTED",
    "contradicted": "CONTRADICTED",
    "conflicted": "CONFLICTED",
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="answer a question from directly read evidence, with every claim checked",
        description=(
            "Retrieve, fuse and directly re-read passages, choose the sentences that answer the question, "
            "generate a short answer from them with the speculative decoder (or quote them when the generated "
            "text drops the answer), check every claim against the passages, hold the answer when nothing in "
            "scope answers the question, and store the EvidencePacket. "
            "On an empty store the manifest's sources are ingested first (with the default manifest: the "
            "Markdown and plain text under docs/ of the working directory); files it leaves out are counted, "
            "with the patterns the manifest admits."
        ),
    )
    parser.add_argument("question", help="the question, in quotes")
    parser.add_argument("--json", action="store_true", help="print one JSON object with the full packet")
    parser.add_argument("--strict", action="store_true", help="return only the supported claims")
    parser.add_argument("--max-new-tokens", type=int, metavar="N", help="answer length limit in tokens")
    parser.add_argument("--temperature", type=float, default=0.0, metavar="T", help="0 = greedy (default)")
    parser.add_argument("--seed", type=int, metavar="S", help="sampling seed")
    parser.add_argument(
        "--lanes",
        nargs="+",
        metavar="LANE",
        help=f"lanes to run (default: by query class): {', '.join(ALL_LANES)}",
    )
    parser.add_argument(
        "--fusion", choices=get_args(FusionMethod), help="fusion method (default: the manifest's)"
    )
    parser.add_argument(
        "--max-rows",
        type=int,
        default=4,  # akm.answer.DEFAULT_MAX_ROWS, not imported here to keep `--help` quick
        metavar="N",
        help="fused rows read directly; the answer-bearing sentences are chosen from them",
    )
    parser.set_defaults(handler=run_ask)


def _fail(message: str, code: int) -> int:
    print(f"akm ask: {message}", file=sys.stderr)
    return code


def run_ask(args: argparse.Namespace, settings: Settings) -> int:
    # The answer pipeline pulls in torch and transformers; import it only when asked,
    # so that `akm --help` and the other commands start fast.
    from akm.answer import AnswerOptions
    from akm.packet import InvalidPacketError
    from akm.runtime import ModelUnavailableError, Runtime

    try:
        options = AnswerOptions(
            lanes=tuple(args.lanes) if args.lanes else None,
            fusion_method=args.fusion,
            max_rows=args.max_rows,
            max_new_tokens=args.max_new_tokens or settings.max_new_tokens,
            temperature=args.temperature,
            seed=args.seed,
            strict=args.strict,
        )
    except ValueError as error:
        return _fail(str(error), EXIT_USAGE)
    runtime = Runtime.from_settings(settings)
    try:
        return _ask(args, runtime, options)
    except (QueryError, UnknownLaneError) as error:
        return _fail(str(error), EXIT_USAGE)
    except (ManifestError, IngestError) as error:
        return _fail(str(error), EXIT_USAGE)
    except (SQLAlchemyError, OSError) as error:
        return _fail(f"store unavailable: {error}", EXIT_USAGE)
    except ModelUnavailableError as error:
        return _fail(str(error), EXIT_MODEL)
    except InvalidPacketError as error:
        return _fail(f"internal error, nothing was stored: {error}", EXIT_INVALID_PACKET)
    finally:
        runtime.close()


def _ask(args: argparse.Namespace, runtime: Runtime, options: AnswerOptions) -> int:
    from akm.answer import answer

    store, manifest = runtime.store, runtime.manifest
    if store.count_current_chunks() == 0:
        print("akm ask: the store is empty; ingesting the manifest's sources first", file=sys.stderr)
        report = ingest(store, manifest, embedder=runtime.embedder)
        print(f"akm ask: {report.summary_lines()[0]}", file=sys.stderr)
        for line in left_out_lines(report, manifest):
            print(f"akm ask: {line}", file=sys.stderr)
    result = answer(
        args.question,
        options,
        store=store,
        manifest=manifest,
        embedder=runtime.embedder,
        generator=runtime.generator,
        verifier=runtime.verifier,
    )
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(render(result)))
    return EXIT_OK


# Files the walk found and left out because no include pattern or allowed format admits them.
_NOT_ADMITTED = ("not-included", "unknown-content-type", "content-type-not-allowed")


def left_out_lines(report: IngestReport, manifest: Manifest) -> list[str]:
    """What the first ingest of ``akm ask`` left out (counts only, never names), and, when files
    were not admitted, which patterns the manifest admits and how to admit others."""
    if not report.denied_total:
        return []
    reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(report.denied.items()))
    lines = [f"left out {report.denied_total} file(s) (count only): {reasons}"]
    if any(report.denied.get(reason) for reason in _NOT_ADMITTED):
        patterns = sorted(
            {f"{ref.root_path}/{pattern}" for ref in manifest.source_refs for pattern in ref.include}
        )
        types = ", ".join(manifest.scope.allowed_content_types)
        lines.append(
            f"the manifest admits {', '.join(patterns)} ({types}); to ask over other files (HTML, PDF, "
            "DOCX), name a manifest of your own with --manifest or AKM_MANIFEST_PATH"
        )
    return lines


def decode_summary(decode: dict[str, Any]) -> str:
    """One line: speed, the speed-up over plain decoding and how many drafts were accepted."""
    if "new_tokens" not in decode:
        return "decode: no statistics"
    generator = decode.get("generator")
    if isinstance(generator, dict) and generator.get("backend") == "openai":
        return remote_decode_summary(decode, generator)
    estimated = decode.get("estimated_speedup")
    by_calls = decode.get("speedup_by_calls")
    speedup = (
        f"~{estimated:.2f}x over plain (estimated from target calls and the measured verify-cost ratio)"
        if isinstance(estimated, float)
        else f"{by_calls:.2f} tokens per target call"
        if isinstance(by_calls, float)
        else "speed-up unknown"
    )
    return (
        f"decode: {decode['new_tokens']} tokens in {decode.get('wall_s', 0.0):.2f} s "
        f"({decode.get('tokens_per_s', 0.0):.1f} tokens/s), {decode.get('target_calls', 0)} target calls "
        f"({decode['new_tokens'] / max(decode.get('target_calls', 1), 1):.2f} tokens/call), {speedup}, "
        f"mean accepted length {decode.get('mean_accepted_length', 0.0):.2f}"
    )


def remote_decode_summary(decode: dict[str, Any], generator: dict[str, Any]) -> str:
    """One line for an answer drafted by a remote server: what it reported, and what it did not."""
    where = f"{generator.get('model')} at {generator.get('baseUrl')}"
    tokens = decode.get("new_tokens")
    counted = f"{tokens} tokens" if isinstance(tokens, int) else "token count not reported"
    line = f"decode: remote generator {where}: {counted} in {float(decode.get('wall_s') or 0.0):.2f} s"
    per_call = decode.get("tokens_per_target_call")
    if isinstance(per_call, int | float):
        line += f", {per_call:.2f} tokens per target call"
    acceptance = decode.get("acceptance_rate")
    if isinstance(acceptance, int | float):
        line += f", draft acceptance {acceptance:.0%}"
    return line


def _no_answer(decode: dict[str, Any]) -> str:
    if decode.get("finish_reason") in ("length", "context_window"):
        return (
            "(no answer: the model reached the token limit before finishing a sentence; "
            "an unfinished sentence is never checked or shown)"
        )
    return "(no answer)"


def render(result: AnswerResult) -> list[str]:
    answer = result.answer or _no_answer(result.decode)
    lines = ["Answer:", *(f"  {line}" for line in answer.splitlines()), "", "Claims:"]
    if not result.claims:
        lines.append("  (none)")
    for claim in result.claims:
        lines.append(f"  [{_MARKS[claim.status]}] {claim.text}  ({claim.importance} {claim.claim_class})")
        for citation in claim.citations:
            number = f"E{citation.number} " if citation.number is not None else ""
            lines.append(
                f"      {claim.citation_mode} {number}{citation.source_path} {citation.locator} "
                f"@ {citation.revision} ({citation.evidence_id})"
            )
    verification = result.packet.verification
    lines += ["", f"Verdict: {verification.verdict}"]
    lines += [f"  - {reason}" for reason in verification.verdict_reasons]
    composition = result.selection.get("composition")
    if composition == "quoted":
        lines.append(
            "Composed: the answer quotes the passage (the generated text dropped or missed the answer)"
        )
    elif composition == "abstained":
        lines.append("Composed: nothing was generated; no passage in scope answers the question")
    lines += [f"Packet: {result.packet_id}", decode_summary(result.decode)]
    timings = ", ".join(f"{name.replace('_', ' ')} {ms:.0f} ms" for name, ms in result.timings_ms.items())
    lines.append(f"latency: {timings}")
    return lines
