"""``akm train-draft-head SOURCE...``: train a draft head for the configured target model.

The head is written to ``<data_dir>/models/draft-heads/<target>.safetensors`` unless ``--out`` names
another file; ``draft_head: auto`` (the default setting) makes answers and ``akm bench decode`` use it.

Exit status: 0 trained, 2 bad input or a target model that cannot load.
"""

from __future__ import annotations

import argparse
import json
import sys

from akm.settings import Settings

EXIT_OK = 0
EXIT_USAGE = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from decoding.head_options import DESCRIPTION, add_arguments

    parser = subparsers.add_parser(
        "train-draft-head",
        help="train a draft head (feature drafting) for the target model on local text",
        description=DESCRIPTION,
    )
    add_arguments(parser)
    parser.set_defaults(handler=run_train_head)


def run_train_head(args: argparse.Namespace, settings: Settings) -> int:
    # torch loads only when training runs, so `akm --help` stays fast.
    import torch

    from decoding.draft_head import default_head_path
    from decoding.models import ModelLoadError, load_target
    from decoding.train_head import TrainingInputError, config_from_args, sources_from_args, train_draft_head

    try:
        config = config_from_args(args)
        sources = sources_from_args(args)
    except (TrainingInputError, ValueError) as error:
        print(f"akm train-draft-head: {error}", file=sys.stderr)
        return EXIT_USAGE
    if settings.torch_threads > 0:
        torch.set_num_threads(settings.torch_threads)
    try:
        loaded = load_target(
            settings.target_model, settings.model_cache_dir, device=settings.device, dtype="float32"
        )
    except ModelLoadError as error:
        print(f"akm train-draft-head: {error}", file=sys.stderr)
        return EXIT_USAGE
    out = args.out or default_head_path(settings.model_cache_dir, loaded.name)
    work = args.work_dir or out.with_name(out.stem + ".work")
    try:
        report = train_draft_head(
            loaded.model,
            loaded.tokenizer,
            loaded.name,
            sources,
            work_dir=work,
            out_path=out,
            config=config,
            show_progress=not args.no_progress,
        )
    except TrainingInputError as error:
        print(f"akm train-draft-head: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(report.to_dict(), indent=2))
    return EXIT_OK
