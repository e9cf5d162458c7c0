"""``akm train-draft-head SOURCE...``: train a draft head for the configured target model.

The head is written to ``<data_dir>/models/draft-heads/<target>.safetensors`` unless ``--out`` names
another file; ``draft_head: auto`` (the default setting) makes answers and ``akm bench decode`` use it.

Exit status: 0 trained, 2 bad input or a target model that cannot load.
"""

from __future__ import annotations

import argparse

from akm.settings import Settings


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

    from decoding.train_head import run_from_args

    if settings.torch_threads > 0:
        torch.set_num_threads(settings.torch_threads)
    return run_from_args(
        args,
        settings.target_model,
        settings.model_cache_dir,
        device=settings.device,
        program="akm train-draft-head",
    )
