"""One "stratify when possible" splitter for internal train/calibration splits."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import check_random_state

from sklearn_iclr26.utils._random import seed_from_random_state

__all__ = ["split_indices"]


def _can_stratify(y, n_take, n_rest):
    if y is None:
        return False
    labels, counts = np.unique(y, return_counts=True)
    return counts.min() >= 2 and min(n_take, n_rest) >= labels.shape[0]


def split_indices(n_samples, fractions, *, y=None, random_state=None):
    """Split ``range(n_samples)`` into consecutive random parts.

    Parameters
    ----------
    n_samples : int
        Number of rows.
    fractions : sequence of float or int
        Size of each part but the last (which takes the rest): a float in
        (0, 1) is a fraction of ``n_samples``, an int a number of rows.
    y : array-like of shape (n_samples,), default=None
        Class labels. Each split is stratified by ``y`` when every class can
        appear in both sides (at least two members per class and as many rows
        as classes on each side); plain random otherwise (and for regression,
        ``y=None``).
    random_state : int, RandomState instance or None, default=None
        Seeds the splits.

    Returns
    -------
    parts : list of ndarray of int
        ``len(fractions) + 1`` sorted index arrays that partition the rows.

    Raises
    ------
    ValueError
        If a part would be empty.
    """
    rng = check_random_state(random_state)
    y = None if y is None else np.asarray(y)
    remaining = np.arange(n_samples)
    parts = []
    left = n_samples
    for size in fractions:
        n_take = (
            int(size)
            if isinstance(size, (int, np.integer))
            else int(np.floor(size * n_samples))
        )
        n_take = min(n_take, remaining.shape[0])
        n_rest = remaining.shape[0] - n_take
        if n_take < 1 or n_rest < 1:
            raise ValueError(
                f"Cannot split {n_samples} samples into parts of sizes "
                f"{list(fractions)} and the rest: a part would be empty. Pass more "
                "samples or change the sizes."
            )
        y_rem = None if y is None else y[remaining]
        stratify = y_rem if _can_stratify(y_rem, n_take, n_rest) else None
        taken, rest = train_test_split(
            remaining,
            train_size=n_take,
            random_state=seed_from_random_state(rng),
            stratify=stratify,
        )
        parts.append(np.sort(taken))
        remaining = np.sort(rest)
        left -= n_take
    parts.append(remaining)
    return parts
