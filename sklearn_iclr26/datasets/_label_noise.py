"""Inject synthetic label noise with a known flip mask."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

import numpy as np
from scipy.stats import truncnorm
from sklearn.utils import check_array, column_or_1d
from sklearn.utils.validation import check_random_state

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["make_label_noise"]

_KINDS = ("symmetric", "class_conditional", "instance", "xia2020")


def _flip_to_other(codes, flip, n_classes, rng):
    noisy = codes.copy()
    idx = np.flatnonzero(flip)
    # a uniformly random *other* class
    shift = rng.randint(1, n_classes, size=idx.size) if n_classes > 2 else 1
    noisy[idx] = (codes[idx] + shift) % n_classes
    return noisy


def _scale_to_mean(weights, rate, cap=0.5):
    """Flip probabilities ``min(c w, cap)`` with mean ``rate`` (bisection on c)."""
    lo, hi = 0.0, 1.0
    while np.mean(np.minimum(hi * weights, cap)) < rate:
        hi *= 2.0
        if hi > 1e12:
            break
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if np.mean(np.minimum(mid * weights, cap)) < rate:
            lo = mid
        else:
            hi = mid
    return np.minimum(hi * weights, cap)


@validate_params(
    {
        "y": ["array-like"],
        "X": ["array-like", None],
        "kind": [StrOptions(set(_KINDS))],
        "rate": [Interval(Real, 0, 1, closed="left"), "array-like"],
        "random_state": ["random_state"],
        "return_flip_proba": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_label_noise(
    y, X=None, *, kind="instance", rate=0.2, random_state=None, return_flip_proba=False
):
    """Corrupt labels with synthetic noise and return the flip mask.

    Read more in the :ref:`User Guide <label_noise>`.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Clean labels (any hashable class values, at least 2 classes).
    X : array-like of shape (n_samples, n_features), default=None
        Features; required by ``kind="instance"`` and ``kind="xia2020"``.
    kind : {"symmetric", "class_conditional", "instance", "xia2020"}, \
            default="instance"
        Noise model. A flipped label moves to a uniformly random other class,
        except for ``"xia2020"``.

        - ``"symmetric"``: every label flips with probability ``rate``.
        - ``"class_conditional"``: class ``k`` (in sorted order) flips with
          probability ``rate * 2 (k + 1) / (n_classes + 1)`` (mean over classes
          ``rate``; binary: ``2/3 rate`` and ``4/3 rate``), or with ``rate[k]``
          when ``rate`` is an array.
        - ``"instance"``: genuinely instance-dependent (IDN). A clean logistic
          regression is fit on standardized ``X``; the flip probability is
          ``min(c exp(-m / sd(m)), 1/2)`` with ``m`` the margin of the true
          class (its logit minus the best other one; ``|logit|`` for binary) and
          ``c`` set so that the mean is ``rate``. Points near the boundary flip
          most.
        - ``"xia2020"``: the part-dependent generator of Xia et al. (2020), used
          by the NDX paper: each row's flip rate is drawn from ``N(rate,
          0.1^2)`` truncated to [0, 1], and a random projection of ``x`` chooses
          the wrong class. With two classes the flip probability therefore does
          **not** depend on ``x``. The truncation lifts the mean flip rate a
          little above ``rate`` for small rates (0.129 at ``rate=0.1``, 0.280
          at 0.28).
    rate : float or array-like of shape (n_classes,), default=0.2
        Mean flip probability, in [0, 1) (below 1/2 for ``"instance"``).
    random_state : int, RandomState instance or None, default=None
        Seed.
    return_flip_proba : bool, default=False
        Also return each row's flip probability.

    Returns
    -------
    y_noisy : ndarray of shape (n_samples,)
        Noisy labels, same classes as ``y``.
    flipped : ndarray of bool of shape (n_samples,)
        ``y_noisy != y``.
    flip_proba : ndarray of shape (n_samples,)
        The flip probability of each row; only if ``return_flip_proba``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.datasets import make_label_noise
    >>> y = np.repeat([0, 1], 500)
    >>> y_noisy, flipped = make_label_noise(
    ...     y, kind="symmetric", rate=0.3, random_state=0)
    >>> bool(abs(flipped.mean() - 0.3) < 0.05)
    True
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}.")
    y = column_or_1d(y, warn=True)
    classes, codes = np.unique(y, return_inverse=True)
    n_classes = len(classes)
    if n_classes < 2:
        raise ValueError("y must contain at least 2 classes to be corrupted.")
    n = y.shape[0]
    rng = check_random_state(random_state)

    rate_arr = np.asarray(rate, dtype=np.float64)
    if rate_arr.ndim == 0:
        if isinstance(rate, bool) or not isinstance(rate, Real):
            raise TypeError(f"rate must be a float, got {rate!r}.")
        if not 0.0 <= float(rate) < 1.0:
            raise ValueError(f"rate must be in [0, 1), got {rate}.")
    elif kind != "class_conditional" or rate_arr.shape != (n_classes,):
        raise ValueError(
            "rate must be a float, or (kind='class_conditional' only) an array of "
            f"shape ({n_classes},)."
        )

    if kind in ("instance", "xia2020"):
        if X is None:
            raise ValueError(f"kind={kind!r} needs the features X.")
        X = check_array(X, dtype=np.float64)
        if X.shape[0] != n:
            raise ValueError(
                f"X has {X.shape[0]} rows but y has {n} labels; they must match."
            )

    if kind == "symmetric":
        proba = np.full(n, float(rate))
        flip = rng.uniform(size=n) < proba
        noisy = _flip_to_other(codes, flip, n_classes, rng)
    elif kind == "class_conditional":
        if rate_arr.ndim == 0:
            per_class = (
                float(rate) * 2.0 * np.arange(1, n_classes + 1) / (n_classes + 1)
            )
        else:
            per_class = rate_arr
        if np.any(per_class < 0) or np.any(per_class >= 1):
            raise ValueError(
                f"The per-class flip rates {per_class} must lie in [0, 1); lower rate."
            )
        proba = per_class[codes]
        flip = rng.uniform(size=n) < proba
        noisy = _flip_to_other(codes, flip, n_classes, rng)
    elif kind == "instance":
        if float(rate) >= 0.5:
            raise ValueError(
                f"kind='instance' needs rate < 1/2 (flip probabilities are capped "
                f"at 1/2), got {rate}."
            )
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        Z = StandardScaler().fit_transform(X)
        ref = LogisticRegression(max_iter=1000).fit(Z, codes)
        scores = ref.decision_function(Z)
        if scores.ndim == 1:
            margin = np.abs(scores)
        else:
            rows = np.arange(n)
            own = scores[rows, codes]
            others = scores.copy()
            others[rows, codes] = -np.inf
            margin = np.abs(own - others.max(axis=1))
        sd = np.std(margin)
        weights = np.exp(-margin / (sd if sd > 0 else 1.0))
        proba = _scale_to_mean(weights, float(rate)) if rate > 0 else np.zeros(n)
        flip = rng.uniform(size=n) < proba
        noisy = _flip_to_other(codes, flip, n_classes, rng)
    else:  # xia2020
        sd = 0.1
        tau = float(rate)
        proba = truncnorm.rvs(
            (0.0 - tau) / sd,
            (1.0 - tau) / sd,
            loc=tau,
            scale=sd,
            size=n,
            random_state=rng,
        )
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        Xn = X / np.where(norms > 0, norms, 1.0)
        W = rng.standard_normal((n_classes, X.shape[1], n_classes))
        noisy = codes.copy()
        for i in range(n):
            logits = Xn[i] @ W[codes[i]]
            logits[codes[i]] = -np.inf
            wrong = np.exp(logits - logits.max())
            p = proba[i] * wrong / wrong.sum()
            p[codes[i]] = 1.0 - proba[i]
            noisy[i] = rng.choice(n_classes, p=p / p.sum())
    y_noisy = classes[noisy]
    flipped = noisy != codes
    if return_flip_proba:
        return y_noisy, flipped, proba
    return y_noisy, flipped
