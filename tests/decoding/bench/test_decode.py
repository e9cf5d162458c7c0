"""The decoding benchmark: prompt loaders, the summary arithmetic, and one end-to-end run on a tiny model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from akm.cli import main as akm_main
from decoding.answer_store import save_answer_store
from decoding.bench.decode import (
    REPORT_KEYS,
    RESULT_KEYS,
    SUMMARY_KEYS,
    BenchPrompt,
    acceptance_by_position,
    check_methods,
    cost_curve_report,
    default_methods,
    divergence_list,
    encode_prompts,
    first_divergence,
    format_markdown,
    read_prompts,
    read_spec_bench,
    read_squad,
    run_decode_benchmark,
    summarize_records,
    write_json,
    write_plot,
)
from decoding.bench.errors import BenchmarkInputError
from decoding.draft_head import DraftHead, DraftHeadConfig
from decoding.draft_length import VerifyCostCurve
from decoding.speculative import plain_generate

SHARED_DATASETS = Path(__file__).resolve().parents[3].parent / "shared" / "datasets"
SPEC_BENCH = SHARED_DATASETS / "spec_bench" / "question.jsonl"
XQUAD = SHARED_DATASETS / "xquad_en" / "xquad.en.dev-half.json"


def write_spec_bench(path: Path) -> Path:
    rows = [
        {"question_id": 1, "category": "writing", "turns": ["Write a poem.", "Now shorter."]},
        {"question_id": 2, "category": "writing", "turns": ["Write a story."]},
        {"question_id": 3, "category": "rag", "turns": ["Read this and answer."]},
        {"question_id": 4, "category": "math", "turns": ["What is 2+2?"]},
        {"question_id": 5, "category": "rag", "turns": ["Another document."]},
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n", encoding="utf-8")
    return path


def write_squad(path: Path) -> Path:
    document = {
        "version": "1.1",
        "data": [
            {
                "title": "A",
                "paragraphs": [
                    {"context": "Alpha one.", "qas": [{"id": "a1", "question": "Q a1?", "answers": []}]},
                    {
                        "context": "Alpha two.",
                        "qas": [
                            {"id": "a2", "question": "Q a2?", "answers": []},
                            {"id": "a2b", "question": "Q a2b?", "answers": []},
                        ],
                    },
                    {"context": "Alpha three.", "qas": [{"id": "a3", "question": "Q a3?", "answers": []}]},
                ],
            },
            {
                "title": "B",
                "paragraphs": [
                    {"context": "Beta one.", "qas": [{"id": "b1", "question": "Q b1?", "answers": []}]},
                    {"context": "Beta empty.", "qas": []},
                ],
            },
        ],
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


# --- loaders --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("per_category", "expected_ids"),
    [(None, ["1", "3", "4", "2", "5"]), (1, ["1", "3", "4"]), (2, ["1", "3", "4", "2", "5"])],
    ids=["all", "one-per-category", "two-per-category"],
)
def test_spec_bench_takes_first_turns_round_robin_over_categories(
    tmp_path: Path, per_category: int | None, expected_ids: list[str]
) -> None:
    prompts = read_spec_bench(write_spec_bench(tmp_path / "q.jsonl"), per_category)
    assert [prompt.prompt_id for prompt in prompts] == expected_ids
    assert prompts[0] == BenchPrompt("1", "writing", (("user", "Write a poem."),))
    assert [prompt.category for prompt in prompts[:3]] == ["writing", "rag", "math"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"question_id": 1, "category": "x", "turns": []}', "non-empty 'turns'"),
        ('{"question_id": 1, "turns": ["hi"]}', "needs a 'category'"),
        ("not json", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
    ],
    ids=["empty-turns", "no-category", "not-json", "not-object"],
)
def test_spec_bench_rejects_bad_rows(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(BenchmarkInputError, match=message):
        read_spec_bench(path)


def test_squad_prompts_are_grounded_and_round_robin_over_articles(tmp_path: Path) -> None:
    prompts = read_squad(write_squad(tmp_path / "squad.json"))
    # First paragraph of each article, then second ones, ...; the first question of each paragraph.
    assert [prompt.prompt_id for prompt in prompts] == ["a1", "b1", "a2", "a3"]
    first = prompts[0]
    assert first.category == "squad"
    assert first.evidence == ("Alpha one.",)
    roles = [role for role, _ in first.messages]
    assert roles == ["system", "user"]
    assert first.messages[1][1] == "Context:\nAlpha one.\n\nQuestion: Q a1?\nAnswer from the context."


def test_squad_limit_and_read_prompts_dispatch(tmp_path: Path) -> None:
    path = write_squad(tmp_path / "squad.json")
    assert [prompt.prompt_id for prompt in read_prompts(path, "squad", 2)] == ["a1", "b1"]
    spec = write_spec_bench(tmp_path / "q.jsonl")
    assert len(read_prompts(spec, "spec-bench", 1)) == 3
    with pytest.raises(BenchmarkInputError, match="unknown prompt format"):
        read_prompts(spec, "mmlu")


@pytest.mark.parametrize(
    ("content", "message"),
    [("{", "not JSON"), ('{"version": "1"}', "top-level 'data'"), ('{"data": []}', "no SQuAD questions")],
    ids=["not-json", "no-data", "empty"],
)
def test_squad_rejects_bad_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BenchmarkInputError, match=message):
        read_squad(path)


def test_missing_prompts_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkInputError, match="cannot read"):
        read_spec_bench(tmp_path / "absent.jsonl")


@pytest.mark.parametrize(
    ("methods", "prompt_format", "expected"),
    [
        (["speculative"], "spec-bench", ["plain", "speculative"]),
        (["hf-pld", "evidence", "plain"], "squad", ["plain", "evidence", "hf-pld"]),
    ],
    ids=["adds-plain", "canonical-order"],
)
def test_check_methods(methods: list[str], prompt_format: str, expected: list[str]) -> None:
    assert check_methods(methods, prompt_format) == expected


@pytest.mark.parametrize(
    ("methods", "prompt_format", "message"),
    [(["evidence"], "spec-bench", "only with --format squad"), (["beam"], "squad", "unknown method")],
    ids=["evidence-needs-passages", "unknown"],
)
def test_check_methods_refuses(methods: list[str], prompt_format: str, message: str) -> None:
    with pytest.raises(BenchmarkInputError, match=message):
        check_methods(methods, prompt_format)


def test_default_methods_depend_on_format_and_on_a_trained_head() -> None:
    assert default_methods("squad") == [
        "plain",
        "prompt-lookup",
        "evidence",
        "self-speculative",
        "speculative",
        "hf-plain",
        "hf-pld",
    ]
    assert default_methods("spec-bench") == [
        "plain",
        "prompt-lookup",
        "self-speculative",
        "speculative",
        "hf-plain",
        "hf-pld",
    ]
    assert default_methods("spec-bench", has_head=True) == [
        "plain",
        "prompt-lookup",
        "draft-head",
        "self-speculative",
        "speculative",
        "speculative-no-head",
        "hf-plain",
        "hf-pld",
    ]


def test_head_methods_need_a_head() -> None:
    with pytest.raises(BenchmarkInputError, match="akm train-draft-head"):
        check_methods(["draft-head"], "spec-bench", has_head=False)
    assert check_methods(["draft-head"], "spec-bench", has_head=True) == ["plain", "draft-head"]


def test_head_and_self_speculative_methods_run_exactly(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    torch.manual_seed(0)
    head = DraftHead(DraftHeadConfig.for_target(target, "tiny")).attach(target).eval()
    report = tiny_report(
        target,
        tokenizer,
        ["draft-head", "self-speculative", "speculative", "speculative-no-head"],
        max_new_tokens=40,
        draft_head=head,
        draft_head_file="tiny.safetensors",
        self_draft_layers=1,
    )
    assert report["methods"] == [
        "plain",
        "draft-head",
        "self-speculative",
        "speculative",
        "speculative-no-head",
    ]
    assert all(row["identical_to_plain"] for row in report["results"])
    for method in ("draft-head", "self-speculative"):
        # Even an untrained head, found not to pay, is probed with a draft now and then.
        assert any(row["proposed_by_position"] for row in report["results"] if row["method"] == method)
    assert report["environment"]["draft_head"] == "tiny.safetensors"
    assert report["environment"]["self_draft_layers"] == 1
    # The composite is compared with every single drafter it holds, the head included.
    assert report["summary"]["speculative"]["all"]["best_single_drafter"] in (
        "prompt-lookup",
        "evidence",
        "draft-head",
    )
    with pytest.raises(BenchmarkInputError, match="trained draft head"):
        run_decode_benchmark(
            target,
            tokenizer,
            TINY_PROMPTS,
            prompt_format="squad",
            prompts_file="fixture",
            methods=["draft-head"],
            cost_curve=VerifyCostCurve.flat(4),
            progress=None,
        )


def test_the_answer_store_joins_the_composites_without_the_measured_prompts_answers(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, tmp_path: Path
) -> None:
    encoded = encode_prompts(TINY_PROMPTS, tokenizer)
    unrelated = [3, 4, 5, 3, 4, 5]
    pairs = [
        (prompt.ids, plain_generate(target, tokenizer, prompt.ids, 24).token_ids) for prompt in encoded
    ] + [(unrelated, plain_generate(target, tokenizer, unrelated, 24).token_ids)]
    store_file = save_answer_store(tmp_path / "tiny.answers.safetensors", pairs, target, "tiny")
    report = tiny_report(
        target,
        tokenizer,
        ["speculative", "speculative-no-store"],
        max_new_tokens=24,
        answer_store_file=store_file,
    )
    assert all(row["identical_to_plain"] for row in report["results"])
    # Both measured prompts' answers are left out; the unrelated one stays.
    assert report["environment"]["answer_store"] == {"file": str(store_file), "answers": 1, "left_out": 2}
    with pytest.raises(BenchmarkInputError, match="needs an answer store"):
        tiny_report(target, tokenizer, ["speculative-no-store"], max_new_tokens=8)


# --- summary arithmetic ---------------------------------------------------------------------


def record(
    prompt_id: str,
    category: str,
    method: str,
    tokens: int,
    wall: float,
    calls: int,
    proposed: list[int],
    accepted: list[int],
    divergence: dict[str, Any] | None = None,
    itl: list[float] | None = None,
    cpu: float | None = None,
) -> dict[str, Any]:
    return {
        "prompt_id": prompt_id,
        "category": category,
        "method": method,
        "new_tokens": tokens,
        "wall_s": wall,
        "cpu_s": wall / 2 if cpu is None else cpu,
        "ttft_s": 0.1,
        "target_calls": calls,
        "proposed_by_position": proposed,
        "accepted_by_position": accepted,
        "tree_steps": 0,
        "branch_accepts": 0,
        "cached_prompt_tokens": 0,
        "identical_to_plain": divergence is None,
        "first_divergence": divergence,
        "finish": "length",
        "itl_ms": itl or [],
        "copy_ceiling_tokens": CEILINGS[prompt_id][0],
        "copy_ceiling_steps": CEILINGS[prompt_id][1],
        "lookup_ceiling_steps": CEILINGS[prompt_id][2],
    }


# Per prompt: own plain's tokens after the first, and the least steps copying could commit them in,
# and prompt lookup's own proposals.
CEILINGS = {"p1": (9, 3.0, 4.5), "p2": (19, 9.5, 19.0)}


HAND_MADE = [
    record("p1", "rag", "plain", 10, 2.0, 10, [], [], itl=[10.0, 20.0]),
    record("p1", "rag", "speculative", 10, 1.0, 4, [3, 2, 1], [3, 2, 0], itl=[0.0, 30.0], cpu=0.25),
    record("p1", "rag", "hf-plain", 10, 4.0, 11, [], []),
    record("p2", "math", "plain", 20, 2.0, 20, [], [], itl=[40.0]),
    record(
        "p2",
        "math",
        "speculative",
        18,
        2.0,
        15,
        [4, 1],
        [1, 0],
        divergence={"index": 7, "logit_gap": 0.25, "plain_token": 5, "method_token": 6},
    ),
    record("p2", "math", "hf-plain", 20, 1.0, 21, [], []),
]


def test_summary_arithmetic_on_hand_made_records() -> None:
    summary = summarize_records(HAND_MADE)
    assert list(summary) == ["plain", "speculative", "hf-plain"]
    assert list(summary["speculative"]) == ["rag", "math", "all"]
    assert all(set(row) == set(SUMMARY_KEYS) for per in summary.values() for row in per.values())

    spec_all = summary["speculative"]["all"]
    assert spec_all["prompts"] == 2
    assert spec_all["new_tokens"] == 28
    assert spec_all["wall_s"] == 3.0
    assert spec_all["tokens_per_s"] == 28 / 3.0
    assert spec_all["speedup_vs_plain"] == (28 / 3.0) / (30 / 4.0)
    # CPU time: plain runs took half their wall time (2.0 s in all), speculative 0.25 s + 1.0 s.
    assert spec_all["cpu_s"] == 1.25
    assert spec_all["speedup_vs_plain_cpu"] == (28 / 1.25) / (30 / 2.0)
    assert spec_all["tokens_per_target_call"] == 28 / 19
    # Draft steps = proposals at position 1 (3 + 4); accepted drafts 5 + 1.
    assert spec_all["mean_accepted_length"] == 6 / 7
    assert spec_all["identical_rate"] == 0.5
    assert spec_all["itl_p50_ms"] == 15.0
    assert spec_all["itl_p95_ms"] == pytest.approx(28.5, abs=1e-12)

    # Over the decoding steps: the tokens after the first, over the time after the first (0.1 s each).
    assert spec_all["decode_speedup_vs_plain"] == pytest.approx((26 / 2.8) / (28 / 3.8))
    assert spec_all["copy_ceiling"] == (9 + 19) / (3.0 + 9.5)
    assert summary["hf-plain"]["rag"]["copy_ceiling"] == 3.0
    assert summary["plain"]["math"]["copy_ceiling"] == 2.0
    assert spec_all["lookup_ceiling"] == (9 + 19) / (4.5 + 19.0)
    assert summary["plain"]["rag"]["lookup_ceiling"] == 2.0

    spec_rag = summary["speculative"]["rag"]
    assert spec_rag["speedup_vs_plain"] == (10 / 1.0) / (10 / 2.0)
    assert spec_rag["decode_speedup_vs_plain"] == pytest.approx((9 / 0.9) / (9 / 1.9))
    assert spec_rag["mean_accepted_length"] == 5 / 3
    assert spec_rag["identical_rate"] == 1.0
    assert summary["speculative"]["math"]["speedup_vs_plain"] == (18 / 2.0) / (20 / 2.0)

    plain_all = summary["plain"]["all"]
    assert plain_all["speedup_vs_plain"] == 1.0
    assert plain_all["mean_accepted_length"] == 0.0
    assert plain_all["itl_p50_ms"] == 20.0

    hf_all = summary["hf-plain"]["all"]
    assert hf_all["speedup_vs_plain"] == (30 / 5.0) / (30 / 4.0)
    assert hf_all["mean_accepted_length"] is None
    assert hf_all["itl_p50_ms"] == 0.0


def test_summary_compares_with_hf_pld_and_the_best_single_drafter() -> None:
    records = [
        *HAND_MADE,
        record("p1", "rag", "hf-pld", 10, 0.5, 3, [], []),
        record("p2", "math", "hf-pld", 20, 4.0, 8, [], []),
        record("p1", "rag", "prompt-lookup", 10, 0.8, 4, [2], [2]),
        record("p2", "math", "prompt-lookup", 20, 2.5, 9, [2], [1]),
        record("p1", "rag", "evidence", 10, 1.25, 6, [1], [0]),
        record("p2", "math", "evidence", 20, 1.0, 9, [1], [1]),
    ]
    summary = summarize_records(records)
    spec = summary["speculative"]
    assert spec["rag"]["vs_hf_pld"] == (10 / 1.0) / (10 / 0.5)
    assert spec["all"]["vs_hf_pld"] == (28 / 3.0) / (30 / 4.5)
    assert spec["all"]["vs_hf_pld_cpu"] == (28 / 1.25) / (30 / 2.25)
    assert summary["hf-pld"]["all"]["vs_hf_pld"] == 1.0
    # Per category the best single drafter may differ: prompt lookup on rag, evidence on math.
    assert (spec["rag"]["best_single_drafter"], spec["rag"]["vs_best_single_drafter"]) == (
        "prompt-lookup",
        (10 / 1.0) / (10 / 0.8),
    )
    assert (spec["math"]["best_single_drafter"], spec["math"]["vs_best_single_drafter"]) == (
        "evidence",
        (18 / 2.0) / (20 / 1.0),
    )
    assert summary["prompt-lookup"]["all"]["vs_best_single_drafter"] is None
    assert spec["all"]["ttft_mean_ms"] == pytest.approx(100.0)
    assert spec["all"]["ttft_p50_ms"] == pytest.approx(100.0)
    assert spec["rag"]["acceptance_by_position"] == [1.0, 1.0, 0.0]
    assert summary["prompt-lookup"]["math"]["acceptance_by_position"] == [0.5]
    markdown = format_markdown(
        {
            "format": "squad",
            "prompt_count": 2,
            "max_new_tokens": 20,
            "environment": {},
            "summary": summary,
            "cost_curve": {"draft_tokens": [0], "seconds": [0.05], "ratio_to_plain_step": [1.0]},
            "divergences": [],
        }
    )
    # By CPU time (half the wall time for these records) the best single drafter is the same one.
    assert spec["math"]["vs_best_single_drafter_cpu"] == (18 / 1.0) / (20 / 0.5)
    assert (
        "speculative vs the best single drafter here (evidence): 0.45× its tokens/s (0.45× by CPU time)."
        in markdown
    )
    assert "| 1.00 1.00 0.00 |" in markdown


def test_speedup_is_none_without_plain_runs() -> None:
    summary = summarize_records([row for row in HAND_MADE if row["method"] != "plain"])
    assert summary["speculative"]["all"]["speedup_vs_plain"] is None
    assert summary["speculative"]["all"]["speedup_vs_plain_cpu"] is None
    assert summary["speculative"]["all"]["vs_hf_pld"] is None
    assert summary["speculative"]["all"]["vs_best_single_drafter"] is None


def test_acceptance_by_position_and_divergence_list() -> None:
    assert acceptance_by_position(HAND_MADE, "speculative") == [4 / 7, 2 / 3, 0.0]
    assert acceptance_by_position(HAND_MADE, "plain") == []
    assert divergence_list(HAND_MADE) == [
        {
            "prompt_id": "p2",
            "category": "math",
            "method": "speculative",
            "index": 7,
            "logit_gap": 0.25,
            "plain_token": 5,
            "method_token": 6,
        }
    ]


@pytest.mark.parametrize(
    ("reference", "tokens", "expected"),
    [
        ([1, 2, 3], [1, 2, 3], None),
        ([1, 2, 3], [1, 9, 3], 1),
        ([1, 2, 3], [1, 2], 2),
        ([1, 2], [1, 2, 3], 2),
        ([], [], None),
    ],
    ids=["equal", "mismatch", "shorter", "longer", "empty"],
)
def test_first_divergence(reference: list[int], tokens: list[int], expected: int | None) -> None:
    assert first_divergence(reference, tokens) == expected


# --- end to end on a tiny model -------------------------------------------------------------


TINY_PROMPTS = [
    BenchPrompt("t1", "squad", (("user", "abcabcabcab"),), ("abcabcabcabcd",)),
    BenchPrompt("t2", "other", (("user", "nmlknmlk"),), ("nmlknmlknmlk",)),
]
# Both open with "User: ", which the character tokenizer reads as its start token 6 times over (it
# has no such characters) and tokenizes ahead of the prompts' own letters.
TEMPLATE_TOKENS = 6


def tiny_report(
    target: LlamaForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
    methods: list[str],
    *,
    max_new_tokens: int,
    **options: Any,
) -> dict[str, Any]:
    """The benchmark over TINY_PROMPTS with a flat cost curve and drafts of at most 4 tokens."""
    return run_decode_benchmark(
        target,
        tokenizer,
        TINY_PROMPTS,
        prompt_format="squad",
        prompts_file="fixture",
        methods=methods,
        max_new_tokens=max_new_tokens,
        max_draft=4,
        cost_curve=VerifyCostCurve.flat(4),
        progress=None,
        **options,
    )


def test_benchmark_runs_end_to_end_and_writes_the_report(
    tmp_path: Path, target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    messages: list[str] = []
    partials: list[dict[str, Any]] = []
    report = run_decode_benchmark(
        target,
        tokenizer,
        TINY_PROMPTS,
        prompt_format="squad",
        prompts_file="fixture",
        methods=["speculative", "hf-plain", "hf-pld"],
        max_new_tokens=12,
        model_name="tiny",
        max_draft=4,
        cost_curve=VerifyCostCurve.flat(4),
        progress=messages.append,
        on_partial_report=partials.append,
    )
    assert [partial["prompt_count"] for partial in partials] == [1, 2]
    assert partials[-1]["results"] == report["results"]
    write_json(report, tmp_path / "report.json")
    loaded = json.loads((tmp_path / "report.json").read_text())
    assert tuple(loaded) == REPORT_KEYS
    assert loaded["methods"] == ["plain", "speculative", "hf-plain", "hf-pld"]
    assert loaded["prompt_count"] == 2
    results = loaded["results"]
    assert [(row["prompt_id"], row["method"]) for row in results] == [
        (prompt_id, method)
        for prompt_id in ("t1", "t2")
        for method in ("plain", "speculative", "hf-plain", "hf-pld")
    ]
    assert all(tuple(row) == RESULT_KEYS for row in results)
    # Float64 greedy: every method must reproduce own plain decoding exactly.
    assert all(row["identical_to_plain"] and row["first_divergence"] is None for row in results)
    assert all(row["new_tokens"] == 12 for row in results)
    assert all(row["cpu_s"] > 0.0 and row["wall_s"] > 0.0 for row in results)
    plain_calls = [row["target_calls"] for row in results if row["method"] == "plain"]
    assert plain_calls == [12, 12]
    # HF generate runs one forward per token (prefill included) for plain decoding.
    assert [row["target_calls"] for row in results if row["method"] == "hf-plain"] == [12, 12]
    assert all(len(row["itl_ms"]) == 11 for row in results)
    # The copy ceiling comes from own plain's tokens: the same in every record of a prompt, and with a
    # flat curve (verifying is free) never below one step per token after the first... nor above it.
    for prompt_id in ("t1", "t2"):
        ceilings = {
            (row["copy_ceiling_tokens"], row["copy_ceiling_steps"], row["lookup_ceiling_steps"])
            for row in results
            if row["prompt_id"] == prompt_id
        }
        assert len(ceilings) == 1
        ((tokens, steps, lookup),) = ceilings
        # Prompt lookup's proposals are some of the copies, so they need at least as many steps.
        assert tokens == 11 and 1.0 <= steps <= lookup <= 11.0
    assert set(loaded["summary"]) == {"plain", "speculative", "hf-plain", "hf-pld"}
    assert set(loaded["summary"]["speculative"]) == {"squad", "other", "all"}
    assert loaded["summary"]["plain"]["all"]["speedup_vs_plain"] == 1.0
    assert loaded["cost_curve"]["seconds"] == [1.0] * 5
    assert loaded["cost_curve"]["kernels"] is None  # a given flat curve chose no kernels
    assert loaded["environment"]["model"] == "tiny"
    assert loaded["environment"]["dtype"] == "float64"
    assert loaded["divergences"] == []
    assert messages[0].startswith("warm-up")
    assert sum("[2/2]" in message for message in messages) == 4

    markdown = format_markdown(report)
    assert "## squad" in markdown and "## other" in markdown and "## all" in markdown
    assert "| speculative | 2 | 24 |" in markdown
    ceiling = loaded["summary"]["plain"]["squad"]["copy_ceiling"]
    assert f"Copy ceiling: {ceiling:.2f}× own plain's decoding steps" in markdown
    lookup = loaded["summary"]["plain"]["squad"]["lookup_ceiling"]
    assert f"{lookup:.2f}× with prompt lookup's own proposals" in markdown
    write_plot(report, tmp_path / "plot.png")
    assert (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_repeats_keep_each_methods_fastest_round_from_the_same_learnt_state(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    common: dict[str, Any] = {
        "prompt_format": "squad",
        "prompts_file": "fixture",
        "methods": ["prompt-lookup", "speculative"],
        "max_new_tokens": 20,
        "max_draft": 4,
        "cost_curve": VerifyCostCurve(tuple(0.05 * (1 + 0.05 * k) for k in range(5))),
    }
    messages: list[str] = []
    once = run_decode_benchmark(target, tokenizer, TINY_PROMPTS, progress=None, **common)
    thrice = run_decode_benchmark(
        target, tokenizer, TINY_PROMPTS, progress=messages.append, repeats=3, **common
    )
    assert thrice["environment"]["repeats"] == 3 and once["environment"]["repeats"] == 1
    # One record per prompt and method, whatever the rounds; progress reports the kept round.
    assert [(row["prompt_id"], row["method"]) for row in thrice["results"]] == [
        (row["prompt_id"], row["method"]) for row in once["results"]
    ]
    assert sum(message.startswith("[") for message in messages) == len(thrice["results"])
    # Every round starts from the statistics learnt before the prompt, so the rounds decode alike:
    # the same target calls as a single round.
    assert [row["target_calls"] for row in thrice["results"]] == [
        row["target_calls"] for row in once["results"]
    ]
    assert all(row["identical_to_plain"] for row in thrice["results"])
    # Nor does a round find its own prompt in the cache: only the prefix the prompt before left.
    cached = [(row["prompt_id"], row["cached_prompt_tokens"]) for row in thrice["results"]]
    assert cached == [(row["prompt_id"], row["cached_prompt_tokens"]) for row in once["results"]]
    assert {tokens for prompt_id, tokens in cached if prompt_id == "t1"} == {0}
    assert {tokens for prompt_id, tokens in cached if prompt_id == "t2"} == {TEMPLATE_TOKENS}
    with pytest.raises(BenchmarkInputError, match="repeats"):
        run_decode_benchmark(target, tokenizer, TINY_PROMPTS, progress=None, repeats=0, **common)


def test_the_cold_composite_prefills_every_prompt_whole(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    report = tiny_report(target, tokenizer, ["speculative", "speculative-cold"], max_new_tokens=12)
    cached = {(row["prompt_id"], row["method"]): row["cached_prompt_tokens"] for row in report["results"]}
    assert cached == {
        ("t1", "plain"): 0,
        ("t1", "speculative"): 0,
        ("t1", "speculative-cold"): 0,
        ("t2", "plain"): TEMPLATE_TOKENS,
        ("t2", "speculative"): TEMPLATE_TOKENS,
        ("t2", "speculative-cold"): 0,
    }
    assert all(row["identical_to_plain"] for row in report["results"])


def test_benchmark_reports_divergence_with_logit_gap(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    report = run_decode_benchmark(
        target,
        tokenizer,
        TINY_PROMPTS[:1],
        prompt_format="squad",
        prompts_file="fixture",
        methods=["hf-plain"],
        max_new_tokens=6,
        cost_curve=VerifyCostCurve.flat(2),
        progress=None,
    )
    plain = report["results"][0]
    hf = report["results"][1]
    assert hf["identical_to_plain"] is True
    # A hand-corrupted record shows what a divergence looks like in the summary and the Markdown.
    hf = dict(
        hf,
        identical_to_plain=False,
        first_divergence={"index": 3, "logit_gap": 0.5, "plain_token": 4, "method_token": 5},
    )
    corrupted = dict(report, results=[plain, hf], divergences=divergence_list([plain, hf]))
    corrupted["summary"] = summarize_records(corrupted["results"])
    assert corrupted["summary"]["hf-plain"]["all"]["identical_rate"] == 0.0
    assert "| t1 | squad | hf-plain | 3 | 0.5000 | 4 | 5 |" in format_markdown(corrupted)


def test_benchmark_refuses_repeated_prompt_ids(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    with pytest.raises(BenchmarkInputError, match="repeat within a category"):
        run_decode_benchmark(
            target,
            tokenizer,
            [TINY_PROMPTS[0], TINY_PROMPTS[0]],
            prompt_format="squad",
            prompts_file="fixture",
            methods=["plain"],
            max_new_tokens=2,
            cost_curve=VerifyCostCurve.flat(2),
            progress=None,
        )


def bench_decode(tmp_path: Path, prompts: Path, *options: str) -> int:
    """`akm bench decode` on a fresh data dir, Spec-Bench format, report to tmp_path/out.json."""
    arguments = ["--data-dir", str(tmp_path), "bench", "decode", "--prompts", str(prompts)]
    return akm_main([*arguments, "--format", "spec-bench", *options, "--json", str(tmp_path / "out.json")])


def test_cli_rejects_a_missing_prompts_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_decode(tmp_path, tmp_path / "absent.jsonl") == 2
    assert "akm bench decode: cannot read" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_cli_rejects_evidence_for_spec_bench(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_decode(tmp_path, write_spec_bench(tmp_path / "q.jsonl"), "--methods", "evidence") == 2
    assert "only with --format squad" in capsys.readouterr().err


def test_cli_rejects_a_missing_draft_head_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    head = str(tmp_path / "absent.safetensors")
    assert bench_decode(tmp_path, write_spec_bench(tmp_path / "q.jsonl"), "--draft-head", head) == 2
    assert "no draft head file at" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_cli_without_a_trained_head_leaves_the_head_methods_out_or_refuses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench_decode(tmp_path, write_spec_bench(tmp_path / "q.jsonl"), "--methods", "draft-head") == 2
    err = capsys.readouterr().err
    assert "no draft head trained for smollm2-135m-instruct-float32" in err
    assert "need(s) a trained draft head" in err


# --- the shared data sets -------------------------------------------------------------------


@pytest.mark.datasets
def test_shared_prompt_files_parse() -> None:
    if not SPEC_BENCH.is_file() or not XQUAD.is_file():
        pytest.skip(f"benchmark prompts not found under {SHARED_DATASETS} (../shared/datasets is absent)")
    spec = read_spec_bench(SPEC_BENCH)
    assert len(spec) == 480
    assert len({prompt.category for prompt in spec}) == 13
    three = read_spec_bench(SPEC_BENCH, 3)
    assert len(three) == 39
    assert {prompt.category for prompt in three} >= {"rag", "summarization", "translation", "qa"}
    squad = read_squad(XQUAD)
    assert len(squad) > 20
    assert all(len(prompt.evidence) == 1 and prompt.evidence[0] in prompt.messages[1][1] for prompt in squad)
    assert len({prompt.prompt_id for prompt in squad}) == len(squad)


def test_the_report_names_the_kernel_each_k_was_verified_with() -> None:
    curve = VerifyCostCurve((0.05, 0.05, 0.06), ("stock", "transposed", "onednn"))
    report = cost_curve_report(curve)
    assert report["kernels"] == ["stock", "transposed", "onednn"]
    markdown = format_markdown(
        {
            "format": "squad",
            "prompt_count": 1,
            "max_new_tokens": 8,
            "environment": {},
            "summary": {},
            "cost_curve": report,
            "divergences": [],
        }
    )
    assert "| k | ms | × plain step | kernel |" in markdown
    assert "| 1 | 50.0 | 1.00 | transposed |" in markdown
    assert "| 2 | 60.0 | 1.20 | onednn |" in markdown
