"""Rank diagnostics: does a fitted transport map push held-out Y|X to its reference?"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from scipy import stats
from sklearn.utils import Bunch
from sklearn.utils.validation import check_array, check_consistent_length

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["rank_calibration"]

_REFERENCES = ("gaussian", "uniform_ball", "spherical_uniform")


def _norm_cdf(r, d, reference):
    """CDF of ``||U||`` under the reference law in dimension ``d``."""
    r = np.asarray(r, dtype=np.float64)
    if reference == "gaussian":
        return stats.chi2.cdf(r**2, d)
    clipped = np.clip(r, 0.0, 1.0)
    return clipped**d if reference == "uniform_ball" else clipped


def _norm_ppf(p, d, reference):
    """Quantiles of ``||U||`` under the reference law."""
    p = np.asarray(p, dtype=np.float64)
    if reference == "gaussian":
        return np.sqrt(stats.chi2.ppf(p, d))
    return p ** (1.0 / d) if reference == "uniform_ball" else p


def _expected_squared_norm(d, reference):
    if reference == "gaussian":
        return float(d)
    if reference == "uniform_ball":
        return d / (d + 2.0)
    return 1.0 / 3.0  # radius uniform on [0, 1]


def _summary(norms, d, reference, quantiles):
    expected = _expected_squared_norm(d, reference)
    mean_sq = float(np.mean(norms**2))
    ks = stats.kstest(norms, lambda r: _norm_cdf(r, d, reference))
    return {
        "n_samples": int(norms.shape[0]),
        "mean_squared_norm": mean_sq,
        "expected_squared_norm": expected,
        "squared_norm_ratio": mean_sq / expected,
        "ks_statistic": float(ks.statistic),
        "ks_pvalue": float(ks.pvalue),
        "norm_quantiles": np.quantile(norms, quantiles),
        "reference_quantiles": _norm_ppf(quantiles, d, reference),
    }


def _bin_labels(x, n_bins):
    x = np.asarray(x)
    if x.ndim == 1 and x.dtype.kind not in "fc":
        return x  # group labels given as they are
    x = check_array(x, ensure_2d=False, dtype=np.float64, input_name="x")
    if x.ndim == 2:
        # the first principal direction of the standardized covariates
        z = (x - x.mean(axis=0)) / np.maximum(x.std(axis=0), 1e-12)
        _, _, vt = np.linalg.svd(z, full_matrices=False)
        x = z @ vt[0]
    edges = np.quantile(x, np.linspace(0, 1, n_bins + 1)[1:-1])
    return np.searchsorted(edges, x, side="right")


@validate_params(
    {
        "ranks": ["array-like"],
        "reference": [StrOptions(set(_REFERENCES))],
        "x": ["array-like", None],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "quantiles": ["array-like"],
    },
    prefer_skip_nested_validation=True,
)
def rank_calibration(
    ranks, *, reference="gaussian", x=None, n_bins=5, quantiles=(0.5, 0.9, 0.99)
):
    """How well held-out ranks ``R(y | x)`` follow the reference law.

    A transport-based conformal region (``CVQRRegressor``, ``OTCPRegressor``)
    is valid whatever the map; it is *small* only when the map pushes the
    law of ``Y | X = x`` to the reference, i.e. when the held-out rank norms
    ``||R(y | x)||`` follow the reference law of ``||U||``, marginally and
    at every ``x``. This function compares them: the Kolmogorov-Smirnov
    distance to the exact law of ``||U||``, the second moment ``mean
    ||R||^2`` against its expected value (``d`` for the standard Gaussian,
    ``d / (d + 2)`` for the uniform ball, ``1/3`` for the spherical uniform
    of OT-CP), and tail quantiles, over all rows and within bins of ``x``.

    A ratio ``mean ||R||^2 / E ||U||^2`` well above 1 means the map is too
    narrow on new data (overfitted: the conformal threshold then inflates the
    regions); well below 1, too wide. Different ratios across ``x``-bins mean
    the map's spread does not follow the conditional spread, so conditional
    coverage varies with ``x``.

    Parameters
    ----------
    ranks : array-like of shape (n_samples, n_outputs)
        Ranks of held-out pairs, e.g. ``CVQRRegressor.rank(X_test, y_test)``
        (rows never used to fit the map).
    reference : {"gaussian", "uniform_ball", "spherical_uniform"}, \
            default="gaussian"
        Reference law of the map: the standard Gaussian, the uniform law on
        the unit ball, or the spherical uniform (uniform direction, radius
        uniform on [0, 1]).
    x : array-like of shape (n_samples,) or (n_samples, n_features), \
            default=None
        Covariates for the per-bin diagnostics: a numeric column is cut into
        ``n_bins`` quantile bins, a non-numeric 1-D array is used as group
        labels, and a 2-D array is projected on its first principal
        direction (after standardization) before binning. ``None``: no bins.
    n_bins : int, default=5
        Number of quantile bins of ``x``.
    quantiles : array-like of float, default=(0.5, 0.9, 0.99)
        Levels of the tail quantiles compared.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        With keys ``n_samples``, ``mean_squared_norm``,
        ``expected_squared_norm``, ``squared_norm_ratio``, ``ks_statistic``,
        ``ks_pvalue``, ``norm_quantiles``, ``reference_quantiles`` (all rows),
        ``dimension``, ``reference``, ``quantiles``, and ``bins``: a list of
        dicts with the same statistics per bin (plus ``"bin"``, the label),
        or ``None`` without ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import rank_calibration
    >>> rng = np.random.RandomState(0)
    >>> res = rank_calibration(rng.normal(size=(2000, 3)))
    >>> round(res.squared_norm_ratio, 2)
    0.97
    >>> res.ks_statistic < 0.05
    True
    """
    ranks = check_array(ranks, dtype=np.float64, input_name="ranks")
    d = ranks.shape[1]
    quantiles = np.asarray(quantiles, dtype=np.float64).ravel()
    if np.any((quantiles <= 0) | (quantiles >= 1)):
        raise ValueError(f"quantiles must lie in (0, 1), got {quantiles}.")
    norms = np.linalg.norm(ranks, axis=1)
    result = Bunch(
        dimension=d,
        reference=reference,
        quantiles=quantiles,
        **_summary(norms, d, reference, quantiles),
    )
    result.bins = None
    if x is not None:
        check_consistent_length(ranks, x)
        labels = _bin_labels(x, n_bins)
        result.bins = []
        for label in np.unique(labels):
            mask = labels == label
            entry = _summary(norms[mask], d, reference, quantiles)
            entry["bin"] = label
            result.bins.append(entry)
    return result
