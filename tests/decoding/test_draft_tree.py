"""Draft trees: the trie of candidates, its attention, greedy acceptance down it, and exactness."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch
from transformers import LlamaForCausalLM, MistralConfig, MistralForCausalLM, PreTrainedTokenizerFast

from decoding.draft_length import VerifyCostCurve
from decoding.draft_tree import DraftTree, row_depths, tree_mask
from decoding.drafters import CompositeDrafter, ContextDrafter, DraftProposal, PromptLookupDrafter
from decoding.kv_cache import CachedModel
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate

from .conftest import tiny_model
from .test_lean_llama import _TINY_SHAPE

VOCAB = 16


def test_chains_merge_into_a_trie_with_the_main_chain_first() -> None:
    tree = DraftTree.from_chains([[5, 6, 7], [5, 6, 9], [4], [5, 8, 2]])
    assert tree.tokens == [5, 6, 7, 9, 4, 8, 2]
    assert tree.parents == [-1, 0, 1, 1, -1, 0, 5]
    assert tree.depths == [1, 2, 3, 3, 1, 2, 3]
    assert tree.main == 3 and tree.size == 7 and tree.depth == 3 and not tree.is_chain
    assert tree.row_parents() == [-1, 0, 1, 2, 2, 0, 1, 6]
    assert tree.path_rows([0, 5, 6]) == [0, 1, 6, 7]
    assert tree.path_tokens([0, 5, 6]) == [5, 8, 2]


def test_node_budget_cuts_the_later_chains_and_duplicates_cost_nothing() -> None:
    tree = DraftTree.from_chains([[5, 6, 7], [5, 6, 7], [5, 9, 9, 9]], max_nodes=5)
    assert tree.tokens == [5, 6, 7, 9, 9]
    assert tree.main == 3
    assert DraftTree.from_chains([[5, 6], [5, 6]]).is_chain


def test_greedy_acceptance_walks_the_branch_the_target_takes() -> None:
    tree = DraftTree.from_chains([[5, 6, 7], [5, 8, 2]])  # nodes 5,6,7 | 8,2 (8 under 5)

    def logits_with(best: Sequence[int]) -> torch.Tensor:
        rows = torch.zeros(len(best), VOCAB)
        for row, token in enumerate(best):
            rows[row, token] = 1.0
        return rows

    # Rows: pending, 5, 6, 7, 8, 2. The target says 5 after pending, 8 after 5, 2 after 8, 11 after 2.
    path, token = tree.accept_greedy(logits_with([5, 8, 0, 0, 2, 11]))
    assert path == [0, 3, 4] and token == 11
    path, token = tree.accept_greedy(logits_with([5, 6, 7, 3, 0, 0]))
    assert path == [0, 1, 2] and token == 3
    path, token = tree.accept_greedy(logits_with([9, 0, 0, 0, 0, 0]))
    assert path == [] and token == 9
    with pytest.raises(ValueError, match="rows of logits"):
        tree.accept_greedy(torch.zeros(3, VOCAB))


def test_tree_mask_sees_the_cache_the_ancestors_and_itself() -> None:
    mask = tree_mask([-1, 0, 1, 1, 0], start=2)
    expected = [
        [1, 1, 1, 0, 0, 0, 0],
        [1, 1, 1, 1, 0, 0, 0],
        [1, 1, 1, 1, 1, 0, 0],
        [1, 1, 1, 1, 0, 1, 0],
        [1, 1, 1, 0, 0, 0, 1],
    ]
    assert mask.tolist() == [[bool(value) for value in row] for row in expected]
    assert row_depths([-1, 0, 1, 1, 0]) == [0, 1, 2, 2, 1]
    with pytest.raises(ValueError, match="parents must come before"):
        tree_mask([-1, 2, 0], start=0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
def test_a_chain_as_a_tree_is_the_chain_forward_bit_for_bit(dtype: torch.dtype) -> None:
    model = tiny_model(3).to(dtype)
    chain, tree = CachedModel(model, pack_rows=()), CachedModel(model, pack_rows=())
    for cached in (chain, tree):
        cached.forward([0, 2, 3, 4, 5])
    expected = chain.forward([6, 7, 8, 9])
    got, _ = tree.forward_tree([6, 7, 8, 9], [-1, 0, 1, 2])
    assert torch.equal(got, expected)
    assert torch.equal(chain.forward([10]), tree.forward([10]))


def test_every_branch_scores_as_if_it_were_alone_and_keep_leaves_the_path_cached() -> None:
    model = tiny_model(3)
    prefix = [0, 2, 3, 4, 5]
    tree = DraftTree.from_chains([[6, 7, 8], [6, 9, 10], [11, 12]])
    cached = CachedModel(model)
    cached.forward(prefix)
    logits, features = cached.forward_tree([13, *tree.tokens], tree.row_parents(), features=True)
    assert features is not None and features.shape[0] == tree.size + 1
    for chain in ([6, 7, 8], [6, 9, 10], [11, 12]):
        alone = CachedModel(model)
        alone.forward(prefix)
        expected = alone.forward([13, *chain])
        rows = [0]
        node = -1
        for token in chain:
            node = next(n for n in range(tree.size) if tree.parents[n] == node and tree.tokens[n] == token)
            rows.append(node + 1)
        torch.testing.assert_close(logits[rows], expected, rtol=0, atol=1e-12)
    # Keep the path 6, 9, 10: the cache then equals one that forwarded that chain.
    path = [0, 3, 4]
    cached.keep(len(prefix), tree.path_rows(path))
    assert cached.tokens == [*prefix, 13, 6, 9, 10]
    reference = CachedModel(model)
    reference.forward([*prefix, 13, 6, 9, 10])
    for (keys, values), (expected_keys, expected_values) in zip(
        cached.key_values(), reference.key_values(), strict=True
    ):
        torch.testing.assert_close(keys, expected_keys, rtol=0, atol=1e-12)
        torch.testing.assert_close(values, expected_values, rtol=0, atol=1e-12)
    torch.testing.assert_close(cached.forward([14]), reference.forward([14]), rtol=0, atol=1e-12)


class BranchingDrafter(ContextDrafter):
    """Proposes a wrong main chain, with the right continuation as a branch (and a wrong one)."""

    name = "branching"

    def __init__(self, reference: list[int]) -> None:
        self.reference = reference

    def draft(self, context: list[int], k: int) -> DraftProposal:
        assert context == self.reference[: len(context)], "the decoder committed a token the target would not"
        right = self.reference[len(context) : len(context) + 3]
        if not right:
            return DraftProposal(tokens=[])
        wrong = [(token + 1) % VOCAB for token in right]
        other = [(token + 2) % VOCAB for token in right]
        return DraftProposal(wrong, None, self.name, 4, (tuple(other), tuple(right)))


@pytest.fixture(scope="module")
def flat_config() -> DecodeConfig:
    # Choices by the flat curve alone, not by verify times observed on a loaded machine.
    return DecodeConfig(max_draft=9, cost_curve=VerifyCostCurve.flat(9), observe_cost=False)


def test_a_right_branch_is_accepted_and_output_stays_plain_greedy(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, flat_config: DecodeConfig
) -> None:
    prompt = [0, 2, 3, 4, 5, 6, 7]
    plain = plain_generate(target, tokenizer, prompt, 40)
    drafter = BranchingDrafter(prompt + plain.token_ids)
    result = SpeculativeDecoder(target, tokenizer, drafter, flat_config).generate(prompt, 40)
    assert result.token_ids == plain.token_ids
    stats = result.stats
    assert stats.tree_steps > 0 and stats.branch_accepts == stats.tree_steps
    # Each tree step accepts the right branch's 3 tokens (the main chain's failures soon stop the
    # drafting: its drafter's acceptance estimate is the main chain's).
    assert stats.accepted == 3 * stats.tree_steps
    chains = SpeculativeDecoder(
        target,
        tokenizer,
        drafter,
        DecodeConfig(max_draft=9, cost_curve=flat_config.cost_curve, draft_tree=False, observe_cost=False),
    ).generate(prompt, 40)
    assert chains.token_ids == plain.token_ids and chains.stats.tree_steps == 0
    assert chains.stats.target_calls == plain.stats.target_calls
    assert stats.target_calls == plain.stats.target_calls - 3 * stats.tree_steps


def test_trees_need_spare_rows_by_the_cost_curve(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    prompt = [0, 2, 3, 4, 5, 6, 7]
    plain = plain_generate(target, tokenizer, prompt, 20)
    # Every extra row costs 10% more: no row is spare, so every step verifies the main chain alone.
    steep = VerifyCostCurve(tuple(0.05 * (1 + 0.1 * k) for k in range(10)))
    result = SpeculativeDecoder(
        target,
        tokenizer,
        BranchingDrafter(prompt + plain.token_ids),
        DecodeConfig(max_draft=9, cost_curve=steep, observe_cost=False),
    ).generate(prompt, 20)
    assert result.token_ids == plain.token_ids and result.stats.tree_steps == 0


def test_sampling_and_fixed_lengths_keep_chains(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, flat_config: DecodeConfig
) -> None:
    prompt = [0, 2, 3, 4, 5, 6, 7]
    plain = plain_generate(target, tokenizer, prompt, 20)
    drafter = BranchingDrafter(prompt + plain.token_ids)
    fixed = DecodeConfig(max_draft=9, draft_length=3, cost_curve=flat_config.cost_curve)
    result = SpeculativeDecoder(target, tokenizer, drafter, fixed).generate(prompt, 20)
    assert result.token_ids == plain.token_ids and result.stats.tree_steps == 0
    sampled = SpeculativeDecoder(target, tokenizer, PromptLookupDrafter(1, 3), flat_config).generate(
        prompt, 20, temperature=0.7, seed=3
    )
    assert sampled.stats.tree_steps == 0


def test_a_model_without_the_lean_forward_keeps_chains(
    tokenizer: PreTrainedTokenizerFast, flat_config: DecodeConfig
) -> None:
    torch.manual_seed(5)
    model = MistralForCausalLM(MistralConfig(**_TINY_SHAPE)).double().eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(8.0)
    prompt = [0, 2, 3, 4, 5, 6, 7]
    plain = plain_generate(model, tokenizer, prompt, 20)
    result = SpeculativeDecoder(
        model, tokenizer, BranchingDrafter(prompt + plain.token_ids), flat_config
    ).generate(prompt, 20)
    assert result.token_ids == plain.token_ids and result.stats.tree_steps == 0


def test_prompt_lookup_offers_the_other_continuations_as_branches() -> None:
    #          the 2-gram "2 3" occurs three times, followed by 4, 5 and 4; the context ends in "2 3".
    context = [0, 2, 3, 4, 9, 2, 3, 5, 8, 2, 3, 4, 7, 1, 2, 3]
    proposal = PromptLookupDrafter(min_ngram=2, max_ngram=2).propose(context, 3)
    assert proposal.tokens == [4, 7, 1]
    assert proposal.branches == ((5, 8, 2),)
    assert proposal.truncated(2).branches == ((5, 8),)
    assert PromptLookupDrafter(2, 2, alternatives=0).propose(context, 3).branches == ()


def test_the_composite_offers_the_runners_up_as_branches() -> None:
    context = [0, 2, 3, 4, 9, 2, 3, 5, 8, 2, 3, 4, 7, 1, 2, 3]

    class Fixed(ContextDrafter):
        name = "fixed"

        def draft(self, context: list[int], k: int) -> DraftProposal:
            return DraftProposal([11, 12], source=self.name, match_length=1)

    composite = CompositeDrafter([PromptLookupDrafter(2, 2), Fixed()], cost_curve=VerifyCostCurve.flat(8))
    proposal = composite.propose(context, 3)
    assert proposal.tokens == [4, 7, 1]
    assert proposal.branches == ((11, 12), (5, 8, 2))


def test_lookup_trees_reproduce_plain_greedy_and_are_used(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, flat_config: DecodeConfig
) -> None:
    generator = torch.Generator().manual_seed(11)
    prompts = [
        [0, *torch.randint(2, VOCAB, (length,), generator=generator).tolist()] for length in (5, 12, 30, 60)
    ]
    tree_steps = 0
    for prompt in prompts:
        plain = plain_generate(target, tokenizer, prompt, 60)
        for drafter in (
            PromptLookupDrafter(1, 3),
            CompositeDrafter([PromptLookupDrafter(2, 4), PromptLookupDrafter(1, 1)]),
        ):
            result = SpeculativeDecoder(target, tokenizer, drafter, flat_config).generate(prompt, 60)
            assert result.token_ids == plain.token_ids, f"prompt {prompt}"
            tree_steps += result.stats.tree_steps
    assert tree_steps > 0
