"""The two-key attention model of the CCO paper, trained by its Algorithm 1."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._columns import check_disjoint, resolve_columns
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, _fit_context
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["TwoKeyAttentionRegressor"]

SATURATION = 30.0


def _softmax(logits):
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def _forward(tokens, w, v):
    """Attention ``p`` (n, K), mixed token ``h`` (n, D), per-key ``u`` and ``y_hat``."""
    p = _softmax(tokens @ v)
    h = np.einsum("nk,nkd->nd", p, tokens)
    w2 = w**2
    u = tokens @ w2
    return p, h, u, h @ w2


def algorithm1_directions(tokens, y, w, v):
    """The update directions of Algorithm 1 on one batch.

    Returns ``(g_w, g_v)`` with ``w <- w - eta g_w`` and ``v <- v - beta
    g_v``: ``g_w = mean_i r_i h_i * w`` (half the gradient of the loss
    ``1/2 mean r^2`` in ``w``: the algorithm absorbs the factor 2 into
    ``eta``) and ``g_v = mean_i r_i d y_hat_i / d v``, the exact gradient in
    ``v``. For two keys ``d y_hat / d v = p (1 - p) ((x~ - z~)^T w^2) (x~ -
    z~)``; for ``K`` keys (softmax attention) ``sum_k p_k (u_k - y_hat) t_k``.
    """
    p, h, u, y_hat = _forward(tokens, w, v)
    r = y_hat - y
    g_w = (r[:, None] * h).mean(axis=0) * w
    dyhat_dv = np.einsum("nk,nkd->nd", p * (u - y_hat[:, None]), tokens)
    g_v = (r[:, None] * dyhat_dv).mean(axis=0)
    return g_w, g_v, p


_NOT_A_REGRESSOR = (
    "TwoKeyAttentionRegressor is the CCO paper's Algorithm 1 on its toy model "
    "(y_hat = h^T (w * w): non-negative readout weights, no intercept, fixed "
    "step sizes), not a general-purpose regressor."
)


def _rms(a):
    return float(np.sqrt(np.mean(np.square(a))))


def _check_not_collapsed(y_hat, y):
    """Refuse a fit whose training predictions are all (numerically) zero.

    A target with mean near 0 (no signal Algorithm 1 can represent, e.g. pure
    noise) only warns: 0 is then about as good as any constant. Otherwise the
    constant 0 is far worse than predicting the mean, and the fit raises.
    """
    scale = float(np.max(np.abs(y))) if y.size else 0.0
    if scale == 0 or float(np.max(np.abs(y_hat))) > 1e-6 * scale:
        return
    # R^2 of the constant 0 on the training rows: -mean(y)^2 / var(y)
    var = float(np.var(y))
    r2_zero = -np.inf if var == 0 else -(float(np.mean(y)) ** 2) / var
    message = (
        "Algorithm 1 collapsed to the constant-0 predictor: every training "
        f"prediction is below {1e-6 * scale:.3g} in magnitude while |y| reaches "
        f"{scale:.3g} (training R^2 of these predictions {r2_zero:.3g}). "
        f"{_NOT_A_REGRESSOR} A target that is not a non-negative combination of "
        f"the tokens (here mean y = {float(np.mean(y)):.3g}) drives w to 0. Use "
        "it on data of the paper's causal chain (see make_causal_chain), or a "
        "general regressor (e.g. TabularAttentionRegressor) elsewhere."
    )
    if r2_zero < -0.1:
        raise ValueError(message)
    warn_user(message)


class TwoKeyAttentionRegressor(RegressorMixin, BaseEstimator):
    """Key-attention model with a squared-weight readout, trained by CCO's Algorithm 1.

    The model of "Strong Correlations Induce Cause Only Predictions in
    Transformer Training" (ICLR 2026). Each feature group ``k`` is one token
    ``t_k = [s_k; x_k]`` (a fixed random positional code ``s_k`` of length
    ``n_positional`` followed by the group's columns); a learned query ``v``
    attends over the tokens, ``p = softmax_k(v^T t_k)`` (for two keys ``p_1 =
    sigma(v^T (x~ - z~))``), the mixed token is ``h = sum_k p_k t_k`` and the
    prediction ``y_hat = h^T (w * w)``. Training is the paper's Algorithm 1,
    plain (mini-batch) gradient descent on ``1/2 mean (y_hat - y)^2`` from
    ``w = [0; init_scale]``, ``v = 0`` (the positional coordinates of ``w``
    stay 0):

    * ``w <- w - w_learning_rate * mean_i r_i h_i * w``
    * ``v <- v - v_learning_rate * mean_i r_i d y_hat_i / d v``

    When the cause group dominates, the attention concentrates on it and the
    descendant's weight is "crowded out"; the effect depends on the regime
    (see the user guide), and it is a property of gradient descent on this
    toy model, not causal discovery.

    This is the paper's Algorithm 1, a tool to study that effect, **not a
    general-purpose regressor**: the readout ``w * w`` is non-negative and has
    no intercept, and the step sizes are fixed, so on a target of another
    scale or sign (e.g. a body mass in grams) it diverges or shrinks ``w`` to
    0. Both raise a ``ValueError`` naming the cause instead of returning a
    constant predictor (a collapse on a target of mean near 0, where 0 is as
    good as any constant, only warns); the target is not rescaled internally, since that
    would change the trajectory the paper analyses (``w_`` is compared with
    ``w*``). Use :class:`TabularAttentionRegressor` as a regressor.

    Read more in the :ref:`User Guide <cco>`.

    Parameters
    ----------
    feature_groups : sequence of column lists or None, default=None
        ``(cause_columns, descendant_columns)`` gives the paper's two-key
        model; any number of groups of equal width is allowed (column names
        of a DataFrame or indices). ``None`` makes every column its own key
        (per-feature tokens).
    n_positional : int, default=4
        Length ``M`` of the positional codes ``s_k ~ N(0, I)``.
    w_learning_rate : float, default=2e-3
        Step size ``eta`` of ``w``.
    v_learning_rate : float, default=2e-3
        Step size ``beta`` of the attention query ``v`` (``schedule=
        "simultaneous"``).
    staged_v_learning_rate : float, default=5e-2
        Step size ``beta`` of ``v`` in phase 2 of ``schedule="staged"`` (the
        ``v``-only phase). Phase 1 leaves ``w_1`` near 1/4, so the phase-2
        gradients in ``v`` are small and the simultaneous schedule's step
        (2e-3) barely moves the gate; Theorem 1 leaves ``beta`` open.
    init_scale : float, default=0.1
        Initial value ``alpha`` of the non-positional coordinates of ``w``.
    max_iter : int, default=4000
        Number of gradient steps.
    schedule : {"simultaneous", "staged"}, default="simultaneous"
        ``"simultaneous"`` updates ``w`` and ``v`` at every step.
        ``"staged"`` follows Theorem 1: ``w`` only until the first content
        coordinate of ``w`` reaches 1/4 (at most ``max_iter // 3`` steps),
        then ``v`` only for ``max_iter // 3`` steps with step
        ``staged_v_learning_rate``, then ``w`` only (the paper leaves the
        phase lengths and step sizes open; these are our choice).
    batch_size : int or None, default=64
        Rows drawn (without replacement) for each step; ``None`` or a value
        of at least ``n_samples`` means full-batch gradient descent.
    random_state : int, RandomState instance or None, default=None
        Seeds the positional codes and the batches.
    verbose : int, default=0
        Progress every tenth of the steps.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, if all strings.
    groups_ : list of ndarray of int
        Column indices of each key.
    positional_codes_ : ndarray of shape (n_keys, n_positional)
        The fixed codes ``s_k``.
    w_ : ndarray of shape (n_positional + group_width,)
        Final readout weights (the prediction uses ``w_ ** 2``).
    v_ : ndarray of shape (n_positional + group_width,)
        Final attention query.
    w_history_ : ndarray of shape (max_iter + 1, n_positional + group_width)
        ``w`` at initialisation and after every step.
    attention_history_ : ndarray of shape (max_iter + 1, n_keys)
        Mean attention on each key: row ``t < max_iter`` over the batch of
        step ``t`` (before its update), the last row over all training rows
        after the last step.
    schedule_switches_ : tuple of int
        Steps at which the staged schedule switched phases (empty for
        ``"simultaneous"``).
    n_iter_ : int
        Number of steps run.

    See Also
    --------
    TabularAttentionRegressor : A practical attention model over feature
        groups, trained with Adam.

    Examples
    --------
    >>> from sklearn_iclr26.causal import TwoKeyAttentionRegressor
    >>> from sklearn_iclr26.datasets import make_causal_chain
    >>> X, y = make_causal_chain(n_samples=2000, n_features=5, random_state=0)
    >>> groups = (list(range(5)), list(range(5, 10)))
    >>> model = TwoKeyAttentionRegressor(feature_groups=groups, random_state=0)
    >>> model = model.fit(X, y)
    >>> bool(model.attention(X)[:, 0].mean() > 0.9)
    True
    """

    _parameter_constraints: dict = {
        "feature_groups": ["array-like", None],
        "n_positional": [Interval(Integral, 0, None, closed="left")],
        "w_learning_rate": [Interval(Real, 0, None, closed="neither")],
        "v_learning_rate": [Interval(Real, 0, None, closed="neither")],
        "staged_v_learning_rate": [Interval(Real, 0, None, closed="neither")],
        "init_scale": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "schedule": [StrOptions({"simultaneous", "staged"})],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        feature_groups=None,
        *,
        n_positional=4,
        w_learning_rate=2e-3,
        v_learning_rate=2e-3,
        staged_v_learning_rate=5e-2,
        init_scale=0.1,
        max_iter=4000,
        schedule="simultaneous",
        batch_size=64,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _resolve_groups(self, n_features):
        if self.feature_groups is None:
            return [np.array([j]) for j in range(n_features)]
        groups = list(self.feature_groups)
        if len(groups) < 2:
            raise ValueError(
                "feature_groups must list at least two groups (cause, descendant), "
                f"got {len(groups)}."
            )
        names = ["cause", "descendant"] if len(groups) == 2 else None
        resolved = {}
        for k, columns in enumerate(groups):
            name = names[k] if names else f"group {k}"
            resolved[name] = resolve_columns(columns, self, n_features, name)
        check_disjoint(resolved)
        widths = {name: len(index) for name, index in resolved.items()}
        if len(set(widths.values())) > 1:
            raise ValueError(
                "The two-key model needs feature groups of equal width (each "
                f"token is [s_k; x_k]); got widths {widths}."
            )
        return [np.asarray(index) for index in resolved.values()]

    def _tokens(self, X):
        n = X.shape[0]
        parts = [
            np.hstack([np.broadcast_to(s, (n, len(s))), X[:, g]])
            for s, g in zip(self.positional_codes_, self.groups_)
        ]
        return np.stack(parts, axis=1)

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Run Algorithm 1.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        self.groups_ = self._resolve_groups(X.shape[1])
        rng = check_random_state(seed_from_random_state(self.random_state))
        M, K, m = self.n_positional, len(self.groups_), len(self.groups_[0])
        self.positional_codes_ = rng.normal(size=(K, M))
        tokens = self._tokens(X)
        n = X.shape[0]
        batch = n if self.batch_size is None else min(self.batch_size, n)
        w = np.concatenate([np.zeros(M), np.full(m, float(self.init_scale))])
        v = np.zeros(M + m)
        T = self.max_iter
        w_history = np.empty((T + 1, M + m))
        attention = np.empty((T + 1, K))
        w_history[0] = w
        update_w, update_v = True, True
        switches = []
        phase = 0
        third = max(T // 3, 1)
        beta = (
            self.staged_v_learning_rate
            if self.schedule == "staged"
            else self.v_learning_rate
        )
        for t in range(T):
            if self.schedule == "staged":
                if phase == 0 and (w[M] >= 0.25 or t >= third):
                    phase, switches = 1, [*switches, t]
                    phase_start = t
                elif phase == 1 and t - phase_start >= third:
                    phase, switches = 2, [*switches, t]
                update_w, update_v = phase != 1, phase == 1
            rows = rng.choice(n, size=batch, replace=False) if batch < n else None
            tb = tokens if rows is None else tokens[rows]
            yb = y if rows is None else y[rows]
            with np.errstate(over="ignore", invalid="ignore"):
                # divergence is caught below with a clear error
                g_w, g_v, p = algorithm1_directions(tb, yb, w, v)
            attention[t] = p.mean(axis=0)
            if update_w:
                w = w - self.w_learning_rate * g_w
            if update_v:
                v = v - beta * g_v
            if not (np.all(np.isfinite(w)) and np.all(np.isfinite(v))):
                raise ValueError(
                    f"Algorithm 1 diverged at step {t + 1} (non-finite weights). "
                    f"{_NOT_A_REGRESSOR} Its fixed steps grow with the scale of "
                    f"the target and of the tokens (here root mean square "
                    f"{_rms(y):.3g} for y, {_rms(tokens):.3g} for the tokens; "
                    "the paper's simulation has both of order 1). Divide y (and "
                    "the features) by their scale, or lower w_learning_rate / "
                    "v_learning_rate."
                )
            w_history[t + 1] = w
            if self.verbose and (t + 1) % max(T // 10, 1) == 0:
                log_progress(
                    self,
                    f"step {t + 1}/{T}: mean attention per key "
                    + ", ".join(f"{a:.3f}" for a in attention[t]),
                )
        self.w_, self.v_ = w, v
        _check_not_collapsed(_forward(tokens, w, v)[3], y)
        logits = tokens @ v
        attention[T] = _softmax(logits).mean(axis=0)
        self.w_history_ = w_history
        self.attention_history_ = attention
        self.schedule_switches_ = tuple(switches)
        self.n_iter_ = T
        spread = float(np.max(logits.max(axis=1) - logits.min(axis=1)))
        if spread > SATURATION:
            warn_user(
                f"The attention gate saturates numerically: attention logits differ "
                f"by up to {spread:.1f} (> {SATURATION:g}) between keys on the "
                "training rows, so some attention weights are 0 or 1 to machine "
                "precision."
            )
        return self

    def _check(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def attention(self, X):
        """Attention weight on each key (the cause is key 0 of a two-key model).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        attention : ndarray of shape (n_samples, n_keys)
            Rows sum to 1.
        """
        X = self._check(X)
        return batched(
            lambda Xb: _softmax(self._tokens(Xb) @ self.v_),
            X,
            row_bytes=8 * 4 * X.shape[1] * (1 + self.n_positional),
        )

    def predict(self, X):
        """Predicted targets ``h^T (w * w)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predictions.
        """
        X = self._check(X)
        return batched(
            lambda Xb: _forward(self._tokens(Xb), self.w_, self.v_)[3],
            X,
            row_bytes=8 * 4 * X.shape[1] * (1 + self.n_positional),
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # non-negative squared weights and no intercept: a toy model
        tags.regressor_tags.poor_score = True
        return tags
