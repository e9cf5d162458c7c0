"""Self-speculative drafting: the target's first layers, its final norm and its LM head as the draft model.

No training and no second set of weights: the draft model shares every tensor with the target, so
it costs no memory, only its forward passes (about layers/total of a target step, plus the LM head).
It is the untrained baseline a trained draft head must beat.
"""

from __future__ import annotations

import copy

from torch import nn
from transformers import PreTrainedModel

from decoding.drafters import ModelDrafter

SELF_DRAFT_NAME = "self_draft"
DEFAULT_SELF_DRAFT_LAYERS = 8


def early_exit_model(model: PreTrainedModel, layers: int) -> PreTrainedModel:
    """A causal LM that runs the first `layers` decoder layers of `model` and then its norm and LM head.

    The returned model shares `model`'s modules (shallow copies of the containers only).
    """
    decoder: nn.Module = model.get_decoder()  # type: ignore[no-untyped-call]
    stack = getattr(decoder, "layers", None)
    if not isinstance(stack, nn.ModuleList):
        raise ValueError(f"{type(model).__name__} has no decoder layer list to take an early exit from")
    total = len(stack)
    if not 1 <= layers < total:
        raise ValueError(f"an early exit needs 1 <= layers < {total}, got {layers}")
    draft = copy.copy(model)
    draft_decoder = copy.copy(decoder)
    # nn.Module keeps submodules in _modules: copy that dict so the swaps below leave `model` intact.
    draft._modules = dict(model._modules)
    draft_decoder._modules = dict(decoder._modules)
    draft_decoder.layers = nn.ModuleList(list(stack)[:layers])
    draft.config = copy.deepcopy(model.config)
    draft.config.num_hidden_layers = layers
    if hasattr(draft.config, "layer_types") and draft.config.layer_types is not None:
        draft.config.layer_types = list(draft.config.layer_types)[:layers]
    setattr(draft_decoder, "config", draft.config)  # noqa: B010 (the module attribute, not a field)
    attribute = next(name for name, module in model._modules.items() if module is decoder)
    setattr(draft, attribute, draft_decoder)
    return draft


def self_drafter(model: PreTrainedModel, layers: int = DEFAULT_SELF_DRAFT_LAYERS) -> ModelDrafter:
    """A drafter that drafts with the target's first `layers` layers (see `early_exit_model`)."""
    return ModelDrafter(
        early_exit_model(model, layers),
        target_vocab_size=int(model.config.vocab_size),
        name=SELF_DRAFT_NAME,
    )
