"""The generator adapter: the target model behind the speculative decoder.

This is the only module of the evidence plane that imports ``decoding``. The boundary is narrow on
purpose: the decoder receives a prompt built from directly read sentences and returns text plus
decode statistics. The statistics are stored beside the packet, linked by its ID, and never reach
an evidence row, a claim or a verdict: whether a draft token was accepted says nothing about
whether a claim is true.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from pathlib import Path

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from akm.answer.prompt import EvidencePrompt
from akm.answer.results import GeneratedAnswer
from decoding.answer_store import AnswerStore, StoreDrafter
from decoding.draft_head import DraftHead, DraftHeadDrafter
from decoding.drafters import (
    CompositeDrafter,
    Drafter,
    EvidenceDrafter,
    ModelDrafter,
    PromptLookupDrafter,
    SuccessorDrafter,
)
from decoding.history import HistoryDrafter
from decoding.speculative import DecodeConfig, SpeculativeDecoder


class SpeculativeAnswerGenerator:
    """The target model behind the speculative decoder, drafting from the evidence and the prompt."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        cost_cache_dir: Path | None = None,
        max_draft: int = 8,
        model_drafter: ModelDrafter | None = None,
        draft_head: DraftHead | None = None,
        answer_store: AnswerStore | None = None,
        history_tokens: int = 16384,
        prefix_reuse: bool = True,
    ) -> None:
        from decoding.models import chat_prompt_ids

        self._chat_prompt_ids = chat_prompt_ids
        self.tokenizer = tokenizer
        # Optional (settings.draft_model): asked beside the lookups every step; the composite keeps
        # whichever proposal is expected to have the most tokens accepted.
        self.model_drafter = model_drafter
        # Optional (settings.draft_head): a head trained for this target, drafting from its features.
        self.draft_head = draft_head
        # Optional (written beside the head by `akm train-draft-head`): the target's own answers to
        # many prompts, whose recurring phrasing a fresh process has not produced yet.
        self.answer_store = answer_store
        self.decoder = SpeculativeDecoder(
            model,
            tokenizer,
            # An answer that starts looping has said what it will say: stop instead of spending
            # the whole token budget on the loop.
            # history_tokens: the outputs of earlier answers kept to draft from (0 = none).
            # prefix_reuse: the cache is kept between answers, so the shared chat template and
            # system prompt are not prefilled again.
            config=DecodeConfig(
                max_draft=max_draft,
                cost_cache_dir=cost_cache_dir,
                repetition_stop=True,
                history_tokens=history_tokens,
                prefix_reuse=prefix_reuse,
            ),
        )

    def stream(
        self,
        prompt: EvidencePrompt,
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
    ) -> Generator[str, None, GeneratedAnswer]:
        """Decode an answer, yielding each committed text increment; returns the whole answer."""
        # An empty system message leaves the model's own default in place.
        messages = [{"role": "system", "content": prompt.system}] if prompt.system else []
        messages.append({"role": "user", "content": prompt.user})
        prompt_ids = self._chat_prompt_ids(self.tokenizer, messages)
        return (
            yield from self._decode(
                prompt_ids,
                prompt.passages,
                max_new_tokens=max_new_tokens,
                temperature=temperature,
                seed=seed,
            )
        )

    def stream_text(
        self,
        text: str,
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        top_p: float = 1.0,
        stop: Sequence[str] = (),
    ) -> Generator[str, None, GeneratedAnswer]:
        """Decode a continuation of ``text`` as it is (an already rendered chat, for a completions
        server): special-token markup in it is read as those tokens; drafts come from the text itself.
        Raises ValueError for an empty prompt or one longer than the context window."""
        prompt_ids = [int(token) for token in self.tokenizer(text, add_special_tokens=False)["input_ids"]]
        return (
            yield from self._decode(
                prompt_ids,
                (),
                max_new_tokens=max_new_tokens,
                temperature=temperature,
                seed=seed,
                top_p=top_p,
                stop=stop,
            )
        )

    def _decode(
        self,
        prompt_ids: list[int],
        passages: Sequence[str],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        top_p: float = 1.0,
        stop: Sequence[str] = (),
    ) -> Generator[str, None, GeneratedAnswer]:
        passage_ids = [
            [int(token) for token in self.tokenizer(passage, add_special_tokens=False)["input_ids"]]
            for passage in passages
            if passage
        ]
        drafters: list[Drafter] = [PromptLookupDrafter()]
        if passage_ids:
            drafters.insert(0, EvidenceDrafter(passage_ids))
        if self.decoder.history is not None:
            # This process's earlier answers: their recurring phrasing is in no prompt.
            drafters.append(HistoryDrafter(self.decoder.history))
        if self.answer_store is not None:
            drafters.append(StoreDrafter(self.answer_store))
        # A one-token guess for the steps nothing else drafts: verified only where one draft costs
        # less to verify than a plain step, which the measured curve decides.
        drafters.append(SuccessorDrafter())
        if self.model_drafter is not None:
            drafters.append(self.model_drafter)
        if self.draft_head is not None:
            drafters.append(DraftHeadDrafter(self.draft_head))
        # A drafter per call: the excerpts belong to this request only.
        stream = self.decoder.stream(
            prompt_ids,
            max_new_tokens,
            temperature=temperature,
            top_p=top_p,
            seed=0 if seed is None else seed,
            stop_strings=tuple(stop),
            drafter=CompositeDrafter(drafters),
        )
        yield from stream
        result = stream.result
        stats = result.stats
        decode = stats.to_dict()
        decode["finish_reason"] = str(result.finish_reason)
        decode["drafters"] = [drafter.name for drafter in drafters]
        decode["speedup_by_calls"] = stats.new_tokens / stats.target_calls if stats.target_calls else None
        decode["estimated_speedup"] = self._estimated_speedup(
            stats.new_tokens, stats.target_calls, stats.proposed
        )
        complete = str(result.finish_reason) not in ("length", "context_window", "repetition")
        return GeneratedAnswer(text=result.text, decode=decode, complete=complete)

    def _estimated_speedup(self, new_tokens: int, target_calls: int, proposed: int) -> float | None:
        """Plain decoding makes one single-token call per token; these calls verified ``proposed``
        drafts in all, each call costing the measured verify-cost ratio of its mean draft length.

        Only the curve's ratios are used, not its absolute seconds, so a uniformly busy machine
        at measurement time does not skew the estimate.
        """
        if target_calls <= 0 or new_tokens <= 0:
            return None
        # Measured (and cached) by the decoder before its first adaptive draft.
        ratio = self.decoder.cost_curve.ratio(round(proposed / target_calls))
        return new_tokens / (target_calls * ratio)


__all__ = ["SpeculativeAnswerGenerator"]
