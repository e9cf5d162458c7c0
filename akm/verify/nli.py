"""An optional natural-language-inference verifier from a local cross-encoder directory.

No NLI model ships with the project; one is used only when ``Settings.nli_model`` names a
local directory. It is meant to be combined as ``StrictestOf(LexicalClaimVerifier(), nli)``,
so it can only withhold support the lexical checks would give.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from akm.claims.segmentation import sentence_spans
from akm.verify.judgement import CheckOutcome, SupportJudgement, SupportLabel


class NLIModelError(RuntimeError):
    """Base class: the NLI model cannot be used."""


class NLIModelNotConfigured(NLIModelError):
    """No NLI model directory is configured."""


class NLIModelLoadError(NLIModelError):
    """The configured NLI model directory could not be loaded."""


# Scores (entailment, neutral, contradiction) for a batch of (premise, hypothesis) pairs.
PairScorer = Callable[[Sequence[tuple[str, str]]], list[tuple[float, float, float]]]


def _label_order(id2label: dict[int, str]) -> tuple[int, int, int]:
    names = {index: label.lower() for index, label in id2label.items()}

    def find(word: str) -> int:
        for index, name in names.items():
            if name.startswith(word):
                return index
        raise NLIModelLoadError(f"the model's labels {sorted(names.values())} do not name {word!r}")

    return find("entail"), find("neutral"), find("contradict")


def load_cross_encoder(model_dir: str | Path, device: str = "cpu") -> PairScorer:
    """A scorer over a local sequence-classification NLI model (no network access)."""
    if not str(model_dir).strip():
        raise NLIModelNotConfigured("no NLI model configured (set AKM_NLI_MODEL to a local model directory)")
    path = Path(model_dir).expanduser()
    if not path.is_dir():
        raise NLIModelLoadError(f"NLI model directory {path} does not exist")
    try:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tokenizer: Any = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        model: Any = AutoModelForSequenceClassification.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError, ImportError) as error:
        raise NLIModelLoadError(f"cannot load NLI model from {path}: {error}") from error
    model.to(device).eval()
    order = _label_order({int(key): str(value) for key, value in model.config.id2label.items()})

    def score(pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float, float]]:
        batch = tokenizer(
            [premise for premise, _ in pairs],
            [hypothesis for _, hypothesis in pairs],
            truncation=True,
            padding=True,
            return_tensors="pt",
        ).to(device)
        with torch.no_grad():
            probabilities = model(**batch).logits.softmax(dim=-1).tolist()
        return [(row[order[0]], row[order[1]], row[order[2]]) for row in probabilities]

    return score


class NLIVerifier:
    """Entailment of the claim by the passage, per sentence window, from a pair scorer.

    Supported when some window entails the claim with probability ≥ ``entail_threshold``;
    contradicted when some window contradicts it with ≥ ``contradict_threshold``; otherwise
    insufficient.
    """

    def __init__(
        self, scorer: PairScorer, entail_threshold: float = 0.9, contradict_threshold: float = 0.9
    ) -> None:
        self.scorer = scorer
        self.entail_threshold = entail_threshold
        self.contradict_threshold = contradict_threshold

    @classmethod
    def from_directory(cls, model_dir: str | Path, device: str = "cpu") -> NLIVerifier:
        return cls(load_cross_encoder(model_dir, device))

    def verify(self, claim: str, passage: str) -> SupportJudgement:
        spans = sentence_spans(passage)
        windows = [(span.start, span.end) for span in spans]
        windows += [(first.start, second.end) for first, second in pairwise(spans)]
        if not windows:
            return SupportJudgement("insufficient", None, "the passage has no sentences", "nli")
        scores = self.scorer([(passage[start:end], claim) for start, end in windows])
        entail_index = max(range(len(scores)), key=lambda index: scores[index][0])
        contradict_index = max(range(len(scores)), key=lambda index: scores[index][2])
        entail, contradict = scores[entail_index][0], scores[contradict_index][2]
        label: SupportLabel
        if entail >= self.entail_threshold:
            label, index = "supported", entail_index
        elif contradict >= self.contradict_threshold:
            label, index = "contradicted", contradict_index
        else:
            label, index = "insufficient", entail_index
        note = f"entailment {entail:.2f}, contradiction {contradict:.2f}"
        entailed = entail >= self.entail_threshold
        check = CheckOutcome(
            "entailment",
            entailed,
            "" if entailed else f"entailment {entail:.2f} is below {self.entail_threshold:.2f}",
            1.0 if entailed else round(entail, 4),
        )
        return SupportJudgement(
            label,
            windows[index],
            note,
            "nli",
            {"entailment": round(entail, 4), "contradiction": round(contradict, 4)},
            round(entail, 4),
            (check,),
        )
