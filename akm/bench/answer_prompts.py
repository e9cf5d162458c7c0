"""Decoding prompts built the way the answer path builds them, for ``akm bench decode --format answers``.

For the first question of each SQuAD paragraph (paragraphs taken round-robin across articles, as
``--format squad`` does), the paragraph is treated as one directly read passage: the answer path's
selection (``akm.answer.selection.select_evidence``) picks the answer-bearing sentence(s), and
``akm.answer.prompt.build_prompt`` turns them into the prompt the generator is given. A question
the answer path would abstain on (nothing worth generating from) is left out, as no decoding
happens for it in production.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from akm.answer.orchestrate import worth_generating
from akm.answer.prompt import build_prompt
from akm.answer.selection import select_evidence
from akm.contract.builders import build_candidate_row
from akm.contract.ids import sha256_text
from akm.contract.models import Authority, Freshness, Locator
from akm.embedding import Embedder
from akm.support import ReadEvidence
from decoding.bench.errors import BenchmarkInputError

_AT = "2026-01-01T00:00:00.000Z"


@dataclass(frozen=True, slots=True)
class AnswerPrompt:
    """One prompt of the answer path: the chat messages and the sentences the evidence drafter copies from."""

    prompt_id: str
    messages: tuple[tuple[str, str], ...]
    passages: tuple[str, ...]


def _paragraphs(path: Path) -> list[tuple[str, str, str]]:
    """(question ID, question, paragraph) for the first question of each paragraph, round-robin."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        per_article: list[list[tuple[str, str, str]]] = []
        for article in document["data"]:
            found = []
            for paragraph in article["paragraphs"]:
                context, questions = paragraph["context"], paragraph["qas"]
                if questions and str(context).strip():
                    first = questions[0]
                    found.append((str(first["id"]), str(first["question"]), str(context)))
            per_article.append(found)
    except OSError as error:
        raise BenchmarkInputError(f"cannot read {path}: {error.strerror or error}") from error
    except (ValueError, KeyError, TypeError) as error:
        raise BenchmarkInputError(f"{path}: not a SQuAD v1.1 file ({error})") from error
    ordered: list[tuple[str, str, str]] = []
    for index in range(max((len(group) for group in per_article), default=0)):
        ordered.extend(group[index] for group in per_article if index < len(group))
    return ordered


def _passage(question: str, context: str) -> ReadEvidence:
    checksum = sha256_text(context)
    row = build_candidate_row(
        source_id="akm:bench:paragraph",
        canonical_uri="file:paragraph.md",
        canonical_path="paragraph.md",
        source_type="markdown",
        classification="public",
        project_scopes=["bench"],
        revision=f"sha256:{checksum[:16]}",
        checksum_algorithm="sha256",
        checksum=checksum,
        project_id="bench",
        manifest_id="bench",
        manifest_version="1",
        collection="bench",
        locator=Locator(type="line-range", value="paragraph.md:1-1", start_line=1, end_line=1),
        authority=Authority(level="canonical", rationale="benchmark paragraph", policy_ref="bench"),
        freshness=Freshness(state="current", checked_at=_AT, policy_ref="bench", reason="benchmark"),
        lane="qmd-lexical",
        query=question,
        rank=1,
        result_set_id="rs:bench",
        parameters={},
        excerpt=context,
        at=_AT,
    )
    return ReadEvidence(number=1, row=row, passage=context)


def answer_prompts(path: Path, limit: int | None, embedder: Embedder | None) -> list[AnswerPrompt]:
    """The answer path's prompts for a SQuAD file's paragraphs (at most ``limit``)."""
    prompts: list[AnswerPrompt] = []
    for question_id, question, context in _paragraphs(path):
        if limit is not None and len(prompts) >= limit:
            break
        selection = select_evidence(question, [_passage(question, context)], embedder)
        if not worth_generating(selection):
            continue
        prompt = build_prompt(question, [sentence.text for sentence in selection.sentences])
        messages = ((("system", prompt.system),) if prompt.system else ()) + (("user", prompt.user),)
        prompts.append(AnswerPrompt(question_id, messages, prompt.passages))
    if not prompts:
        raise BenchmarkInputError(f"{path}: no question the answer path would generate for")
    return prompts


__all__ = ["AnswerPrompt", "answer_prompts"]
