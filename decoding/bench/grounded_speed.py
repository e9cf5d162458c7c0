"""Side-by-side speed of plain, speculative and Hugging Face greedy decoding on grounded prompts.

    python -m decoding.bench.grounded_speed --cache-root DATA/models [--max-new-tokens 128] [--repeats 2]

Prints the measured verify-cost curve and one row per prompt and method, and writes JSON to --json.
The runs of each prompt are interleaved so machine load affects all methods alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from decoding.drafters import CompositeDrafter, EvidenceDrafter, PromptLookupDrafter, SuccessorDrafter
from decoding.models import LoadedModel, chat_prompt_ids, load_smollm2
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate


@dataclass(frozen=True)
class GroundedPrompt:
    name: str
    context: str
    question: str


PROMPTS = (
    GroundedPrompt(
        name="eiffel_quote",
        context=(
            "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
            "It is named after the engineer Gustave Eiffel, whose company designed and built the tower "
            "from 1887 to 1889. Locally nicknamed 'La dame de fer' (French for 'Iron Lady'), it was "
            "constructed as the centrepiece of the 1889 World's Fair. Although initially criticised by "
            "some of France's leading artists and intellectuals for its design, it has since become a "
            "global cultural icon of France and one of the most recognisable structures in the world."
        ),
        question="Who designed and built the Eiffel Tower, and why was it constructed? Answer from the context.",
    ),
    GroundedPrompt(
        name="sqlite_summary",
        context=(
            "SQLite is a database engine written in the C programming language. It is not a standalone "
            "application; rather, it is a library that software developers embed in their applications. "
            "As such, it belongs to the family of embedded databases. It is the most widely deployed "
            "database engine, as it is used by several of the top web browsers, operating systems, mobile "
            "phones, and other embedded systems. SQLite stores the entire database as a single "
            "cross-platform file on a host machine, and it locks the whole database file during writing."
        ),
        question="What is SQLite and how does it store a database? Use the context.",
    ),
    GroundedPrompt(
        name="photosynthesis",
        context=(
            "Photosynthesis is a process used by plants and other organisms to convert light energy into "
            "chemical energy that, through cellular respiration, can later be released to fuel the "
            "organism's activities. Some of this chemical energy is stored in carbohydrate molecules, such "
            "as sugars and starches, which are synthesized from carbon dioxide and water. Most plants, "
            "algae, and cyanobacteria perform photosynthesis; such organisms are called photoautotrophs."
        ),
        question="Explain what photosynthesis does, according to the context.",
    ),
)


def prompt_ids(loaded: LoadedModel, prompt: GroundedPrompt) -> list[int]:
    content = f"Context:\n{prompt.context}\n\nQuestion: {prompt.question}"
    return chat_prompt_ids(loaded.tokenizer, [{"role": "user", "content": content}])


def evidence_passages(loaded: LoadedModel, prompt: GroundedPrompt) -> list[list[int]]:
    encoded = loaded.tokenizer(prompt.context, add_special_tokens=False)["input_ids"]
    return [[int(token) for token in encoded]]


@torch.inference_mode()
def hf_generate(loaded: LoadedModel, ids: list[int], max_new_tokens: int) -> tuple[list[int], float]:
    started = time.perf_counter()
    output = loaded.model.generate(  # type: ignore[operator]
        torch.tensor([ids]), max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=2
    )
    return [int(token) for token in output[0, len(ids) :].tolist()], time.perf_counter() - started


def first_divergence(reference: list[int], other: list[int]) -> int | None:
    for index, (expected, actual) in enumerate(zip(reference, other, strict=False)):
        if expected != actual:
            return index
    return None if len(reference) == len(other) else min(len(reference), len(other))


def run(cache_root: Path, max_new_tokens: int, repeats: int, max_draft: int) -> dict[str, Any]:
    loaded = load_smollm2(cache_root)
    model, tokenizer = loaded.model, loaded.tokenizer
    config = DecodeConfig(max_draft=max_draft, cost_cache_dir=cache_root)
    probe = SpeculativeDecoder(model, tokenizer, PromptLookupDrafter(), config)
    curve = probe.cost_curve
    report: dict[str, Any] = {
        "threads": torch.get_num_threads(),
        "verify_cost_ms": [round(seconds * 1000, 1) for seconds in curve.seconds],
        "verify_cost_ratio": [round(curve.ratio(k), 2) for k in range(curve.max_draft + 1)],
        "prompts": [],
    }
    print("verify cost ms by k:", report["verify_cost_ms"], file=sys.stderr)
    for prompt in PROMPTS:
        ids = prompt_ids(loaded, prompt)
        drafter = CompositeDrafter(
            [EvidenceDrafter(evidence_passages(loaded, prompt)), PromptLookupDrafter(), SuccessorDrafter()]
        )
        decoder = SpeculativeDecoder(model, tokenizer, drafter, config)
        times: dict[str, list[float]] = {"plain": [], "speculative": [], "hf_generate": []}
        for _ in range(repeats):
            plain = plain_generate(model, tokenizer, ids, max_new_tokens)
            times["plain"].append(plain.stats.wall_s)
            speculative = decoder.generate(ids, max_new_tokens)
            times["speculative"].append(speculative.stats.wall_s)
            hf_tokens, hf_s = hf_generate(loaded, ids, max_new_tokens)
            times["hf_generate"].append(hf_s)
        tokens = len(plain.token_ids)
        median = {name: statistics.median(values) for name, values in times.items()}
        row: dict[str, Any] = {
            "prompt": prompt.name,
            "prompt_tokens": len(ids),
            "new_tokens": tokens,
            "tokens_per_s": {name: tokens / seconds for name, seconds in median.items()},
            "speedup_vs_plain": median["plain"] / median["speculative"],
            "plain_vs_hf": median["hf_generate"] / median["plain"],
            "speculative_equals_plain": speculative.token_ids == plain.token_ids,
            "first_divergence": first_divergence(plain.token_ids, speculative.token_ids),
            "hf_equals_plain": hf_tokens[: len(plain.token_ids)] == plain.token_ids,
            "speculative_stats": speculative.stats.to_dict(),
            "plain_stats": plain.stats.to_dict(),
        }
        report["prompts"].append(row)
        print(
            f"{prompt.name:16} tokens {tokens:4}  plain {row['tokens_per_s']['plain']:6.1f}/s  "
            f"speculative {row['tokens_per_s']['speculative']:6.1f}/s  hf {row['tokens_per_s']['hf_generate']:6.1f}/s  "
            f"speedup {row['speedup_vs_plain']:.2f}x  calls {speculative.stats.target_calls}  "
            f"equal {row['speculative_equals_plain']}",
            file=sys.stderr,
        )
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--cache-root", type=Path, required=True, help="model cache directory (data_dir/models)"
    )
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--max-draft", type=int, default=16)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = leave as is)")
    parser.add_argument("--json", type=Path, default=None, help="write the full report here")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    report = run(args.cache_root, args.max_new_tokens, args.repeats, args.max_draft)
    text = json.dumps(report, indent=2)
    if args.json is not None:
        args.json.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
