"""Risk control of a decision rule: conformal risk control and Learn-then-Test.

Foundation for any family that certifies a threshold (selective
classification, deferral): public functions re-exported from
:mod:`sklearn_iclr26.metrics`. A *parameter grid* ``lambda_1, ..., lambda_m``
indexes the columns of a loss matrix ``losses[i, j] = L_i(lambda_j)`` computed
on calibration rows.

References: A. N. Angelopoulos, S. Bates, A. Fisch, L. Lei, T. Schuster,
"Conformal Risk Control", ICLR 2024; A. N. Angelopoulos, S. Bates, E. J.
Candès, M. I. Jordan, L. Lei, "Learn then Test: Calibrating Predictive
Algorithms to Achieve Risk Control", Annals of Applied Statistics 2025
(arXiv:2110.01052). The Hoeffding-Bentkus p-values and the family-wise
procedures equal MAPIE 1.6's (``mapie.risk_control``), see the tests.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from scipy.stats import binom
from sklearn.utils import Bunch, check_array

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = [
    "conformal_risk_control",
    "fwer_control",
    "hoeffding_bentkus_p_values",
    "learn_then_test",
    "wsr_p_values",
]


def _check_losses(losses, upper=1.0, name="losses"):
    losses = check_array(losses, dtype=np.float64, ensure_min_samples=1)
    if np.any(losses < 0) or np.any(losses > upper):
        raise ValueError(
            f"{name} must lie in [0, {upper:g}] (a bounded loss); got values in "
            f"[{losses.min():g}, {losses.max():g}]."
        )
    return losses


@validate_params(
    {
        "risks": ["array-like"],
        "n_samples": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "target_risk": [Interval(Real, 0, 1, closed="neither")],
        "binary_loss": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def hoeffding_bentkus_p_values(risks, n_samples, target_risk, *, binary_loss=False):
    """Compute Hoeffding-Bentkus p-values of ``H_j: risk(lambda_j) > target``.

    For each parameter, the p-value of the null hypothesis that the true
    risk exceeds ``target_risk``, from the empirical risk ``risks[j]`` (the
    mean of ``n_samples`` losses in [0, 1]): the smaller of Hoeffding's
    ``exp(-n h(min(R, a), a))`` (``h`` the Bernoulli relative entropy) and
    Bentkus' ``e * P(Binomial(n, a) <= ceil(n R))`` (without the factor
    ``e`` when the loss is binary), as in Learn-then-Test (Proposition 3).

    **Guarantee.** If the ``n`` losses of each parameter are independent,
    identically distributed and in [0, 1], the p-value is super-uniform
    under its null: ``P(p_j <= u) <= u`` for every ``u`` when
    ``risk(lambda_j) > target_risk``.

    Parameters
    ----------
    risks : array-like of shape (n_params,)
        Empirical risks (mean losses) of the parameters, in [0, 1].
    n_samples : int or array-like of shape (n_params,)
        Number of losses averaged in each risk (per parameter for a
        conditional risk, e.g. the error among accepted rows).
    target_risk : float in (0, 1)
        The risk level ``alpha`` tested.
    binary_loss : bool, default=False
        Whether the loss takes the values 0 and 1 only (tighter Bentkus term).

    Returns
    -------
    p_values : ndarray of shape (n_params,)
        One p-value per parameter.

    Examples
    --------
    >>> from sklearn_iclr26.metrics import hoeffding_bentkus_p_values
    >>> p = hoeffding_bentkus_p_values([0.02, 0.08, 0.2], 1000, 0.1)
    >>> bool(p[0] < 1e-6), bool(p[2] == 1.0)
    (True, True)
    """
    risks = check_array(risks, ensure_2d=False, dtype=np.float64).ravel()
    if np.any(risks < 0) or np.any(risks > 1):
        raise ValueError("risks must lie in [0, 1].")
    n = np.broadcast_to(np.asarray(n_samples, dtype=np.float64), risks.shape)
    if np.any(n < 1):
        raise ValueError("n_samples must be at least 1 for every parameter.")
    a = float(target_risk)
    r = np.minimum(risks, a)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(r > 0, r * np.log(np.where(r > 0, r, 1.0) / a), 0.0)
        second = (1 - r) * np.log((1 - r) / (1 - a))
    hoeffding = np.exp(-n * (first + second))
    factor = 1.0 if binary_loss else np.e
    bentkus = factor * binom.cdf(np.ceil(n * risks), n, a)
    return np.minimum(hoeffding, bentkus)


@validate_params(
    {
        "losses": ["array-like"],
        "target_risk": [Interval(Real, 0, 1, closed="neither")],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def wsr_p_values(losses, target_risk, *, confidence_level=0.9):
    """Compute Waudby-Smith-Ramdas p-values of ``H_j: risk(lambda_j) > target``.

    ``p_j = min(1, 1 / max_i K_i)`` with the capital process
    ``K_i = prod_{l <= i} (1 - nu_l (L_l - target_risk))`` over the rows in
    their given order, bets ``nu_l = min(1, sqrt(2 log(1/delta) / (n
    sigma_{l-1}^2)))`` and the running variance estimate of Waudby-Smith and
    Ramdas (``sigma_0^2 = 1/4``), ``delta = 1 - confidence_level``: the
    p-value of Learn-then-Test (Proposition 5).

    **Guarantee.** If the rows (losses in [0, 1]) are independent and
    identically distributed, ``K`` is a nonnegative supermartingale under
    the null, so (Ville's inequality) ``P(p_j <= u) <= u`` for every ``u``
    when ``risk(lambda_j) > target_risk``. The bets are tuned for
    ``delta``; the p-value is valid at every level, sharpest at ``delta``.
    Shuffle the rows first if their order is not random.

    Parameters
    ----------
    losses : array-like of shape (n_samples, n_params)
        Losses in [0, 1] of each calibration row under each parameter.
    target_risk : float in (0, 1)
        The risk level ``alpha`` tested.
    confidence_level : float in (0, 1), default=0.9
        ``1 - delta``, the level the bets are tuned for.

    Returns
    -------
    p_values : ndarray of shape (n_params,)
        One p-value per parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import wsr_p_values
    >>> rng = np.random.RandomState(0)
    >>> losses = (rng.uniform(size=(2000, 2)) < [0.02, 0.3]).astype(float)
    >>> p = wsr_p_values(losses, 0.1)
    >>> bool(p[0] < 0.01), bool(p[1] > 0.5)
    (True, True)
    """
    losses = _check_losses(losses)
    n = losses.shape[0]
    delta = 1.0 - float(confidence_level)
    steps = np.arange(1, n + 1)[:, None]
    mu = (0.5 + np.cumsum(losses, axis=0)) / (steps + 1)
    sigma2 = (0.25 + np.cumsum((losses - mu) ** 2, axis=0)) / (steps + 1)
    sigma2 = np.vstack([np.full((1, losses.shape[1]), 0.25), sigma2[:-1]])
    nu = np.minimum(1.0, np.sqrt(2 * np.log(1 / delta) / (n * sigma2)))
    factors = 1.0 - nu * (losses - float(target_risk))
    with np.errstate(divide="ignore"):
        log_capital = np.cumsum(np.log(np.maximum(factors, 0.0)), axis=0)
    return np.minimum(1.0, np.exp(-np.max(log_capital, axis=0)))


@validate_params(
    {
        "p_values": ["array-like"],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "method": [StrOptions({"fixed_sequence", "bonferroni"})],
    },
    prefer_skip_nested_validation=True,
)
def fwer_control(p_values, confidence_level=0.9, *, method="fixed_sequence"):
    """Reject hypotheses with a family-wise error rate of at most ``1 - level``.

    ``"fixed_sequence"``: test the hypotheses in the given order, each at
    level ``delta = 1 - confidence_level``, and stop at the first one not
    rejected (order the grid from the safest parameter, e.g. the most
    conservative threshold, first). ``"bonferroni"``: reject every ``p_j <=
    delta / n_params``.

    **Guarantee.** With valid p-values (super-uniform under their nulls),
    the probability that any true null is rejected is at most ``delta``,
    for any dependence between the p-values; for ``"fixed_sequence"`` the
    order must be fixed without looking at the calibration data.

    Parameters
    ----------
    p_values : array-like of shape (n_params,)
        One p-value per hypothesis, in the testing order.
    confidence_level : float in (0, 1), default=0.9
        ``1 -`` the family-wise error rate.
    method : {"fixed_sequence", "bonferroni"}, default="fixed_sequence"
        The family-wise procedure.

    Returns
    -------
    rejected : ndarray of int
        Sorted indices of the rejected hypotheses (the certified
        parameters).

    Examples
    --------
    >>> from sklearn_iclr26.metrics import fwer_control
    >>> fwer_control([0.001, 0.02, 0.5, 0.01], 0.9)
    array([0, 1])
    >>> fwer_control([0.001, 0.02, 0.5, 0.01], 0.9, method="bonferroni")
    array([0, 1, 3])
    """
    p = check_array(p_values, ensure_2d=False, dtype=np.float64).ravel()
    delta = 1.0 - float(confidence_level)
    if method == "bonferroni":
        return np.flatnonzero(p <= delta / len(p))
    failed = np.flatnonzero(p > delta)
    stop = failed[0] if failed.size else len(p)
    return np.arange(stop)


@validate_params(
    {
        "losses": ["array-like"],
        "target_risk": [Interval(Real, 0, 1, closed="neither")],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "p_values": [StrOptions({"hoeffding_bentkus", "wsr"})],
        "method": [StrOptions({"fixed_sequence", "bonferroni"})],
        "binary_loss": ["boolean", StrOptions({"auto"})],
    },
    prefer_skip_nested_validation=True,
)
def learn_then_test(
    losses,
    target_risk,
    *,
    confidence_level=0.9,
    p_values="hoeffding_bentkus",
    method="fixed_sequence",
    binary_loss="auto",
):
    """Certify the parameters whose risk is below ``target_risk`` (Learn-then-Test).

    Computes one p-value per parameter (column of ``losses``) for
    ``H_j: risk(lambda_j) > target_risk`` and keeps the hypotheses a
    family-wise procedure rejects.

    **Guarantee.** If the calibration rows and a test row are independent
    and identically distributed and the losses lie in [0, 1], then with
    probability at least ``confidence_level`` over the calibration rows,
    *every* returned parameter has risk at most ``target_risk``:
    ``P(sup_{j in valid} R(lambda_j) <= target_risk) >= confidence_level``.
    No monotonicity of the loss in the parameter is needed. With
    ``method="fixed_sequence"`` the columns must be ordered (without the
    calibration data) from the parameter most likely to be safe.

    Parameters
    ----------
    losses : array-like of shape (n_samples, n_params)
        Losses in [0, 1] of each calibration row under each parameter.
    target_risk : float in (0, 1)
        The risk level ``alpha``.
    confidence_level : float in (0, 1), default=0.9
        ``1 - delta``.
    p_values : {"hoeffding_bentkus", "wsr"}, default="hoeffding_bentkus"
        :func:`hoeffding_bentkus_p_values` or :func:`wsr_p_values`.
    method : {"fixed_sequence", "bonferroni"}, default="fixed_sequence"
        The family-wise procedure (:func:`fwer_control`).
    binary_loss : bool or "auto", default="auto"
        Whether the losses are 0/1 (Hoeffding-Bentkus only); ``"auto"``
        checks the values.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``valid_index`` (sorted indices of the certified parameters; empty
        when none is certified), ``p_values`` and ``risks`` (empirical mean
        loss per parameter).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import learn_then_test
    >>> rng = np.random.RandomState(0)
    >>> # column j: a loss with risk 0.02 * (j + 1), safest first
    >>> risk = 0.02 * np.arange(1, 7)
    >>> losses = (rng.uniform(size=(3000, 6)) < risk).astype(float)
    >>> learn_then_test(losses, 0.1).valid_index
    array([0, 1, 2, 3])
    """
    losses = _check_losses(losses)
    n = losses.shape[0]
    risks = losses.mean(axis=0)
    if p_values == "wsr":
        p = wsr_p_values(losses, target_risk, confidence_level=confidence_level)
    else:
        if binary_loss == "auto":
            binary_loss = bool(np.all((losses == 0) | (losses == 1)))
        p = hoeffding_bentkus_p_values(
            risks, n, target_risk, binary_loss=bool(binary_loss)
        )
    valid = fwer_control(p, confidence_level, method=method)
    return Bunch(valid_index=valid, p_values=p, risks=risks)


@validate_params(
    {
        "losses": ["array-like"],
        "target_risk": [Interval(Real, 0, None, closed="neither")],
        "loss_bound": [Interval(Real, 0, None, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def conformal_risk_control(losses, target_risk, *, loss_bound=1.0):
    """Choose the first parameter whose corrected risk is <= target (CRC).

    The columns of ``losses`` are the parameters in increasing order, and
    each row's loss must be non-increasing along them (e.g. a set that grows
    with ``lambda``). Returns the index of
    ``lambda_hat = inf{lambda_j : n / (n + 1) * R_n(lambda_j) + B / (n + 1)
    <= target_risk}`` (``R_n`` the mean loss, ``B = loss_bound``).

    **Guarantee.** If the calibration rows and a test row are exchangeable,
    the losses lie in [0, B], are non-increasing in ``lambda``, and the last
    parameter's loss is at most ``target_risk`` on every row, then the
    expected test loss at ``lambda_hat`` is at most ``target_risk``:
    ``E[L_{n+1}(lambda_hat)] <= target_risk`` (in expectation over the
    calibration and test rows; not with high probability, for which see
    :func:`learn_then_test`).

    Parameters
    ----------
    losses : array-like of shape (n_samples, n_params)
        Losses in [0, loss_bound], non-increasing along each row.
    target_risk : float > 0
        The risk level ``alpha``.
    loss_bound : float > 0, default=1.0
        The bound ``B`` of the loss.

    Returns
    -------
    index : int
        Column index of ``lambda_hat``.

    Raises
    ------
    ValueError
        When the losses are not monotone, or no parameter reaches the target
        (then the guarantee's last condition fails: extend the grid).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import conformal_risk_control
    >>> scores = np.random.RandomState(0).uniform(size=500)
    >>> grid = np.linspace(0, 1, 101)
    >>> losses = (scores[:, None] > grid[None, :]).astype(float)  # miscoverage
    >>> float(grid[conformal_risk_control(losses, 0.1)])
    0.93
    """
    B = float(loss_bound)
    losses = _check_losses(losses, upper=B)
    if np.any(np.diff(losses, axis=1) > 1e-12 * B):
        raise ValueError(
            "conformal_risk_control needs losses that are non-increasing along "
            "each row (columns = parameters in increasing order); use "
            "learn_then_test for a non-monotone loss."
        )
    n = losses.shape[0]
    corrected = n / (n + 1) * losses.mean(axis=0) + B / (n + 1)
    passing = np.flatnonzero(corrected <= float(target_risk))
    if passing.size == 0:
        raise ValueError(
            f"No parameter controls the risk at {target_risk:g}: the smallest "
            f"corrected risk is {corrected.min():g} (n={n}, loss_bound={B:g}). "
            "Extend the grid or use more calibration rows."
        )
    return int(passing[0])
