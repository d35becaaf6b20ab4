"""Simulated experts for learning to defer."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_consistent_length

from sklearn_iclr26.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _num_samples,
    validate_params,
)

__all__ = ["make_experts"]


def _specialties(n_groups, n_experts, coverage, rng):
    """Which groups each expert masters: rotated blocks of a permutation."""
    size = max(1, math.ceil(coverage * n_groups))
    perm = rng.permutation(n_groups)
    mastery = np.zeros((n_experts, n_groups), dtype=bool)
    for j in range(n_experts):
        start = round(j * n_groups / n_experts)
        mastery[j, perm[(start + np.arange(size)) % n_groups]] = True
    return mastery


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "n_experts": [Interval(Integral, 1, None, closed="left")],
        "task": [StrOptions({"auto", "classification", "regression"})],
        "expertise": [StrOptions({"classes", "region"})],
        "coverage": [Interval(Real, 0, 1, closed="right")],
        "accuracy": [Interval(Real, 0, 1, closed="both")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "fees": ["array-like", Interval(Real, 0, None, closed="left"), None],
        "unavailable": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_experts(
    X,
    y,
    *,
    n_experts=4,
    task="auto",
    expertise="classes",
    coverage=0.3,
    accuracy=0.9,
    noise=0.1,
    fees=None,
    unavailable=0.0,
    random_state=None,
):
    """Simulate specialist experts, as in the learning-to-defer literature.

    Each expert masters a share ``coverage`` of the classes (``expertise=
    "classes"``; for regression, of the target's quantile bins) or of the
    input space (``"region"``: k-means cells of ``X``), and is near random
    elsewhere (Mozannar & Sontag, 2020; Verma et al., 2023). Call it once on
    the whole data set, then split: the specialties are drawn once.

    Parameters
    ----------
    X : {array-like, DataFrame} of shape (n_samples, n_features)
        Features; read only for ``expertise="region"`` (then numeric), so a
        raw DataFrame with string columns is fine otherwise.
    y : array-like of shape (n_samples,)
        True targets.
    n_experts : int, default=4
        Number of experts.
    task : {"auto", "classification", "regression"}, default="auto"
        ``"auto"``: a float ``y`` is regression, an integer, boolean or string
        ``y`` classification.
    expertise : {"classes", "region"}, default="classes"
        What experts specialise in.
    coverage : float in (0, 1], default=0.3
        Share of the groups (classes, bins or regions) each expert masters; the
        blocks rotate so that every group is mastered by some expert when
        ``n_experts * coverage >= 1``.
    accuracy : float in [0, 1], default=0.9
        Classification: probability of the right label inside the specialty;
        otherwise a uniformly random label (right with probability
        ``1 / n_classes``).
    noise : float, default=0.1
        Regression: standard deviation of the answer's error inside the
        specialty, as a fraction of ``std(y)``; outside it is ``std(y)``.
    fees : float or array-like of shape (n_experts,), default=None
        Consultation fee of each expert. ``None`` means evenly spaced fees from
        0.02 to 0.1 (times ``std(y)`` for regression), the more expensive
        experts being the more accurate ones (``accuracy`` grows linearly to
        ``accuracy + (1 - accuracy) / 2`` with the fee).
    unavailable : float in [0, 1), default=0.0
        Probability that an expert's answer is missing (``NaN``) for a row.
    random_state : int, RandomState instance or None, default=None
        Seed of the specialties and of the answers.

    Returns
    -------
    answers : ndarray of shape (n_samples, n_experts)
        Expert answers: labels of ``y`` for classification (float with ``NaN``
        for a numeric ``y``, object with ``None`` otherwise), values for
        regression; ``NaN`` (``None``) = unavailable.
    fees : ndarray of shape (n_experts,)
        Consultation fee of each expert.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.datasets import make_experts
    >>> X, y = load_iris(return_X_y=True)
    >>> answers, fees = make_experts(X, y, n_experts=3, random_state=0)
    >>> answers.shape, fees.shape
    ((150, 3), (3,))
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}.")
    check_consistent_length(X, y)
    if expertise == "region":
        X = check_array(X, dtype=np.float64)
    rng = check_random_state(random_state)
    if task == "auto":
        if y.dtype.kind == "f":
            task = "regression"
        elif type_of_target(y) in ("binary", "multiclass"):
            task = "classification"
        else:
            raise ValueError(
                "Could not infer the task from y; pass task='classification' or "
                "task='regression'."
            )
    n = _num_samples(X)
    if task == "regression":
        y = y.astype(np.float64)
        scale = float(np.std(y)) or 1.0
    else:
        scale = 1.0
    if fees is None:
        fees = np.linspace(0.02, 0.1, n_experts) * scale
        quality = np.linspace(0.0, 0.5, n_experts)
    else:
        fees = np.asarray(fees, dtype=np.float64)
        fees = np.full(n_experts, float(fees)) if fees.ndim == 0 else fees
        if fees.shape != (n_experts,) or np.any(fees < 0):
            raise ValueError(
                f"fees must be a non-negative scalar or have {n_experts} values."
            )
        quality = np.zeros(n_experts)

    if task == "classification":
        classes, y_enc = np.unique(y, return_inverse=True)
        n_classes = len(classes)
        if expertise == "classes":
            groups, n_groups = y_enc, n_classes
    else:
        if expertise == "classes":
            n_groups = max(2, min(10, n // 10))
            edges = np.quantile(y, np.linspace(0, 1, n_groups + 1)[1:-1])
            groups = np.searchsorted(edges, y, side="right")
    if expertise == "region":
        from sklearn.cluster import KMeans

        n_groups = max(2, min(10, n // 10))
        groups = KMeans(n_clusters=n_groups, n_init=3, random_state=rng).fit_predict(
            (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        )
    mastery = _specialties(n_groups, n_experts, coverage, rng)
    inside = mastery[:, groups].T  # (n, n_experts)

    if task == "classification":
        p_right = accuracy + (1.0 - accuracy) * quality  # per expert
        right = rng.random_sample((n, n_experts)) < p_right[None, :]
        random_labels = rng.randint(n_classes, size=(n, n_experts))
        index = np.where(inside & right, y_enc[:, None], random_labels)
        if classes.dtype.kind in "biuf":
            answers = classes[index].astype(np.float64)
        else:
            answers = classes[index].astype(object)
    else:
        sd_in = noise * scale * (1.0 - quality)
        sd = np.where(inside, sd_in[None, :], scale)
        answers = y[:, None] + rng.standard_normal((n, n_experts)) * sd
    if unavailable > 0:
        missing = rng.random_sample((n, n_experts)) < unavailable
        answers[missing] = np.nan if answers.dtype.kind == "f" else None
    return answers, fees
