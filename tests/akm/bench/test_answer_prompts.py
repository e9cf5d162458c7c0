"""Prompts of ``akm bench decode --format answers`` are the answer path's prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from akm.answer.prompt import USER_TEMPLATE
from akm.bench.answer_prompts import answer_prompts
from decoding.bench.errors import BenchmarkInputError

BRIDGE = (
    "The Kestrel Harbour Bridge crosses the estuary at its narrowest point. Construction began in 1921 "
    "and the bridge was opened to traffic on 19 March 1932 by the mayor, Edith Carrow. It carries four lanes."
)
BEES = "Honey bees tell each other where food is with a waggle dance. The angle of the dance gives the direction."


def _squad(tmp_path: Path) -> Path:
    document = {
        "data": [
            {
                "title": "Bridge",
                "paragraphs": [
                    {
                        "context": BRIDGE,
                        "qas": [{"id": "q1", "question": "When was the bridge opened to traffic?"}],
                    },
                    {
                        "context": "Nothing here.",
                        "qas": [{"id": "q3", "question": "Who painted the Mona Lisa?"}],
                    },
                ],
            },
            {
                "title": "Bees",
                "paragraphs": [
                    {
                        "context": BEES,
                        "qas": [{"id": "q2", "question": "How do honey bees show where food is?"}],
                    }
                ],
            },
        ]
    }
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_prompts_hold_only_the_chosen_sentences_and_the_bare_question(tmp_path: Path) -> None:
    prompts = answer_prompts(_squad(tmp_path), None, None)
    # Round-robin across articles; the question nothing answers is left out (the answer path abstains).
    assert [prompt.prompt_id for prompt in prompts] == ["q1", "q2"]
    first = prompts[0]
    assert first.messages[-1][0] == "user"
    assert first.messages[-1][1].startswith("Question: When was the bridge opened to traffic?")
    assert "19 March 1932" in first.messages[-1][1]
    assert "four lanes" not in first.messages[-1][1]
    assert first.passages and all(passage in BRIDGE for passage in first.passages)
    assert USER_TEMPLATE.split("{text}")[1] in first.messages[-1][1]
    assert len(answer_prompts(_squad(tmp_path), 1, None)) == 1


def test_a_file_with_nothing_to_generate_for_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"data": []}), encoding="utf-8")
    with pytest.raises(BenchmarkInputError, match="no question"):
        answer_prompts(path, None, None)
    broken = tmp_path / "broken.json"
    broken.write_text("{}", encoding="utf-8")
    with pytest.raises(BenchmarkInputError, match="not a SQuAD"):
        answer_prompts(broken, None, None)
