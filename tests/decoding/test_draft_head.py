"""The trained draft head (EAGLE-style feature drafting) and the self-speculative baseline, on tiny models."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Hashable
from pathlib import Path

import pytest
import torch
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

import decoding.train_head
from decoding.answer_store import answer_store_path, load_answer_store
from decoding.draft_head import (
    DraftHead,
    DraftHeadConfig,
    DraftHeadDrafter,
    DraftHeadFileError,
    DraftHeadMismatchError,
    HeadCache,
    load_draft_head,
    save_draft_head,
)
from decoding.draft_length import VerifyCostCurve
from decoding.drafters import CompositeDrafter, Drafter, PromptLookupDrafter
from decoding.head_options import HeadTrainingConfig
from decoding.models import chat_prompt_ids
from decoding.self_draft import early_exit_model, self_drafter
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate
from decoding.train_head import TrainingInputError, TrainingSources, read_source, train_draft_head

from .conftest import character_tokenizer, tiny_model
from .distribution_check import ALPHA, chi_square_p_value
from .test_distribution import PARAMS, PROMPT, SAMPLES, VOCAB, exact_second_third
from .test_greedy_equality import PROMPTS

LETTERS = "abcdefghijklmn"
TRAINING = HeadTrainingConfig(
    seq_len=64, draft_vocab=0, epochs=20, batch_size=4, answer_tokens=24, warmup_steps=5, learning_rate=3e-3
)


def random_head(target: LlamaForCausalLM, draft_vocab: int = 0, seed: int = 0) -> DraftHead:
    torch.manual_seed(seed)
    head = DraftHead(DraftHeadConfig.for_target(target, "tiny", draft_vocab=draft_vocab))
    if draft_vocab:
        head.set_draft_ids(list(range(target.config.vocab_size))[-draft_vocab:])
    return head.attach(target).eval()


def tiny_sources() -> TrainingSources:
    generator = random.Random(0)
    texts = ["".join(generator.choice(LETTERS) for _ in range(60)) for _ in range(40)]
    chats = [
        [{"role": "user", "content": "".join(generator.choice(LETTERS) for _ in range(6))}] for _ in range(8)
    ]
    return TrainingSources(chats=chats, texts=texts, origins={"random letters": 48})


@pytest.fixture(scope="module")
def trained(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, decoding.train_head.TrainingReport]:
    directory = tmp_path_factory.mktemp("head")
    report = train_draft_head(
        target,
        tokenizer,
        "tiny",
        tiny_sources(),
        work_dir=directory / "work",
        out_path=directory / "tiny.safetensors",
        config=TRAINING,
        progress=None,
        show_progress=False,
    )
    return directory / "tiny.safetensors", report


def test_training_lowers_the_loss_and_the_head_agrees_with_the_target(
    trained: tuple[Path, decoding.train_head.TrainingReport],
) -> None:
    path, report = trained
    assert report.final_loss < report.first_loss * 0.9
    # 16 tokens: chance agreement is about 1/16.
    assert report.validation_top1 > 0.4
    assert report.chats_answered == 8 and report.sequences == 48
    assert report.head_bytes == path.stat().st_size
    saved = json.loads(path.with_suffix(".json").read_text())
    assert saved["steps"] == report.steps > 0
    # The answers of self-distillation are stored beside the head, to draft from.
    assert report.answer_store_path == str(answer_store_path(path))
    assert report.answer_store_bytes == answer_store_path(path).stat().st_size > 0


def test_the_stored_answers_are_the_targets_greedy_answers(
    trained: tuple[Path, decoding.train_head.TrainingReport],
    target: LlamaForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
) -> None:
    store = load_answer_store(answer_store_path(trained[0]), target)
    assert store.answers == 8 and store.excluded == 0
    history = store.history
    stored = [history.text[start : history.text.index(-1, start)] for start in history.starts]
    # Each chat's answer is the target's own greedy answer (up to answer_tokens), after its prompt.
    expected = []
    for chat in tiny_sources().chats:
        prompt = chat_prompt_ids(tokenizer, chat)
        answer = plain_generate(target, tokenizer, prompt, TRAINING.answer_tokens).token_ids
        expected.append(answer)
        assert load_answer_store(answer_store_path(trained[0]), target, exclude=[prompt]).excluded == 1
    # An answer that ended keeps its end-of-turn token in the store: it is drafted too.
    eos = tokenizer.eos_token_id
    assert all(answer[-1] == eos or len(answer) == TRAINING.answer_tokens for answer in stored)
    assert sorted(answer[:-1] if answer[-1] == eos else answer for answer in stored) == sorted(expected)


def test_the_saved_head_reloads_and_its_drafts_are_accepted(
    trained: tuple[Path, decoding.train_head.TrainingReport],
    target: LlamaForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
) -> None:
    head = load_draft_head(trained[0], target)
    config = DecodeConfig(max_draft=4, draft_length=3, cost_curve=VerifyCostCurve.flat(4), eos_token_ids=())
    plain_calls = head_calls = 0
    for prompt in PROMPTS:
        plain = SpeculativeDecoder(target, tokenizer, None, config).generate(prompt, 40)
        drafted = SpeculativeDecoder(target, tokenizer, DraftHeadDrafter(head), config).generate(prompt, 40)
        assert drafted.token_ids == plain.token_ids
        plain_calls += plain.stats.target_calls
        head_calls += drafted.stats.target_calls
        assert drafted.stats.proposals_by_source.get("draft_head", 0) > 0
    # A trained head's drafts are mostly accepted: far fewer target calls than plain decoding.
    assert head_calls < 0.75 * plain_calls


def test_training_resumes_without_answering_or_extracting_again(
    target: LlamaForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sources = TrainingSources(chats=[[{"role": "user", "content": "abc"}]], texts=[LETTERS * 3])
    config = HeadTrainingConfig(
        seq_len=32, draft_vocab=0, epochs=2, batch_size=2, answer_tokens=8, warmup_steps=1
    )
    arguments = dict(work_dir=tmp_path / "work", config=config, progress=None, show_progress=False)
    first = train_draft_head(
        target, tokenizer, "tiny", sources, out_path=tmp_path / "a.safetensors", **arguments
    )

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the answers and features of the first run should have been reused")

    monkeypatch.setattr(target, "generate", refuse)
    monkeypatch.setattr(decoding.train_head, "_forward_features", refuse)
    second = train_draft_head(
        target, tokenizer, "tiny", sources, out_path=tmp_path / "b.safetensors", **arguments
    )
    assert second.steps == first.steps
    assert second.tokens == first.tokens


def test_a_head_for_another_target_is_refused(
    trained: tuple[Path, decoding.train_head.TrainingReport], target: LlamaForCausalLM
) -> None:
    other_weights = tiny_model(seed=5, scale=8.0)
    with pytest.raises(DraftHeadMismatchError, match="trained for tiny"):
        load_draft_head(trained[0], other_weights)
    other_vocabulary = tiny_model(seed=1, vocab_size=20, scale=8.0)
    with pytest.raises(DraftHeadMismatchError, match="vocabulary 16"):
        load_draft_head(trained[0], other_vocabulary)


def test_a_file_that_is_not_a_head_is_refused(tmp_path: Path, target: LlamaForCausalLM) -> None:
    with pytest.raises(DraftHeadFileError, match="no draft head"):
        load_draft_head(tmp_path / "missing.safetensors", target)
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"not a safetensors file")
    with pytest.raises(DraftHeadFileError, match="not a readable"):
        load_draft_head(garbage, target)


def test_head_state_holds_only_its_own_weights(target: LlamaForCausalLM, tmp_path: Path) -> None:
    head = random_head(target)
    names = set(head.state_dict())
    assert not any("embed" in name or "lm_head" in name for name in names)
    path = save_draft_head(head, tmp_path / "h.safetensors")
    again = load_draft_head(path, target)
    for name, tensor in head.state_dict().items():
        assert torch.equal(tensor.double(), again.state_dict()[name].double()), name


def test_cached_stepping_matches_the_training_forward(target: LlamaForCausalLM) -> None:
    """The incremental head (what drafting runs) computes what the batch forward (what training runs) does."""
    head = random_head(target)
    generator = torch.Generator().manual_seed(3)
    features = torch.randn(1, 9, 32, dtype=torch.float64, generator=generator)
    tokens = torch.randint(0, 16, (1, 9), generator=generator)
    with torch.no_grad():
        batch = head(features, tokens)[0]
    cache = HeadCache()
    first = head.step(features[0, :5], tokens[0, :5].tolist(), 0, cache)
    rest = [
        head.step(features[0, index : index + 1], [int(tokens[0, index])], index, cache)
        for index in range(5, 9)
    ]
    stepped = torch.cat([first, *rest])
    assert torch.allclose(stepped, batch, atol=1e-10)
    # Rolling back and stepping again gives the same rows.
    cache.crop(6)
    again = head.step(features[0, 6:9], tokens[0, 6:9].tolist(), 6, cache)
    assert torch.allclose(again, batch[6:9], atol=1e-10)


def test_a_long_catch_up_runs_over_the_last_window_only(target: LlamaForCausalLM) -> None:
    head = random_head(target)
    generator = torch.Generator().manual_seed(5)
    features = torch.randn(20, 32, dtype=torch.float64, generator=generator)
    context = torch.randint(0, 16, (21,), generator=generator).tolist()
    drafter = DraftHeadDrafter(head, catch_up_window=6)
    drafter.observe_features(0, features)
    proposal = drafter.propose(context, 3)
    # The same as a fresh head over the last six pairs (f_s, x_{s+1}), s = 14..19.
    cache = HeadCache()
    last = head.step(features[14:20], context[15:21], 0, cache)[-1]
    expected = [int(torch.argmax(head.logits(last)))]
    for position in range(2):
        last = head.step(last.unsqueeze(0), [expected[-1]], 6 + position, cache)[-1]
        expected.append(int(torch.argmax(head.logits(last))))
    assert proposal.tokens == expected
    # Afterwards it keeps up position by position, with no second restart.
    drafter.observe_features(20, features[:2])
    assert drafter.propose([*context, 3, 4], 1).tokens
    assert drafter._offset == 14 and drafter._cache.length == 8


def _composite_with_head(head: DraftHead) -> Drafter:
    return CompositeDrafter([PromptLookupDrafter(min_ngram=1), DraftHeadDrafter(head)])


@pytest.mark.parametrize("draft_length", [1, 3, 8, None], ids=["k1", "k3", "k8", "adaptive"])
@pytest.mark.parametrize(
    "kind", ["full_vocab", "reduced_vocab", "confidence_stop", "small_window", "composite", "self_draft"]
)
def test_greedy_output_is_exact_with_a_head_or_an_early_exit(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, kind: str, draft_length: int | None
) -> None:
    # An untrained head drafts badly, which is the harder case for exactness.
    head = random_head(target, draft_vocab=10 if kind == "reduced_vocab" else 0)
    config = DecodeConfig(max_draft=8, draft_length=draft_length, cost_curve=VerifyCostCurve.flat(8))
    for prompt in PROMPTS:
        plain = SpeculativeDecoder(target, tokenizer, None, config).generate(prompt, 40)
        drafter: Drafter
        if kind == "composite":
            drafter = _composite_with_head(head)
        elif kind == "self_draft":
            drafter = self_drafter(target, 1)
        elif kind == "small_window":
            drafter = DraftHeadDrafter(head, catch_up_window=3)
        else:
            drafter = DraftHeadDrafter(head, min_confidence=0.5 if kind == "confidence_stop" else 0.0)
        result = SpeculativeDecoder(target, tokenizer, drafter, config).generate(prompt, 40)
        assert result.token_ids == plain.token_ids, f"prompt {prompt}"
        assert result.finish_reason == plain.finish_reason


def test_the_early_exit_model_shares_weights_and_leaves_the_target_whole(target: LlamaForCausalLM) -> None:
    before = target(input_ids=torch.tensor([[0, 2, 3, 4]])).logits
    draft = early_exit_model(target, 1)
    assert len(draft.model.layers) == 1 and len(target.model.layers) == 2
    assert draft.model.layers[0] is target.model.layers[0] and draft.lm_head is target.lm_head
    after = target(input_ids=torch.tensor([[0, 2, 3, 4]])).logits
    assert torch.equal(before, after)
    with pytest.raises(ValueError, match="1 <= layers < 2"):
        early_exit_model(target, 2)


# --- sampling stays exact ------------------------------------------------------------------------


@pytest.mark.parametrize("draft_vocab", [0, 4], ids=["full_vocab", "reduced_vocab"])
def test_speculative_sampling_with_a_head_matches_the_target(draft_vocab: int) -> None:
    target = tiny_model(seed=3, vocab_size=VOCAB, scale=2.0)
    tokenizer = character_tokenizer(["<s>", "</s>", "a", "b", "c", "d"])
    head = random_head(target, draft_vocab=draft_vocab, seed=4)
    config = DecodeConfig(max_draft=2, draft_length=2, eos_token_ids=())
    decoder = SpeculativeDecoder(target, tokenizer, DraftHeadDrafter(head), config)
    counts: Counter[Hashable] = Counter()
    for seed in range(SAMPLES):
        tokens = decoder.generate(PROMPT, 4, temperature=PARAMS.temperature, seed=seed).token_ids
        counts[(tokens[1], tokens[2])] += 1
    assert chi_square_p_value(counts, exact_second_third(target), SAMPLES) > ALPHA


# --- training sources ----------------------------------------------------------------------------


def test_sources_hold_out_the_benchmark_prompts(tmp_path: Path) -> None:
    spec = tmp_path / "question.jsonl"
    rows = [
        {"question_id": i, "category": "qa" if i % 2 else "writing", "turns": [f"q{i}"]} for i in range(10)
    ]
    spec.write_text("\n".join(json.dumps(row) for row in rows))
    chats = read_source(spec, holdout_per_category=2).chats
    assert [chat[0]["content"] for chat in chats] == ["q4", "q5", "q6", "q7", "q8", "q9"]

    squad = tmp_path / "squad.json"
    paragraph = {
        "context": "Ctx.",
        "qas": [{"id": "a", "question": "First?"}, {"id": "b", "question": "Second?"}],
    }
    squad.write_text(json.dumps({"data": [{"paragraphs": [paragraph]}]}))
    grounded = read_source(squad).chats
    assert len(grounded) == 1 and "Second?" in grounded[0][-1]["content"]

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "1", "title": "T", "text": "Body."}) + "\n")
    assert read_source(corpus).texts == ["T\nBody."]

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nOne paragraph.\n\nTwo.\n")
    assert read_source(docs).texts == ["# A", "One paragraph.", "Two."]


def test_unknown_or_missing_sources_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TrainingInputError, match="not found"):
        read_source(tmp_path / "nothing.jsonl")
    odd = tmp_path / "odd.csv"
    odd.write_text("a,b\n")
    with pytest.raises(TrainingInputError, match="unknown source kind"):
        read_source(odd)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"x": 1}) + "\n")
    with pytest.raises(TrainingInputError, match="'turns'"):
        read_source(rows)
