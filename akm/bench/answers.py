"""Answer quality on SQuAD-style data: is the answer a user gets right, supported, or an honest "not found"?

A throwaway project is built from a SQuAD v1.1 file: one Markdown page per article (``# Title``,
then each paragraph), under a manifest copied from the default one. It is ingested, and each
question is asked through the same service object ``POST /v1/answers`` calls
(:class:`akm.service.backend.PipelineAnswerService`).

Answerable mode ingests every article and asks its questions. Unanswerable mode ingests the first
half of the articles and asks questions of the second half, whose pages the store never saw: the
right outcome there is an abstention (``HOLD``, or no supported claim). Held-out mode asks the harder
question of the two: it ingests every article without its odd-numbered paragraphs (the first is
paragraph 0) and asks the questions of those paragraphs whose gold answers stand nowhere in the
ingested pages. The article, its title and its other paragraphs are there, so the questions are on
topic, but the fact asked for is not in the documents: the right outcome is again an abstention.

Gold matching is SQuAD's: lowercase, punctuation and the articles a/an/the removed, whitespace
collapsed; a gold answer counts when it stands inside the text as whole words.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import string
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from akm.settings import Settings
from decoding.bench.errors import BenchmarkInputError

ANSWERED_VERDICTS = ("PASS", "PASS_WITH_NOTE")


@dataclass(frozen=True, slots=True)
class SquadQuestion:
    question_id: str
    question: str
    gold: tuple[str, ...]
    article: str
    # The index of the paragraph the question was asked about, in its article.
    paragraph: int = 0


@dataclass(frozen=True, slots=True)
class SquadArticle:
    title: str
    paragraphs: tuple[str, ...]
    questions: tuple[SquadQuestion, ...]


def load_squad(path: Path) -> list[SquadArticle]:
    """Articles of a SQuAD v1.1 JSON file, in file order."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        articles: list[SquadArticle] = []
        for entry in document["data"]:
            title = str(entry["title"])
            paragraphs: list[str] = []
            questions: list[SquadQuestion] = []
            for index, paragraph in enumerate(entry["paragraphs"]):
                paragraphs.append(str(paragraph["context"]))
                for qa in paragraph["qas"]:
                    gold = tuple(dict.fromkeys(str(answer["text"]) for answer in qa["answers"]))
                    questions.append(SquadQuestion(str(qa["id"]), str(qa["question"]), gold, title, index))
            articles.append(SquadArticle(title, tuple(paragraphs), tuple(questions)))
    except OSError as error:
        raise BenchmarkInputError(f"cannot read {path}: {error.strerror or error}") from error
    except (ValueError, KeyError, TypeError) as error:
        raise BenchmarkInputError(f"{path} is not a SQuAD v1.1 JSON file: {error}") from error
    if not articles:
        raise BenchmarkInputError(f"{path} holds no article")
    return articles


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation: lowercase, no punctuation, no articles, single spaces."""
    lowered = text.lower()
    no_punctuation = "".join(" " if char in _PUNCTUATION else char for char in lowered)
    no_articles = re.sub(r"\b(a|an|the)\b", " ", no_punctuation)
    return " ".join(no_articles.split())


_PUNCTUATION = frozenset(string.punctuation) | frozenset("‘’“”–—")


def contains_gold(text: str, gold: Iterable[str]) -> bool:
    """True when any gold answer stands inside ``text`` as whole words, after normalisation."""
    haystack = f" {normalize_answer(text)} "
    return any(needle and f" {needle} " in haystack for needle in (normalize_answer(g) for g in gold))


def page_name(title: str) -> str:
    """A file name for an article title: letters, digits, dashes and underscores only."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", title).strip("_") or "article"


def page_text(article: SquadArticle) -> str:
    """The Markdown page of one article: its title as a heading, then each paragraph."""
    title = article.title.replace("_", " ")
    return "\n\n".join([f"# {title}", *article.paragraphs]) + "\n"


def build_project(articles: Sequence[SquadArticle], folder: Path, default_manifest: Path) -> Path:
    """Write the pages and a manifest copied from the default; returns the manifest's path.

    The copy keeps every policy of the default and only points its one root at the pages.
    """
    docs = folder / "docs"
    config = folder / "config"
    if folder.exists():
        shutil.rmtree(folder)
    docs.mkdir(parents=True)
    config.mkdir()
    for article in articles:
        (docs / f"{page_name(article.title)}.md").write_text(page_text(article), encoding="utf-8")
    manifest = yaml.safe_load(default_manifest.read_text(encoding="utf-8"))
    manifest["projectRoot"] = ".."
    manifest["manifestId"] = "akm-bench-answers"
    manifest["scope"]["maxCorpusDocuments"] = max(int(manifest["scope"]["maxCorpusDocuments"]), len(articles))
    path = config / "manifest.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return path


def pick_questions(
    articles: Sequence[SquadArticle], *, every: int = 1, limit: int | None = None
) -> list[SquadQuestion]:
    """Every ``every``-th question over the articles in order, at most ``limit``."""
    if every < 1:
        raise BenchmarkInputError("--every must be at least 1")
    questions = [question for article in articles for question in article.questions][::every]
    return questions if limit is None else questions[:limit]


def split_articles(
    articles: Sequence[SquadArticle], *, unanswerable: bool
) -> tuple[list[SquadArticle], list[SquadArticle]]:
    """(articles to ingest, articles to ask about). Unanswerable: ingest the first half, ask the rest."""
    if not unanswerable:
        return list(articles), list(articles)
    if len(articles) < 2:
        raise BenchmarkInputError("--unanswerable needs at least two articles")
    half = len(articles) // 2
    return list(articles[:half]), list(articles[half:])


def hold_out_paragraphs(articles: Sequence[SquadArticle]) -> tuple[list[SquadArticle], list[SquadArticle]]:
    """(articles to ingest, articles to ask about) for held-out mode: every article without its
    odd-numbered paragraphs, and the questions of those paragraphs whose gold answers stand in no
    ingested page (a gold answer repeated in a kept paragraph would make the question answerable)."""
    kept = [
        SquadArticle(
            article.title,
            tuple(text for index, text in enumerate(article.paragraphs) if index % 2 == 0),
            tuple(question for question in article.questions if question.paragraph % 2 == 0),
        )
        for article in articles
    ]
    corpus = " ".join(page_text(article) for article in kept)
    asked = [
        SquadArticle(
            article.title,
            article.paragraphs,
            tuple(
                question
                for question in article.questions
                if question.paragraph % 2 == 1 and not contains_gold(corpus, question.gold)
            ),
        )
        for article in articles
    ]
    if not any(article.questions for article in asked):
        raise BenchmarkInputError("--held-out needs articles with at least two paragraphs")
    return kept, asked


@dataclass(slots=True)
class QuestionOutcome:
    question: SquadQuestion
    answer: str
    verdict: str
    reasons: tuple[str, ...]
    claims: tuple[Mapping[str, Any], ...]
    locators: tuple[str, ...]
    timings_ms: Mapping[str, float]
    total_ms: float
    decode: Mapping[str, Any]

    @property
    def supported_texts(self) -> list[str]:
        return [str(claim["text"]) for claim in self.claims if claim.get("status") == "supported"]

    @property
    def gold_in_answer(self) -> bool:
        return contains_gold(self.answer, self.question.gold)

    @property
    def gold_in_supported_claim(self) -> bool:
        return any(contains_gold(text, self.question.gold) for text in self.supported_texts)

    @property
    def answered(self) -> bool:
        return self.verdict in ANSWERED_VERDICTS

    @property
    def abstained(self) -> bool:
        return self.verdict == "HOLD" or not self.supported_texts

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.question.question_id,
            "article": self.question.article,
            "question": self.question.question,
            "gold": list(self.question.gold),
            "answer": self.answer,
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "goldInAnswer": self.gold_in_answer,
            "goldInSupportedClaim": self.gold_in_supported_claim,
            "claims": [
                {"text": claim.get("text"), "status": claim.get("status"), "score": claim.get("supportScore")}
                for claim in self.claims
            ],
            "directReadLocators": list(self.locators),
            "timingsMs": dict(self.timings_ms),
            "totalMs": round(self.total_ms, 1),
        }


def outcome_of(question: SquadQuestion, document: Mapping[str, Any], total_ms: float) -> QuestionOutcome:
    """What one ``/v1/answers`` response document says, in the benchmark's terms."""
    verdict = document.get("verdict") or {}
    packet = document.get("packet") or {}
    locators = tuple(
        f"{row['source']['canonicalPath'] or row['source']['canonicalUri']}#{row['scope']['locator']['value']}"
        for row in packet.get("evidenceRows", ())
        if row["verification"]["state"] in ("direct-read", "claim-supported")
    )
    decode = document.get("decode") or {}
    return QuestionOutcome(
        question=question,
        answer=str(document.get("answer") or ""),
        verdict=str(verdict.get("verdict") or ""),
        reasons=tuple(verdict.get("reasons") or ()),
        claims=tuple(document.get("claims") or ()),
        locators=locators,
        timings_ms=dict(decode.get("timings_ms") or {}),
        total_ms=total_ms,
        decode=decode,
    )


def _percentiles(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {"p50": round(statistics.median(ordered), 1), "p95": round(p95, 1)}


def summarize(
    outcomes: Sequence[QuestionOutcome], *, unanswerable: bool, mode: str | None = None
) -> dict[str, Any]:
    """The benchmark's summary block (see the module docstring for what each figure means)."""
    count = len(outcomes)
    answered = [item for item in outcomes if item.answered]
    verdicts = Counter(item.verdict for item in outcomes)
    statuses = Counter(str(claim.get("status")) for item in outcomes for claim in item.claims)
    stages = sorted({stage for item in outcomes for stage in item.timings_ms})
    latency: dict[str, Any] = {
        stage: _percentiles([item.timings_ms[stage] for item in outcomes if stage in item.timings_ms])
        for stage in stages
    }
    latency["total"] = _percentiles([item.total_ms for item in outcomes])
    tokens = sum(int(item.decode.get("new_tokens") or 0) for item in outcomes)
    calls = sum(int(item.decode.get("target_calls") or 0) for item in outcomes)
    decode_ms = sum(float(item.timings_ms.get("decoding", 0.0)) for item in outcomes)
    words = [len(item.answer.split()) for item in outcomes if item.answer]

    def share(part: int) -> float | None:
        return round(part / count, 4) if count else None

    summary: dict[str, Any] = {
        "questions": count,
        "gold_in_answer": share(sum(item.gold_in_answer for item in outcomes)),
        "gold_in_supported_claim": share(sum(item.gold_in_supported_claim for item in outcomes)),
        "verdicts": dict(sorted(verdicts.items())),
        "pass_precision": round(sum(item.gold_in_answer for item in answered) / len(answered), 4)
        if answered
        else None,
        "answered": share(len(answered)),
        "abstained": share(sum(item.abstained for item in outcomes)),
        "claim_statuses": dict(sorted(statuses.items())),
        "answer_words_median": statistics.median(words) if words else 0,
        "latency_ms": latency,
        "decode": {
            "new_tokens": tokens,
            "target_calls": calls,
            "tokens_per_second": round(tokens / (decode_ms / 1000.0), 2) if decode_ms else None,
            "tokens_per_target_call": round(tokens / calls, 3) if calls else None,
        },
    }
    if mode is not None:
        summary["mode"] = mode
    elif unanswerable:
        # Every gold answer belongs to a page that was not ingested: a right answer is impossible.
        summary["mode"] = "unanswerable"
    else:
        summary["mode"] = "answerable"
    return summary


@dataclass(slots=True)
class AnswerBenchmark:
    """Inputs of one run; ``ask`` is the service call (the same one the REST route makes)."""

    questions: Sequence[SquadQuestion]
    ask: Callable[[str], Mapping[str, Any]]
    progress: Callable[[int, int, QuestionOutcome], None] | None = None
    outcomes: list[QuestionOutcome] = field(default_factory=list)

    def run(self) -> list[QuestionOutcome]:
        for index, question in enumerate(self.questions, start=1):
            began = time.perf_counter()
            document = self.ask(question.question)
            outcome = outcome_of(question, document, (time.perf_counter() - began) * 1000.0)
            self.outcomes.append(outcome)
            if self.progress is not None:
                self.progress(index, len(self.questions), outcome)
        return self.outcomes


def bench_settings(
    settings: Settings, folder: Path, manifest_path: Path, target_model: str | None
) -> Settings:
    """The user's settings pointed at a throwaway store and manifest; the model cache is kept."""
    update: dict[str, Any] = {
        "database_url": f"sqlite:///{folder / 'akm.sqlite3'}",
        "manifest_path": manifest_path,
    }
    if target_model:
        update["target_model"] = target_model
    return settings.model_copy(update=update)


__all__ = [
    "AnswerBenchmark",
    "BenchmarkInputError",
    "QuestionOutcome",
    "SquadArticle",
    "SquadQuestion",
    "bench_settings",
    "build_project",
    "contains_gold",
    "hold_out_paragraphs",
    "load_squad",
    "normalize_answer",
    "outcome_of",
    "page_text",
    "pick_questions",
    "split_articles",
    "summarize",
]
