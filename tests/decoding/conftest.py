"""Tiny random Llama models and a character tokenizer, so decoder tests need no downloaded weights."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from decoding.drafters import ContextDrafter, DraftProposal

# Token 0 is BOS, 1 is EOS, 2..15 are the letters a..n.
TINY_VOCAB = ["<s>", "</s>", *"abcdefghijklmn"]


def tiny_config(vocab_size: int = len(TINY_VOCAB), context: int = 256) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=context,
        bos_token_id=0,
        eos_token_id=1,
        tie_word_embeddings=False,
    )


def tiny_model(
    seed: int, vocab_size: int = len(TINY_VOCAB), context: int = 256, scale: float = 1.0
) -> LlamaForCausalLM:
    """A random model in float64; `scale` sharpens its output distribution."""
    torch.manual_seed(seed)
    model = LlamaForCausalLM(tiny_config(vocab_size, context)).to(torch.float64).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(scale)
    return model


def character_tokenizer(letters: Sequence[str] = TINY_VOCAB) -> PreTrainedTokenizerFast:
    vocab = {token: index for index, token in enumerate(letters)}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<s>"))
    backend.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    backend.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>")


@pytest.fixture(scope="session")
def tokenizer() -> PreTrainedTokenizerFast:
    return character_tokenizer()


@pytest.fixture(scope="session")
def target() -> LlamaForCausalLM:
    # Sharpened so greedy continuations repeat and lookup drafters find real matches.
    return tiny_model(seed=1, scale=8.0)


@pytest.fixture(scope="session")
def draft_model() -> LlamaForCausalLM:
    return tiny_model(seed=2, scale=8.0)


class ScriptedDrafter(ContextDrafter):
    """Proposes from a fixed reference continuation, optionally corrupted: oracle and adversary in one."""

    name = "scripted"

    def __init__(
        self, reference: list[int], vocab_size: int, wrong_every: int = 0, always_wrong: bool = False
    ) -> None:
        self.reference = reference
        self.vocab_size = vocab_size
        self.wrong_every = wrong_every
        self.always_wrong = always_wrong
        self.calls = 0

    def reset(self) -> None:
        self.calls = 0

    def draft(self, context: list[int], k: int) -> DraftProposal:
        self.calls += 1
        assert context == self.reference[: len(context)], "the decoder committed a token the target would not"
        tokens = self.reference[len(context) : len(context) + k]
        if self.always_wrong:
            tokens = [(token + 1) % self.vocab_size for token in tokens]
        elif self.wrong_every and tokens and self.calls % self.wrong_every == 0:
            middle = len(tokens) // 2
            tokens[middle] = (tokens[middle] + 1) % self.vocab_size
        # Beyond the reference (after EOS) propose filler, which must simply be rejected or cut.
        tokens += [2] * (k - len(tokens))
        return DraftProposal(tokens=tokens, source=self.name, match_length=8)


@pytest.fixture(autouse=True)
def single_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread, and the timings do not collapse on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
