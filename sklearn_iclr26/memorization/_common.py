"""Helpers shared by the memorization estimators."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np


def rademacher_from_accuracy(accuracy, n_labels):
    """Chance-corrected random-label accuracy ``(acc - 1/n) / (1 - 1/n)``.

    For binary labels this is ``2 acc - 1``, the empirical correlation
    ``(1/m) sum_i sigma_i h(x_i)`` of the fitted head with the Rademacher
    signs.
    """
    chance = 1.0 / n_labels
    return (np.asarray(accuracy, dtype=float) - chance) / (1.0 - chance)


class NetView:
    """A net-like object holding another module, for ``forward_module``."""

    def __init__(self, module, device):
        self.module_ = module
        self.device = device
