"""The corrected loss of the instance-only-dependent noise model, in numpy.

Pure functions, shared by the LightGBM objective, the reweighting mode, the
tests and the documentation. Notation (binary, raw score ``h``, observed label
``y_noisy`` in {0, 1}): ``s = 2 y_noisy - 1``, ``t = s h``, ``u = sigmoid(t)``
(the model's probability of the *observed* label), ``rho`` the per-instance
flip rate, logistic base loss ``l_plus = -log u`` and ``l_minus = -log(1 - u)``.

The regularized corrected loss (Eq. 5 of the paper) is::

    L = u (1 - u - rho) l_plus - rho (1 - u) l_minus - lam (u (1 - u) - rho)
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy.special import expit, ndtr

__all__ = [
    "PHIS",
    "corrected_grad_hess",
    "corrected_loss",
    "flip_rate",
    "general_corrected_loss",
    "logistic_grad_hess",
]

PHIS = ("logistic", "exponential", "gaussian")


def flip_rate(distance, beta, phi="logistic"):
    """Flip rate ``rho = phi(beta * distance)`` and its derivative in ``distance``.

    All three probabilizations equal 1/2 at distance 0 and decrease to 0:
    ``"logistic"`` ``1 / (1 + exp(beta d))`` (the paper's default),
    ``"exponential"`` ``exp(-beta d) / 2`` and ``"gaussian"`` ``Phi(-beta d)``.

    Parameters
    ----------
    distance : ndarray
        Non-negative "easiness" (e.g. the margin ``|h(x)|``).
    beta : float
        Scale.
    phi : {"logistic", "exponential", "gaussian"}
        Probabilization.

    Returns
    -------
    rho, drho_ddistance : ndarray
    """
    d = np.asarray(distance, dtype=np.float64)
    z = beta * d
    if phi == "logistic":
        rho = expit(-z)
        return rho, -beta * rho * (1.0 - rho)
    if phi == "exponential":
        rho = 0.5 * np.exp(-z)
        return rho, -beta * rho
    if phi == "gaussian":
        rho = ndtr(-z)
        return rho, -beta * np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
    raise ValueError(f"phi must be one of {PHIS}, got {phi!r}.")


def _parts(raw, y):
    raw = np.asarray(raw, dtype=np.float64)
    s = 2.0 * np.asarray(y, dtype=np.float64) - 1.0
    t = s * raw
    u = expit(t)  # probability of the observed label
    one_minus_u = expit(-t)
    l_plus = np.logaddexp(0.0, -t)  # -log u
    l_minus = np.logaddexp(0.0, t)  # -log(1 - u)
    return raw, s, u, one_minus_u, l_plus, l_minus


def _fused_parts(raw, y):
    """``_parts`` from one ``exp`` and one ``log1p`` (the objective's hot path).

    With ``e = exp(-|t|)``: ``sigmoid(|t|) = 1 / (1 + e)``, ``sigmoid(-|t|) =
    e / (1 + e)``, and both softplus terms are ``log1p(e)`` plus ``max(-t,
    0)`` or ``max(t, 0)``: the same functions as ``expit`` and ``logaddexp``
    (which would cost two of each), equal to them within a few ulps
    (``tests/test_label_noise.py`` states the tolerance). ``e`` (that is,
    ``exp(-|raw|)``) is returned too, for the flip rate.
    """
    raw = np.asarray(raw, dtype=np.float64)
    s = 2.0 * np.asarray(y, dtype=np.float64) - 1.0
    t = s * raw
    e = np.exp(-np.abs(raw))  # |t| = |raw| (y in {0, 1})
    big = 1.0 + e
    small = np.divide(e, big)  # sigmoid(-|t|)
    np.divide(1.0, big, out=big)  # sigmoid(|t|)
    positive = t >= 0.0
    u = np.where(positive, big, small)  # probability of the observed label
    v = np.where(positive, small, big)
    log_e = np.log1p(e)
    l_plus = np.maximum(-t, 0.0)
    l_plus += log_e  # -log u
    l_minus = np.maximum(t, 0.0)
    l_minus += log_e  # -log(1 - u)
    return raw, s, u, v, l_plus, l_minus, e


def corrected_loss(raw, y, rho, lam=0.0):
    """Per-sample regularized corrected loss (Eq. 5), logistic base loss.

    Parameters
    ----------
    raw : ndarray of shape (n_samples,)
        Raw scores ``h(x)`` (logit of class 1).
    y : ndarray of shape (n_samples,)
        Observed (noisy) labels in {0, 1}.
    rho : ndarray of shape (n_samples,) or float
        Flip rates.
    lam : float, default=0.0
        Regularization scale.

    Returns
    -------
    loss : ndarray of shape (n_samples,)
    """
    _, _, u, v, l_plus, l_minus = _parts(raw, y)
    return u * (v - rho) * l_plus - rho * v * l_minus - lam * (u * v - rho)


def general_corrected_loss(loss_obs, loss_flip, pi_obs, q_obs, rho):
    """The unregularized corrected loss of Proposition 1 (Eq. 3).

    ``[pi_obs (q_flip - rho) loss_obs - pi_flip rho loss_flip] / (q_obs q_flip
    - rho)`` with ``pi_flip = 1 - pi_obs``, ``q_flip = 1 - q_obs``: ``pi`` is the
    clean posterior ``P(Y = y | x)`` and ``q`` the noisy one ``P(Y~ = y | x)``,
    both at the observed label. Its expectation over the noisy label equals the
    clean risk for any ``rho`` with a non-zero denominator.
    """
    pi_flip = 1.0 - pi_obs
    q_flip = 1.0 - q_obs
    numerator = pi_obs * (q_flip - rho) * loss_obs - pi_flip * rho * loss_flip
    return numerator / (q_obs * q_flip - rho)


def logistic_grad_hess(raw, y):
    """Gradient and hessian of the plain logistic loss in the raw score."""
    p = expit(np.asarray(raw, dtype=np.float64))
    return p - y, p * (1.0 - p)


def corrected_grad_hess(
    raw,
    y,
    *,
    beta=2.0,
    lam=0.0,
    phi="logistic",
    rho=None,
    detach_rho=True,
    hessian="gauss_newton",
    hessian_floor=1e-6,
):
    """Gradient and hessian of :func:`corrected_loss` in the raw score.

    Parameters
    ----------
    raw : ndarray of shape (n_samples,)
        Raw scores.
    y : ndarray of shape (n_samples,)
        Observed labels in {0, 1}.
    beta, lam : float
        Scale of the flip rate and regularization scale.
    phi : {"logistic", "exponential", "gaussian"}
        Probabilization of the margin.
    rho : ndarray or None, default=None
        Fixed flip rates (an offline estimate); ``None`` computes them from the
        margin, ``rho = phi(beta |raw|)``.
    detach_rho : bool, default=True
        With margin flip rates, treat ``rho`` as a constant (as the authors'
        current code does) or differentiate through it.
    hessian : {"gauss_newton", "exact_clipped", "abs"}, default="gauss_newton"
        ``"gauss_newton"`` returns the logistic curvature ``p (1 - p)`` (always
        positive); ``"exact_clipped"`` the second derivative at constant
        ``rho`` floored at ``hessian_floor``; ``"abs"`` its absolute value
        floored at ``hessian_floor``.
    hessian_floor : float, default=1e-6
        Floor of the clipped hessians.

    Returns
    -------
    grad, hess : ndarray of shape (n_samples,)
    """
    raw, s, u, v, l_plus, l_minus, e = _fused_parts(raw, y)
    if rho is None:
        online = True
        if phi == "logistic":  # sigmoid(-beta |raw|) from exp(-beta |raw|)
            e_beta = e if beta == 1.0 else np.exp(-beta * np.abs(raw))
            rho = e_beta / (1.0 + e_beta)
            drho = -beta * rho * (1.0 - rho)
        else:
            rho, drho = flip_rate(np.abs(raw), beta, phi)
    else:
        rho = np.asarray(rho, dtype=np.float64)
        online = False
    one_minus_2u = 1.0 - 2.0 * u
    # d1 = -(1 - 2u - rho) log u - rho log v - v - lam (1 - 2u), in place
    d1 = one_minus_2u - rho
    d1 *= l_plus
    d1 += rho * l_minus
    d1 -= v
    if lam:
        d1 -= lam * one_minus_2u
    uv = u * v
    grad = s * uv
    grad *= d1
    if online and not detach_rho:
        entropy = u * l_plus + v * l_minus
        grad = grad + (lam - entropy) * np.sign(raw) * drho
    if hessian == "gauss_newton":
        hess = uv
    else:
        # d2 L / du2 times u^2 v^2: written without dividing by u or v
        log_u = -l_plus
        d2_uv2 = uv * (2.0 * log_u * uv - (one_minus_2u - rho) * v + rho * u)
        d2_uv2 = d2_uv2 + uv * uv * (1.0 + 2.0 * lam)
        exact = d2_uv2 + uv * one_minus_2u * d1
        if hessian == "abs":
            exact = np.abs(exact)
        elif hessian != "exact_clipped":
            raise ValueError(
                "hessian must be 'gauss_newton', 'exact_clipped' or 'abs', got "
                f"{hessian!r}."
            )
        hess = np.maximum(exact, hessian_floor)
    return grad, hess
