"""Claim-support benchmark on SciFact-shaped claim files.

Each line is a claim with its cited evidence documents; every (claim, document) pair is one
case, the document's sentences joined as the passage, the document's own label as gold
(SUPPORTS / REFUTES / NOT_ENOUGH_INFO; a document cited without rationale sentences is
NOT_ENOUGH_INFO). Lines are split into two fixed halves by line number (0-based even / odd)
so thresholds tuned on one half can be reported on the other.

Beside the verdicts at the verifier's own threshold, the report holds a precision/recall
curve over support-score thresholds (``threshold_curve``) and a breakdown of false supports
and misses by kind (``error_kinds``): direction, roles, attribution/hedging,
same-words-other-relation, list membership, other.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from akm.verify.judgement import SUPPORT_LABELS, ClaimVerifier, SupportJudgement, SupportLabel
from akm.verify.lexical import LexicalClaimVerifier
from akm.verify.structure import hedged_scopes, list_items
from akm.verify.wording import compares, directions, words
from decoding.bench.errors import BenchmarkInputError, import_bench_extra

GOLD_LABELS: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NOT_ENOUGH_INFO")
CURVE_THRESHOLDS: tuple[float, ...] = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
ERROR_KINDS: tuple[str, ...] = (
    "direction",
    "roles",
    "attribution/hedging",
    "same-words-other-relation",
    "list-membership",
    "other",
)
# The kind of error a failed check stands for, when that check decided a miss.
_CHECK_KINDS: dict[str, str] = {
    "direction": "direction",
    "polar-words": "direction",
    "roles": "roles",
    "comparison": "roles",
    "attribution": "attribution/hedging",
    "hedge": "attribution/hedging",
    "list": "list-membership",
    "degree": "same-words-other-relation",
    "predicate": "same-words-other-relation",
    "modifier": "same-words-other-relation",
    "proximity": "same-words-other-relation",
    "substitution": "same-words-other-relation",
}


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


@dataclass(frozen=True, slots=True)
class ScoredPair:
    """One case's gold label, verdict and support score (what the curve and the kinds need)."""

    line: int
    gold: str
    label: SupportLabel
    score: float


def support_score_of(judgement: SupportJudgement) -> float:
    """The judgement's support score; a verifier without scores counts 1 when it supports, else 0."""
    if judgement.support_score is not None:
        return judgement.support_score
    return 1.0 if judgement.label == "supported" else 0.0


def _supported_at(pair: ScoredPair, threshold: float) -> bool:
    # A contradiction is a finding against the claim whatever the score.
    return pair.label != "contradicted" and pair.score >= threshold - 1e-12


def _curve_point(pairs: list[ScoredPair], threshold: float) -> dict[str, Any]:
    supported = [pair for pair in pairs if _supported_at(pair, threshold)]
    gold = {label: sum(1 for pair in pairs if pair.gold == label) for label in GOLD_LABELS}
    true = sum(1 for pair in supported if pair.gold == "SUPPORTS")
    return {
        "threshold": threshold,
        "n_supported": len(supported),
        "support_precision": _ratio(true, len(supported)),
        "support_recall": _ratio(true, gold["SUPPORTS"]),
        "false_support_rate_refutes": _ratio(
            sum(1 for pair in supported if pair.gold == "REFUTES"), gold["REFUTES"]
        ),
        "false_support_rate_nei": _ratio(
            sum(1 for pair in supported if pair.gold == "NOT_ENOUGH_INFO"), gold["NOT_ENOUGH_INFO"]
        ),
    }


def threshold_curve(
    pairs: list[ScoredPair], thresholds: tuple[float, ...] = CURVE_THRESHOLDS
) -> dict[str, Any]:
    """Precision, recall and false-support rates if "supported" meant score ≥ threshold, for the
    whole file and both halves."""
    halves = {
        "all": pairs,
        "even": [pair for pair in pairs if pair.line % 2 == 0],
        "odd": [pair for pair in pairs if pair.line % 2 == 1],
    }
    return {name: [_curve_point(subset, t) for t in thresholds] for name, subset in halves.items()}


def error_kind(case: VerifyCase, judgement: SupportJudgement) -> str:
    """Which kind of error a false support or a miss is.

    A miss is put under the kind of the check that withheld support. A false support passed
    every check, so its kind comes from the pair itself: opposite direction words in the
    window, two comparisons, a hedge or a report, a list, all the claim's words present in
    another relation; else "other".
    """
    if judgement.label != "supported":
        decided = judgement.decided_by.rsplit(":", 1)[-1]
        if decided == "polarity" and judgement.note.startswith(("direction", "opposite")):
            return "direction"
        return _CHECK_KINDS.get(decided, "other")
    start, end = judgement.span if judgement.span is not None else (0, len(case.passage))
    window = case.passage[start:end]
    claim_directions, window_directions = directions(words(case.claim)), directions(words(window))
    if claim_directions and (window_directions - claim_directions):
        return "direction"
    if compares(case.claim) and compares(window):
        return "roles"
    if hedged_scopes(case.passage, start, end):
        return "attribution/hedging"
    if list_items(case.passage, start, end)[0]:
        return "list-membership"
    if judgement.scores.get("coverage", 0.0) >= 1.0:
        return "same-words-other-relation"
    return "other"


def _kind_table(kinds: list[tuple[int, str, str]]) -> dict[str, dict[str, int]]:
    """Counts by kind of false supports and misses: whole file and halves."""
    table: dict[str, dict[str, int]] = {}
    for error in ("false_supports", "misses"):
        for half, parity in (("all", None), ("even", 0), ("odd", 1)):
            counts = dict.fromkeys(ERROR_KINDS, 0)
            for line, which, kind in kinds:
                if which == error and (parity is None or line % 2 == parity):
                    counts[kind] += 1
            table[f"{error}_{half}"] = counts
    return table


def run_verify_benchmark(
    claims_path: Path | str,
    limit: int | None = None,
    verifier: ClaimVerifier | None = None,
    max_examples: int = 25,
) -> dict[str, Any]:
    """Verify every (claim, evidence document) pair and summarise against the gold labels.

    Returns ``summary`` (whole file), ``halves`` (``even``/``odd`` line numbers, for tuning on
    one and reporting on the other), ``seconds``, ``supported_span_in_rationale`` (share of
    correct supports whose aligned span touches a gold rationale sentence), a few
    ``false_supports`` for inspection, ``threshold_curve`` and ``error_kinds`` (see the module
    docstring).
    """
    active = verifier if verifier is not None else LexicalClaimVerifier()
    started = time.perf_counter()
    pairs: list[ScoredPair] = []
    kinds: list[tuple[int, str, str]] = []
    false_supports: list[dict[str, Any]] = []
    correct_supports = 0
    correct_in_rationale = 0
    claims: set[str] = set()
    for case in read_cases(Path(claims_path), limit):
        judgement = active.verify(case.claim, case.passage)
        pairs.append(ScoredPair(case.line, case.gold, judgement.label, support_score_of(judgement)))
        claims.add(case.claim_id)
        if judgement.label == "supported" and case.gold == "SUPPORTS":
            correct_supports += 1
            correct_in_rationale += _span_in_rationale(case, judgement.span)
        elif judgement.label == "supported":
            kinds.append((case.line, "false_supports", error_kind(case, judgement)))
            if len(false_supports) < max_examples:
                start, end = judgement.span if judgement.span else (0, 0)
                false_supports.append(
                    {
                        "claim_id": case.claim_id,
                        "doc_id": case.doc_id,
                        "gold": case.gold,
                        "claim": case.claim,
                        "span_text": case.passage[start:end],
                        "note": judgement.note,
                        "support_score": judgement.support_score,
                        "kind": kinds[-1][2],
                    }
                )
        elif case.gold == "SUPPORTS":
            kinds.append((case.line, "misses", error_kind(case, judgement)))
    seconds = time.perf_counter() - started
    summary = summarise([(pair.gold, pair.label) for pair in pairs])
    summary["n_claims"] = len(claims)
    summary["seconds"] = round(seconds, 3)
    return {
        "claims_path": str(claims_path),
        "limit": limit,
        "verifier": type(active).__name__,
        "support_threshold": getattr(active, "support_threshold", None),
        "summary": summary,
        "halves": {
            "even": summarise([(pair.gold, pair.label) for pair in pairs if pair.line % 2 == 0]),
            "odd": summarise([(pair.gold, pair.label) for pair in pairs if pair.line % 2 == 1]),
        },
        "supported_span_in_rationale": _ratio(correct_in_rationale, correct_supports),
        "seconds": round(seconds, 3),
        "pairs_per_second": round(len(pairs) / seconds, 1) if seconds > 0 else None,
        "threshold_curve": threshold_curve(pairs),
        "error_kinds": _kind_table(kinds),
        "false_supports": false_supports,
    }


def write_curve_plot(report: dict[str, Any], path: Path) -> None:
    """Precision and recall against the support-score threshold (whole file and halves) as a PNG."""
    matplotlib = import_bench_extra("matplotlib", "the verify benchmark's threshold curve")
    matplotlib.use("Agg")
    plt = import_bench_extra("matplotlib.pyplot", "the verify benchmark's threshold curve")

    figure, axes = plt.subplots(figsize=(7, 4.5))
    styles = {"all": "-", "even": "--", "odd": ":"}
    for half, points in report["threshold_curve"].items():
        thresholds = [point["threshold"] for point in points]
        for metric, colour in (("support_precision", "tab:blue"), ("support_recall", "tab:orange")):
            values = [float("nan") if point[metric] is None else point[metric] for point in points]
            axes.plot(
                thresholds, values, styles[half], color=colour, label=f"{metric.split('_')[1]} ({half})"
            )
    if report.get("support_threshold") is not None:
        axes.axvline(report["support_threshold"], color="grey", linewidth=0.8, label="setting")
    axes.set_xlabel("support-score threshold")
    axes.set_ylabel("share")
    axes.set_ylim(0.0, 1.05)
    axes.set_title("Claim support: precision and recall by threshold")
    axes.legend(fontsize="small", ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


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
    if "threshold_curve" in report:
        lines.append("")
        lines.append(
            f"{'threshold':<10}"
            + "".join(f"{'P ' + half:>10}{'R ' + half:>10}" for half in ("all", "even", "odd"))
        )
        curve = report["threshold_curve"]
        for index, point in enumerate(curve["all"]):
            cells = ""
            for half in ("all", "even", "odd"):
                half_point = curve[half][index]
                for metric in ("support_precision", "support_recall"):
                    value = half_point[metric]
                    cells += f"{'-' if value is None else value!s:>10}"
            lines.append(f"{point['threshold']:<10}{cells}")
    if "error_kinds" in report:
        kinds = report["error_kinds"]
        lines.append("")
        lines.append(
            f"{'kind':<28}"
            + "".join(f"{name:>12}" for name in ("false all", "even", "odd", "miss all", "even", "odd"))
        )
        for kind in ERROR_KINDS:
            cells = "".join(
                f"{kinds[f'{error}_{half}'][kind]:>12}"
                for error in ("false_supports", "misses")
                for half in ("all", "even", "odd")
            )
            lines.append(f"{kind:<28}{cells}")
    lines.append(f"\n{report['summary']['n_claims']} claims, {report['seconds']} s")
    return "\n".join(lines)
