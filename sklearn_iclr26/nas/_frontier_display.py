"""Accuracy-against-cost plot of evaluated architectures, with the budget."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.utils._plotting import finish_plot, start_plot
from sklearn_iclr26.utils._sklearn_compat import (
    _validate_style_kwargs,
    check_matplotlib_support,
)
from sklearn_iclr26.utils._validation import store_params

__all__ = ["ArchitectureFrontierDisplay"]


def _pareto_front(costs, scores):
    """Indices of the architectures no cheaper one beats, sorted by cost."""
    order = np.lexsort((-scores, costs))
    front, best = [], -np.inf
    for i in order:
        if scores[i] > best:
            front.append(i)
            best = scores[i]
    return np.asarray(front, dtype=int)


def _cost_name(constraint):
    if isinstance(constraint, str):
        return constraint
    return getattr(constraint, "__name__", "cost")


class ArchitectureFrontierDisplay:
    """Score against hardware cost of architectures, the budget and the choice.

    Use :meth:`from_estimator` (trains the architectures a fitted search
    visited) or :meth:`from_results` (costs and scores you already have, e.g.
    a benchmark table), then :meth:`plot`.

    Read more in the :ref:`User Guide <connas>`.

    Parameters
    ----------
    costs : ndarray of shape (n_architectures,)
        Hardware cost of each architecture.
    scores : ndarray of shape (n_architectures,)
        Score (e.g. accuracy) of each architecture.
    budget : float or None, default=None
        Budget, drawn as a vertical line.
    chosen_cost, chosen_score : float or None, default=None
        The architecture a search returned, drawn as a star.
    cost_label : str, default="cost"
        Label of the x-axis.
    score_label : str, default="score"
        Label of the y-axis.
    name : str or None, default=None
        Legend name of the chosen architecture.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the plot.
    figure_ : matplotlib Figure
        Figure containing the plot.
    line_ : matplotlib Line2D
        The Pareto frontier.

    See Also
    --------
    ConNASSearch : The search whose result is plotted.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_iclr26.nas import ArchitectureFrontierDisplay
    >>> disp = ArchitectureFrontierDisplay.from_results(
    ...     [1, 2, 3], [0.8, 0.9, 0.85], budget=2.5, chosen_cost=2, chosen_score=0.9
    ... )
    >>> disp.line_ is not None
    True
    """

    def __init__(
        self,
        *,
        costs,
        scores,
        budget=None,
        chosen_cost=None,
        chosen_score=None,
        cost_label="cost",
        score_label="score",
        name=None,
    ):
        store_params(self, locals())

    def plot(self, *, ax=None, name=None, **kwargs):
        """Draw the architectures, their Pareto frontier, the budget and the choice.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None.
        name : str, default=None
            Legend name of the chosen architecture (overrides ``self.name``).
        **kwargs : dict
            Passed to the scatter of the architectures.

        Returns
        -------
        display : ArchitectureFrontierDisplay
            The object, with ``ax_``, ``figure_`` and ``line_``.
        """
        ax = start_plot(self, ax)
        costs = np.asarray(self.costs, dtype=float)
        scores = np.asarray(self.scores, dtype=float)
        feasible = (
            np.ones(len(costs), bool) if self.budget is None else costs <= self.budget
        )
        # aliases (c -> color, ...) resolved as scikit-learn's displays do
        style = _validate_style_kwargs({"s": 14, "alpha": 0.6}, kwargs)
        ax.scatter(costs[feasible], scores[feasible], label="feasible", **style)
        if (~feasible).any():
            ax.scatter(
                costs[~feasible],
                scores[~feasible],
                label="over budget",
                **{**style, "color": "lightgray"},
            )
        front = _pareto_front(costs, scores)
        (self.line_,) = ax.step(
            costs[front],
            scores[front],
            where="post",
            color="k",
            lw=1,
            label="Pareto frontier",
        )
        if self.budget is not None:
            ax.axvline(self.budget, color="tab:red", ls="--", label="budget")
        if self.chosen_cost is not None and self.chosen_score is not None:
            ax.scatter(
                [self.chosen_cost],
                [self.chosen_score],
                marker="*",
                s=250,
                color="gold",
                edgecolor="k",
                zorder=5,
                label=name or self.name or "chosen",
            )
        ax.set_xlabel(self.cost_label)
        ax.set_ylabel(self.score_label)
        return finish_plot(self, ax, "lower right")

    @classmethod
    def from_results(
        cls,
        costs,
        scores,
        *,
        budget=None,
        chosen_cost=None,
        chosen_score=None,
        cost_label="cost",
        score_label="score",
        name=None,
        ax=None,
        **kwargs,
    ):
        """Plot precomputed costs and scores.

        Parameters
        ----------
        costs, scores : array-like of shape (n_architectures,)
            Cost and score of each architecture.
        budget : float or None, default=None
            Budget line.
        chosen_cost, chosen_score : float or None, default=None
            The chosen architecture.
        cost_label, score_label : str
            Axis labels.
        name : str or None, default=None
            Legend name of the chosen architecture.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ArchitectureFrontierDisplay
        """
        check_matplotlib_support(f"{cls.__name__}.from_results")
        costs = np.asarray(costs, dtype=float)
        scores = np.asarray(scores, dtype=float)
        if costs.shape != scores.shape or costs.ndim != 1:
            raise ValueError(
                "costs and scores must be 1-d arrays of the same length, got "
                f"shapes {costs.shape} and {scores.shape}."
            )
        disp = cls(
            costs=costs,
            scores=scores,
            budget=budget,
            chosen_cost=chosen_cost,
            chosen_score=chosen_score,
            cost_label=cost_label,
            score_label=score_label,
            name=name,
        )
        return disp.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        architectures=None,
        test_size=0.3,
        random_state=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Train and score architectures of a fitted search, and plot them.

        Each architecture (by default every distinct one in
        ``estimator.search_history_``) is trained like ``best_estimator_`` on
        a random ``1 - test_size`` part of ``(X, y)`` and scored on the rest.

        Parameters
        ----------
        estimator : fitted ConNASSearch, PenaltyNASSearch or RandomNASSearch
            The search (fitted with ``refit=True``).
        X : array-like of shape (n_samples, n_features)
            Data.
        y : array-like of shape (n_samples,)
            Targets.
        architectures : list of dict, default=None
            Architectures to evaluate; the chosen one is always added.
        test_size : float, default=0.3
            Held-out fraction used for the scores.
        random_state : int or None, default=None
            Seed of the split.
        name : str or None, default=None
            Legend name of the chosen architecture.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ArchitectureFrontierDisplay
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        check_is_fitted(estimator, "best_estimator_")
        if architectures is None:
            architectures = [h["architecture"] for h in estimator.search_history_]
        keys = list(dict.fromkeys(tuple(a.values()) for a in architectures))
        chosen = tuple(estimator.best_architecture_.values())
        if chosen not in keys:
            keys.append(chosen)
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=test_size, random_state=random_state
        )
        costs, scores = [], []
        for arch in keys:
            est = clone(estimator.best_estimator_).set_params(architecture=arch)
            est.fit(X_tr, y_tr)
            costs.append(estimator.cost_of(arch))
            scores.append(est.score(X_te, y_te))
        i = keys.index(chosen)
        label = "accuracy" if estimator.task == "classification" else "R2"
        return cls.from_results(
            costs,
            scores,
            budget=estimator.budget,
            chosen_cost=costs[i],
            chosen_score=scores[i],
            cost_label=_cost_name(estimator.constraint),
            score_label=f"held-out {label}",
            name=name or type(estimator).__name__,
            ax=ax,
            **kwargs,
        )
