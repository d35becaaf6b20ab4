"""Score-against-budget plot of a Top-k deferral estimator."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.utils._plotting import finish_plot, start_plot
from sklearn_iclr26.utils._sklearn_compat import (
    _validate_style_kwargs,
    check_matplotlib_support,
)
from sklearn_iclr26.utils._validation import store_params

__all__ = ["DeferralCurveDisplay"]


class DeferralCurveDisplay:
    """Accuracy (or RMSE) against mean consultation budget.

    Fixed Top-k gives one point per ``k``; Top-k(x) one point per budget
    weight. Build it with :meth:`from_estimator` (a fitted estimator and test
    data) or :meth:`from_curve` (the Bunch returned by
    :meth:`TopKDeferrer.deferral_curve`, computed from one fit).

    Read more in the :ref:`User Guide <deferral>`.

    Parameters
    ----------
    budget : ndarray of shape (n_k,)
        Mean fees per query of fixed Top-k.
    score : ndarray of shape (n_k,)
        Accuracy (or RMSE) of fixed Top-k.
    ks : ndarray of shape (n_k,), default=None
        The values of ``k`` (used to annotate the points).
    adaptive_budget : ndarray of shape (n_lambda,), default=None
        Mean fees per query of Top-k(x).
    adaptive_score : ndarray of shape (n_lambda,), default=None
        Score of Top-k(x).
    metric : str, default="accuracy"
        Name of the score (y-axis label).
    name : str, default=None
        Name of the estimator, used in the legend.

    Attributes
    ----------
    line_ : matplotlib Line2D
        Fixed Top-k curve.
    adaptive_line_ : matplotlib Line2D or None
        Top-k(x) curve.
    ax_ : matplotlib Axes
        Axes of the plot.
    figure_ : matplotlib Figure
        Figure of the plot.

    See Also
    --------
    TopKDeferrer.deferral_curve : The values plotted.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_iclr26.deferral import DeferralCurveDisplay
    >>> disp = DeferralCurveDisplay(
    ...     budget=np.array([0.0, 0.1, 0.3]), score=np.array([0.8, 0.85, 0.9])
    ... ).plot()
    """

    def __init__(
        self,
        *,
        budget,
        score,
        ks=None,
        adaptive_budget=None,
        adaptive_score=None,
        metric="accuracy",
        name=None,
    ):
        store_params(self, locals())

    def plot(self, *, ax=None, name=None, annotate=True, **kwargs):
        """Plot the curve(s).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if ``None``.
        name : str, default=None
            Legend prefix; defaults to ``self.name``.
        annotate : bool, default=True
            Write ``k=...`` next to the fixed Top-k points.
        **kwargs : dict
            Passed to ``ax.plot`` for the fixed Top-k line.

        Returns
        -------
        display : DeferralCurveDisplay
            The display, with ``ax_``, ``figure_`` and ``line_`` set.
        """
        ax = start_plot(self, ax)
        name = self.name if name is None else name
        prefix = f"{name}: " if name else ""
        line_kwargs = _validate_style_kwargs(
            {"marker": "o", "label": f"{prefix}Top-k"}, kwargs
        )
        (self.line_,) = ax.plot(self.budget, self.score, **line_kwargs)
        if annotate and self.ks is not None:
            for k, b, s in zip(self.ks, self.budget, self.score):
                ax.annotate(
                    f"k={k}", (b, s), textcoords="offset points", xytext=(4, -10)
                )
        self.adaptive_line_ = None
        if self.adaptive_budget is not None and len(self.adaptive_budget):
            order = np.argsort(self.adaptive_budget, kind="stable")
            (self.adaptive_line_,) = ax.plot(
                np.asarray(self.adaptive_budget)[order],
                np.asarray(self.adaptive_score)[order],
                marker="s",
                linestyle="--",
                label=f"{prefix}Top-k(x)",
            )
        ax.set_xlabel("mean budget per query")
        ax.set_ylabel(self.metric)
        return finish_plot(self, ax)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        ks=None,
        budget_weights=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Compute the curve of a fitted estimator on ``(X, y)`` and plot it.

        Parameters
        ----------
        estimator : TopKDeferrer or TopKDeferralRegressor
            Fitted estimator.
        X : array-like of shape (n_samples, n_features)
            Features followed by the expert columns.
        y : array-like of shape (n_samples,)
            True targets.
        ks : array-like of int, default=None
            Values of ``k``; ``None`` means all.
        budget_weights : array-like of float, default=None
            Budget weights for Top-k(x) (``adaptive=True`` only).
        name : str, default=None
            Legend prefix; defaults to the estimator's class name.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : DeferralCurveDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        check_is_fitted(estimator)
        curve = estimator.deferral_curve(X, y, ks=ks, budget_weights=budget_weights)
        name = type(estimator).__name__ if name is None else name
        return cls.from_curve(curve, name=name, ax=ax, **kwargs)

    @classmethod
    def from_curve(cls, curve, *, name=None, ax=None, **kwargs):
        """Plot a curve already computed by ``deferral_curve``.

        The ``from_predictions`` of this display: no estimator is needed,
        only the Bunch that :meth:`TopKDeferrer.deferral_curve` (or
        :meth:`TopKDeferralRegressor.deferral_curve`) returned.

        Parameters
        ----------
        curve : :class:`~sklearn.utils.Bunch`
            With ``k``, ``score``, ``budget`` and ``metric``; optionally
            ``adaptive_budget`` and ``adaptive_score`` (Top-k(x)).
        name : str, default=None
            Legend prefix.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : DeferralCurveDisplay
            The display.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from sklearn.datasets import load_iris
        >>> from sklearn_iclr26.datasets import make_experts
        >>> from sklearn_iclr26.deferral import DeferralCurveDisplay, TopKDeferrer
        >>> X, y = load_iris(return_X_y=True)
        >>> experts, fees = make_experts(X, y, n_experts=2, random_state=0)
        >>> X_all = np.hstack([X, experts])
        >>> clf = TopKDeferrer(expert_columns=[4, 5], costs=fees).fit(X_all, y)
        >>> curve = clf.deferral_curve(X_all, y)
        >>> disp = DeferralCurveDisplay.from_curve(curve, name="iris")
        >>> disp.line_.get_label()
        'iris: Top-k'
        """
        check_matplotlib_support(f"{cls.__name__}.from_curve")
        missing = [key for key in ("k", "score", "budget") if key not in curve]
        if missing:
            raise ValueError(
                f"curve must be the Bunch returned by deferral_curve; it lacks "
                f"{missing}."
            )
        disp = cls(
            budget=np.asarray(curve["budget"]),
            score=np.asarray(curve["score"]),
            ks=np.asarray(curve["k"]),
            adaptive_budget=curve.get("adaptive_budget"),
            adaptive_score=curve.get("adaptive_score"),
            metric=curve.get("metric", "accuracy"),
            name=name,
        )
        return disp.plot(ax=ax, **kwargs)
