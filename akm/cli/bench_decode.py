"""``akm bench decode --prompts FILE --format spec-bench|squad --json OUT``: own plain and speculative
decoding against Hugging Face ``generate``, on the configured target model.

Exit status: 0 done, 2 bad input or a target model that cannot load.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from akm.errors import ModelUnavailableError
from akm.runtime import freeze_loaded_objects
from akm.settings import Settings
from decoding.bench.spec import FORMATS, METHODS

EXIT_OK = 0
EXIT_USAGE = 2


def register(bench_subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = bench_subparsers.add_parser(
        "decode",
        help="decoding speed: own plain and speculative decoding vs Hugging Face generate",
        description=(
            "Decode every prompt with every method back to back (greedy, same target weights; own methods "
            "use the prepacked linear layers when prepack_weights is on, Hugging Face methods the stock "
            "ones) and report, per method and category, tokens per second, speedup over own plain decoding "
            "(wall and CPU time), the ratio to hf-pld, time to first token, inter-token latency p50/p95, "
            "acceptance by draft position, and how often each method's tokens equal own plain greedy's; "
            "speculative is also compared with the fastest single drafter. Each category also gets its "
            "copy ceiling: the most any drafts copied from the prompt or the output could speed up own "
            "plain's decoding steps by the measured verify-cost curve, beside each method's speedup over "
            "those steps (the first token and the prefill left out), and its lookup ceiling: the same for prompt "
            "lookup's own proposals, each verified to the right length. Methods: " + ", ".join(METHODS) + "."
        ),
    )
    parser.add_argument("--prompts", type=Path, required=True, metavar="FILE", help="prompts file")
    parser.add_argument(
        "--format",
        dest="prompt_format",
        choices=FORMATS,
        required=True,
        help=(
            "spec-bench: question.jsonl (first turn); squad: SQuAD JSON (grounded prompts: whole paragraph "
            "+ question); answers: SQuAD JSON, prompts built as the answer path builds them (the chosen "
            "sentences + the bare question)"
        ),
    )
    parser.add_argument(
        "--per-category",
        type=int,
        metavar="N",
        help="spec-bench: the first N prompts of each category; squad: the first N questions",
    )
    parser.add_argument("--max-new-tokens", type=int, default=128, metavar="N", help="default 128")
    parser.add_argument(
        "--methods",
        nargs="+",
        metavar="METHOD",
        help=f"subset of {' '.join(METHODS)} (plain always runs: it is the baseline); default: all that apply",
    )
    parser.add_argument("--max-draft", type=int, default=16, metavar="K", help="longest draft verified (16)")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        metavar="N",
        help=(
            "rounds of every method per prompt; each method keeps its fastest round (load only adds "
            "time), and every round starts from the same learnt acceptance statistics (default 1)"
        ),
    )
    parser.add_argument(
        "--draft-head",
        metavar="FILE",
        help=(
            "trained draft head for draft-head, speculative and speculative-chain (default: settings.draft_head; "
            "'auto' is the head `akm train-draft-head` wrote for the target); without one, those methods are left out. "
            "The answer store written beside the head (FILE's stem + .answers.safetensors) joins the composites, "
            "without the answers to the prompts measured; 'off' leaves out both"
        ),
    )
    parser.add_argument(
        "--self-draft-layers",
        type=int,
        default=8,
        metavar="N",
        help="self-speculative: draft with the target's first N layers and its LM head (8)",
    )
    parser.add_argument(
        "--json", type=Path, dest="json_out", required=True, metavar="OUT", help="report file"
    )
    parser.add_argument("--markdown", type=Path, dest="markdown_out", metavar="OUT", help="Markdown tables")
    parser.add_argument("--plot", type=Path, dest="plot_out", metavar="OUT.png", help="PNG figure")
    parser.set_defaults(handler=run_bench_decode)


def _fail(message: str) -> int:
    print(f"akm bench decode: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_bench_decode(args: argparse.Namespace, settings: Settings) -> int:
    # torch and transformers load only when the benchmark runs, so `akm --help` stays fast.
    import torch

    from decoding.bench.decode import (
        check_methods,
        default_methods,
        format_markdown,
        read_prompts,
        run_decode_benchmark,
        write_json,
        write_plot,
    )
    from decoding.bench.errors import BenchmarkInputError, require_bench_extra
    from decoding.draft_head import DraftHeadFileError, DraftHeadMismatchError, load_draft_head
    from decoding.models import ModelLoadError, load_target

    if args.per_category is not None and args.per_category < 1:
        return _fail("--per-category must be a positive number")
    if args.max_new_tokens < 1:
        return _fail("--max-new-tokens must be at least 1")
    if args.max_draft < 1:
        return _fail("--max-draft must be at least 1")
    if args.self_draft_layers < 1:
        return _fail("--self-draft-layers must be at least 1")
    if args.repeats < 1:
        return _fail("--repeats must be at least 1")
    head_choice = args.draft_head if args.draft_head is not None else settings.draft_head
    try:
        if args.plot_out is not None:
            require_bench_extra("matplotlib", "--plot")
        head_file = _head_file(head_choice, settings)
        store_file = _store_file(head_choice, settings)
        methods = check_methods(
            args.methods or default_methods(args.prompt_format, head_file is not None),
            args.prompt_format,
            head_file is not None,
        )
        if args.prompt_format == "answers":
            prompts = _answer_prompts(args.prompts, args.per_category, settings)
        else:
            prompts = read_prompts(args.prompts, args.prompt_format, args.per_category)
    except (BenchmarkInputError, ModelUnavailableError) as error:
        return _fail(str(error))
    if settings.torch_threads > 0:
        torch.set_num_threads(settings.torch_threads)
    try:
        loaded = load_target(
            settings.target_model,
            settings.model_cache_dir,
            device=settings.device,
            dtype=settings.dtype,
            prepack=settings.prepack_weights,
        )
        # Hugging Face baselines run on the model as transformers loads it, not on the packed copy.
        reference = None
        if loaded.packed_layers and any(method.startswith("hf-") for method in methods):
            reference = load_target(
                settings.target_model,
                settings.model_cache_dir,
                device=settings.device,
                dtype=settings.dtype,
                prepack=False,
            ).model
        head = load_draft_head(head_file, loaded.model) if head_file is not None else None
    except (ModelLoadError, DraftHeadFileError, DraftHeadMismatchError) as error:
        return _fail(str(error))
    freeze_loaded_objects()
    print(
        f"akm bench decode: {len(prompts)} prompts × {len(methods)} methods ({', '.join(methods)}) on "
        f"{loaded.name}, {torch.get_num_threads()} threads",
        file=sys.stderr,
    )
    try:
        report = run_decode_benchmark(
            loaded.model,
            loaded.tokenizer,
            prompts,
            prompt_format=args.prompt_format,
            prompts_file=args.prompts,
            methods=methods,
            max_new_tokens=args.max_new_tokens,
            model_name=loaded.name,
            max_draft=args.max_draft,
            cost_cache_dir=settings.model_cache_dir,
            on_partial_report=lambda partial: write_json(partial, args.json_out),
            reference_model=reference,
            draft_head=head,
            draft_head_file=head_file,
            self_draft_layers=args.self_draft_layers,
            repeats=args.repeats,
            answer_store_file=store_file,
        )
    except (BenchmarkInputError, ValueError) as error:
        return _fail(str(error))
    write_json(report, args.json_out)
    markdown = format_markdown(report)
    if args.markdown_out is not None:
        args.markdown_out.parent.mkdir(parents=True, exist_ok=True)
        args.markdown_out.write_text(markdown, encoding="utf-8")
    if args.plot_out is not None:
        write_plot(report, args.plot_out)
    print(markdown)
    return EXIT_OK


def _head_file(choice: str, settings: Settings) -> Path | None:
    """The draft head file to use: None for "off", or "auto" when no head was trained for the target.

    "auto" looks for the head of the bundled target's cache name, or of a local model directory's name.
    """
    from decoding.bench.errors import BenchmarkInputError
    from decoding.draft_head import default_head_path
    from decoding.models import target_name

    choice = choice.strip()
    if choice.lower() in ("", "off", "none"):
        return None
    if choice != "auto":
        path = Path(choice)
        if not path.is_file():
            raise BenchmarkInputError(f"no draft head file at {path}")
        return path
    name = target_name(settings.target_model)
    path = default_head_path(settings.model_cache_dir, name)
    if not path.is_file():
        print(
            f"akm bench decode: no draft head trained for {name} ({path}); the draft-head methods are left out",
            file=sys.stderr,
        )
        return None
    return path


def _store_file(choice: str, settings: Settings) -> Path | None:
    """The answer store `akm train-draft-head` wrote beside the chosen head, when there is one."""
    from decoding.answer_store import answer_store_path
    from decoding.draft_head import default_head_path
    from decoding.models import target_name

    choice = choice.strip()
    if choice.lower() in ("", "off", "none"):
        return None
    head = default_head_path(settings.model_cache_dir, target_name(settings.target_model))
    path = answer_store_path(head if choice == "auto" else Path(choice))
    return path if path.is_file() else None


def _answer_prompts(path: Path, limit: int | None, settings: Settings) -> list[Any]:
    """The answer path's prompts (selection with the configured embedder, then build_prompt)."""
    from akm.bench.answer_prompts import answer_prompts
    from akm.runtime import Runtime
    from decoding.bench.decode import BenchPrompt

    embedder = Runtime.from_settings(settings).embedder
    return [
        BenchPrompt(prompt.prompt_id, "answers", prompt.messages, prompt.passages)
        for prompt in answer_prompts(path, limit, embedder)
    ]
