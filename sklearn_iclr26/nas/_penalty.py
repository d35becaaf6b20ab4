"""Penalty baseline: differentiable search with lambda * expected cost."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

import numpy as np

from sklearn_iclr26.nas._darts import BaseGradientNASSearch
from sklearn_iclr26.nas._rule import expected_cost_gradient
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, _fit_context
from sklearn_iclr26.utils._torch import check_regression_fit
from sklearn_iclr26.utils._validation import store_params

__all__ = ["PenaltyNASSearch"]


class PenaltyNASSearch(BaseGradientNASSearch):
    """Hardware-aware search with a cost penalty (FBNet / ProxylessNAS style).

    The baseline ConNAS is compared against: the same first-order DARTS search
    as :class:`ConNASSearch`, but the logits descend ``L_val + penalty *
    E[cost] / budget`` at every step, where ``E[cost] = sum_e sum_k p_ek
    c_ek`` uses the same per-edge cost table as ConNAS's direction. The result
    depends on ``penalty``: too small and the returned architecture violates
    the budget, too large and it is over-penalised; ConNAS removes that
    weight.

    Read more in the :ref:`User Guide <connas>`.

    Parameters
    ----------
    search_space : {"mlp", "cell"} or SearchSpace, default=None
        The search space (see :class:`ConNASSearch`).
    penalty : float, default=1.0
        Weight ``lambda`` of the expected-cost term (the cost is divided by
        ``budget``, or not scaled when ``budget`` is None).
    constraint : {"params", "flops", "latency"} or callable, default="params"
        Hardware cost (see :class:`ConNASSearch`).
    budget : float or None, default=None
        Budget; used to scale the penalty, to report feasibility and by the
        feasible selection rules.
    relaxation : {"softmax", "gumbel"}, default="softmax"
        Continuous relaxation.
    temperature : float, default=1.0
        Softmax / Gumbel-softmax temperature.
    arch_learning_rate : float, default=3e-2
        Adam learning rate of the architecture logits (the second learning
        rate of the bilevel search).
    arch_betas : tuple of float, default=(0.5, 0.999)
        Adam betas of the logits (DARTS).
    arch_alpha : float, default=1e-3
        L2 penalty of the logits (their Adam ``weight_decay``, DARTS).
    select : {"final", "last_feasible", "best_val_feasible"}, default="final"
        ``"final"`` returns the architecture derived from the final logits,
        feasible or not (the usual penalty-method answer); the other two
        as in :class:`ConNASSearch`.
    refit : bool, default=True
        Refit the chosen network on all the data.
    final_estimator_params : dict or None, default=None
        Parameters of the refit network (see :class:`ConNASSearch`; the
        search's own training parameters apply to the supernet only).
    task : {"classification", "regression"}, default="classification"
        Kind of target.
    latency_repeats : int, default=20
        Timed runs per operation for ``constraint="latency"``.
    %(search_training_parameters)s

    Attributes
    ----------
    best_architecture_ : dict
        The chosen architecture.
    best_cost_ : float
        Its cost.
    budget_satisfied_ : bool
        Whether it satisfies the budget (may be false with ``select="final"``).
    best_estimator_ : estimator
        The refitted network.
    search_history_ : list of dict
        Per logit step, as :class:`ConNASSearch` (``modified`` is always false).
    arch_logits_ : list of ndarray
        Final logits, one array per edge.
    %(search_training_attributes)s
    cost_table_ : dict
        Cost look-up table.
    n_architectures_evaluated_ : int
        Distinct derived architectures visited.
    classes_ : ndarray of shape (n_classes,)
        Class labels (classification).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

    See Also
    --------
    ConNASSearch : The constraint-guided search, without a penalty weight.
    RandomNASSearch : Constrained random search.

    References
    ----------
    .. [1] B. Wu et al., "FBNet: Hardware-Aware Efficient ConvNet Design via
       Differentiable Neural Architecture Search", CVPR 2019.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_iclr26.nas import MLPSearchSpace, PenaltyNASSearch
    >>> X, y = load_wine(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> search = PenaltyNASSearch(
    ...     MLPSearchSpace(n_layers=2, widths=(0, 8, 32)),
    ...     penalty=1.0, budget=500, max_iter=10, random_state=0,
    ... ).fit(X, y)
    >>> search.best_cost_ == search.cost_of(search.best_architecture_)
    True
    """

    _parameter_constraints: dict = {
        **BaseGradientNASSearch._parameter_constraints,
        "penalty": [Interval(Real, 0, None, closed="left")],
        "select": [StrOptions({"final", "last_feasible", "best_val_feasible"})],
    }

    def __init__(
        self,
        search_space=None,
        *,
        penalty=1.0,
        constraint="params",
        budget=None,
        relaxation="softmax",
        temperature=1.0,
        arch_learning_rate=3e-2,
        arch_betas=(0.5, 0.999),
        arch_alpha=1e-3,
        select="final",
        refit=True,
        final_estimator_params=None,
        task="classification",
        latency_repeats=20,
        alpha=0.0,
        batch_size=64,
        learning_rate_init=1e-2,
        max_iter=20,
        early_stopping=False,
        validation_fraction=0.5,
        n_iter_no_change=10,
        tol=1e-4,
        warm_start=False,
        callbacks=None,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _modify_arch_gradient(self, grad, arch_idx, cost, probs):
        if self.penalty == 0:
            return grad, False
        scale = self.penalty / (self.budget if self.budget is not None else 1.0)
        pen = expected_cost_gradient(self._costs.local_costs(arch_idx), probs)
        return [np.asarray(g) + scale * p for g, p in zip(grad, pen)], False

    @atomic_fit(check=check_regression_fit)
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Run the penalised search and refit the chosen network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target labels or values.

        Returns
        -------
        self : object
            Fitted search.
        """
        return self._fit(X, y)
