"""Estimator glue of the architecture searches (ConNAS and its baselines).

One template, :meth:`BaseNASSearch._fit`: validate the data, build the cost
model (``nas/_costs.py``), split search-train / validation rows, run the
search (the :meth:`~BaseNASSearch._search` hook: the bilevel loop of
``nas/_darts.py`` or the random draws of ``nas/_random_search.py``), pick the
returned architecture (the :meth:`~BaseNASSearch._select` hook), refit it on
all the data, and delegate ``predict``/``predict_proba``/``score`` to the
refit network.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from abc import ABCMeta, abstractmethod
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics import accuracy_score, r2_score
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from sklearn_iclr26.nas._base_space import SearchSpace
from sklearn_iclr26.nas._cell_space import CellSearchSpace
from sklearn_iclr26.nas._costs import ArchitectureCosts
from sklearn_iclr26.nas._mlp_space import MLPSearchSpace
from sklearn_iclr26.utils._persistence import dict_from_pairs, pairs_from_dict
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions
from sklearn_iclr26.utils._split import split_indices
from sklearn_iclr26.utils._torch import torch_rng
from sklearn_iclr26.utils._torch_estimator import TRAINING_CONSTRAINTS
from sklearn_iclr26.utils._validation import check_at_least_two_classes
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

_MIN_SAMPLES = 4


def _refit_enabled(self):
    if not self.refit:
        raise AttributeError(
            f"This {type(self).__name__} was built with refit=False; fit it with "
            "refit=True to predict, or train best_architecture_ yourself."
        )
    return True


def _is_classifier_task(self):
    if self.task != "classification":
        raise AttributeError(
            "predict_proba is only available for task='classification'."
        )
    return _refit_enabled(self)


@dataclass
class SearchData:
    """What a search hook receives from the fit template.

    ``X``/``y``: the validated data (``y`` as given); ``y_search``: encoded
    class indices (classification) or float targets; ``train``/``val``: row
    indices of the search-train and validation parts; ``seed``: the torch
    seed; ``rng``: the ``RandomState`` the seed and split were drawn from
    (for further draws).
    """

    X: np.ndarray
    y: np.ndarray
    y_search: np.ndarray
    train: np.ndarray
    val: np.ndarray
    seed: int
    rng: np.random.RandomState


def history_record(step, epoch, arch, cost, feasible, val_loss, modified=False):
    """One record of the search history (``arch``: tuple of operations)."""
    return {
        "step": step,
        "epoch": epoch,
        "arch": arch,
        "cost": cost,
        "feasible": bool(feasible),
        "val_loss": float(val_loss),
        "modified": bool(modified),
    }


class BaseNASSearch(BaseEstimator, metaclass=ABCMeta):
    """Common parts: validation, cost model, split, selection, refit, delegation.

    Subclasses implement the two hooks :meth:`_search` and :meth:`_select`.
    """

    _parameter_constraints: dict = {
        "search_space": [StrOptions({"mlp", "cell"}), SearchSpace, None],
        "constraint": [StrOptions({"params", "flops", "latency"}), callable],
        "budget": [Interval(Real, 0, None, closed="neither"), None],
        "task": [StrOptions({"classification", "regression"})],
        "refit": ["boolean"],
        "final_estimator_params": [dict, None],
        "latency_repeats": [Interval(Integral, 1, None, closed="left")],
        **{
            name: TRAINING_CONSTRAINTS[name]
            for name in (
                "validation_fraction",
                "dtype",
                "device",
                "n_jobs",
                "random_state",
                "verbose",
            )
        },
    }

    def __getstate__(self):
        # skops holds no tuple keys: the cost table as (architecture, cost) pairs
        return pairs_from_dict(super().__getstate__(), ("cost_table_",))

    def __setstate__(self, state):
        super().__setstate__(dict_from_pairs(state, ("cost_table_",)))
        if hasattr(self, "_costs") and hasattr(self, "cost_table_"):
            self._costs.table = self.cost_table_  # one table, as fitted

    # ------------------------------------------------------------------ hooks
    @abstractmethod
    def _search(self, data):
        """Run the search on ``data`` (a :class:`SearchData`).

        Returns
        -------
        history : list of dict
            :func:`history_record` per visited architecture.
        val_losses : dict or None
            Validation loss per architecture, for a selection rule that
            needs them.
        """

    @abstractmethod
    def _select(self, history, val_losses):
        """The architecture (tuple of operations) to return."""

    # ------------------------------------------------------------------ setup
    def _get_search_space(self):
        if self.search_space is None or self.search_space == "mlp":
            return MLPSearchSpace()
        if isinstance(self.search_space, str):
            return CellSearchSpace()
        return self.search_space

    def _feasible(self, cost):
        return self.budget is None or cost <= self.budget

    def _prepare(self, X, y):
        """Validate data and parameters; set the fitted meta-data and costs."""
        regression = self.task == "regression"
        X, y = validate_data(
            self, X, y, dtype=[np.float64, np.float32], y_numeric=regression
        )
        n_samples = X.shape[0]
        if n_samples < _MIN_SAMPLES:
            raise ValueError(
                f"{type(self).__name__} splits the data into search-train and "
                f"validation sets and needs at least {_MIN_SAMPLES} samples; got "
                f"n_samples = {n_samples}."
            )
        if regression:
            y_search = np.asarray(y, dtype=np.float64)
            n_outputs = 1
        else:
            check_classification_targets(y)
            encoder = LabelEncoder().fit(y)
            self.classes_ = encoder.classes_
            check_at_least_two_classes(self, y)
            y_search = encoder.transform(y).astype(np.int64)
            n_outputs = len(self.classes_)
        space = self._get_search_space()
        space.check_input(X.shape[1])
        self._costs = ArchitectureCosts(
            space,
            self.constraint,
            X.shape[1],
            n_outputs,
            latency_repeats=self.latency_repeats,
            dtype=self.dtype,
            device=self.device,
        )
        self.cost_table_ = self._costs.table
        if self.budget is not None:
            arch, cost = self._costs.cheapest()
            if cost > self.budget:
                raise ValueError(
                    f"budget={self.budget} is below the cost {cost:.6g} "
                    f"({self._costs.name}) of the cheapest architecture "
                    f"of the search space, {self._costs.to_dict(arch)}: no "
                    "architecture can satisfy it. Raise the budget or use a "
                    "smaller search space."
                )
        return X, y, y_search

    def _split(self, y_search, rng):
        """Search-train and validation rows, stratified when possible."""
        n = len(y_search)
        n_val = int(np.ceil(self.validation_fraction * n))
        train, val = split_indices(
            n,
            [n - n_val],
            y=y_search if self.task == "classification" else None,
            random_state=rng,
        )
        return train, val

    def _fit(self, X, y):
        """The template: prepare, split, search, select, refit."""
        rng = check_random_state(self.random_state)
        seed = seed_from_random_state(rng)
        # costs may be measured (latency) with torch: fork its RNG
        with torch_rng(seed, self.n_jobs, self.device):
            X, y, y_search = self._prepare(X, y)
            train, val = self._split(y_search, rng)
            data = SearchData(X, y, y_search, train, val, seed, rng)
            history, val_losses = self._search(data)
            arch = self._select(history, val_losses)
        return self._finish(X, y, arch, history, seed)

    # -------------------------------------------------------------- selection
    def _select_by_rule(self, history, rule, val_losses=None):
        """Pick the architecture to return from the search history.

        ``"last_feasible"``: the last feasible derived architecture;
        ``"best_val_feasible"``: the feasible one with the lowest validation
        loss (``val_losses``: architecture -> loss); ``"final"``: the last
        derived architecture, feasible or not. When nothing visited is
        feasible (and the rule is not ``"final"``), warn and return the
        cheapest architecture found.
        """
        feasible = [h for h in history if h["feasible"]]
        if rule == "final" and history:
            return history[-1]["arch"]
        if feasible:
            if rule == "best_val_feasible" and val_losses:
                archs = [h["arch"] for h in feasible]
                return min(dict.fromkeys(archs), key=lambda a: val_losses[a])
            return feasible[-1]["arch"]
        candidates = [h["arch"] for h in history]
        if self.budget is not None or not candidates:
            candidates.append(self._costs.cheapest()[0])
        arch = min(candidates, key=self._costs.cost_of)
        cost = self._costs.cost_of(arch)
        warn_user(
            f"No architecture visited by the search satisfied budget={self.budget}; "
            f"returning the cheapest architecture found "
            f"({self._costs.to_dict(arch)}, cost {cost:.6g}, "
            f"{'feasible' if self._feasible(cost) else 'INFEASIBLE'}). "
            "Increase max_iter or rescale_factor."
        )
        return arch

    # ------------------------------------------------------------------ refit
    def _refit(self, X, y, arch, seed):
        from sklearn_iclr26.nas._refit import (
            _ArchitectureClassifier,
            _ArchitectureRegressor,
        )

        cls = (
            _ArchitectureClassifier
            if self.task == "classification"
            else _ArchitectureRegressor
        )
        params = {
            "dtype": self.dtype,
            "device": self.device,
            "n_jobs": self.n_jobs,
            "random_state": seed,
        }
        params.update(self.final_estimator_params or {})
        return cls(self._costs.space, tuple(arch), **params).fit(X, y)

    def _finish(self, X, y, arch, history, seed):
        self.best_architecture_ = self._costs.to_dict(arch)
        self.best_cost_ = self._costs.cost_of(arch)
        self.budget_satisfied_ = bool(self._feasible(self.best_cost_))
        self.search_history_ = [
            {
                **{k: v for k, v in h.items() if k != "arch"},
                "architecture": self._costs.to_dict(h["arch"]),
            }
            for h in history
        ]
        self.n_architectures_evaluated_ = len({h["arch"] for h in history})
        log_progress(
            self,
            f"selected {self.best_architecture_} cost={self.best_cost_:.6g} "
            f"budget_satisfied={self.budget_satisfied_}",
        )
        if self.refit:
            self.best_estimator_ = self._refit(X, y, arch, seed)
        return self

    # ------------------------------------------------------------ public API
    def cost_of(self, architecture):
        """Hardware cost of an architecture of the fitted search space.

        The same cost model the search used (``constraint``, with the
        fitted ``n_features_in_`` and number of outputs; latencies come from
        ``cost_table_`` or are measured once and added to it).

        Parameters
        ----------
        architecture : dict or sequence
            ``{edge name: operation}`` (as ``best_architecture_``) or one
            operation per edge, in order.

        Returns
        -------
        cost : float
            The cost, in the unit of ``constraint``.
        """
        check_is_fitted(self, "best_architecture_")
        return self._costs.cost_of(architecture)

    # ------------------------------------------------------------- delegation
    def _validate_for_predict(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=[np.float64, np.float32])

    @available_if(_refit_enabled)
    def predict(self, X):
        """Predict with the refitted network of the best architecture.

        Rows are processed in batches sized by scikit-learn's
        ``working_memory``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels (classification) or targets (regression).
        """
        X = self._validate_for_predict(X)
        return self.best_estimator_.predict(X)

    @available_if(_is_classifier_task)
    def predict_proba(self, X):
        """Class probabilities of the refitted network.

        Rows are processed in batches sized by scikit-learn's
        ``working_memory``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        X = self._validate_for_predict(X)
        return self.best_estimator_.predict_proba(X)

    @available_if(_refit_enabled)
    def score(self, X, y, sample_weight=None):
        """Accuracy (classification) or R^2 (regression) of the refitted network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,)
            True labels or targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            Accuracy or coefficient of determination.
        """
        y_pred = self.predict(X)
        metric = accuracy_score if self.task == "classification" else r2_score
        return float(metric(y, y_pred, sample_weight=sample_weight))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.task == "classification":
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags()
            tags.regressor_tags = None
        else:
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags()
            tags.classifier_tags = None
        tags.non_deterministic = self.constraint == "latency"
        return tags
