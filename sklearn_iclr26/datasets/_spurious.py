"""Generators with confounded and spurious features (Prism, CCO)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["make_background_confounding", "make_causal_chain"]


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "cause_scale": [Real],
        "descendant_strength": [Real],
        "descendant_noise": [Interval(Real, 0, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "shift": [StrOptions({"flip"}), Real, None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_causal_chain(
    n_samples=100,
    n_features=5,
    *,
    cause_scale=3.0,
    descendant_strength=0.3,
    descendant_noise=3.0,
    noise=1.0,
    shift=None,
    random_state=None,
):
    """Generate the causal chain ``x -> y -> z`` of the CCO paper.

    ``x`` has ``n_features`` coordinates, the first dominant: ``x_1 ~
    N(cause_scale, 1)``, the others ``N(0, 1)``. The target is ``y = sum_j x_j
    + noise * eps`` (``w* = 1``, so ``y = x^T (w*)^2 + eps``) and every
    descendant coordinate is ``z_j = C * y + descendant_noise * xi_j`` with
    ``C = descendant_strength`` (``eps``, ``xi`` standard normal). The paper's
    law of ``x`` is garbled; this is the choice of the method note's sanity
    run.

    Read more in the :ref:`User Guide <cco>`.

    Parameters
    ----------
    n_samples : int, default=100
        Number of rows.
    n_features : int, default=5
        Width ``d`` of the cause ``x`` and of the descendant ``z``.
    cause_scale : float, default=3.0
        Mean of the dominant cause coordinate ``x_1``.
    descendant_strength : float, default=0.3
        ``C`` in ``z = C * y + descendant_noise * xi``.
    descendant_noise : float, default=3.0
        Standard deviation of the descendant noise.
    noise : float, default=1.0
        Standard deviation ``sigma`` of the target noise.
    shift : "flip", float or None, default=None
        Shift of the ``y -> z`` mechanism: ``"flip"`` uses ``-C``, a float
        uses that value as ``C``; ``None`` keeps ``C``.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.

    Returns
    -------
    X : ndarray of shape (n_samples, 2 * n_features)
        ``[x | z]``: the cause columns first, then the descendant columns.
    y : ndarray of shape (n_samples,)
        Target.

    Examples
    --------
    >>> from sklearn_iclr26.datasets import make_causal_chain
    >>> X, y = make_causal_chain(n_samples=10, n_features=5, random_state=0)
    >>> X.shape, y.shape
    ((10, 10), (10,))
    """
    rng = check_random_state(random_state)
    d = n_features
    x = rng.normal(size=(n_samples, d))
    x[:, 0] += cause_scale
    y = x.sum(axis=1) + noise * rng.normal(size=n_samples)
    if shift is None:
        strength = descendant_strength
    elif isinstance(shift, str):
        strength = -descendant_strength
    else:
        strength = float(shift)
    z = strength * y[:, None] + descendant_noise * rng.normal(size=(n_samples, d))
    return np.hstack([x, z]), y


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_primary": [Interval(Integral, 1, None, closed="left")],
        "n_context": [Interval(Integral, 1, None, closed="left")],
        "n_states": [Interval(Integral, 2, None, closed="left")],
        "context_separation": [Interval(Real, 0, None, closed="left")],
        "confounding_strength": [Real],
        "noise": [Interval(Real, 0, None, closed="left")],
        "shift": [StrOptions({"prior", "mapping"}), None],
        "shift_strength": [Interval(Real, 0, 1, closed="both")],
        "return_background": ["boolean"],
        "structure_random_state": ["random_state"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_background_confounding(
    n_samples=1000,
    *,
    n_primary=5,
    n_context=5,
    n_states=3,
    context_separation=1.5,
    confounding_strength=2.0,
    noise=0.5,
    shift=None,
    shift_strength=1.0,
    return_background=False,
    structure_random_state=0,
    random_state=None,
):
    """Generate the background-confounding SCM of the Prism method note.

    An unobserved background state ``C ~ Cat(pi)`` with ``pi_k`` proportional
    to ``2^-k`` drives the context features, ``H = A_C + N(0, I)``, and the
    target, ``y = f(P) + H theta + confounding_strength * b_C + noise * eps``,
    where ``P ~ N(0, I)`` are the primary features, ``f(P) = P beta + 0.5 P_1
    P_2`` and ``theta`` is a small direct context effect. The state centres
    ``A`` (scaled by ``context_separation``), the offsets ``b``, ``beta`` and
    ``theta`` come from ``structure_random_state``, so calls with different
    ``random_state`` (train and test) share one SCM.

    Shifts (test time):

    * ``"prior"``: ``pi`` becomes ``(1 - s) pi + s reversed(pi)``, with ``s =
      shift_strength`` (rare states become common);
    * ``"mapping"``: the context of state ``c`` is drawn around ``(1 - s) A_c
      + s A_{c + 1 mod k}`` (the ``C -> context`` mechanism changes).

    Read more in the :ref:`User Guide <prism>`.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_primary : int, default=5
        Number of primary (foreground) features.
    n_context : int, default=5
        Number of context features, the last columns of ``X``.
    n_states : int, default=3
        Number ``k`` of background states.
    context_separation : float, default=1.5
        Scale of the state centres ``A`` (larger: the context reveals ``C``
        more clearly).
    confounding_strength : float, default=2.0
        Scale of the state offsets ``b_C`` in ``y``.
    noise : float, default=0.5
        Standard deviation of the target noise.
    shift : {"prior", "mapping"} or None, default=None
        Test-time shift; ``None`` samples the training distribution.
    shift_strength : float in [0, 1], default=1.0
        Size ``s`` of the shift.
    return_background : bool, default=False
        Also return the state ``C`` of each row.
    structure_random_state : int, RandomState instance or None, default=0
        Seeds the SCM (``A``, ``b``, ``beta``, ``theta``).
    random_state : int, RandomState instance or None, default=None
        Seeds the rows.

    Returns
    -------
    X : ndarray of shape (n_samples, n_primary + n_context)
        Primary columns first, then the context columns.
    y : ndarray of shape (n_samples,)
        Target.
    background : ndarray of shape (n_samples,)
        The state ``C`` (only when ``return_background=True``).

    Examples
    --------
    >>> from sklearn_iclr26.datasets import make_background_confounding
    >>> X, y = make_background_confounding(n_samples=20, random_state=0)
    >>> X.shape
    (20, 10)
    >>> X_shift, y_shift = make_background_confounding(
    ...     n_samples=20, shift="prior", random_state=1
    ... )
    """
    structure = check_random_state(structure_random_state)
    centres = context_separation * structure.normal(size=(n_states, n_context))
    offsets = structure.normal(size=n_states)
    offsets = (offsets - offsets.mean()) / max(offsets.std(), 1e-12)
    beta = structure.normal(size=n_primary)
    theta = 0.3 * structure.normal(size=n_context)

    rng = check_random_state(random_state)
    prior = 2.0 ** -np.arange(n_states)
    prior /= prior.sum()
    s = shift_strength if shift is not None else 0.0
    if shift == "prior":
        prior = (1 - s) * prior + s * prior[::-1]
    state = rng.choice(n_states, size=n_samples, p=prior)
    if shift == "mapping":
        centres = (1 - s) * centres + s * np.roll(centres, -1, axis=0)
    context = centres[state] + rng.normal(size=(n_samples, n_context))
    primary = rng.normal(size=(n_samples, n_primary))
    f = primary @ beta
    if n_primary >= 2:
        f = f + 0.5 * primary[:, 0] * primary[:, 1]
    y = (
        f
        + context @ theta
        + confounding_strength * offsets[state]
        + noise * rng.normal(size=n_samples)
    )
    X = np.hstack([primary, context])
    if return_background:
        return X, y, state
    return X, y
