"""Decoding benchmark: own plain and speculative decoding against Hugging Face `generate`.

Every method decodes the same prompts with the same target weights, greedily. Methods run
back to back on each prompt (interleaved), so load from other processes on the machine hits all
methods alike instead of whichever method happened to run during a busy minute.

Methods:
- `plain`: own decode loop with no drafter (the baseline every speedup is relative to).
- `prompt-lookup`, `evidence`: own speculative decoding with one drafter and adaptive draft length.
- `history` (opt-in): the same with the decoder's earlier outputs as the one drafter
  (`decoding.history`); each method's decoder keeps the outputs of the prompts before, in order.
- `draft-head`: own speculative decoding with a trained draft head (`decoding.draft_head`) alone.
- `self-speculative`: the target's first layers + its LM head as the draft model (no training).
- `speculative`: own default composite (evidence passages, prompt lookup, earlier outputs, and the
  answer store and draft head when they are given), adaptive length: what answers use.
- `speculative-no-head`: the same composite without the draft head, to show what the head adds.
- `speculative-chain`, `speculative-no-history` (opt-in): the composite verifying chains only, and
  the composite without earlier outputs, to show what draft trees and the history add.
- `speculative-no-store` (opt-in): the composite without the answer store (`decoding.answer_store`:
  the target's own answers to other prompts, written by `akm train-draft-head`), to show what it adds.
  The answers to the prompts being measured are always left out of the store.
- `speculative-no-successor` (opt-in): the composite without the one-token successor guess
  (`decoding.drafters.SuccessorDrafter`), to show what verifying a guess on otherwise plain steps adds.
- `speculative-cold` (opt-in): the composite prefilling every prompt whole. Every other own method
  keeps its target cache from the prompt before, as a serving process does, and prefills only what
  a prompt does not share with it (`DecodeConfig.prefix_reuse`; records count `cached_prompt_tokens`).
- `hf-plain`: `model.generate` greedy with its KV cache.
- `hf-pld`: `model.generate(prompt_lookup_num_tokens=10)`.

The Hugging Face methods run on `reference_model` when one is given: the CLI passes the target as
transformers loads it (stock `nn.Linear`), while own methods run on the prepacked copy
(`decoding.packed_linear`), and the report's environment names the kernels of each side.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import PreTrainedModel, PreTrainedTokenizerBase
from transformers.generation.streamers import BaseStreamer

from decoding.answer_store import AnswerStore, StoreDrafter, load_answer_store
from decoding.bench.ceiling import CopyCeiling, copy_ceiling, lookup_ceiling
from decoding.bench.errors import BenchmarkInputError, import_bench_extra
from decoding.bench.spec import (
    FORMATS,
    GROUNDED_FORMATS,
    HEAD_METHODS,
    METHODS,
    OPT_IN_METHODS,
    STORE_METHODS,
)
from decoding.draft_head import DraftHead, DraftHeadDrafter
from decoding.draft_length import VerifyCostCurve, load_or_measure_verify_cost
from decoding.drafters import (
    CompositeDrafter,
    Drafter,
    EvidenceDrafter,
    NoDrafter,
    PromptLookupDrafter,
    SuccessorDrafter,
)
from decoding.history import HistoryDrafter
from decoding.models import chat_prompt_ids
from decoding.packed_linear import PackedLinear
from decoding.self_draft import DEFAULT_SELF_DRAFT_LAYERS, self_drafter
from decoding.speculative import DecodeConfig, SpeculativeDecoder
from decoding.stats import percentile

# Every method but the Hugging Face ones runs the own decode loop.
OWN_METHODS = frozenset(method for method in METHODS if not method.startswith("hf-"))
BASELINE = "plain"
# The peer every method is also compared with, and the single drafters the composite must match.
PEER = "hf-pld"
COMPOSITE = "speculative"
SINGLE_DRAFTERS = ("prompt-lookup", "evidence", "history", "draft-head")
COMPOSITES = (
    "speculative",
    "speculative-no-head",
    "speculative-chain",
    "speculative-no-history",
    "speculative-cold",
    "speculative-no-store",
    "speculative-no-successor",
)
ALL_CATEGORIES = "all"
HF_PROMPT_LOOKUP_TOKENS = 10
WARMUP_TOKENS = 16

RESULT_KEYS = (
    "prompt_id",
    "category",
    "method",
    "new_tokens",
    "wall_s",
    "cpu_s",
    "ttft_s",
    "target_calls",
    "proposed_by_position",
    "accepted_by_position",
    "tree_steps",
    "branch_accepts",
    "cached_prompt_tokens",
    "identical_to_plain",
    "first_divergence",
    "finish",
    "itl_ms",
    "copy_ceiling_tokens",
    "copy_ceiling_steps",
    "lookup_ceiling_steps",
)
SUMMARY_KEYS = (
    "prompts",
    "new_tokens",
    "wall_s",
    "cpu_s",
    "speedup_vs_plain",
    "speedup_vs_plain_cpu",
    "decode_speedup_vs_plain",
    "copy_ceiling",
    "lookup_ceiling",
    "tokens_per_s",
    "tokens_per_target_call",
    "mean_accepted_length",
    "identical_rate",
    "ttft_mean_ms",
    "ttft_p50_ms",
    "itl_p50_ms",
    "itl_p95_ms",
    "acceptance_by_position",
    "vs_hf_pld",
    "vs_hf_pld_cpu",
    "vs_best_single_drafter",
    "vs_best_single_drafter_cpu",
    "best_single_drafter",
    "tree_steps",
    "branch_accepts",
)
REPORT_KEYS = (
    "benchmark",
    "format",
    "prompts_file",
    "max_new_tokens",
    "methods",
    "prompt_count",
    "results",
    "summary",
    "divergences",
    "cost_curve",
    "environment",
)

SQUAD_SYSTEM = (
    "You answer questions using only the given context. Answer in one or two sentences, "
    "reusing the context's own words."
)


@dataclass(frozen=True)
class BenchPrompt:
    """One chat to decode, its category, and the passages (text) the evidence drafter may copy from."""

    prompt_id: str
    category: str
    messages: tuple[tuple[str, str], ...]
    evidence: tuple[str, ...] = ()

    def chat(self) -> list[dict[str, str]]:
        return [{"role": role, "content": content} for role, content in self.messages]


@dataclass(frozen=True)
class EncodedPrompt:
    prompt: BenchPrompt
    ids: list[int]
    evidence_ids: list[list[int]]


@dataclass
class MethodOutcome:
    """What one method produced on one prompt, timed from the call to its return."""

    tokens: list[int]
    wall_s: float
    # Process CPU time: on a machine shared with other work, wall time also counts time spent
    # descheduled; CPU time counts only the work done, so it is the steadier speed measure there.
    cpu_s: float
    ttft_s: float
    token_times_s: list[float]
    target_calls: int
    proposed_by_position: list[int] = field(default_factory=list)
    accepted_by_position: list[int] = field(default_factory=list)
    # Steps that verified a draft tree, and those whose accepted path left the main chain.
    tree_steps: int = 0
    branch_accepts: int = 0
    finish: str = ""
    # Prompt tokens the method's cache held from the prompt before (own methods only).
    cached_prompt_tokens: int = 0


# --- prompt files ---------------------------------------------------------------------------


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise BenchmarkInputError(f"cannot read {path}: {error.strerror or error}") from error
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise BenchmarkInputError(f"{path}:{number}: not JSON ({error.msg})") from error
        if not isinstance(row, dict):
            raise BenchmarkInputError(f"{path}:{number}: expected a JSON object")
        rows.append(row)
    return rows


def read_spec_bench(path: Path, per_category: int | None = None) -> list[BenchPrompt]:
    """First turn of each Spec-Bench question, the first `per_category` of each category.

    Ordered round-robin over categories (first of each category, then second, ...), so a run
    stopped early still covers every category.
    """
    by_category: dict[str, list[BenchPrompt]] = {}
    for number, row in enumerate(_read_jsonl(path), start=1):
        turns, category = row.get("turns"), row.get("category")
        if not isinstance(turns, list) or not turns or not isinstance(turns[0], str) or not turns[0].strip():
            raise BenchmarkInputError(f"{path}:{number}: a Spec-Bench row needs a non-empty 'turns' list")
        if not isinstance(category, str) or not category:
            raise BenchmarkInputError(f"{path}:{number}: a Spec-Bench row needs a 'category'")
        taken = by_category.setdefault(category, [])
        if per_category is None or len(taken) < per_category:
            taken.append(BenchPrompt(str(row.get("question_id", number)), category, (("user", turns[0]),)))
    prompts = _round_robin(list(by_category.values()))
    if not prompts:
        raise BenchmarkInputError(f"{path}: no Spec-Bench prompts")
    return prompts


def _round_robin(groups: list[list[BenchPrompt]]) -> list[BenchPrompt]:
    ordered: list[BenchPrompt] = []
    for index in range(max((len(group) for group in groups), default=0)):
        ordered.extend(group[index] for group in groups if index < len(group))
    return ordered


def grounded_messages(context: str, question: str) -> tuple[tuple[str, str], ...]:
    user = f"Context:\n{context}\n\nQuestion: {question}\nAnswer from the context."
    return (("system", SQUAD_SYSTEM), ("user", user))


def read_squad(path: Path, limit: int | None = None) -> list[BenchPrompt]:
    """Grounded prompts from a SQuAD-format file: the first question of each paragraph.

    Paragraphs are taken round-robin across articles (first paragraph of every article, then the
    second, ...) so a short run still covers many topics.
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BenchmarkInputError(f"cannot read {path}: {error.strerror or error}") from error
    except json.JSONDecodeError as error:
        raise BenchmarkInputError(f"{path}: not JSON ({error.msg})") from error
    articles = document.get("data") if isinstance(document, dict) else None
    if not isinstance(articles, list):
        raise BenchmarkInputError(f"{path}: a SQuAD file needs a top-level 'data' list")
    per_article: list[list[BenchPrompt]] = []
    for article in articles:
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise BenchmarkInputError(f"{path}: every article needs a 'paragraphs' list")
        found: list[BenchPrompt] = []
        for paragraph in paragraphs:
            context, questions = paragraph.get("context"), paragraph.get("qas")
            if not isinstance(context, str) or not isinstance(questions, list):
                raise BenchmarkInputError(f"{path}: every paragraph needs 'context' and 'qas'")
            if not questions or not context.strip():
                continue
            first = questions[0]
            question, question_id = first.get("question"), first.get("id")
            if not isinstance(question, str) or not question.strip():
                raise BenchmarkInputError(f"{path}: question {question_id!r} has no text")
            found.append(
                BenchPrompt(str(question_id), "squad", grounded_messages(context, question), (context,))
            )
        per_article.append(found)
    prompts = _round_robin(per_article)
    if limit is not None:
        prompts = prompts[:limit]
    if not prompts:
        raise BenchmarkInputError(f"{path}: no SQuAD questions")
    return prompts


def read_prompts(path: Path, prompt_format: str, per_category: int | None = None) -> list[BenchPrompt]:
    if prompt_format == "spec-bench":
        return read_spec_bench(path, per_category)
    if prompt_format == "squad":
        return read_squad(path, per_category)
    if prompt_format == "answers":
        raise BenchmarkInputError("answer-format prompts are built by the answer path (akm bench decode)")
    raise BenchmarkInputError(f"unknown prompt format {prompt_format!r}; use one of {', '.join(FORMATS)}")


def encode_prompts(prompts: Sequence[BenchPrompt], tokenizer: PreTrainedTokenizerBase) -> list[EncodedPrompt]:
    encoded = []
    for prompt in prompts:
        evidence_ids = [
            [int(token) for token in tokenizer(passage, add_special_tokens=False)["input_ids"]]
            for passage in prompt.evidence
            if passage
        ]
        encoded.append(EncodedPrompt(prompt, chat_prompt_ids(tokenizer, prompt.chat()), evidence_ids))
    return encoded


def check_methods(methods: Sequence[str], prompt_format: str, has_head: bool = True) -> list[str]:
    """The methods to run, baseline first, in canonical order; refuses unknown or inapplicable ones."""
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise BenchmarkInputError(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(METHODS)}")
    needing_head = sorted(set(methods) & set(HEAD_METHODS))
    if needing_head and not has_head:
        raise BenchmarkInputError(
            f"{', '.join(needing_head)} need(s) a trained draft head: train one with `akm train-draft-head` "
            "or name its file with --draft-head"
        )
    if "evidence" in methods and prompt_format not in GROUNDED_FORMATS:
        raise BenchmarkInputError(
            "the 'evidence' method needs passages: it runs only with --format "
            + " or ".join(GROUNDED_FORMATS)
        )
    wanted = {BASELINE, *methods}
    return [method for method in METHODS if method in wanted]


def default_methods(prompt_format: str, has_head: bool = False) -> list[str]:
    return [
        method
        for method in METHODS
        if (method != "evidence" or prompt_format in GROUNDED_FORMATS)
        and (has_head or method not in HEAD_METHODS)
        and method not in OPT_IN_METHODS
    ]


# --- running --------------------------------------------------------------------------------


class _TimingStreamer(BaseStreamer):  # type: ignore[misc]
    """Records when `generate` hands out each new token (its first `put` is the prompt)."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.times: list[float] = []
        self._prompt_seen = False

    def put(self, value: torch.Tensor) -> None:
        if not self._prompt_seen:
            self._prompt_seen = True
            return
        now = time.perf_counter() - self.started
        self.times.extend([now] * int(value.numel()))

    def end(self) -> None:
        pass


class _CallCounter:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        self.calls += 1


def _hf_generate(
    model: PreTrainedModel,
    prompt_ids: list[int],
    max_new_tokens: int,
    eos_token_ids: tuple[int, ...],
    prompt_lookup_tokens: int | None,
) -> MethodOutcome:
    device = next(model.parameters()).device
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    options: dict[str, Any] = {
        "max_new_tokens": max_new_tokens,
        "do_sample": False,
        "use_cache": True,
        "attention_mask": torch.ones_like(input_ids),
    }
    if eos_token_ids:
        options["eos_token_id"] = list(eos_token_ids)
        options["pad_token_id"] = eos_token_ids[0]
    if prompt_lookup_tokens is not None:
        options["prompt_lookup_num_tokens"] = prompt_lookup_tokens
    counter = _CallCounter()
    hook = model.register_forward_hook(counter)
    started, cpu_started = time.perf_counter(), time.process_time()
    streamer = _TimingStreamer(started)
    try:
        with torch.inference_mode():
            output = model.generate(input_ids, streamer=streamer, **options)  # type: ignore[operator]
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    finally:
        hook.remove()
    generated = [int(token) for token in output[0, len(prompt_ids) :].tolist()]
    finish = "length"
    # The own decoder never emits the EOS it stops on; cut HF's output the same way to compare.
    for index, token in enumerate(generated):
        if token in eos_token_ids:
            generated, finish = generated[:index], "eos"
            break
    times = streamer.times[: len(generated)]
    return MethodOutcome(
        tokens=generated,
        wall_s=wall,
        cpu_s=cpu,
        ttft_s=streamer.times[0] if streamer.times else wall,
        token_times_s=times,
        target_calls=counter.calls,
        finish=finish,
    )


def _own_generate(decoder: SpeculativeDecoder, prompt_ids: list[int], max_new_tokens: int) -> MethodOutcome:
    started, cpu_started = time.perf_counter(), time.process_time()
    result = decoder.generate(prompt_ids, max_new_tokens)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    stats = result.stats
    return MethodOutcome(
        tokens=list(result.token_ids),
        wall_s=wall,
        cpu_s=cpu,
        ttft_s=stats.ttft_s,
        token_times_s=list(stats.token_times_s),
        target_calls=stats.target_calls,
        proposed_by_position=list(stats.proposed_by_position),
        accepted_by_position=list(stats.accepted_by_position),
        tree_steps=stats.tree_steps,
        branch_accepts=stats.branch_accepts,
        finish=str(result.finish_reason),
        cached_prompt_tokens=stats.cached_prompt_tokens,
    )


def first_divergence(reference: Sequence[int], tokens: Sequence[int]) -> int | None:
    """Index of the first position where two token lists differ (a length difference counts); None if equal."""
    for index, (expected, got) in enumerate(zip(reference, tokens, strict=False)):
        if expected != got:
            return index
    if len(reference) != len(tokens):
        return min(len(reference), len(tokens))
    return None


@torch.inference_mode()
def logit_gap(model: PreTrainedModel, context: list[int]) -> float:
    """Target logit of the best token minus the second best after `context` (one fresh forward)."""
    device = next(model.parameters()).device
    output = model(input_ids=torch.tensor([context], dtype=torch.long, device=device), logits_to_keep=1)
    top = torch.topk(output.logits[0, -1].double(), 2).values
    return float(top[0] - top[1])


Progress = Callable[[str], None]


def _stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class DecodeBenchmark:
    """Runs the chosen methods, interleaved per prompt, on one shared target model."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        methods: Sequence[str],
        *,
        max_new_tokens: int = 128,
        max_draft: int = 16,
        cost_curve: VerifyCostCurve | None = None,
        cost_cache_dir: Path | None = None,
        progress: Progress | None = _stderr_progress,
        reference_model: PreTrainedModel | None = None,
        draft_head: DraftHead | None = None,
        self_draft_layers: int = DEFAULT_SELF_DRAFT_LAYERS,
        repeats: int = 1,
        answer_store: AnswerStore | None = None,
    ) -> None:
        if repeats < 1:
            raise BenchmarkInputError(f"repeats must be at least 1, got {repeats}")
        self.repeats = repeats
        unknown = sorted(set(methods) - set(METHODS))
        if unknown:
            raise BenchmarkInputError(f"unknown method(s) {', '.join(unknown)}")
        if draft_head is None and set(methods) & set(HEAD_METHODS):
            raise BenchmarkInputError("the draft-head methods need a trained draft head")
        if answer_store is None and set(methods) & set(STORE_METHODS):
            raise BenchmarkInputError(
                "speculative-no-store needs an answer store (`akm train-draft-head` writes one beside the head)"
            )
        self.draft_head = draft_head
        self.answer_store = answer_store
        # One early-exit drafter for the run (it shares the target's weights; reset per request).
        self.self_drafter = self_drafter(model, self_draft_layers) if "self-speculative" in methods else None
        self.model = model
        self.reference_model = reference_model if reference_model is not None else model
        self.tokenizer = tokenizer
        self.methods = [BASELINE, *(method for method in methods if method != BASELINE)]
        self.max_new_tokens = max_new_tokens
        self.progress = progress or (lambda message: None)
        if cost_curve is None:
            cost_curve = load_or_measure_verify_cost(model, max_draft, cost_cache_dir)
        self.cost_curve = cost_curve
        config = DecodeConfig(max_draft=max_draft, cost_curve=cost_curve)
        variants = {
            "speculative-chain": DecodeConfig(max_draft=max_draft, cost_curve=cost_curve, draft_tree=False),
            "speculative-cold": DecodeConfig(max_draft=max_draft, cost_curve=cost_curve, prefix_reuse=False),
        }
        # One decoder per own method for the whole run: acceptance statistics build up across
        # prompts as they would in a serving process; the drafter is swapped per prompt.
        self.decoders = {
            method: SpeculativeDecoder(model, tokenizer, NoDrafter(), variants.get(method, config))
            for method in self.methods
            if method in OWN_METHODS
        }
        self.eos_token_ids = self.decoders[BASELINE].eos_token_ids
        self._gaps: dict[tuple[str, int], float] = {}

    def _drafter(self, method: str, prompt: EncodedPrompt) -> Drafter:
        if method == "prompt-lookup":
            return PromptLookupDrafter()
        if method == "evidence":
            return EvidenceDrafter(prompt.evidence_ids)
        if method == "draft-head" and self.draft_head is not None:
            return DraftHeadDrafter(self.draft_head)
        if method == "self-speculative" and self.self_drafter is not None:
            return self.self_drafter
        history = self.decoders[method].history if method in self.decoders else None
        if method == "history" and history is not None:
            return HistoryDrafter(history)
        if method in COMPOSITES:
            # The members answers use (akm.answer.generation): evidence, lookup, earlier outputs, the
            # answer store, the successor guess, the head.
            drafters: list[Drafter] = [PromptLookupDrafter()]
            if prompt.evidence_ids:
                drafters.insert(0, EvidenceDrafter(prompt.evidence_ids))
            if method != "speculative-no-history" and history is not None:
                drafters.append(HistoryDrafter(history))
            if method != "speculative-no-store" and self.answer_store is not None:
                drafters.append(StoreDrafter(self.answer_store))
            if method != "speculative-no-successor":
                drafters.append(SuccessorDrafter())
            if method != "speculative-no-head" and self.draft_head is not None:
                drafters.append(DraftHeadDrafter(self.draft_head))
            return CompositeDrafter(drafters)
        return NoDrafter()

    def run_method(self, method: str, prompt: EncodedPrompt, max_new_tokens: int) -> MethodOutcome:
        if method == "hf-plain":
            return _hf_generate(self.reference_model, prompt.ids, max_new_tokens, self.eos_token_ids, None)
        if method == "hf-pld":
            return _hf_generate(
                self.reference_model, prompt.ids, max_new_tokens, self.eos_token_ids, HF_PROMPT_LOOKUP_TOKENS
            )
        decoder = self.decoders[method]
        decoder.drafter = self._drafter(method, prompt)
        return _own_generate(decoder, prompt.ids, max_new_tokens)

    def warm_up(self, prompt: EncodedPrompt) -> None:
        """One short run of every method, so first-call costs land outside the measurements; the own
        decoders then forget it (its output must not be in a history when the prompt is measured)."""
        saved = {method: decoder.learnt_state() for method, decoder in self.decoders.items()}
        for method in self.methods:
            self.run_method(method, prompt, min(WARMUP_TOKENS, self.max_new_tokens))
        for method, state in saved.items():
            self.decoders[method].restore_learnt_state(state)

    def _divergence(
        self, prompt: EncodedPrompt, plain: list[int], tokens: list[int]
    ) -> dict[str, Any] | None:
        index = first_divergence(plain, tokens)
        if index is None:
            return None
        key = (prompt.prompt.prompt_id, index)
        if key not in self._gaps:
            self._gaps[key] = logit_gap(self.model, prompt.ids + plain[:index])
        return {
            "index": index,
            "logit_gap": self._gaps[key],
            "plain_token": plain[index] if index < len(plain) else None,
            "method_token": tokens[index] if index < len(tokens) else None,
        }

    def _repeated(self, prompt: EncodedPrompt) -> list[tuple[str, MethodOutcome]]:
        """Every method on `prompt`, `repeats` rounds of all methods in turn; per method the round with
        the least wall time (load can only add to it). Each round starts the own decoders from the
        acceptance statistics they had before the prompt, so a repeat learns nothing from the ones
        before it; a greedy repeat that produces other tokens is an error."""
        saved = {method: decoder.learnt_state() for method, decoder in self.decoders.items()}
        best: dict[str, MethodOutcome] = {}
        for round_number in range(self.repeats):
            for method in self.methods:
                if method in saved:
                    self.decoders[method].restore_learnt_state(saved[method])
                outcome = self.run_method(method, prompt, self.max_new_tokens)
                kept = best.get(method)
                if kept is not None and kept.tokens != outcome.tokens:
                    raise RuntimeError(
                        f"{method} produced other tokens in round {round_number + 1} on prompt "
                        f"{prompt.prompt.prompt_id}: greedy decoding must repeat itself"
                    )
                if kept is None or outcome.wall_s < kept.wall_s:
                    best[method] = outcome
        return [(method, best[method]) for method in self.methods]

    def run(
        self,
        prompts: Sequence[EncodedPrompt],
        checkpoint: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Result records, one per prompt and method; `checkpoint` gets the records so far after each prompt."""
        if not prompts:
            raise BenchmarkInputError("no prompts to benchmark")
        keys = [(prompt.prompt.category, prompt.prompt.prompt_id) for prompt in prompts]
        if len(set(keys)) != len(keys):
            # The summary pairs each run with own plain's run of the same (category, prompt_id).
            repeated = sorted({key for key in keys if keys.count(key) > 1})[:3]
            raise BenchmarkInputError(f"prompt ids repeat within a category: {repeated}")
        self.progress(f"warm-up on prompt {prompts[0].prompt.prompt_id} ({len(self.methods)} methods)")
        self.warm_up(prompts[0])
        records: list[dict[str, Any]] = []
        for number, prompt in enumerate(prompts, start=1):
            plain: list[int] = []
            ceiling = lookup = CopyCeiling(0, 0.0)
            for method, outcome in self._repeated(prompt):
                if method == BASELINE:
                    plain = outcome.tokens
                    ceiling = copy_ceiling(prompt.ids, plain, self.cost_curve)
                    lookup = lookup_ceiling(prompt.ids, plain, self.cost_curve)
                divergence = self._divergence(prompt, plain, outcome.tokens)
                records.append(result_record(prompt.prompt, method, outcome, divergence, ceiling, lookup))
                rate = len(outcome.tokens) / outcome.wall_s if outcome.wall_s > 0 else 0.0
                self.progress(
                    f"[{number}/{len(prompts)}] {prompt.prompt.category}/{prompt.prompt.prompt_id} "
                    f"{method}: {len(outcome.tokens)} tok in {outcome.wall_s:.2f} s ({rate:.1f} tok/s, "
                    f"cpu {outcome.cpu_s:.2f} s)"
                    + ("" if divergence is None else f" DIVERGES at {divergence['index']}")
                )
            if checkpoint is not None:
                checkpoint(records)
        return records


def result_record(
    prompt: BenchPrompt,
    method: str,
    outcome: MethodOutcome,
    divergence: dict[str, Any] | None,
    ceiling: CopyCeiling,
    lookup: CopyCeiling | None = None,
) -> dict[str, Any]:
    """One method's run on one prompt; `ceiling` is the prompt's copy ceiling and `lookup` its ceiling
    for prompt lookup's own proposals (decoding.bench.ceiling), from own plain's tokens, the same in
    every method's record of the prompt."""
    times = outcome.token_times_s
    return {
        "prompt_id": prompt.prompt_id,
        "category": prompt.category,
        "method": method,
        "new_tokens": len(outcome.tokens),
        "wall_s": outcome.wall_s,
        "cpu_s": outcome.cpu_s,
        "ttft_s": outcome.ttft_s,
        "target_calls": outcome.target_calls,
        "proposed_by_position": outcome.proposed_by_position,
        "accepted_by_position": outcome.accepted_by_position,
        "tree_steps": outcome.tree_steps,
        "branch_accepts": outcome.branch_accepts,
        "cached_prompt_tokens": outcome.cached_prompt_tokens,
        "identical_to_plain": divergence is None,
        "first_divergence": divergence,
        "finish": outcome.finish,
        "itl_ms": [(later - earlier) * 1000.0 for earlier, later in itertools.pairwise(times)],
        "copy_ceiling_tokens": ceiling.tokens,
        "copy_ceiling_steps": ceiling.steps,
        "lookup_ceiling_steps": (lookup or ceiling).steps,
    }


# --- summary --------------------------------------------------------------------------------


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator > 0 else None


PromptKey = tuple[str, str]


def summarize_records(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The `summary` block of a report from its `results` block.

    summary[method][category] (plus category "all"); `speedup_vs_plain` is the method's total tokens
    over total time divided by the same for `plain` on the same prompts (None without plain runs).
    `vs_hf_pld` is the same ratio against `hf-pld`, and for `speculative`, `vs_best_single_drafter`
    against whichever single-drafter method was fastest on those prompts (named in
    `best_single_drafter`); the `_cpu` variants use process CPU time instead of wall time. `mean_accepted_length` is accepted drafts per step that verified
    drafts (None for methods that report no per-position counts, such as Hugging Face generate).
    `decode_speedup_vs_plain` leaves out each run's first token and the time to it (the prefill), and
    `copy_ceiling` is the most that speedup could be with drafts that copy, by the cost curve
    (decoding.bench.ceiling), and `lookup_ceiling` the most with prompt lookup's own proposals, each
    verified to the right length: the same for every method on the same prompts.
    """
    methods = list(dict.fromkeys(record["method"] for record in records))
    categories = list(dict.fromkeys(record["category"] for record in records))
    by_method: dict[str, dict[PromptKey, dict[str, Any]]] = {}
    for record in records:
        by_method.setdefault(record["method"], {})[(record["category"], record["prompt_id"])] = record
    summary: dict[str, Any] = {}
    for method in methods:
        summary[method] = {}
        for category in [*categories, ALL_CATEGORIES]:
            chosen = [
                record
                for record in records
                if record["method"] == method and category in (ALL_CATEGORIES, record["category"])
            ]
            if chosen:
                summary[method][category] = _summarize(chosen, by_method)
    return summary


def _speedup(tokens: int, seconds: float, plain_tokens: int, plain_seconds: float) -> float | None:
    rate, plain_rate = _ratio(tokens, seconds), _ratio(plain_tokens, plain_seconds)
    return rate / plain_rate if rate is not None and plain_rate else None


def relative_speed(
    chosen: Sequence[dict[str, Any]], reference: dict[PromptKey, dict[str, Any]], clock: str
) -> float | None:
    """Tokens per second of `chosen` over the reference method's on the same prompts (None if it lacks one)."""
    paired = [reference.get((record["category"], record["prompt_id"])) for record in chosen]
    if not chosen or any(record is None for record in paired):
        return None
    baseline = [record for record in paired if record is not None]
    return _speedup(
        sum(int(record["new_tokens"]) for record in chosen),
        sum(float(record[clock]) for record in chosen),
        sum(int(record["new_tokens"]) for record in baseline),
        sum(float(record[clock]) for record in baseline),
    )


def decode_speed(
    chosen: Sequence[dict[str, Any]], reference: dict[PromptKey, dict[str, Any]]
) -> float | None:
    """`relative_speed` by wall time over the decoding steps only: each run's tokens after the first,
    over its wall time after the first token (the prefill and the first token are left out)."""
    paired = [reference.get((record["category"], record["prompt_id"])) for record in chosen]
    if not chosen or any(record is None for record in paired):
        return None
    baseline = [record for record in paired if record is not None]
    return _speedup(
        sum(max(int(record["new_tokens"]) - 1, 0) for record in chosen),
        sum(float(record["wall_s"]) - float(record["ttft_s"]) for record in chosen),
        sum(max(int(record["new_tokens"]) - 1, 0) for record in baseline),
        sum(float(record["wall_s"]) - float(record["ttft_s"]) for record in baseline),
    )


def _copy_ceiling(chosen: Sequence[dict[str, Any]], steps: str = "copy_ceiling_steps") -> float | None:
    """The copy ceiling over `chosen` prompts: their tokens after the first over their least steps
    (`steps` names the ceiling; a record from before the lookup ceiling counts as its copy ceiling)."""
    return _ratio(
        sum(int(record["copy_ceiling_tokens"]) for record in chosen),
        sum(float(record.get(steps, record["copy_ceiling_steps"])) for record in chosen),
    )


def _best_single_drafter(
    chosen: Sequence[dict[str, Any]], by_method: dict[str, dict[PromptKey, dict[str, Any]]], clock: str
) -> tuple[str | None, float | None]:
    """For composite records: the fastest single-drafter method on the same prompts by `clock`, and the ratio to it."""
    if not chosen or chosen[0]["method"] != COMPOSITE:
        return None, None
    best: tuple[str | None, float | None] = (None, None)
    for method in SINGLE_DRAFTERS:
        ratio = relative_speed(chosen, by_method.get(method, {}), clock)
        if ratio is not None and (best[1] is None or ratio < best[1]):
            best = (method, ratio)
    return best


def _summarize(
    chosen: list[dict[str, Any]], by_method: dict[str, dict[PromptKey, dict[str, Any]]]
) -> dict[str, Any]:
    tokens = sum(int(record["new_tokens"]) for record in chosen)
    wall = sum(float(record["wall_s"]) for record in chosen)
    cpu = sum(float(record["cpu_s"]) for record in chosen)
    calls = sum(int(record["target_calls"]) for record in chosen)
    plain = by_method.get(BASELINE, {})
    peer = by_method.get(PEER, {})
    has_positions = any(record["proposed_by_position"] for record in chosen) or all(
        record["method"] in OWN_METHODS for record in chosen
    )
    draft_steps = sum(
        record["proposed_by_position"][0] for record in chosen if record["proposed_by_position"]
    )
    accepted = sum(sum(record["accepted_by_position"]) for record in chosen)
    latencies = [float(value) for record in chosen for value in record["itl_ms"]]
    first_tokens = [float(record["ttft_s"]) * 1000.0 for record in chosen]
    best_single, vs_best_single = _best_single_drafter(chosen, by_method, "wall_s")
    _, vs_best_single_cpu = _best_single_drafter(chosen, by_method, "cpu_s")
    return {
        "prompts": len(chosen),
        "new_tokens": tokens,
        "wall_s": wall,
        "cpu_s": cpu,
        "speedup_vs_plain": relative_speed(chosen, plain, "wall_s"),
        "speedup_vs_plain_cpu": relative_speed(chosen, plain, "cpu_s"),
        "decode_speedup_vs_plain": decode_speed(chosen, plain),
        "copy_ceiling": _copy_ceiling(chosen),
        "lookup_ceiling": _copy_ceiling(chosen, "lookup_ceiling_steps"),
        "tokens_per_s": _ratio(tokens, wall),
        "tokens_per_target_call": _ratio(tokens, calls),
        "mean_accepted_length": (accepted / draft_steps if draft_steps else 0.0) if has_positions else None,
        "identical_rate": sum(1 for record in chosen if record["identical_to_plain"]) / len(chosen),
        "ttft_mean_ms": sum(first_tokens) / len(first_tokens),
        "ttft_p50_ms": percentile(first_tokens, 0.5),
        "itl_p50_ms": percentile(latencies, 0.5),
        "itl_p95_ms": percentile(latencies, 0.95),
        "acceptance_by_position": pooled_acceptance(chosen),
        "vs_hf_pld": relative_speed(chosen, peer, "wall_s"),
        "vs_hf_pld_cpu": relative_speed(chosen, peer, "cpu_s"),
        "vs_best_single_drafter": vs_best_single,
        "vs_best_single_drafter_cpu": vs_best_single_cpu,
        "best_single_drafter": best_single,
        "tree_steps": sum(int(record["tree_steps"]) for record in chosen),
        "branch_accepts": sum(int(record["branch_accepts"]) for record in chosen),
    }


def pooled_acceptance(records: Sequence[dict[str, Any]]) -> list[float]:
    """Accepted / proposed at each draft position, pooled over `records`."""
    proposed: list[int] = []
    accepted: list[int] = []
    for record in records:
        for position, (count, hits) in enumerate(
            zip(record["proposed_by_position"], record["accepted_by_position"], strict=True)
        ):
            if position == len(proposed):
                proposed.append(0)
                accepted.append(0)
            proposed[position] += int(count)
            accepted[position] += int(hits)
    return [hits / count if count else 0.0 for count, hits in zip(proposed, accepted, strict=True)]


def acceptance_by_position(records: Sequence[dict[str, Any]], method: str) -> list[float]:
    """Accepted / proposed at each draft position, pooled over a method's records."""
    return pooled_acceptance([record for record in records if record["method"] == method])


def divergence_list(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"prompt_id": record["prompt_id"], "category": record["category"], "method": record["method"]}
        | record["first_divergence"]
        for record in records
        if record["first_divergence"] is not None
    ]


def cost_curve_report(curve: VerifyCostCurve) -> dict[str, Any]:
    """seconds[k]: one target forward over k drafts plus the pending token; ratio to a plain step."""
    return {
        "draft_tokens": list(range(len(curve.seconds))),
        "seconds": list(curve.seconds),
        "ratio_to_plain_step": [curve.ratio(k) for k in range(len(curve.seconds))],
        # The linear-layer kernel each k measured fastest with, which verification used (None: no choice).
        "kernels": None if curve.kernels is None else list(curve.kernels),
        # The kernel prefills ran with, and a prefill of the measured context with it (None: no choice).
        "prefill_kernel": curve.prefill_kernel,
        "prefill_seconds": curve.prefill_seconds,
    }


def _kernels(model: PreTrainedModel) -> str:
    packed = sum(isinstance(module, PackedLinear) for module in model.modules())
    return f"oneDNN prepacked linear ({packed} layers)" if packed else "stock nn.Linear"


def _parameter_count(model: PreTrainedModel) -> int:
    packed = sum(
        module.in_features * module.out_features
        for module in model.modules()
        if isinstance(module, PackedLinear)
    )
    return packed + sum(weight.numel() for weight in model.parameters())


def environment_report(
    model: PreTrainedModel, model_name: str, reference_model: PreTrainedModel | None = None
) -> dict[str, Any]:
    parameter = next(model.parameters())
    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "device": str(parameter.device),
        "dtype": str(parameter.dtype).removeprefix("torch."),
        "model": model_name,
        "parameters": sum(weight.numel() for weight in model.parameters()),
        "own_kernels": _kernels(model),
        "hf_kernels": _kernels(reference_model if reference_model is not None else model),
    }


def build_report(
    *,
    prompt_format: str,
    prompts_file: Path | str,
    max_new_tokens: int,
    methods: Sequence[str],
    records: list[dict[str, Any]],
    cost_curve: VerifyCostCurve,
    environment: dict[str, Any],
) -> dict[str, Any]:
    return {
        "benchmark": "decode",
        "format": prompt_format,
        "prompts_file": str(prompts_file),
        "max_new_tokens": max_new_tokens,
        "methods": list(methods),
        "prompt_count": len({(record["category"], record["prompt_id"]) for record in records}),
        "results": records,
        "summary": summarize_records(records),
        "divergences": divergence_list(records),
        "cost_curve": cost_curve_report(cost_curve),
        "environment": environment,
    }


def run_decode_benchmark(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[BenchPrompt],
    *,
    prompt_format: str,
    prompts_file: Path | str,
    methods: Sequence[str],
    max_new_tokens: int = 128,
    model_name: str = "",
    max_draft: int = 16,
    cost_curve: VerifyCostCurve | None = None,
    cost_cache_dir: Path | None = None,
    progress: Progress | None = _stderr_progress,
    on_partial_report: Callable[[dict[str, Any]], None] | None = None,
    reference_model: PreTrainedModel | None = None,
    draft_head: DraftHead | None = None,
    draft_head_file: Path | str | None = None,
    self_draft_layers: int = DEFAULT_SELF_DRAFT_LAYERS,
    repeats: int = 1,
    answer_store_file: Path | str | None = None,
) -> dict[str, Any]:
    """Encode, warm up, run every method on every prompt (`repeats` rounds, the fastest kept), and
    return the full report.

    `answer_store_file` (`decoding.answer_store`) is read without the answers to the prompts
    measured here, so no prompt is drafted from a stored copy of its own answer.

    `on_partial_report` receives the report of the prompts done so far after each prompt, so a
    long run stopped early still leaves its figures behind.
    """
    encoded = encode_prompts(prompts, tokenizer)
    store = None
    if answer_store_file is not None:
        store = load_answer_store(answer_store_file, model, exclude=[prompt.ids for prompt in encoded])
    benchmark = DecodeBenchmark(
        model,
        tokenizer,
        methods,
        max_new_tokens=max_new_tokens,
        max_draft=max_draft,
        cost_curve=cost_curve,
        cost_cache_dir=cost_cache_dir,
        progress=progress,
        reference_model=reference_model,
        draft_head=draft_head,
        self_draft_layers=self_draft_layers,
        repeats=repeats,
        answer_store=store,
    )
    environment = environment_report(model, model_name or type(model).__name__, reference_model)
    environment["repeats"] = repeats
    environment["draft_head"] = str(draft_head_file) if draft_head is not None else None
    environment["answer_store"] = (
        {"file": str(answer_store_file), "answers": store.answers, "left_out": store.excluded}
        if store is not None
        else None
    )
    environment["self_draft_layers"] = self_draft_layers if "self-speculative" in benchmark.methods else None

    def report_of(records: list[dict[str, Any]]) -> dict[str, Any]:
        return build_report(
            prompt_format=prompt_format,
            prompts_file=prompts_file,
            max_new_tokens=max_new_tokens,
            methods=benchmark.methods,
            records=records,
            cost_curve=benchmark.cost_curve,
            environment=environment,
        )

    checkpoint = None
    if on_partial_report is not None:
        partial = on_partial_report

        def checkpoint(records: list[dict[str, Any]]) -> None:
            partial(report_of(records))

    return report_of(benchmark.run(encoded, checkpoint))


# --- rendering ------------------------------------------------------------------------------


def _cell(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _positions(rates: list[float], shown: int = 4) -> str:
    return " ".join(f"{rate:.2f}" for rate in rates[:shown]) if rates else "–"


def format_markdown(report: dict[str, Any]) -> str:
    """A table per category (rows: methods), then the cost curve and the divergences."""
    summary: dict[str, dict[str, dict[str, Any]]] = report["summary"]
    lines = [
        f"# Decoding benchmark: {report['format']} ({report['prompt_count']} prompts, "
        f"max_new_tokens {report['max_new_tokens']})",
        "",
        f"Model {report['environment'].get('model')}, {report['environment'].get('dtype')} on "
        f"{report['environment'].get('device')}, {report['environment'].get('torch_threads')} threads, "
        f"torch {report['environment'].get('torch')}.",
    ]
    categories: list[str] = list(dict.fromkeys(category for per in summary.values() for category in per))
    header = (
        "| method | prompts | tokens | tok/s | speedup vs plain | speedup (CPU time) | × hf-pld | × hf-pld (CPU) "
        "| tokens/call | mean accepted | acceptance by position 1-4 | identical | TTFT p50 ms | ITL p50 ms "
        "| ITL p95 ms |"
    )
    for category in categories:
        lines += ["", f"## {category}", "", header, "|" + "---|" * 15]
        for method, per in summary.items():
            row = per.get(category)
            if row is None:
                continue
            lines.append(
                f"| {method} | {row['prompts']} | {row['new_tokens']} | {_cell(row['tokens_per_s'], 1)} "
                f"| {_cell(row['speedup_vs_plain'])} | {_cell(row['speedup_vs_plain_cpu'])} "
                f"| {_cell(row['vs_hf_pld'])} | {_cell(row['vs_hf_pld_cpu'])} "
                f"| {_cell(row['tokens_per_target_call'])} | {_cell(row['mean_accepted_length'])} "
                f"| {_positions(row['acceptance_by_position'])} | {_cell(row['identical_rate'])} "
                f"| {_cell(row['ttft_p50_ms'], 1)} | {_cell(row['itl_p50_ms'], 1)} | {_cell(row['itl_p95_ms'], 1)} |"
            )
        composite = summary.get(COMPOSITE, {}).get(category)
        baseline = summary.get(BASELINE, {}).get(category)
        if baseline is not None and baseline["copy_ceiling"] is not None:
            reached = ""
            if composite is not None and composite["decode_speedup_vs_plain"] is not None:
                reached = (
                    f" {COMPOSITE} reached {_cell(composite['decode_speedup_vs_plain'])}× over those steps "
                    f"({_cell(composite['decode_speedup_vs_plain'] / baseline['copy_ceiling'])} of the ceiling)."
                )
            lines += [
                "",
                f"Copy ceiling: {_cell(baseline['copy_ceiling'])}× own plain's decoding steps (after the first "
                "token), the most that drafts copied from the prompt or the output could give by the cost "
                f"curve; {_cell(baseline['lookup_ceiling'])}× with prompt lookup's own proposals, each "
                f"verified to the right length.{reached}",
            ]
        if composite is not None and composite["best_single_drafter"] is not None:
            lines += [
                "",
                f"{COMPOSITE} vs the best single drafter here ({composite['best_single_drafter']}): "
                f"{_cell(composite['vs_best_single_drafter'])}× its tokens/s "
                f"({_cell(composite['vs_best_single_drafter_cpu'])}× by CPU time).",
            ]
    curve = report["cost_curve"]
    lines += [
        "",
        "## Verify cost (one target forward over k drafts + 1 token)",
        "",
        "| k | ms | × plain step | kernel |",
    ]
    lines.append("|---|---|---|---|")
    kernels = curve.get("kernels") or ["–"] * len(curve["seconds"])
    for k, seconds, ratio, kernel in zip(
        curve["draft_tokens"], curve["seconds"], curve["ratio_to_plain_step"], kernels, strict=True
    ):
        lines.append(f"| {k} | {seconds * 1000.0:.1f} | {ratio:.2f} | {kernel} |")
    if curve.get("prefill_kernel") is not None and curve.get("prefill_seconds") is not None:
        lines += [
            "",
            f"Prefills ran on the {curve['prefill_kernel']} kernel: "
            f"{curve['prefill_seconds'] * 1000.0:.1f} ms for the measured context.",
        ]
    lines += ["", "## Divergences from own plain greedy", ""]
    if not report["divergences"]:
        lines.append("None: every method produced own plain's tokens on every prompt.")
    else:
        lines += [
            "| prompt | category | method | index | logit gap | plain token | method token |",
            "|---|---|---|---|---|---|---|",
        ]
        for item in report["divergences"]:
            lines.append(
                f"| {item['prompt_id']} | {item['category']} | {item['method']} | {item['index']} "
                f"| {_cell(item['logit_gap'], 4)} | {_cell(item['plain_token'])} | {_cell(item['method_token'])} |"
            )
    return "\n".join(lines) + "\n"


def write_plot(report: dict[str, Any], path: Path) -> None:
    """Acceptance rate by draft position (own speculative methods) and speedup per category."""
    matplotlib = import_bench_extra("matplotlib", "the decoding benchmark's plot")
    matplotlib.use("Agg")
    plt = import_bench_extra("matplotlib.pyplot", "the decoding benchmark's plot")

    records = report["results"]
    summary: dict[str, dict[str, dict[str, Any]]] = report["summary"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    for method in report["methods"]:
        rates = acceptance_by_position(records, method)
        if rates:
            left.plot(range(1, len(rates) + 1), rates, marker="o", label=method)
    left.set_xlabel("draft position")
    left.set_ylabel("acceptance rate (accepted / verified)")
    left.set_ylim(0.0, 1.05)
    left.set_title("Acceptance by draft position")
    if left.get_legend_handles_labels()[0]:
        left.legend()
    categories = [
        category for category in dict.fromkeys(c for per in summary.values() for c in per) if category
    ]
    methods = [method for method in report["methods"] if method != BASELINE]
    width = 0.8 / max(len(methods), 1)
    for offset, method in enumerate(methods):
        values = [
            summary.get(method, {}).get(category, {}).get("speedup_vs_plain") or 0.0
            for category in categories
        ]
        right.bar([index + offset * width for index in range(len(categories))], values, width, label=method)
    right.axhline(1.0, color="black", linewidth=0.8)
    right.set_xticks(
        [index + 0.4 - width / 2 for index in range(len(categories))], categories, rotation=45, ha="right"
    )
    right.set_ylabel("speedup vs own plain (tokens/s)")
    right.set_title("Speedup per category")
    right.legend(fontsize="small")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_json(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(path.name + ".tmp")
    staging.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    staging.replace(path)
