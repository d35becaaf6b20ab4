"""Constrained random search (rejection sampling), a ConNAS baseline."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from sklearn.metrics import log_loss, mean_squared_error

from sklearn_iclr26.nas._base_search import BaseNASSearch, history_record
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._sklearn_compat import Interval, _fit_context
from sklearn_iclr26.utils._torch import check_regression_fit
from sklearn_iclr26.utils._torch_estimator import TRAINING_CONSTRAINTS
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["RandomNASSearch"]


class RandomNASSearch(BaseNASSearch):
    """Random architecture search under a hardware budget (rejection sampling).

    Architectures are drawn uniformly from the search space; those over the
    budget are rejected (their cost is cheap to compute, so rejection costs no
    training). Each of ``n_candidates`` feasible architectures is trained for
    ``max_iter`` epochs on the search-train split and scored on the
    validation split (log-loss or mean squared error); the best one is refit
    on all the data. A baseline for :class:`ConNASSearch` at equal search
    cost.

    Read more in the :ref:`User Guide <connas>`.

    Parameters
    ----------
    search_space : {"mlp", "cell"} or SearchSpace, default=None
        The search space (see :class:`ConNASSearch`).
    n_candidates : int, default=5
        Number of feasible architectures trained.
    constraint : {"params", "flops", "latency"} or callable, default="params"
        Hardware cost (see :class:`ConNASSearch`).
    budget : float or None, default=None
        Maximum cost; ``None`` means unconstrained.
    max_draws : int, default=10000
        Maximum number of draws (accepted and rejected) before giving up.
    refit : bool, default=True
        Refit the chosen network on all the data.
    final_estimator_params : dict or None, default=None
        Parameters of the refit network.
    task : {"classification", "regression"}, default="classification"
        Kind of target.
    latency_repeats : int, default=20
        Timed runs per operation for ``constraint="latency"``.
    max_iter : int, default=50
        Full-batch Adam epochs of each candidate network (the refit's own
        ``max_iter`` is set in ``final_estimator_params``).
    validation_fraction : float, default=0.5
        Fraction of the data the candidates are scored on (stratified for
        classification).
    dtype : {"float64", "float32"}, default="float64"
        Precision.
    device : str, default="cpu"
        The torch device.
    n_jobs : int or None, default=None
        Torch threads; ``None`` means 1, ``-1`` all cores; 0 is rejected.
    random_state : int, RandomState instance or None, default=None
        Seed of the draws, the split and the training.
    verbose : int, default=0
        If positive, print ``[RandomNASSearch] candidate i/n ...`` per
        trained candidate (its architecture, cost and validation loss) and
        the selected architecture.

    Attributes
    ----------
    best_architecture_ : dict
        The chosen architecture.
    best_cost_ : float
        Its cost.
    budget_satisfied_ : bool
        Whether it satisfies the budget.
    best_estimator_ : estimator
        The refitted network, a torch estimator with its own training record
        (``best_estimator_.loss_curve_``). The search trains
        ``n_candidates`` networks, each with its own curve, so it has no one
        ``loss_curve_`` of its own (unlike the gradient searches, which train
        one supernet).
    search_history_ : list of dict
        One record per trained candidate: ``step``, ``architecture``,
        ``cost``, ``feasible``, ``val_loss``.
    n_rejected_ : int
        Number of rejected (infeasible) draws.
    n_iter_ : int
        Epochs each candidate was trained for (``max_iter``; 0 if no
        candidate was drawn).
    cost_table_ : dict
        Cost look-up table.
    n_architectures_evaluated_ : int
        Distinct candidates trained.
    classes_ : ndarray of shape (n_classes,)
        Class labels (classification).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

    See Also
    --------
    ConNASSearch : Constraint-guided differentiable search.
    PenaltyNASSearch : Penalised differentiable search.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_iclr26.nas import MLPSearchSpace, RandomNASSearch
    >>> X, y = load_wine(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> search = RandomNASSearch(
    ...     MLPSearchSpace(n_layers=2, widths=(0, 8, 32)),
    ...     n_candidates=3, budget=500, random_state=0,
    ... ).fit(X, y)
    >>> search.budget_satisfied_
    True
    """

    _parameter_constraints: dict = {
        **BaseNASSearch._parameter_constraints,
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "max_draws": [Interval(Integral, 1, None, closed="left")],
        "max_iter": TRAINING_CONSTRAINTS["max_iter"],
    }

    def __init__(
        self,
        search_space=None,
        *,
        n_candidates=5,
        constraint="params",
        budget=None,
        max_draws=10000,
        refit=True,
        final_estimator_params=None,
        task="classification",
        latency_repeats=20,
        max_iter=50,
        validation_fraction=0.5,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _val_loss(self, est, X_val, y_val):
        if self.task == "classification":
            proba = est.predict_proba(X_val)
            full = np.zeros((len(X_val), len(self.classes_)))
            cols = np.searchsorted(self.classes_, est.classes_)
            full[:, cols] = proba
            return float(log_loss(y_val, np.clip(full, 1e-15, 1), labels=self.classes_))
        return float(mean_squared_error(y_val, est.predict(X_val)))

    def _search(self, data):
        """Draw architectures, reject the infeasible ones, train the others."""
        from sklearn_iclr26.nas._refit import (
            _ArchitectureClassifier,
            _ArchitectureRegressor,
        )

        cls = (
            _ArchitectureClassifier
            if self.task == "classification"
            else _ArchitectureRegressor
        )
        costs, rng = self._costs, data.rng
        X_tr, y_tr = data.X[data.train], data.y[data.train]
        X_val, y_val = data.X[data.val], data.y[data.val]
        history, draws = [], 0
        self.n_rejected_ = 0
        self.n_iter_ = 0
        while len(history) < self.n_candidates and draws < self.max_draws:
            draws += 1
            arch = costs.to_ops([rng.randint(len(ops)) for ops in costs.ops])
            cost = costs.cost_of(arch)
            if not self._feasible(cost):
                self.n_rejected_ += 1
                continue
            est = cls(
                costs.space,
                arch,
                max_iter=self.max_iter,
                dtype=self.dtype,
                device=self.device,
                n_jobs=self.n_jobs,
                random_state=data.seed,
            ).fit(X_tr, y_tr)
            self.n_iter_ = max(self.n_iter_, est.n_iter_)
            loss = self._val_loss(est, X_val, y_val)
            history.append(history_record(len(history), 0, arch, cost, True, loss))
            log_progress(
                self,
                f"candidate {len(history)}/{self.n_candidates} "
                f"{costs.to_dict(arch)} cost={cost:.6g} val_loss={loss:.4f}",
            )
        return history, None

    def _select(self, history, val_losses):
        """The candidate with the lowest validation loss."""
        if history:
            return min(history, key=lambda h: h["val_loss"])["arch"]
        return self._select_by_rule(history, "last_feasible")

    @atomic_fit(check=check_regression_fit)
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Draw, train and compare feasible architectures; refit the best.

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
