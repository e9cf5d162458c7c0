"""The target's own answers to many prompts, kept as a store to draft from (retrieval-based drafting).

`akm train-draft-head` has the target answer hundreds of prompts greedily (self-distillation). Those
answers are also worth drafting from directly: a small model answers in recurring phrases ("Here's a
step-by-step ...", "I hope this helps!", a list's markup, a closing sentence) that no prompt holds, so
prompt lookup cannot propose them, and a fresh process has no earlier outputs of its own
(`decoding.history`). The store keeps every answer after the last tokens of its prompt, indexed as an
`OutputHistory` that is never added to or trimmed, and `StoreDrafter` proposes what followed the
context's longest suffix there, like `HistoryDrafter` does over a process's own outputs. Proposals
are drafts: verification keeps the output exactly the target's.

A store belongs to one target: its file records the target's fingerprint (`target_fingerprint`) and
`load_answer_store` refuses another. It also records a digest of every prompt it answered, so a
benchmark can leave out the answers to the very prompts it measures (`exclude`): drafting a prompt's
answer from a stored copy of that answer would measure nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file
from transformers import PreTrainedModel

from decoding.artifact_files import read_artifact_metadata, write_artifact
from decoding.draft_head import DraftHeadMismatchError, target_fingerprint
from decoding.history import HistoryDrafter, OutputHistory

STORE_FORMAT = "akm-answer-store"
STORE_FORMAT_VERSION = 1
# Prompt tokens kept before each answer: the chat template's opening of the answer, matched but
# never proposed (as `OutputHistory.lead`).
STORE_LEAD = 8


class AnswerStoreFileError(ValueError):
    """An answer store file is missing, unreadable, or not an answer store."""


def prompt_digest(prompt_ids: Sequence[int]) -> str:
    """A short digest of a prompt's token ids: the same prompt gives the same digest however it was built."""
    return hashlib.sha256(json.dumps([int(token) for token in prompt_ids]).encode()).hexdigest()[:24]


def answer_store_path(head_path: str | Path) -> Path:
    """Where `akm train-draft-head` writes the answers beside the head it trains, and where they are read."""
    path = Path(head_path)
    return path.with_name(f"{path.stem}.answers.safetensors")


@dataclass
class AnswerStore:
    """The stored answers, indexed for drafting; `excluded` counts answers left out at load."""

    history: OutputHistory
    target_name: str
    answers: int
    excluded: int

    def __len__(self) -> int:
        return len(self.history)


def _flat(rows: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    tokens = [int(token) for row in rows for token in row]
    return torch.tensor(tokens, dtype=torch.int32), torch.tensor(
        [len(row) for row in rows], dtype=torch.int32
    )


def save_answer_store(
    path: str | Path,
    pairs: Iterable[tuple[Sequence[int], Sequence[int]]],
    model: PreTrainedModel,
    target_name: str,
) -> Path:
    """Write (prompt ids, answer ids) pairs for `model`; written aside and renamed into place."""
    leads, answers, digests = [], [], []
    for prompt, answer in pairs:
        if not answer:
            continue
        leads.append(list(prompt[max(0, len(prompt) - STORE_LEAD) :]))
        answers.append(list(answer))
        digests.append(prompt_digest(prompt))
    lead_tokens, lead_lengths = _flat(leads)
    answer_tokens, answer_lengths = _flat(answers)
    metadata = {
        "format": STORE_FORMAT,
        "version": str(STORE_FORMAT_VERSION),
        "target_name": target_name,
        "target_fingerprint": target_fingerprint(model),
        "prompt_digests": json.dumps(digests),
    }
    tensors = {
        "lead_tokens": lead_tokens,
        "lead_lengths": lead_lengths,
        "answer_tokens": answer_tokens,
        "answer_lengths": answer_lengths,
    }
    return write_artifact(path, tensors, metadata)


def load_answer_store(
    path: str | Path, model: PreTrainedModel, *, exclude: Iterable[Sequence[int]] = ()
) -> AnswerStore:
    """Read a store for `model`, leaving out the answers to the prompts in `exclude` (token ids).

    `AnswerStoreFileError` for a missing or damaged file, `DraftHeadMismatchError` for a store made
    for another target."""
    source = Path(path)
    metadata = read_artifact_metadata(
        source,
        file_format=STORE_FORMAT,
        version=STORE_FORMAT_VERSION,
        what="answer store",
        error=AnswerStoreFileError,
        missing="`akm train-draft-head` writes one beside the head",
    )
    try:
        tensors = load_file(str(source))
    except Exception as error:  # safetensors raises its own error types for damaged files
        raise AnswerStoreFileError(f"{source} is not a readable safetensors file: {error}") from error
    name = metadata.get("target_name", "?")
    fingerprint = target_fingerprint(model)
    if metadata.get("target_fingerprint") != fingerprint:
        raise DraftHeadMismatchError(
            f"the answer store {source} was made by {name} (fingerprint "
            f"{metadata.get('target_fingerprint')}); the loaded target's is {fingerprint}"
        )
    try:
        digests = json.loads(metadata["prompt_digests"])
        lead_lengths = tensors["lead_lengths"].tolist()
        answer_lengths = tensors["answer_lengths"].tolist()
        lead_tokens = tensors["lead_tokens"].tolist()
        answer_tokens = tensors["answer_tokens"].tolist()
    except (KeyError, TypeError, ValueError) as error:
        raise AnswerStoreFileError(f"{source}: the store cannot be read: {error}") from error
    if (
        not len(digests) == len(lead_lengths) == len(answer_lengths)
        or sum(lead_lengths) != len(lead_tokens)
        or sum(answer_lengths) != len(answer_tokens)
    ):
        raise AnswerStoreFileError(f"{source}: the store's lengths do not match its tokens")
    skip = {prompt_digest(prompt) for prompt in exclude}
    history = OutputHistory(max(1, sum(answer_lengths)), lead=STORE_LEAD)
    lead_at = answer_at = excluded = 0
    for digest, lead_length, answer_length in zip(digests, lead_lengths, answer_lengths, strict=True):
        lead = lead_tokens[lead_at : lead_at + lead_length]
        answer = answer_tokens[answer_at : answer_at + answer_length]
        lead_at += lead_length
        answer_at += answer_length
        if digest in skip:
            excluded += 1
            continue
        history.add(lead, answer)
    return AnswerStore(history, name, len(digests) - excluded, excluded)


class StoreDrafter(HistoryDrafter):
    """Proposes what followed the context's longest suffix in an answer store (a `HistoryDrafter`
    over the stored answers, under its own name so its acceptance is learnt apart from the history's)."""

    name = "answer_store"

    def __init__(self, store: AnswerStore, *, scan_limit: int = 256, **options: int) -> None:
        # A store holds hundreds of answers, so a common n-gram occurs far more often than in one
        # process's history: more of its occurrences are scanned for the longest match.
        super().__init__(store.history, scan_limit=scan_limit, **options)
