"""Train a draft head (`decoding.draft_head`) for a target on this machine: `python -m decoding.train_head`.

Four stages, each resumable from a work directory (an interrupted run picks up where it stopped):
1. **Self-distillation.** The target answers the training prompts greedily (batched `generate`), so
   the head learns the target's own continuations: what it will be asked to draft. The answers are
   also written beside the head as an answer store (`decoding.answer_store`) to draft from directly.
2. **Sequences.** Prompt + answer of every chat, and raw passages cut into `seq_len` windows.
3. **Features.** One target forward per sequence; its last hidden states (after the final norm) are
   stored as float16 shards.
4. **Training.** AdamW on two losses at every position: the predicted next feature against the
   true one (smooth L1), and the LM head's distribution read from the predicted feature against
   the one read from the true feature (cross-entropy, over the draft vocabulary). Checkpoints
   every `checkpoint_every` steps; the run resumes from the last one.

Prompts held out for benchmarking are never trained on: the first `holdout_per_category`
Spec-Bench prompts of each category, and the first question of every SQuAD paragraph (the one the
decode benchmark asks).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tqdm import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from decoding.answer_store import answer_store_path, save_answer_store
from decoding.draft_head import DraftHead, DraftHeadConfig, default_head_path, save_draft_head
from decoding.head_options import DESCRIPTION, HeadTrainingConfig, add_arguments
from decoding.models import chat_prompt_ids

TEXT_SUFFIXES = (".md", ".txt", ".markdown", ".rst")
SQUAD_SYSTEM = (
    "You answer questions using only the given context. Answer in one or two sentences, "
    "reusing the context's own words."
)


class TrainingInputError(ValueError):
    """A training source is missing, unreadable or of an unknown kind."""


# --- sources ------------------------------------------------------------------------------------


@dataclass
class TrainingSources:
    """Chats for the target to answer (self-distillation) and raw passages; `origins` counts each source."""

    chats: list[list[dict[str, str]]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    origins: dict[str, int] = field(default_factory=dict)

    def extend(self, other: TrainingSources) -> None:
        self.chats.extend(other.chats)
        self.texts.extend(other.texts)
        for name, count in other.origins.items():
            self.origins[name] = self.origins.get(name, 0) + count


def _read_lines(path: Path) -> list[str]:
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                return handle.read().splitlines()
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError, EOFError) as error:
        raise TrainingInputError(f"cannot read {path}: {error}") from error


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(_read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise TrainingInputError(f"{path}:{number}: not JSON ({error.msg})") from error
        if isinstance(row, dict):
            rows.append(row)
    return rows


def spec_bench_chats(path: Path, holdout_per_category: int) -> TrainingSources:
    """First turns of Spec-Bench questions, skipping the first `holdout_per_category` of each category."""
    seen: Counter[str] = Counter()
    chats = []
    for row in _jsonl(path):
        turns, category = row.get("turns"), str(row.get("category", ""))
        if not isinstance(turns, list) or not turns or not isinstance(turns[0], str):
            continue
        seen[category] += 1
        if seen[category] > holdout_per_category:
            chats.append([{"role": "user", "content": turns[0]}])
    return TrainingSources(chats=chats, origins={f"spec-bench chats ({path.name})": len(chats)})


def squad_chats(path: Path) -> TrainingSources:
    """Grounded chats from a SQuAD file: every question of a paragraph except its first."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TrainingInputError(f"cannot read {path} as SQuAD JSON: {error}") from error
    chats = []
    for article in document.get("data", []) if isinstance(document, dict) else []:
        for paragraph in article.get("paragraphs", []):
            context, questions = paragraph.get("context", ""), paragraph.get("qas", [])
            for question in questions[1:]:
                text = question.get("question", "")
                if context and text:
                    user = f"Context:\n{context}\n\nQuestion: {text}\nAnswer from the context."
                    chats.append(
                        [{"role": "system", "content": SQUAD_SYSTEM}, {"role": "user", "content": user}]
                    )
    return TrainingSources(chats=chats, origins={f"squad chats ({path.name})": len(chats)})


def corpus_texts(path: Path) -> TrainingSources:
    """Passages of a BEIR-style corpus (`title`, `text`) or any JSONL with a `text` field."""
    texts: list[str] = []
    for row in _jsonl(path):
        text = row.get("text")
        if isinstance(text, str) and text.strip():
            title = row.get("title")
            texts.append(f"{title}\n{text}" if isinstance(title, str) and title else text)
    return TrainingSources(texts=texts, origins={f"passages ({path.name})": len(texts)})


def document_texts(path: Path) -> TrainingSources:
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in TEXT_SUFFIXES)
    texts: list[str] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise TrainingInputError(f"cannot read {file}: {error}") from error
        texts.extend(block.strip() for block in text.split("\n\n") if block.strip())
    return TrainingSources(texts=texts, origins={f"document paragraphs ({path.name})": len(texts)})


def read_source(path: Path, holdout_per_category: int = 5) -> TrainingSources:
    """One source, by its form: Spec-Bench JSONL, SQuAD JSON, a JSONL corpus, or text/Markdown files."""
    if not path.exists():
        raise TrainingInputError(f"training source not found: {path}")
    name = path.name
    if path.is_dir() or path.suffix in TEXT_SUFFIXES:
        return document_texts(path)
    if name.endswith(".json"):
        return squad_chats(path)
    if name.endswith((".jsonl", ".jsonl.gz")):
        rows = _jsonl(path)
        if rows and "turns" in rows[0]:
            return spec_bench_chats(path, holdout_per_category)
        if rows and "text" in rows[0]:
            return corpus_texts(path)
        raise TrainingInputError(f"{path}: JSONL rows need 'turns' (prompts) or 'text' (passages)")
    raise TrainingInputError(
        f"{path}: unknown source kind; give Spec-Bench .jsonl, SQuAD .json, a corpus .jsonl(.gz), "
        "or Markdown/text files"
    )


# --- configuration and report -------------------------------------------------------------------


@dataclass
class TrainingReport:
    head_path: str
    target_name: str
    sources: dict[str, int]
    sequences: int
    tokens: int
    chats_answered: int
    draft_vocab: int
    draft_vocab_coverage: float
    steps: int
    first_loss: float
    final_loss: float
    validation_top1: float
    head_bytes: int
    answer_store_path: str = ""
    answer_store_bytes: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


Progress = Callable[[str], None]


def _stderr(message: str) -> None:
    print(f"[train-draft-head] {message}", file=sys.stderr, flush=True)


def _write_json(path: Path, value: Any) -> None:
    staging = path.with_name(f".{path.name}.tmp")
    staging.write_text(json.dumps(value), encoding="utf-8")
    staging.replace(path)


# --- stage 1: self-distillation -----------------------------------------------------------------


def _chat_key(chat: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(chat, sort_keys=True).encode()).hexdigest()[:16]


@torch.inference_mode()
def distill_answers(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    chats: Sequence[list[dict[str, str]]],
    store: Path,
    config: HeadTrainingConfig,
    show_progress: bool = True,
) -> list[tuple[list[int], list[int]]]:
    """(prompt ids, greedy answer ids) per chat; answers already in `store` (JSONL) are reused."""
    done: dict[str, list[int]] = {}
    if store.is_file():
        for line in store.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                done[row["key"]] = row["ids"]
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut short by an interruption: answered again
    prompts = [(chat, _chat_key(chat), chat_prompt_ids(tokenizer, chat)) for chat in chats]
    todo = sorted(
        ((chat, key, ids) for chat, key, ids in prompts if key not in done and len(ids) < config.seq_len),
        key=lambda item: len(item[2]),
    )
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    eos = tokenizer.eos_token_id
    device = next(model.parameters()).device
    bar = tqdm(
        total=len(todo), desc="answering prompts", unit="prompt", disable=not show_progress, file=sys.stderr
    )
    with store.open("a", encoding="utf-8") as handle:
        for begin in range(0, len(todo), config.generate_batch):
            batch = todo[begin : begin + config.generate_batch]
            width = max(len(ids) for _, _, ids in batch)
            input_ids = torch.full((len(batch), width), int(pad), dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, (_, _, ids) in enumerate(batch):
                input_ids[row, width - len(ids) :] = torch.tensor(ids)
                mask[row, width - len(ids) :] = 1
            output = model.generate(  # type: ignore[operator]
                input_ids=input_ids.to(device),
                attention_mask=mask.to(device),
                max_new_tokens=config.answer_tokens,
                do_sample=False,
                pad_token_id=int(pad),
            )
            for row, (_, key, ids) in enumerate(batch):
                answer = [int(token) for token in output[row, width:].tolist()]
                if eos is not None and eos in answer:
                    answer = answer[: answer.index(eos) + 1]
                done[key] = ids + answer
                handle.write(json.dumps({"key": key, "ids": done[key]}) + "\n")
            handle.flush()
            bar.update(len(batch))
    bar.close()
    return [(ids, done[key][len(ids) :]) for _, key, ids in prompts if key in done]


# --- stage 2: sequences -------------------------------------------------------------------------


def text_sequences(
    tokenizer: PreTrainedTokenizerBase, texts: Iterable[str], seq_len: int, budget: int
) -> list[list[int]]:
    """Raw passages, tokenized and cut into windows of at most `seq_len` tokens, up to `budget` tokens."""
    sequences: list[list[int]] = []
    used = 0
    for text in texts:
        ids = [int(token) for token in tokenizer(text, add_special_tokens=False)["input_ids"]]
        for start in range(0, len(ids), seq_len):
            window = ids[start : start + seq_len]
            if len(window) < 8 or used >= budget:
                continue
            window = window[: budget - used]
            sequences.append(window)
            used += len(window)
        if used >= budget:
            break
    return sequences


# --- stage 3: features --------------------------------------------------------------------------

_SHARD_SEQUENCES = 64


def _forward_features(model: PreTrainedModel, sequence: list[int]) -> torch.Tensor:
    """The target's last hidden states (after its final norm) of every token of `sequence`."""
    device = next(model.parameters()).device
    output = model(
        input_ids=torch.tensor([sequence], device=device), output_hidden_states=True, logits_to_keep=1
    )
    features: torch.Tensor = output.hidden_states[-1][0]
    return features


@torch.inference_mode()
def extract_features(
    model: PreTrainedModel,
    sequences: Sequence[list[int]],
    directory: Path,
    show_progress: bool = True,
) -> list[Path]:
    """float16 feature shards of `sequences` (64 per shard); shards already written are kept."""
    directory.mkdir(parents=True, exist_ok=True)
    shards = []
    total = sum(len(sequence) for sequence in sequences)
    bar = tqdm(total=total, desc="target features", unit="tok", disable=not show_progress, file=sys.stderr)
    for number, begin in enumerate(range(0, len(sequences), _SHARD_SEQUENCES)):
        chunk = sequences[begin : begin + _SHARD_SEQUENCES]
        path = directory / f"shard-{number:05d}.safetensors"
        shards.append(path)
        if path.is_file():
            bar.update(sum(len(sequence) for sequence in chunk))
            continue
        features, tokens, lengths = [], [], []
        for sequence in chunk:
            features.append(_forward_features(model, sequence).to("cpu", torch.float16))
            tokens.extend(sequence)
            lengths.append(len(sequence))
            bar.update(len(sequence))
        staging = path.with_name(f".{path.name}.tmp")
        save_file(
            {
                "features": torch.cat(features).contiguous(),
                "tokens": torch.tensor(tokens, dtype=torch.int32),
                "lengths": torch.tensor(lengths, dtype=torch.int32),
            },
            str(staging),
        )
        staging.replace(path)
    bar.close()
    return shards


def load_shards(paths: Sequence[Path]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(token ids [T], float16 features [T, hidden]) per sequence."""
    sequences = []
    for path in paths:
        shard = load_file(str(path))
        start = 0
        for length in shard["lengths"].tolist():
            sequences.append(
                (shard["tokens"][start : start + length].long(), shard["features"][start : start + length])
            )
            start += length
    return sequences


# --- stage 4: training --------------------------------------------------------------------------


def draft_vocabulary(
    sequences: Sequence[tuple[torch.Tensor, torch.Tensor]], size: int, vocab_size: int, always: Iterable[int]
) -> list[int]:
    """The `size` token ids seen most often in the training sequences (special tokens always in)."""
    if size >= vocab_size:
        return list(range(vocab_size))
    counts: Counter[int] = Counter()
    for tokens, _ in sequences:
        counts.update(tokens.tolist())
    chosen = [token for token in dict.fromkeys(always) if 0 <= token < vocab_size][:size]
    taken = set(chosen)
    for token, _ in counts.most_common():
        if len(chosen) >= size:
            break
        if token not in taken:
            chosen.append(token)
            taken.add(token)
    # Fill from the lowest ids when the text is too small to name `size` tokens.
    for token in range(vocab_size):
        if len(chosen) >= size:
            break
        if token not in taken:
            chosen.append(token)
            taken.add(token)
    return chosen


def _batches(count: int, batch_size: int, generator: random.Random) -> list[list[int]]:
    order = list(range(count))
    generator.shuffle(order)
    return [order[start : start + batch_size] for start in range(0, count, batch_size)]


def _pad(
    items: Sequence[tuple[torch.Tensor, torch.Tensor]], dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    width = max(len(tokens) for tokens, _ in items)
    hidden = items[0][1].shape[-1]
    tokens = torch.zeros((len(items), width), dtype=torch.long)
    features = torch.zeros((len(items), width, hidden), dtype=dtype)
    mask = torch.zeros((len(items), width), dtype=torch.bool)
    for row, (ids, feats) in enumerate(items):
        tokens[row, : len(ids)] = ids
        features[row, : len(ids)] = feats.to(dtype)
        mask[row, : len(ids)] = True
    return tokens, features, mask


def head_loss(
    head: DraftHead,
    tokens: torch.Tensor,
    features: torch.Tensor,
    mask: torch.Tensor,
    config: HeadTrainingConfig,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(loss, top-1 agreements, positions) over a padded batch: pairs (f_s, x_{s+1}) predict f_{s+1}."""
    inputs = features[:, :-1]
    if config.noise > 0 and head.training:
        noise = torch.rand(inputs.shape, generator=generator, dtype=inputs.dtype) * 2 - 1
        inputs = inputs + noise * config.noise * inputs.abs().mean()
    predicted = head(inputs, tokens[:, 1:])
    target = features[:, 1:]
    valid = mask[:, 1:]
    rows = head.lm_rows()
    with torch.no_grad():
        target_logits = target[valid] @ rows.T
        target_probs = torch.softmax(target_logits, dim=-1)
    predicted_valid = predicted[valid]
    log_q = torch.log_softmax(predicted_valid @ rows.T, dim=-1)
    token_loss = -(target_probs * log_q).sum(-1).mean()
    feature_loss = F.smooth_l1_loss(predicted_valid, target[valid])
    loss = config.feature_weight * feature_loss + config.token_weight * token_loss
    agree = (log_q.argmax(-1) == target_logits.argmax(-1)).sum()
    return loss, agree, valid.sum()


def _learning_rate(step: int, total: int, config: HeadTrainingConfig) -> float:
    if step < config.warmup_steps:
        return config.learning_rate * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, total - config.warmup_steps)
    return config.learning_rate * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))


def _save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    staging = path.with_name(f".{path.name}.tmp")
    torch.save(state, staging)
    staging.replace(path)


def _validate(
    head: DraftHead,
    items: Sequence[tuple[torch.Tensor, torch.Tensor]],
    config: HeadTrainingConfig,
    dtype: torch.dtype,
) -> float:
    if not items:
        return float("nan")
    head.eval()
    agree = total = 0
    with torch.no_grad():
        for start in range(0, len(items), config.batch_size):
            tokens, features, mask = _pad(items[start : start + config.batch_size], dtype)
            _, batch_agree, batch_total = head_loss(head, tokens, features, mask, config)
            agree += int(batch_agree)
            total += int(batch_total)
    head.train()
    return agree / max(total, 1)


def train_head(
    head: DraftHead,
    sequences: Sequence[tuple[torch.Tensor, torch.Tensor]],
    work_dir: Path,
    config: HeadTrainingConfig,
    show_progress: bool = True,
) -> tuple[int, float, float, float]:
    """Train in place; (steps, first loss, final loss, validation top-1 agreement). Resumes from work_dir."""
    dtype = head.fuse.weight.dtype
    validation = [item for index, item in enumerate(sequences) if index % 20 == 19]
    training = [item for index, item in enumerate(sequences) if index % 20 != 19] or list(sequences)
    shuffler = random.Random(config.seed)
    plan = [
        batch for _ in range(config.epochs) for batch in _batches(len(training), config.batch_size, shuffler)
    ]
    optimizer = torch.optim.AdamW([p for p in head.parameters() if p.requires_grad], lr=config.learning_rate)
    checkpoint = work_dir / "checkpoint.pt"
    step, first_loss, recent = 0, float("nan"), float("nan")
    fingerprint = json.dumps([asdict(head.config), asdict(config), len(training)], sort_keys=True)
    if checkpoint.is_file():
        state = torch.load(checkpoint, weights_only=False)
        if state.get("fingerprint") == fingerprint:
            head.load_state_dict(state["head"])
            optimizer.load_state_dict(state["optimizer"])
            step, first_loss, recent = state["step"], state["first_loss"], state["recent_loss"]
    noise = torch.Generator().manual_seed(config.seed + step)
    head.train()
    bar = tqdm(
        total=len(plan),
        initial=step,
        desc="training head",
        unit="step",
        disable=not show_progress,
        file=sys.stderr,
    )
    while step < len(plan):
        for group in optimizer.param_groups:
            group["lr"] = _learning_rate(step, len(plan), config)
        tokens, features, mask = _pad([training[index] for index in plan[step]], dtype)
        loss, agree, total = head_loss(head, tokens, features, mask, config, noise)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
        optimizer.step()
        value = float(loss.detach())
        first_loss = value if math.isnan(first_loss) else first_loss
        recent = value if math.isnan(recent) else 0.9 * recent + 0.1 * value
        step += 1
        bar.update(1)
        bar.set_postfix(loss=f"{recent:.3f}", top1=f"{int(agree) / max(int(total), 1):.2f}")
        if step % config.checkpoint_every == 0 or step == len(plan):
            _save_checkpoint(
                checkpoint,
                {
                    "fingerprint": fingerprint,
                    "head": head.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "step": step,
                    "first_loss": first_loss,
                    "recent_loss": recent,
                },
            )
    bar.close()
    return step, first_loss, recent, _validate(head, validation, config, dtype)


# --- the whole run ------------------------------------------------------------------------------


def train_draft_head(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    target_name: str,
    sources: TrainingSources,
    *,
    work_dir: Path,
    out_path: Path,
    config: HeadTrainingConfig | None = None,
    progress: Progress | None = _stderr,
    show_progress: bool = True,
) -> TrainingReport:
    """All four stages; the head is written to `out_path`, a JSON report beside it."""
    config = config or HeadTrainingConfig()
    say = progress or (lambda message: None)
    if not sources.chats and not sources.texts:
        raise TrainingInputError("no training text: give at least one source with prompts or passages")
    work_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(config.seed)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    chooser = random.Random(config.seed)
    chats = list(sources.chats)
    chooser.shuffle(chats)
    chats = chats[: config.max_chats]
    say(f"{len(chats)} prompts to answer, {len(sources.texts)} passages; work directory {work_dir}")
    answered = distill_answers(model, tokenizer, chats, work_dir / "answers.jsonl", config, show_progress)
    seconds["self_distillation"] = time.perf_counter() - started
    # The answers themselves are drafted from as they are (decoding.answer_store).
    store_path = save_answer_store(answer_store_path(out_path), answered, model, target_name)
    say(f"{len(answered)} answers stored for drafting in {store_path}")

    mark = time.perf_counter()
    sequences = [(prompt + answer)[-config.seq_len :] for prompt, answer in answered]
    sequences += text_sequences(tokenizer, sources.texts, config.seq_len, config.max_text_tokens)
    plan_key = hashlib.sha256(json.dumps(sequences).encode()).hexdigest()[:16]
    feature_dir = work_dir / f"features-{plan_key}"
    shards = extract_features(model, sequences, feature_dir, show_progress)
    seconds["features"] = time.perf_counter() - mark
    tokens = sum(len(sequence) for sequence in sequences)
    say(f"{len(sequences)} sequences, {tokens} tokens of target features in {seconds['features']:.0f} s")

    mark = time.perf_counter()
    loaded = load_shards(shards)
    head_config = DraftHeadConfig.for_target(
        model, target_name, draft_vocab=config.draft_vocab, intermediate_size=config.intermediate_size
    )
    head = DraftHead(head_config)
    eos = tokenizer.eos_token_id
    special = [eos] if isinstance(eos, int) else []
    ids = draft_vocabulary(loaded, head_config.draft_vocab, head_config.vocab_size, special)
    head.set_draft_ids(ids)
    head.attach(model)
    for parameter in head.parameters():
        parameter.requires_grad_(True)
    coverage = _coverage(head, loaded)
    steps, first_loss, final_loss, top1 = train_head(head, loaded, work_dir, config, show_progress)
    seconds["training"] = time.perf_counter() - mark
    seconds["total"] = time.perf_counter() - started
    report = TrainingReport(
        head_path=str(out_path),
        target_name=target_name,
        sources=dict(sources.origins),
        sequences=len(sequences),
        tokens=tokens,
        chats_answered=len(answered),
        draft_vocab=head_config.draft_vocab,
        draft_vocab_coverage=coverage,
        steps=steps,
        first_loss=first_loss,
        final_loss=final_loss,
        validation_top1=top1,
        head_bytes=0,
        answer_store_path=str(store_path),
        answer_store_bytes=store_path.stat().st_size,
        seconds={name: round(value, 1) for name, value in seconds.items()},
    )
    save_draft_head(head, out_path, training=report.to_dict())
    report.head_bytes = out_path.stat().st_size
    _write_json(out_path.with_suffix(".json"), report.to_dict())
    say(
        f"head written to {out_path} ({report.head_bytes / 1e6:.1f} MB); validation top-1 agreement "
        f"{top1:.3f}; {seconds['total']:.0f} s in all"
    )
    return report


def _coverage(head: DraftHead, sequences: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """Share of the target's greedy next tokens (over a sample of positions) inside the draft vocabulary."""
    if head.config.draft_vocab >= head.config.vocab_size:
        return 1.0
    inside = total = 0
    allowed = torch.zeros(head.config.vocab_size, dtype=torch.bool)
    allowed[head.draft_ids] = True
    full = head.lm_rows(full=True)
    with torch.no_grad():
        for _, features in sequences[:: max(1, len(sequences) // 64)]:
            top = (features.to(full.dtype) @ full.T).argmax(-1)
            inside += int(allowed[top].sum())
            total += int(top.numel())
    return inside / max(total, 1)


# --- command line -------------------------------------------------------------------------------


def config_from_args(args: argparse.Namespace) -> HeadTrainingConfig:
    return HeadTrainingConfig(
        seq_len=args.seq_len,
        draft_vocab=args.draft_vocab,
        max_chats=args.max_chats,
        answer_tokens=args.answer_tokens,
        generate_batch=args.generate_batch,
        max_text_tokens=args.max_text_tokens,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        seed=args.seed,
    )


def sources_from_args(args: argparse.Namespace) -> TrainingSources:
    sources = TrainingSources()
    for path in args.sources:
        sources.extend(read_source(path, args.holdout_per_category))
    return sources


def run_from_args(
    args: argparse.Namespace,
    target: str,
    cache_dir: Path,
    *,
    device: str = "cpu",
    program: str = "train-draft-head",
) -> int:
    """Read the sources, load the target in float32, train, print the report as JSON; the exit status
    (0 trained, 2 bad input or a target that cannot load). Shared by both command lines."""
    from decoding.models import ModelLoadError, load_target

    try:
        config = config_from_args(args)
        sources = sources_from_args(args)
        loaded = load_target(target, cache_dir, device=device, dtype="float32")
        out = args.out or default_head_path(cache_dir, loaded.name)
        report = train_draft_head(
            loaded.model,
            loaded.tokenizer,
            loaded.name,
            sources,
            work_dir=args.work_dir or out.with_name(out.stem + ".work"),
            out_path=out,
            config=config,
            show_progress=not args.no_progress,
        )
    except (TrainingInputError, ModelLoadError, ValueError) as error:
        print(f"{program}: {error}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_dict(), indent=2))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m decoding.train_head", description=DESCRIPTION)
    add_arguments(parser)
    parser.add_argument("--target", default="smollm2", help="'smollm2' or a local model directory")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ.get("AKM_DATA_DIR", "~/.local/share/akm")).expanduser() / "models",
    )
    args = parser.parse_args(argv)
    return run_from_args(args, args.target, args.cache_dir)


if __name__ == "__main__":
    raise SystemExit(main())
