"""Claim-support benchmark on SciFact-shaped claim files.

Each line is a claim with its cited evidence documents; every (claim, document) pair is one
case, the document's sentences joined as the passage, the document's own label as gold
(SUPPORTS / REFUTES / NOT_ENOUGH_INFO; a document cited without rationale sentences is
NOT_ENOUGH_INFO). Lines are split into two fixed halves by line number (0-based even / odd)
so thresholds tuned on one half can be reported on the other.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from akm.verify.judgement import SUPPORT_LABELS, ClaimVerifier, SupportLabel
from akm.verify.lexical import LexicalClaimVerifier

GOLD_LABELS: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NOT_ENOUGH_INFO")


class BenchmarkInputError(ValueError):
    """The claims file is missing or not shaped like a SciFact claims-with-evidence file."""


@dataclass(frozen=True, slots=True)
class VerifyCase:
    line: int
    claim_id: str
    claim: str
    doc_id: str
    passage: str
    sentence_starts: tuple[int, ...]
    rationale_sentences: frozenset[int]
    gold: str


def _passage(sentences: list[str]) -> tuple[str, tuple[int, ...]]:
    starts: list[int] = []
    text = ""
    for sentence in sentences:
        starts.append(len(text) + (1 if text else 0))
        text = f"{text} {sentence}" if text else sentence
    return text, tuple(starts)


def read_cases(claims_path: Path, limit: int | None = None) -> Iterator[VerifyCase]:
    """The (claim, evidence document) pairs of the first ``limit`` lines of ``claims_path``."""
    try:
        handle = claims_path.open(encoding="utf-8")
    except OSError as error:
        raise BenchmarkInputError(f"cannot read claims file {claims_path}: {error.strerror}") from error
    with handle:
        for line_number, line in enumerate(handle):
            if limit is not None and line_number >= limit:
                break
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                for document in record["evidence_docs"]:
                    passage, starts = _passage([str(sentence) for sentence in document["sentences"]])
                    gold = str(document.get("label") or record["label"])
                    if gold not in GOLD_LABELS:
                        raise BenchmarkInputError(f"{claims_path}:{line_number + 1}: unknown label {gold!r}")
                    yield VerifyCase(
                        line=line_number,
                        claim_id=str(record["id"]),
                        claim=str(record["claim"]),
                        doc_id=str(document["doc_id"]),
                        passage=passage,
                        sentence_starts=starts,
                        rationale_sentences=frozenset(
                            int(i) for i in document.get("rationale_sentence_ids", [])
                        ),
                        gold=gold,
                    )
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise BenchmarkInputError(
                    f"{claims_path}:{line_number + 1}: not a claim with evidence_docs ({error})"
                ) from error


def _ratio(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else round(numerator / denominator, 4)


def summarise(pairs: list[tuple[str, SupportLabel]]) -> dict[str, Any]:
    """Precision/recall figures over (gold, predicted) pairs; None where a ratio has no denominator."""
    confusion = {gold: dict.fromkeys(SUPPORT_LABELS, 0) for gold in GOLD_LABELS}
    for gold, predicted in pairs:
        confusion[gold][predicted] += 1
    predicted_supported = sum(row["supported"] for row in confusion.values())
    predicted_contradicted = sum(row["contradicted"] for row in confusion.values())
    gold_totals = {gold: sum(row.values()) for gold, row in confusion.items()}
    return {
        "n_pairs": len(pairs),
        "gold_counts": gold_totals,
        "support_precision": _ratio(confusion["SUPPORTS"]["supported"], predicted_supported),
        "support_recall": _ratio(confusion["SUPPORTS"]["supported"], gold_totals["SUPPORTS"]),
        "false_support_rate_refutes": _ratio(confusion["REFUTES"]["supported"], gold_totals["REFUTES"]),
        "false_support_rate_nei": _ratio(
            confusion["NOT_ENOUGH_INFO"]["supported"], gold_totals["NOT_ENOUGH_INFO"]
        ),
        "contradiction_precision": _ratio(confusion["REFUTES"]["contradicted"], predicted_contradicted),
        "contradiction_recall": _ratio(confusion["REFUTES"]["contradicted"], gold_totals["REFUTES"]),
        "confusion": confusion,
    }


def _span_in_rationale(case: VerifyCase, span: tuple[int, int] | None) -> bool:
    if span is None:
        return False
    bounds = [*case.sentence_starts, len(case.passage) + 1]
    touched = {
        i for i in range(len(case.sentence_starts)) if bounds[i] < span[1] and span[0] < bounds[i + 1] - 1
    }
    return bool(touched & case.rationale_sentences)


def run_verify_benchmark(
    claims_path: Path | str,
    limit: int | None = None,
    verifier: ClaimVerifier | None = None,
    max_examples: int = 25,
) -> dict[str, Any]:
    """Verify every (claim, evidence document) pair and summarise against the gold labels.

    Returns ``summary`` (whole file), ``halves`` (``even``/``odd`` line numbers, for tuning on
    one and reporting on the other), ``seconds``, ``supported_span_in_rationale`` (share of
    correct supports whose aligned span touches a gold rationale sentence) and a few
    ``false_supports`` for inspection.
    """
    active = verifier if verifier is not None else LexicalClaimVerifier()
    started = time.perf_counter()
    pairs: list[tuple[int, str, SupportLabel]] = []
    false_supports: list[dict[str, Any]] = []
    correct_supports = 0
    correct_in_rationale = 0
    claims: set[str] = set()
    for case in read_cases(Path(claims_path), limit):
        judgement = active.verify(case.claim, case.passage)
        pairs.append((case.line, case.gold, judgement.label))
        claims.add(case.claim_id)
        if judgement.label == "supported" and case.gold == "SUPPORTS":
            correct_supports += 1
            correct_in_rationale += _span_in_rationale(case, judgement.span)
        elif judgement.label == "supported" and len(false_supports) < max_examples:
            start, end = judgement.span if judgement.span else (0, 0)
            false_supports.append(
                {
                    "claim_id": case.claim_id,
                    "doc_id": case.doc_id,
                    "gold": case.gold,
                    "claim": case.claim,
                    "span_text": case.passage[start:end],
                    "note": judgement.note,
                }
            )
    seconds = time.perf_counter() - started
    summary = summarise([(gold, predicted) for _, gold, predicted in pairs])
    summary["n_claims"] = len(claims)
    summary["seconds"] = round(seconds, 3)
    return {
        "claims_path": str(claims_path),
        "limit": limit,
        "verifier": type(active).__name__,
        "summary": summary,
        "halves": {
            "even": summarise([(gold, predicted) for line, gold, predicted in pairs if line % 2 == 0]),
            "odd": summarise([(gold, predicted) for line, gold, predicted in pairs if line % 2 == 1]),
        },
        "supported_span_in_rationale": _ratio(correct_in_rationale, correct_supports),
        "seconds": round(seconds, 3),
        "pairs_per_second": round(len(pairs) / seconds, 1) if seconds > 0 else None,
        "false_supports": false_supports,
    }


def format_table(report: dict[str, Any]) -> str:
    """A small plain-text table of the headline figures for the whole file and both halves."""
    keys = (
        "n_pairs",
        "support_precision",
        "support_recall",
        "false_support_rate_refutes",
        "false_support_rate_nei",
        "contradiction_precision",
        "contradiction_recall",
    )
    columns = {"all": report["summary"], "even": report["halves"]["even"], "odd": report["halves"]["odd"]}
    lines = [f"{'metric':<28}" + "".join(f"{name:>10}" for name in columns)]
    for key in keys:
        cells = "".join(
            f"{'-' if columns[name][key] is None else columns[name][key]!s:>10}" for name in columns
        )
        lines.append(f"{key:<28}{cells}")
    lines.append("")
    lines.append(f"{'gold / predicted':<28}" + "".join(f"{label:>14}" for label in SUPPORT_LABELS))
    for gold, row in report["summary"]["confusion"].items():
        lines.append(f"{gold:<28}" + "".join(f"{row[label]:>14}" for label in SUPPORT_LABELS))
    lines.append(f"\n{report['summary']['n_claims']} claims, {report['seconds']} s")
    return "\n".join(lines)
