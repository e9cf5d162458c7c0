"""The NLI verifier with a real (tiny, randomly initialised) cross-encoder loaded from a directory.

The model is built from a config with a fixed seed and saved with its own word-piece
vocabulary, then loaded through ``NLIVerifier.from_directory`` exactly as a configured
``AKM_NLI_MODEL`` would be, so tokenisation, batching, the label order and the softmax all run.
Its verdicts mean nothing; what is checked is that they are well formed, deterministic, and
that ``StrictestOf`` never lets them relax the lexical verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from akm.verify import LexicalClaimVerifier, NLIVerifier, StrictestOf
from akm.verify.judgement import STRICTNESS
from akm.verify.nli import load_cross_encoder

PAIRS: list[tuple[str, str]] = [
    ("The cache is enabled by default.", "The cache is enabled by default. Backups run nightly."),
    ("Backups run weekly.", "The cache is enabled by default. Backups run nightly."),
    (
        "Statin therapy increases the risk of diabetes.",
        "Statin therapy increased the risk of diabetes in women.",
    ),
    (
        "Statin therapy decreases the risk of diabetes.",
        "Statin therapy increased the risk of diabetes in women.",
    ),
    ("Critics say the bridge is unsafe.", "Critics say the bridge is unsafe."),
    ("The bridge is unsafe.", "Critics say the bridge is unsafe."),
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    directory = tmp_path_factory.mktemp("tiny-nli")
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted({
        word.strip(".,").lower() for claim, passage in PAIRS for word in f"{claim} {passage}".split()
    }), ".", ","]  # fmt: skip
    (directory / "vocab.txt").write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizer(str(directory / "vocab.txt"), do_lower_case=True)
    tokenizer.save_pretrained(str(directory))
    config = transformers.BertConfig(
        vocab_size=len(vocabulary),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        num_labels=3,
        # Not the order the verifier expects, so the label lookup is exercised.
        id2label={0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"},
        label2id={"CONTRADICTION": 0, "ENTAILMENT": 1, "NEUTRAL": 2},
    )
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(config).save_pretrained(str(directory))
    return directory


def test_the_tiny_model_loads_and_scores_probabilities(model_dir: Path) -> None:
    scorer = load_cross_encoder(model_dir)
    scores = scorer([("The cache is enabled.", "The cache is enabled."), ("Backups run.", "Nothing.")])
    assert len(scores) == 2
    for row in scores:
        assert all(0.0 <= value <= 1.0 for value in row)
        assert sum(row) == pytest.approx(1.0, abs=1e-5)


def test_nli_judgements_are_well_formed_and_deterministic(model_dir: Path) -> None:
    first, second = NLIVerifier.from_directory(model_dir), NLIVerifier.from_directory(model_dir)
    for claim, passage in PAIRS:
        judgement = first.verify(claim, passage)
        again = second.verify(claim, passage)
        assert (judgement.label, judgement.span, judgement.scores) == (again.label, again.span, again.scores)
        assert judgement.decided_by == "nli"
        assert judgement.support_score is not None and 0.0 <= judgement.support_score <= 1.0
        assert judgement.span is not None and 0 <= judgement.span[0] < judgement.span[1] <= len(passage)
        assert [check.name for check in judgement.checks] == ["entailment"]


@pytest.mark.parametrize(
    "entail_threshold", [0.0, 0.5, 0.9, 1.01], ids=["entails-all", "half", "default", "never"]
)
def test_strictest_of_with_the_real_model_only_makes_verdicts_stricter(
    model_dir: Path, entail_threshold: float
) -> None:
    lexical = LexicalClaimVerifier()
    nli = NLIVerifier(
        load_cross_encoder(model_dir), entail_threshold=entail_threshold, contradict_threshold=0.5
    )
    combined = StrictestOf(lexical, nli)
    for claim, passage in PAIRS:
        alone = lexical.verify(claim, passage)
        both = combined.verify(claim, passage)
        assert STRICTNESS[both.label] >= STRICTNESS[alone.label], (claim, alone.label, both.label)
        assert STRICTNESS[both.label] >= STRICTNESS[nli.verify(claim, passage).label]
        assert both.support_score is not None and alone.support_score is not None
        assert both.support_score <= alone.support_score
        if entail_threshold == 0.0 and STRICTNESS[nli.verify(claim, passage).label] == 0:
            # An NLI model that entails everything leaves the lexical verdict as it was.
            assert both.label == alone.label
        if entail_threshold > 1.0:
            assert both.label != "supported"
