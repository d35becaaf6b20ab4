"""Generators with confounded and spurious features (Prism, CCO)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["make_background_confounding", "make_causal_chain"]


def _draw_chain(n_samples, d, cause_scale, strength, descendant_noise, noise, law, rng):
    """Draw ``x``, ``eps``, ``xi`` and ``(w*)^2`` of the causal chain."""
    w_sq = np.ones(d) if law == "gaussian" else np.eye(1, d).ravel()
    if law == "gaussian":
        x = rng.normal(size=(n_samples, d))
        x[:, 0] += cause_scale
        eps = rng.normal(size=n_samples)
        xi = rng.normal(size=(n_samples, d))
    else:
        x = rng.uniform(-1.0, 1.0, size=(n_samples, d))
        x[:, 0] = cause_scale + rng.uniform(0.0, 1.0, size=n_samples)
        eps = rng.uniform(-1.0, 1.0, size=n_samples)
        xi = rng.uniform(-1.0, 1.0, size=(n_samples, d))
    return x, noise * eps, descendant_noise * xi, w_sq


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "cause_scale": [Real],
        "descendant_strength": [Real],
        "descendant_noise": [Interval(Real, 0, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "shift": [StrOptions({"flip"}), Real, None],
        "law": [StrOptions({"gaussian", "bounded"})],
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
    law="gaussian",
    random_state=None,
):
    """Generate the causal chain ``x -> y -> z`` of the CCO paper.

    The target is ``y = x^T (w*)^2 + noise * eps`` and every descendant
    coordinate is ``z_j = C * y + descendant_noise * xi_j`` with ``C =
    descendant_strength``. Two laws:

    * ``law="gaussian"`` (the method note's sanity run; the paper's law of
      ``x`` is garbled): ``w* = 1`` (all ones, as in the paper's simulation),
      ``x_1 ~ N(cause_scale, 1)``, the other ``x_j``, ``eps`` and ``xi``
      standard normal. It violates the paper's Condition 2 (sign stability
      and margin; see the user guide).
    * ``law="bounded"`` (the condition-satisfying generator): ``w* = e_1``
      (only the dominant coordinate is a cause, ``r = 1``), ``x_1 ~
      U[cause_scale, cause_scale + 1]``, the other ``x_j``, ``eps`` and ``xi``
      uniform on ``[-1, 1]`` (so ``sigma^2 = noise^2 / 3``). With
      ``descendant_strength=0.2`` and ``descendant_noise=0.5`` (defaults
      otherwise) it meets Conditions 1 and 2 of the paper on every sample
      (``d`` = 5 and 10), while ``z`` still carries information on ``y``
      that least squares uses (its flipped-mechanism MSE is about 30
      ``sigma^2``).

    Read more in the :ref:`User Guide <cco>`.

    Parameters
    ----------
    n_samples : int, default=100
        Number of rows.
    n_features : int, default=5
        Width ``d`` of the cause ``x`` and of the descendant ``z``.
    cause_scale : float, default=3.0
        Location of the dominant cause coordinate ``x_1``.
    descendant_strength : float, default=0.3
        ``C`` in ``z = C * y + descendant_noise * xi``.
    descendant_noise : float, default=3.0
        Scale of the descendant noise (standard deviation for
        ``"gaussian"``, half-width for ``"bounded"``).
    noise : float, default=1.0
        Scale of the target noise (standard deviation ``sigma`` for
        ``"gaussian"``, half-width for ``"bounded"``).
    shift : "flip", float or None, default=None
        Shift of the ``y -> z`` mechanism: ``"flip"`` uses ``-C``, a float
        uses that value as ``C``; ``None`` keeps ``C``.
    law : {"gaussian", "bounded"}, default="gaussian"
        Law of ``x``, ``eps``, ``xi`` and the choice of ``w*`` (see above).
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
    >>> X, y = make_causal_chain(
    ...     10, 5, law="bounded", descendant_strength=0.2, descendant_noise=0.5
    ... )
    """
    rng = check_random_state(random_state)
    if shift is None:
        strength = descendant_strength
    elif isinstance(shift, str):
        strength = -descendant_strength
    else:
        strength = float(shift)
    x, eps, xi, w_sq = _draw_chain(
        n_samples, n_features, cause_scale, strength, descendant_noise, noise, law, rng
    )
    y = x @ w_sq + eps
    z = strength * y[:, None] + xi
    return np.hstack([x, z]), y


def causal_chain_conditions(
    n_features=5,
    *,
    cause_scale=3.0,
    descendant_strength=0.3,
    descendant_noise=3.0,
    noise=1.0,
    law="gaussian",
    n_draws=200_000,
    random_state=0,
):
    """Conditions 1 and 2 of the CCO paper for one law of the chain.

    Condition 1 (population dominance; moments by Monte Carlo over
    ``n_draws`` rows): ``s1_eff > 2 m_1 / 15 + max_{j>1} (4 |s_j_eff| + m_1j /
    8)`` with ``s_j = E[(x^T (w*)^2)(x_j + z_j)]``, ``mu_j = E[eps (x_j +
    z_j)]``, ``s_j_eff = s_j + mu_j``, ``m_1 = E[(x_1 + z_1)^2]``, ``m_1j =
    E[(x_1 + z_1)(x_j + z_j)]`` (Section 4.1.3 of the paper).

    Condition 2 (per sample): (i) ``|x_1 - z_1| >= tau_1 > 0``; (ii)
    ``sgn(x_1 - z_1) = sgn(x_1)``; (iii) ``3/4 |x_1| >= (r - 1) B'_x + B_eps
    + tau_2`` with ``tau_2 > 0``, where ``r = |supp w*|`` and the bounds
    ``B'_x = sup_{j >= 2} |x_j|``, ``B_eps = sup |eps|`` are the law's
    (``"bounded"``) or, for the unbounded ``"gaussian"`` law, the maxima over
    the draws (a lower bound on the almost-sure bound, so generous to it).

    Returns a dict: ``s1_eff``, ``cond1_rhs``, ``cond1`` (bool),
    ``min_gap`` (the smallest ``|x_1 - z_1|``), ``sign_stable`` and
    ``margin`` (fractions of draws meeting (ii) and (iii)), ``cond2`` (bool:
    all three on every draw).
    """
    rng = check_random_state(random_state)
    d = n_features
    x, eps, xi, w_sq = _draw_chain(
        n_draws, d, cause_scale, descendant_strength, descendant_noise, noise, law, rng
    )
    signal = x @ w_sq
    z = descendant_strength * (signal + eps)[:, None] + xi
    c = x + z
    s_eff = ((signal + eps)[:, None] * c).mean(axis=0)
    m_1 = float(np.mean(c[:, 0] ** 2))
    m_1j = (c[:, :1] * c[:, 1:]).mean(axis=0)
    rhs = 2 * m_1 / 15 + (
        float(np.max(4 * np.abs(s_eff[1:]) + m_1j / 8)) if d > 1 else 0.0
    )
    r = int(np.count_nonzero(w_sq))
    if law == "bounded":
        b_x = 1.0 if d > 1 else 0.0
        b_eps = float(noise)
    else:
        b_x = float(np.max(np.abs(x[:, 1:]))) if d > 1 else 0.0
        b_eps = float(np.max(np.abs(eps)))
    gap = x[:, 0] - z[:, 0]
    sign = np.sign(gap) == np.sign(x[:, 0])
    margin = 0.75 * np.abs(x[:, 0]) > (r - 1) * b_x + b_eps
    return {
        "s1_eff": float(s_eff[0]),
        "cond1_rhs": rhs,
        "cond1": bool(s_eff[0] > rhs),
        "min_gap": float(np.min(np.abs(gap))),
        "sign_stable": float(np.mean(sign)),
        "margin": float(np.mean(margin)),
        "cond2": bool(np.all(sign) and np.all(margin) and np.min(np.abs(gap)) > 0),
    }


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
        "intervention": [StrOptions({"random"}), "array-like", None],
        "return_background": ["boolean"],
        "return_truth": ["boolean"],
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
    intervention=None,
    return_background=False,
    return_truth=False,
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

    Interventions on the context ``H`` (``intervention``) cut the edge ``C ->
    H`` and keep every other equation: ``"random"`` draws ``H`` around the
    centre of an independent copy ``C'`` of the state (``H`` keeps its
    marginal law but is independent of ``C``), and an array sets ``H = h``
    (``do(H = h)``). Because ``C`` is independent of ``P``, the interventional
    mean has the closed form ``E[Y | do(H = h), P = p] = f(p) + h theta +
    confounding_strength * sum_c pi_c b_c`` (the backdoor sum over the law of
    ``C``), while the observational regression is ``E[Y | H = h, P = p] = f(p)
    + h theta + confounding_strength * sum_c P(c | h) b_c`` with ``P(c | h)``
    proportional to ``pi_c N(h; A_c, I)``; ``return_truth`` returns both at
    every row. Under the mapping shift the interventional mean is unchanged
    and the observational one moves.

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
    intervention : "random", array-like of shape (n_context,) or \
            (n_samples, n_context), or None, default=None
        ``None`` samples the observational law; ``"random"`` draws the
        context independently of ``C`` (a randomised intervention on ``H``);
        an array sets the context columns to it (``do(H = h)``, one row for
        all rows or one per row).
    return_background : bool, default=False
        Also return the state ``C`` of each row.
    return_truth : bool, default=False
        Also return the noise-free conditional means at each row (see
        ``truth`` below).
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
    truth : :class:`~sklearn.utils.Bunch`
        Only when ``return_truth=True``: ``interventional``, the
        interventional mean ``E[Y | do(H = h), P = p]`` at each row's ``(p,
        h)``, and ``observational``, the observational regression ``E[Y | H =
        h, P = p]``, both of shape (n_samples,) and under the law of ``pi``
        and ``A`` that ``shift`` gives (the confounding bias of an ideal
        observational fit is their difference).

    Examples
    --------
    >>> from sklearn_iclr26.datasets import make_background_confounding
    >>> X, y = make_background_confounding(n_samples=20, random_state=0)
    >>> X.shape
    (20, 10)
    >>> X_shift, y_shift = make_background_confounding(
    ...     n_samples=20, shift="prior", random_state=1
    ... )
    >>> X_do, y_do, truth = make_background_confounding(
    ...     n_samples=20, intervention="random", return_truth=True, random_state=2
    ... )
    >>> truth.interventional.shape
    (20,)
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
    if intervention is not None and not isinstance(intervention, str):
        h = np.asarray(intervention, dtype=np.float64)
        if h.ndim not in (1, 2) or h.shape[-1] != n_context:
            raise ValueError(
                f"intervention must have shape ({n_context},) or (n_samples, "
                f"{n_context}); got {h.shape}."
            )
        if h.ndim == 2 and h.shape[0] != n_samples:
            raise ValueError(
                f"intervention has {h.shape[0]} rows; n_samples={n_samples}."
            )
    # the draws of the observational law, in its order, for every regime: the
    # rows' C, P and noises are the same under an intervention
    context_noise = rng.normal(size=(n_samples, n_context))
    primary = rng.normal(size=(n_samples, n_primary))
    target_noise = rng.normal(size=n_samples)
    if intervention is None:
        context = centres[state] + context_noise
    elif isinstance(intervention, str):
        # "random": the context of an independent copy C' of the state, so H
        # keeps its marginal law and loses its dependence on C
        other = rng.choice(n_states, size=n_samples, p=prior)
        context = centres[other] + context_noise
    else:
        context = np.broadcast_to(h, (n_samples, n_context)).copy()
    f = primary @ beta
    if n_primary >= 2:
        f = f + 0.5 * primary[:, 0] * primary[:, 1]
    direct = f + context @ theta
    y = direct + confounding_strength * offsets[state] + noise * target_noise
    X = np.hstack([primary, context])
    out = (X, y, state) if return_background else (X, y)
    if not return_truth:
        return out
    # P(c | h) proportional to pi_c N(h; A_c, I), under this call's pi and A
    log_post = np.log(prior) - 0.5 * ((context[:, None, :] - centres[None]) ** 2).sum(
        axis=2
    )
    log_post -= log_post.max(axis=1, keepdims=True)
    post = np.exp(log_post)
    post /= post.sum(axis=1, keepdims=True)
    truth = Bunch(
        interventional=direct + confounding_strength * (prior @ offsets),
        observational=direct + confounding_strength * (post @ offsets),
    )
    return (*out, truth)
