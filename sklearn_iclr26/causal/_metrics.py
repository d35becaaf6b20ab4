"""Error metrics of CATE estimates against known effects (simulations)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import check_consistent_length, column_or_1d

from sklearn_iclr26.utils._sklearn_compat import validate_params

__all__ = ["ate_error", "pehe_score"]


def _check(tau_true, tau_pred):
    tau_true = column_or_1d(np.asarray(tau_true, dtype=np.float64))
    tau_pred = column_or_1d(np.asarray(tau_pred, dtype=np.float64))
    check_consistent_length(tau_true, tau_pred)
    if len(tau_true) == 0:
        raise ValueError("tau_true is empty.")
    if not (np.all(np.isfinite(tau_true)) and np.all(np.isfinite(tau_pred))):
        raise ValueError("tau_true and tau_pred must be finite.")
    return tau_true, tau_pred


@validate_params(
    {"tau_true": ["array-like"], "tau_pred": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def pehe_score(tau_true, tau_pred):
    """Root precision in estimating heterogeneous effects, sqrt(PEHE).

    ``sqrt(mean((tau_pred - tau_true) ** 2))``; smaller is better. Needs the
    true effects, so it is for simulations and semi-synthetic data (IHDP).

    Parameters
    ----------
    tau_true : array-like of shape (n_samples,)
        True conditional effects.
    tau_pred : array-like of shape (n_samples,)
        Estimated effects.

    Returns
    -------
    score : float
        Root mean squared error of the estimated effects.

    Examples
    --------
    >>> from sklearn_iclr26.causal import pehe_score
    >>> pehe_score([1.0, 2.0], [1.0, 4.0])
    1.414...
    """
    tau_true, tau_pred = _check(tau_true, tau_pred)
    return float(np.sqrt(np.mean((tau_pred - tau_true) ** 2)))


@validate_params(
    {"tau_true": ["array-like"], "tau_pred": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def ate_error(tau_true, tau_pred):
    """Absolute error of the average treatment effect, ``|mean(tau_pred - tau_true)|``.

    Parameters
    ----------
    tau_true : array-like of shape (n_samples,)
        True conditional effects.
    tau_pred : array-like of shape (n_samples,)
        Estimated effects.

    Returns
    -------
    error : float
        Absolute error of the estimated average effect.

    Examples
    --------
    >>> from sklearn_iclr26.causal import ate_error
    >>> ate_error([1.0, 2.0], [1.5, 2.5])
    0.5
    """
    tau_true, tau_pred = _check(tau_true, tau_pred)
    return float(abs(np.mean(tau_pred) - np.mean(tau_true)))
