"""A chi-square goodness-of-fit check shared by the distribution tests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable

import torch

ALPHA = 1e-3


def chi_square_p_value(
    observed: Counter[Hashable], expected_probs: dict[Hashable, float], samples: int
) -> float:
    """P-value of the observed counts under `expected_probs`; outcomes outside its support give 0.

    Cells with expected count under 5 are pooled into one so the chi-square approximation holds.
    """
    if any(outcome not in expected_probs or expected_probs[outcome] == 0.0 for outcome in observed):
        return 0.0
    statistic = 0.0
    cells = 0
    pooled_expected = 0.0
    pooled_observed = 0
    for outcome, probability in expected_probs.items():
        expected = probability * samples
        if expected < 5.0:
            pooled_expected += expected
            pooled_observed += observed.get(outcome, 0)
            continue
        statistic += (observed.get(outcome, 0) - expected) ** 2 / expected
        cells += 1
    if pooled_expected > 0:
        statistic += (pooled_observed - pooled_expected) ** 2 / max(pooled_expected, 1e-12)
        cells += 1
    degrees = max(cells - 1, 1)
    # Survival function of chi-square(df) = regularized upper incomplete gamma Q(df/2, x/2).
    return float(torch.special.gammaincc(torch.tensor(degrees / 2.0), torch.tensor(statistic / 2.0)))
