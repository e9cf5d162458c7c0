"""The options of draft-head training, importable without torch (so `akm --help` stays fast)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class HeadTrainingConfig:
    seq_len: int = 512
    draft_vocab: int = 16384
    intermediate_size: int | None = None
    max_chats: int = 1000
    answer_tokens: int = 96
    generate_batch: int = 8
    max_text_tokens: int = 50_000
    epochs: int = 4
    batch_size: int = 4
    learning_rate: float = 1e-3
    warmup_steps: int = 50
    feature_weight: float = 1.0
    token_weight: float = 1.0
    noise: float = 0.05
    checkpoint_every: int = 200
    validation_every: int = 20
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("seq_len", "epochs", "batch_size", "generate_batch", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.seq_len < 4:
            raise ValueError("seq_len must be at least 4")


DESCRIPTION = (
    "Train a draft head (EAGLE-style feature drafting) for the target model on local text: the target "
    "answers the prompts of the sources (self-distillation), its features of every sequence are "
    "stored, and the head learns to predict them. The answers are also written beside the head as an "
    "answer store (<head>.answers.safetensors) that decoding drafts from. Resumable: run the same "
    "command again to continue. Prints a JSON report (data size, time per stage, validation top-1 "
    "agreement, file sizes)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The training options, shared by `python -m decoding.train_head` and `akm train-draft-head`."""
    parser.add_argument(
        "sources",
        nargs="+",
        type=Path,
        metavar="SOURCE",
        help=(
            "Spec-Bench question.jsonl (prompts; the first --holdout-per-category of each category are "
            "skipped), SQuAD .json (grounded prompts; a paragraph's first question is skipped), a corpus "
            ".jsonl(.gz) with 'text' (passages), or Markdown/text files and folders"
        ),
    )
    defaults = HeadTrainingConfig()
    parser.add_argument(
        "--out", type=Path, help="head file (default: <cache>/draft-heads/<target>.safetensors)"
    )
    parser.add_argument("--work-dir", type=Path, help="resumable work directory (default: beside --out)")
    parser.add_argument("--holdout-per-category", type=int, default=5, metavar="N", help="default 5")
    parser.add_argument(
        "--max-chats", type=int, default=defaults.max_chats, metavar="N", help="prompts answered"
    )
    parser.add_argument("--answer-tokens", type=int, default=defaults.answer_tokens, metavar="N")
    parser.add_argument(
        "--generate-batch",
        type=int,
        default=defaults.generate_batch,
        metavar="N",
        help=f"prompts answered together (default {defaults.generate_batch})",
    )
    parser.add_argument("--max-text-tokens", type=int, default=defaults.max_text_tokens, metavar="N")
    parser.add_argument("--seq-len", type=int, default=defaults.seq_len, metavar="N")
    parser.add_argument(
        "--draft-vocab",
        type=int,
        default=defaults.draft_vocab,
        metavar="N",
        help="LM head rows used for drafting, most frequent first (0 = the whole vocabulary)",
    )
    parser.add_argument("--epochs", type=int, default=defaults.epochs, metavar="N")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size, metavar="N")
    parser.add_argument("--learning-rate", type=float, default=defaults.learning_rate, metavar="LR")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bars (messages still go to stderr)"
    )
